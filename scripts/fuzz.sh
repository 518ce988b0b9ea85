#!/usr/bin/env bash
# The longer fuzz run (CI runs the short slice inside scripts/test.sh: `cargo test` runs tests/fuzz_json.rs
# with 20 000 cases per target, node:test runs tests/js/hostile.test.mjs with 100 000 hostile calls per entry
# point). Stable Rust only (cargo-fuzz needs nightly): deterministic PRNG cases, reproducible by seed.
#   FUZZ_CASES     native cases per target (default 1 000 000)
#   FUZZ_SEED      native PRNG seed (default: the test's own)
#   HOSTILE_CALLS  hostile calls per wasm entry point (default 1 000 000; needs a built pkg/)
set -euo pipefail
cd "$(dirname "$0")/.."
export FUZZ_CASES="${FUZZ_CASES:-1000000}"
say() { printf '\033[1m[fuzz]\033[0m %s\n' "$*"; }

say "native: JSON parser, RFC 8785 canonicalizer, fingerprint, boundary numbers — $FUZZ_CASES cases per target (release)"
start=$(date +%s)
cargo test --release --test fuzz_json -- --nocapture --test-threads=1 2>&1 | grep -oE 'fuzz_json: .*|test result.*|panicked.*|FAILED.*'
say "native done in $(( $(date +%s) - start )) s"

if [ -f pkg/node.js ]; then
  calls="${HOSTILE_CALLS:-1000000}"
  say "wasm: $calls hostile calls per entry point of both faces (tests/js/hostile.test.mjs)"
  start=$(date +%s)
  HOSTILE_CALLS="$calls" node --test --test-reporter=spec tests/js/hostile.test.mjs 2>&1 | grep -E 'hostile calls|escapes|memory|✔|✖|pass|fail' | grep -v '^\s*#\s*$'
  say "wasm done in $(( $(date +%s) - start )) s"
else
  say "no pkg/: run scripts/build.sh first for the wasm part"
fi
