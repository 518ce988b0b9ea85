#!/usr/bin/env python3
"""Replaces every benchmark table of the book's benchmarks page (docs/src/benchmarks.md) with the same-titled table of target/bench.md (the last full
`bash scripts/bench.sh` run). Prose between the tables is kept; a section the run does not have is left alone.
Usage: python3 scripts/docs-bench.py [bench.md]  (after scripts/bench.sh; or a partial run's file,
target/bench-partial.md from `node benches/js/run.mjs --only=...`, to refresh just those sections)."""
import re
import sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
bench = Path(sys.argv[1]).read_text() if len(sys.argv) > 1 else (root / "target/bench.md").read_text()
readme_path = root / "docs/src/benchmarks.md"
readme = readme_path.read_text()


def tables(text, level):
    """(title, table) for each `level` heading followed (after a blank line) by a markdown table, in order."""
    out = []
    pat = re.compile(r"^" + "#" * level + r" (.+)\n\n((?:\|.*\n)+)", re.M)
    for m in pat.finditer(text):
        out.append((m.group(1).strip(), m.group(2), m.start(2), m.end(2)))
    return out


fresh = tables(bench, 2)
stamp = re.search(r"^\d{4}-\d{2}-\d{2} · .*$", bench, re.M)
replaced = 0
# Titles repeat (three storm tables share a prefix): match the n-th occurrence of each title.
seen = {}
for title, table, _, _ in fresh:
    n = seen.get(title, 0)
    seen[title] = n + 1
    hits = [t for t in tables(readme, 2) if t[0] == title]
    if n >= len(hits):
        print(f"docs/src/benchmarks.md has no section '{title}' #{n + 1}: skipped", file=sys.stderr)
        continue
    _, _, start, end = hits[n]
    readme = readme[:start] + table + readme[end:]
    replaced += 1
if stamp:
    readme = re.sub(r"(measured in the same run; no test asserts a time\. )Latest run \(.*?read the ratios\)",
                    lambda m: m.group(1) + f"Latest run ({stamp.group(0)}; absolute times on this 2-core machine move by up to 2× between runs — read the ratios)",
                    readme)
readme_path.write_text(readme)
print(f"{replaced} tables replaced")
