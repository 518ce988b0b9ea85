#!/usr/bin/env bash
# Every test, the way CI runs it: set up what is missing, lint, test the core natively, build the package,
# test the wasm boundary in Node and in headless Chrome (wasm-pack), test the built package from JS.
# Ends with one line: "N passed, M failed".
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

log=$(mktemp -d)/test.log
: > "$log"
step() { printf '\n\033[1m[test] %s\033[0m\n' "$1"; shift; "$@" 2>&1 | tee -a "$log"; }

export CARGO_TERM_COLOR=never
step "cargo fmt --check" cargo fmt --all --check
step "clippy (native, all targets)" cargo clippy --quiet --all-targets -- -D warnings
step "clippy (wasm32, all targets)" cargo clippy --quiet --all-targets --target wasm32-unknown-unknown -- -D warnings
# Each face as the npm build compiles it (the client with its allocator, small-alloc).
for features in client,small-alloc server; do
  step "clippy (wasm32, the ${features%%,*} face alone: $features)" \
    cargo clippy --quiet --lib --target wasm32-unknown-unknown --no-default-features --features "$features" -- -D warnings
done
# The Rust face over rmcp (feature `rmcp`, native only; src/rmcp/). Its first debug build of rmcp, reqwest and
# tokio costs about a minute on 2 cores; the peer tests run against the TS SDK and rmcp servers in a few seconds.
step "clippy (native, the rmcp face, all targets)" cargo clippy --quiet --all-targets --features rmcp,sqlite,postgres -- -D warnings
step "cargo doc (broken links denied; the rmcp face included)" env RUSTDOCFLAGS="-D warnings" cargo doc --quiet --no-deps --features rmcp,sqlite,postgres
step "native tests: unit, table, properties, doctests" cargo test
step "native benchmarks compile and run once (criterion test mode)" cargo test --bench core
step "build the package" bash scripts/build.sh
# The rmcp face against real peers (after the build: the TS test server and the JS ledger are the package's).
step "the rmcp face: unit tests, real peers (TS SDK, rmcp 3.11) through the fault proxy, the JS ledger on one SQLite file and one Postgres table" \
  bash -c 'cargo build --quiet --features rmcp,sqlite,postgres --examples && cargo test --features rmcp,sqlite,postgres --lib --test rmcp_client --test rmcp_ledger && cargo test --doc --features rmcp,sqlite,postgres'
# The two examples as a user runs them: the server (with_idempotency over SQLite), then the client against it.
rmcp_examples() {
  local dir port pid rc=0
  dir=$(mktemp -d)
  port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
  target/debug/examples/rmcp-server --port "$port" --ledger "$dir/ledger.db" --seconds 60 > "$dir/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 50); do grep -q listening "$dir/server.log" && break; sleep 0.1; done
  timeout 30 target/debug/examples/rmcp-client --url "http://127.0.0.1:$port/mcp" || rc=$?
  kill "$pid" 2>/dev/null || true
  rm -rf "$dir"
  [ "$rc" -eq 0 ] && echo "test result: ok. 1 passed; 0 failed (examples/rmcp-client against examples/rmcp-server)"
  return "$rc"
}
step "examples/rmcp-server and examples/rmcp-client" rmcp_examples

export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
# With the allocator the npm build ships (small-alloc): every hostile case allocates and frees through it.
step "wasm boundary in Node (wasm-bindgen-test, the shipped allocator)" cargo test --target wasm32-unknown-unknown --features small-alloc --test boundary
# The design card's literal command: tests/browser.rs (the boundary cases, configured run_in_browser) in
# headless Chrome through chromedriver. Checked to have run them: a browser suite that silently ran none fails.
browser_boundary() {
  local out
  # chromedriver is given 30 s to bind its port (the runner's default is shorter; on a busy 2-core machine it
  # once missed it and the step failed with no test run: "driver failed to bind port during startup").
  out=$(WASM_BINDGEN_TEST_DRIVER_TIMEOUT="${WASM_BINDGEN_TEST_DRIVER_TIMEOUT:-30}" wasm-pack test --headless --chrome 2>&1) || { printf '%s\n' "$out" | tail -40; return 1; }
  printf '%s\n' "$out" | grep -E "Running (tests/browser|headless)|^test |test result" | grep -v "no tests to run" || true
  # Matched in bash, not by `printf | grep -q`: under pipefail, grep -q exits at its first match and the printf
  # writing the rest gets SIGPIPE, which failed this step once with the tests all run and passed.
  [[ $out == *"Running headless tests in Chrome"* ]] || { echo "wasm-pack ran no browser tests" >&2; return 1; }
  [[ $out =~ test\ result:\ ok\.\ [1-9][0-9]*\ passed ]] || { echo "no browser test passed" >&2; return 1; }
}
step "wasm boundary in headless Chrome: wasm-pack test --headless --chrome" browser_boundary
step "the built package: Node, real MCP SDK over HTTP, workerd (miniflare), Chromium (playwright) — node:test" \
  node --test --test-concurrency=1 tests/js/
# The book (docs/, mdBook) builds with every page SUMMARY.md names; its code blocks ran in tests/js/docs-snippets.
step "the book builds (mdbook build docs)" mdbook build docs
step "the fault zoo, bounded slice: real TS/Python MCP servers × nginx/HAProxy/Envoy-like proxy × faults × tool safety" \
  env ZOO_SKIP_SETUP=1 bash scripts/zoo.sh --slice
# Its own step, as the zoo (not under node:test): each cell prints as one "# pass"/"# fail" for the closing line.
step "third-party MCP servers, bounded slice: server-everything, FastMCP, Python SDK, rmcp, TS SDK v1/v2" \
  env PEERS_SKIP_SETUP=1 bash scripts/peers.sh --slice

# One closing line over every runner above.
passed=$(( $(grep -oE '^test result: [a-zA-Z]+\. [0-9]+ passed' "$log" | awk '{s+=$4} END{print s+0}') \
         + $(grep -oE '^# pass [0-9]+' "$log" | awk '{s+=$3} END{print s+0}') ))
failed=$(( $(grep -oE '[0-9]+ passed; [0-9]+ failed' "$log" | awk '{s+=$3} END{print s+0}') \
         + $(grep -oE '^# fail [0-9]+' "$log" | awk '{s+=$3} END{print s+0}') ))
echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
