#!/usr/bin/env python3
"""Writes the last full peer-matrix run (target/peers/table.md, from `bash scripts/peers.sh`) into the book's
page docs/src/testing.md, section "## The servers people run: a conformance matrix", between its two markers. The prose around the
markers is kept. Without the section, adds it (heading and markers) right after "## The fault zoo".
Usage: bash scripts/peers.sh --docs   (or: python3 scripts/docs-peers.py [table.md])"""
import re
import sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
source = Path(sys.argv[1]) if len(sys.argv) > 1 else root / "target/peers/table.md"
if not source.exists():
    sys.exit(f"{source} not found: run the full matrix first (bash scripts/peers.sh)")
table = source.read_text().strip() + "\n"
if not table.startswith("Peer matrix: "):
    sys.exit(f"{source} is not a full run's table (a slice or a subset writes slice.md / partial.md)")

HEADING = "## The servers people run: a conformance matrix"
START, END = "<!-- peers-matrix: written by scripts/peers.sh --docs -->", "<!-- /peers-matrix -->"
readme_path = root / "docs/src/testing.md"
readme = readme_path.read_text()

if HEADING not in readme:
    zoo = re.search(r"^## The fault zoo.*$", readme, re.M)
    if not zoo:
        sys.exit("docs/src/testing.md has no '## The fault zoo' section to place the matrix after")
    nxt = re.compile(r"^## ", re.M).search(readme, zoo.end())
    at = nxt.start() if nxt else len(readme)
    readme = readme[:at] + f"{HEADING}\n\n{START}\n{END}\n\n" + readme[at:]

section_start = readme.index(HEADING)
nxt = re.compile(r"^## ", re.M).search(readme, section_start + len(HEADING))
section_end = nxt.start() if nxt else len(readme)
section = readme[section_start:section_end]
if START not in section or END not in section:
    sys.exit(f"the section '{HEADING}' has lost its markers ({START} … {END})")
a = section.index(START) + len(START)
b = section.index(END)
section = section[:a] + "\n" + table + section[b:]
readme_path.write_text(readme[:section_start] + section + readme[section_end:])
print(f"docs/src/testing.md: the peer matrix written from {source.relative_to(root) if source.is_relative_to(root) else source}")
