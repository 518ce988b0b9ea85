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
js_raw=$(cat pkg/*.js | wc -c)
js_gz=$(cat pkg/*.js | gzip -9 | wc -c)
printf '\n| artifact | raw | gzip -9 |\n|---|---:|---:|\n'
printf '| wasm (%s) | %s B | %s B |\n' "$(basename "$w")" "$(stat -c %s "$w")" "$(gzip -9c "$w" | wc -c)"
printf '| JS (glue + layer) | %s B | %s B |\n' "$js_raw" "$js_gz"
printf '| total | %s B | %s B |\n\n' "$(( $(stat -c %s "$w") + js_raw ))" "$(( $(gzip -9c "$w" | wc -c) + js_gz ))"
