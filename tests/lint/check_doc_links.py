#!/usr/bin/env python3
"""Every relative link of the documentation (README.md, CONTRIBUTING.md, docs/*.md, the READMEs
under src/ and tests/) names a file that exists and, for a #section of a Markdown file, a heading
that exists (GitHub's anchors: lower case, punctuation dropped, spaces as '-').
Usage: check_doc_links.py SOURCE_DIR"""
import re
import sys
from pathlib import Path

LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")
# Guide pages written in parallel with this check: a link to one of them is skipped only while the
# page does not exist (once it does, its links and anchors are checked like any other). Empty this
# set when they have landed.
PENDING = set()


def anchors(path):
    out, fenced = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
        m = None if fenced else re.match(r"^#+\s+(.*)", line)
        if m:
            out.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return out


def main():
    root = Path(sys.argv[1]).resolve()
    pages = [root / "README.md", root / "CONTRIBUTING.md", *sorted((root / "docs").glob("*.md")),
             *sorted((root / "src").glob("*/README.md")), *sorted((root / "tests").glob("*/README.md"))]
    bad = 0
    for page in (p for p in pages if p.is_file()):
        for m in LINK.finditer(page.read_text(encoding="utf-8")):
            link = m.group(1)
            if re.match(r"^[a-z]+:", link):
                continue
            path, _, anchor = link.partition("#")
            target = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(root)}: ({link})"
            if not target.exists() and str(target.relative_to(root)) in PENDING:
                continue
            if not target.exists():
                print(f"{where}: no such file")
                bad += 1
            elif anchor and target.suffix == ".md" and anchor not in anchors(target):
                print(f"{where}: no heading #{anchor} in {target.relative_to(root)}")
                bad += 1
    print(f"check_doc_links: {bad} broken link(s)")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
