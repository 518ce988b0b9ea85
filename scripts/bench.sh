#!/usr/bin/env bash
# The benchmarks: set up what is missing, build, then print markdown tables (also written to
# target/bench.md): the JS/wasm benchmarks against peers in the same run, and the native core (criterion).
# `--docs` then writes the tables into the book's benchmarks page, docs/src/benchmarks.md (scripts/docs-bench.py).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
node benches/js/run.mjs
printf '\n## 7. The native core (criterion, mean of its samples)\n\n| benchmark | mean |\n|---|---:|\n' | tee -a target/bench.md
cargo bench --quiet --bench core -- --noplot >/dev/null 2>&1 || cargo bench --quiet --bench core >/dev/null
for f in target/criterion/*/new/estimates.json; do
  name=$(basename "$(dirname "$(dirname "$f")")")
  node -e '
    const e = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).mean.point_estimate;
    const s = e >= 1e6 ? (e / 1e6).toFixed(2) + " ms" : e >= 1e3 ? (e / 1e3).toFixed(2) + " µs" : e.toFixed(1) + " ns";
    console.log(`| ${process.argv[2].replace(/_/g, " ")} | ${s} |`);' "$f" "$name" | tee -a target/bench.md
done
if [ "${1:-}" = "--docs" ] || [ "${1:-}" = "--readme" ]; then
  python3 scripts/docs-bench.py
fi
