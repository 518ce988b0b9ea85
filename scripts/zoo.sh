#!/usr/bin/env bash
# The fault zoo (tests/zoo): withRetry around the real MCP SDK client, against real MCP servers (TS SDK 1.32,
# TS SDK 1.20, Python mcp 2.x) behind nothing, nginx, HAProxy or an Envoy-like proxy, with faults at every
# point a tools/call can break. Everything it starts listens on 127.0.0.1 and is stopped by pid when it ends.
#
#   bash scripts/zoo.sh                 # full: every schedule of faults on attempt 1 and on attempts 1–2, + 1,000 random
#   bash scripts/zoo.sh --slice         # bounded (scripts/test.sh): faults on attempt 1 everywhere, + 100 random
#   bash scripts/zoo.sh --seed S        # the random part again, as printed by an earlier run
#   bash scripts/zoo.sh --case 'ID'     # one case again, by the id a failure printed (repeatable)
# Also: --random N, --servers a,b, --proxies a,b. Writes target/zoo/table.md (the matrix), results.jsonl.
# Exits non-zero if any case violates an invariant (or could not run).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${ZOO_SKIP_SETUP:-}" = 1 ] || bash scripts/setup.sh
[ -f pkg/node.js ] || bash scripts/build.sh

# If the zoo itself dies, kill what it started (it lists every pid here), each with its children.
export ZOO_PIDFILE
ZOO_PIDFILE=$(mktemp)
cleanup() {
  while read -r pid; do
    [ -n "$pid" ] || continue
    for kid in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do kill -KILL "$kid" 2>/dev/null || true; done
    kill -KILL "$pid" 2>/dev/null || true
  done < "$ZOO_PIDFILE"
  rm -f "$ZOO_PIDFILE"
}
trap cleanup EXIT
limit=1500
for a in "$@"; do [ "$a" = --slice ] && limit=420; done
timeout --kill-after=10 "$limit" node tests/zoo/zoo.mjs "$@"
