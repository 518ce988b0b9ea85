#!/usr/bin/env bash
# The main job: set up what is missing, build the package, and run the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
node scripts/demo.mjs
