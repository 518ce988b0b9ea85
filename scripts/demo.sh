#!/usr/bin/env bash
# The main job: set up what is missing, build the package, run the demo, and build the book (target/book).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
node scripts/demo.mjs
mdbook build docs
echo "the book: target/book/index.html (or: mdbook serve docs)"
