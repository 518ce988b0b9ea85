#!/usr/bin/env python3
"""The docs' code blocks come from files the tests run.

In README.md and docs/src/*.md a fenced block right after `<!-- snippet: PATH#ANCHOR -->` is the region of PATH
between the comment lines `ANCHOR: ANCHOR` and `ANCHOR_END: ANCHOR` (mdBook's anchor convention; any comment
syntax), the anchor lines dropped and the common indentation removed. PATH#ANCHOR may also be PATH alone: the
whole file, minus every anchor line and a leading `// run:` header line.

    python3 scripts/snippets.py           # check: exit 1 naming every block that differs from its file
    python3 scripts/snippets.py --write   # rewrite those blocks from their files

tests/js/docs-snippets.test.mjs runs the same check (and runs the files).
"""
import re
import sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
MARK = re.compile(r"^<!-- snippet: (\S+?)(?:#(\S+))? -->$")
ANCHOR = re.compile(r"\bANCHOR(?:_END)?: [\w-]+")
HEADER = re.compile(r"^(//|#) run: ")


def docs():
    yield root / "README.md"
    yield from sorted((root / "docs" / "src").glob("*.md"))


def region(path, anchor):
    lines = (root / path).read_text().split("\n")
    if anchor is None:
        out = [l for l in lines if not ANCHOR.search(l)]
        while out and HEADER.match(out[0]):
            out.pop(0)
    else:
        try:
            start = next(i for i, l in enumerate(lines) if re.search(rf"\bANCHOR: {re.escape(anchor)}\b", l))
            end = next(i for i, l in enumerate(lines) if i > start and re.search(rf"\bANCHOR_END: {re.escape(anchor)}\b", l))
        except StopIteration:
            raise SystemExit(f"{path}: no region {anchor} (ANCHOR: {anchor} … ANCHOR_END: {anchor})")
        out = [l for l in lines[start + 1 : end] if not ANCHOR.search(l)]
    while out and not out[-1].strip():
        out.pop()
    while out and not out[0].strip():
        out.pop(0)
    indent = min((len(l) - len(l.lstrip()) for l in out if l.strip()), default=0)
    return [l[indent:] for l in out]


def blocks(text):
    """(mark line index, fence start, fence end, path, anchor) of each marked block."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i])
        if m:
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j >= len(lines) or not lines[j].startswith("```"):
                raise SystemExit(f"a snippet mark not followed by a code block: {lines[i]}")
            k = j + 1
            while k < len(lines) and not lines[k].startswith("```"):
                k += 1
            yield i, j, k, m.group(1), m.group(2)
            i = k
        i += 1


def main():
    write = "--write" in sys.argv
    stale = []
    for doc in docs():
        text = doc.read_text()
        lines = text.split("\n")
        out = []
        last = 0
        for _, j, k, path, anchor in blocks(text):
            want = region(path, anchor)
            if lines[j + 1 : k] != want:
                stale.append(f"{doc.relative_to(root)}:{j + 1}: {path}{'#' + anchor if anchor else ''}")
            out += lines[last : j + 1] + want
            last = k
        out += lines[last:]
        if write and out != lines:
            doc.write_text("\n".join(out))
    if stale and not write:
        print("code blocks that differ from their files (python3 scripts/snippets.py --write):", *stale, sep="\n  ")
        sys.exit(1)
    print(f"snippets: {'rewritten' if write else 'all fresh'}{f' ({len(stale)} updated)' if write and stale else ''}")


if __name__ == "__main__":
    main()
