#!/usr/bin/env bash
# Builds the npm package into pkg/: release wasm → wasm-bindgen (--target web) → wasm-opt -Oz → the
# hand-kept JS layer and package.json from pkg-template/ → tsc over the public types. Prints the size.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '\033[1m[build]\033[0m %s\n' "$*"; }

# The names, codes and words that cross the boundary are generated from the Rust definitions (src/vocab/ and
# the core's enums): rendered here into pkg-template/generated/ (written only when they changed; commit them).
# `cargo test` (tests/names.rs) fails when the files differ from what the Rust renders.
say "cargo run --example names"
cargo run --quiet --example names

rm -rf pkg.tmp && mkdir pkg.tmp
# Two wasm modules, one per face, so that a browser client does not download the server's ledger.
# The client's allocator is lol_alloc's free list (feature small-alloc), the server's Rust's default (dlmalloc):
# the free list makes the client module smaller raw and gzipped; the server's it makes larger raw for a little
# less gzip, and the server runs where bytes cost little (the measurements: CHANGELOG).
for face in client server; do
  features=$face
  [ "$face" = client ] && features=client,small-alloc
  say "cargo build --release --target wasm32-unknown-unknown --features $features"
  cargo build --quiet --lib --release --target wasm32-unknown-unknown --no-default-features --features "$features"
  wasm-bindgen --target web --weak-refs --out-dir pkg.tmp --out-name "mcp_retry_policy_$face" \
    target/wasm32-unknown-unknown/release/mcp_retry_policy.wasm
  # Export the shadow stack pointer for the JS guards' backstop (pkg-template/guard.js), while names exist.
  node scripts/export-stack-pointer.mjs "pkg.tmp/mcp_retry_policy_${face}_bg.wasm"
  # The features rustc enables by default for wasm32-unknown-unknown (1.82+); wasm-bindgen drops the
  # target_features section that would tell wasm-opt.
  node_modules/.bin/wasm-opt -Oz --converge --strip-debug --strip-producers \
    --enable-bulk-memory --enable-bulk-memory-opt --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue \
    "pkg.tmp/mcp_retry_policy_${face}_bg.wasm" -o "pkg.tmp/mcp_retry_policy_${face}_bg.wasm.opt"
  # The same optimization keeping the function names, for the bench's size breakdown (benches/js/size.mjs).
  mkdir -p target/size
  node_modules/.bin/wasm-opt -Oz --converge -g --strip-producers \
    --enable-bulk-memory --enable-bulk-memory-opt --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue \
    "pkg.tmp/mcp_retry_policy_${face}_bg.wasm" -o "target/size/${face}.named.wasm"
  mv "pkg.tmp/mcp_retry_policy_${face}_bg.wasm.opt" "pkg.tmp/mcp_retry_policy_${face}_bg.wasm"
done
rm -f pkg.tmp/.gitignore pkg.tmp/package.json
cp -R pkg-template/. pkg.tmp/
cp README.md LICENSE-MIT LICENSE-APACHE pkg.tmp/
rm -rf pkg && mv pkg.tmp pkg

say "tsc: the package's public types"
node_modules/.bin/tsc -p tests/types/tsconfig.json

size() { stat -c %s "$1"; }
gz() { gzip -9c "$1" | wc -c; }
mkdir -p target/size
# What a user's bundler ships: an entry bundled and minified (the .wasm files stay separate assets). The peers
# (the MCP SDK, its zod, pg) are the app's own dependencies, already in its bundle: not counted.
bundle() {
  node_modules/.bin/esbuild "$1" --bundle --minify --format=esm --platform=browser --log-level=error --outfile="$2" \
    --external:zod --external:pg --external:@modelcontextprotocol/sdk
}
bundle pkg/client.browser.js target/size/client.min.js
# A plain app: what `import { withRetry, observeFetch } from 'mcp-retry-policy/client'` bundles (no optional part).
printf "export { withRetry, observeFetch } from '../../pkg/client.browser.js';\n" > target/size/plain-app.js
bundle target/size/plain-app.js target/size/plain.min.js
bundle pkg/browser.js target/size/all.min.js
cw=pkg/mcp_retry_policy_client_bg.wasm
sw=pkg/mcp_retry_policy_server_bg.wasm
{
  printf '\n| artifact | raw | gzip -9 |\n|---|---:|---:|\n'
  printf '| client wasm | %s B | %s B |\n' "$(size $cw)" "$(gz $cw)"
  printf '| server wasm (ledger) | %s B | %s B |\n' "$(size $sw)" "$(gz $sw)"
  printf '| client JS, bundled + minified | %s B | %s B |\n' "$(size target/size/client.min.js)" "$(gz target/size/client.min.js)"
  printf '| whole-package JS, bundled + minified | %s B | %s B |\n' "$(size target/size/all.min.js)" "$(gz target/size/all.min.js)"
  printf '| **a plain app as a browser ships it** (`withRetry`, `observeFetch`: JS + client wasm) | %s B | **%s B** |\n' \
    "$(( $(size $cw) + $(size target/size/plain.min.js) ))" "$(( $(gz $cw) + $(gz target/size/plain.min.js) ))"
  printf '| the whole client face as a browser ships it (`mcp-retry-policy/client`, every export) | %s B | %s B |\n' \
    "$(( $(size $cw) + $(size target/size/client.min.js) ))" "$(( $(gz $cw) + $(gz target/size/client.min.js) ))"
  printf '| whole package (both faces) | %s B | %s B |\n\n' \
    "$(( $(size $cw) + $(size $sw) + $(size target/size/all.min.js) ))" "$(( $(gz $cw) + $(gz $sw) + $(gz target/size/all.min.js) ))"
} | tee target/size/table.md
# The book's Size table (docs/src/runtimes.md) takes its numbers from target/size/table.md: python3 scripts/docs-size.py
