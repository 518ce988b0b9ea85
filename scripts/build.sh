#!/usr/bin/env bash
# Builds the npm package into pkg/: release wasm → wasm-bindgen (--target web) → wasm-opt -Oz → the
# hand-kept JS layer and package.json from pkg-template/ → tsc over the public types. Prints the size.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '\033[1m[build]\033[0m %s\n' "$*"; }

say "cargo build --release --target wasm32-unknown-unknown"
cargo build --quiet --lib --release --target wasm32-unknown-unknown
raw_in=target/wasm32-unknown-unknown/release/mcp_retry_policy.wasm

rm -rf pkg.tmp && mkdir pkg.tmp
wasm-bindgen --target web --weak-refs --out-dir pkg.tmp --out-name mcp_retry_policy "$raw_in"
rm -f pkg.tmp/.gitignore pkg.tmp/package.json
# The features rustc enables by default for wasm32-unknown-unknown (1.82+); wasm-bindgen drops the
# target_features section that would tell wasm-opt.
node_modules/.bin/wasm-opt -Oz --strip-debug --strip-producers \
  --enable-bulk-memory --enable-bulk-memory-opt --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-mutable-globals --enable-reference-types --enable-multivalue \
  pkg.tmp/mcp_retry_policy_bg.wasm -o pkg.tmp/mcp_retry_policy_bg.wasm
cp -R pkg-template/. pkg.tmp/
rm -rf pkg && mv pkg.tmp pkg

say "tsc: the package's public types"
node_modules/.bin/tsc -p tests/types/tsconfig.json

w=pkg/mcp_retry_policy_bg.wasm
js_raw=$(find pkg -name "*.js" -exec cat {} + | wc -c)
js_gz=$(find pkg -name "*.js" -exec cat {} + | gzip -9 | wc -c)
# What a user's bundler ships: the browser entry bundled and minified (the .wasm stays a separate asset).
node_modules/.bin/esbuild pkg/browser.js --bundle --minify --format=esm --platform=browser \
  --log-level=error --outfile=target/size/browser.min.js
js_min=$(stat -c %s target/size/browser.min.js)
js_min_gz=$(gzip -9c target/size/browser.min.js | wc -c)
wasm_raw=$(stat -c %s "$w")
wasm_gz=$(gzip -9c "$w" | wc -c)
printf '\n| artifact | raw | gzip -9 |\n|---|---:|---:|\n'
printf '| wasm (%s) | %s B | %s B |\n' "$(basename "$w")" "$wasm_raw" "$wasm_gz"
printf '| JS as shipped in pkg/ (glue + layer, unminified) | %s B | %s B |\n' "$js_raw" "$js_gz"
printf '| JS bundled + minified (browser entry, esbuild) | %s B | %s B |\n' "$js_min" "$js_min_gz"
printf '| **total as a user ships it** (wasm + minified JS) | %s B | **%s B** |\n\n' "$(( wasm_raw + js_min ))" "$(( wasm_gz + js_min_gz ))"
