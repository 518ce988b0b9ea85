#!/usr/bin/env python3
"""Copies the sizes `scripts/build.sh` measured (target/size/table.md) into the book's Size table (docs/src/runtimes.md).

Each row keeps its label and any note after the gzip number; only the numbers change.
tests/js/docs-fresh.test.mjs fails when the wasm rows differ from the built modules.
"""
import re
import sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
table = (root / 'target/size/table.md').read_text()
readme_path = root / 'docs/src/runtimes.md'
readme = readme_path.read_text()

def spaced(n):
    return f'{int(n):,}'.replace(',', ' ')

rows = {}
for line in table.splitlines():
    m = re.match(r'^\| (.+?) \| (\d+) B \| (?:\*\*)?(\d+) B(?:\*\*)? \|$', line)
    if m:
        rows[m.group(1)] = (m.group(2), m.group(3))
labels = {
    'client wasm': 'client wasm',
    'server wasm (ledger)': 'server wasm (ledger)',
    'client JS, bundled + minified': 'client JS, bundled + minified',
}
start = readme.index('\n## Size\n')
end = readme.find('\n## ', start + 1)
end = len(readme) if end < 0 else end
section = readme[start:end]
changed = 0
for label, key in labels.items():
    if key not in rows:
        sys.exit(f'target/size/table.md has no "{key}" row')
    raw, gz = rows[key]
    pat = re.compile(r'^(\| ' + re.escape(label) + r' \| )[\d ]+ B( \| (?:\*\*)?)[\d ]+ B', re.M)
    section, n = pat.subn(lambda m: f'{m.group(1)}{spaced(raw)} B{m.group(2)}{spaced(gz)} B', section)
    if n != 1:
        sys.exit(f'docs/src/runtimes.md Size table: no single "{label}" row')
    changed += n
readme_path.write_text(readme[:start] + section + readme[end:])
print(f'{changed} rows set from target/size/table.md')
