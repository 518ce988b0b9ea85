#!/usr/bin/env bash
# The peer matrix (tests/peers): withRetry around the real MCP SDK client against MCP servers this project did
# not write — server-everything, FastMCP, the Python SDK's MCPServer and low-level Server, rmcp, TS SDK 1.32,
# 1.20 and v2 — restarted, taken down, cut mid-stream, behind a captive portal and nginx. Everything it starts
# listens on 127.0.0.1 and is stopped by pid when it ends.
#
#   bash scripts/peers.sh                      # the full matrix (every server × every scenario)
#   bash scripts/peers.sh --slice              # bounded (scripts/test.sh): lost sessions with 1 and 20 calls, 20 calls
#                                              # in flight at a kill, a code after a side effect, a 502 after the server acted
#   bash scripts/peers.sh --servers a,b --scenarios x,y
#   bash scripts/peers.sh --docs               # writes the last full run (target/peers/table.md) into docs/src/testing.md
# Prints the matrix as markdown (also target/peers/table.md for a full run, slice.md, or partial.md). Exits
# non-zero on a violated invariant or an unexpected cell.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --docs ] || [ "${1:-}" = --readme ]; then exec python3 scripts/docs-peers.py; fi
[ "${PEERS_SKIP_SETUP:-}" = 1 ] || bash scripts/setup.sh
[ -f pkg/node.js ] || bash scripts/build.sh

# If the matrix itself dies, kill what it started (it lists every pid here), each with its children.
export PEERS_PIDFILE
PEERS_PIDFILE=$(mktemp)
cleanup() {
  while read -r pid; do
    [ -n "$pid" ] || continue
    for kid in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do kill -KILL "$kid" 2>/dev/null || true; done
    kill -KILL "$pid" 2>/dev/null || true
  done < "$PEERS_PIDFILE"
  rm -f "$PEERS_PIDFILE"
}
trap cleanup EXIT
limit=1200
for a in "$@"; do [ "$a" = --slice ] && limit=240; done
timeout --kill-after=10 "$limit" node tests/peers/matrix.mjs "$@"
