#!/usr/bin/env python3
"""Runs every ```python block of README.md and docs/*.md, so the examples cannot rot.

Each block runs in its own interpreter (this one), in a fresh temporary directory, with the
environment it was given (PYTHONPATH holds the build's module). A block right after a line
`<!-- no-test -->` is skipped (for fragments that are not meant to run alone), and so is one right
after `<!-- page-test -->`: the page's own test runs it after the page's commands, whose files it
reads (tests/python/run_doc_page.py). A page that does not
exist is not an error: the set of pages is whatever docs/ holds.

Usage: run_doc_examples.py SOURCE_DIR [--list]
"""
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

FENCE = re.compile(r"^```python\s*$")
SKIP = ("<!-- no-test -->", "<!-- page-test -->")


def blocks(path, skip=SKIP):
    """(first line number, code) of each python block of a Markdown file, those after a `skip` line left out."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        if FENCE.match(lines[i]):
            previous = next((l.strip() for l in reversed(lines[:i]) if l.strip()), "")
            start, i = i + 1, i + 1
            while i < len(lines) and not lines[i].startswith("```"):
                i += 1
            if i == len(lines):
                raise SystemExit(f"{path}:{start}: a ```python block is never closed")
            if previous not in skip:
                out.append((start + 1, "\n".join(lines[start:i]) + "\n"))
        i += 1
    return out


def main():
    root = Path(sys.argv[1])
    pages = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    found = [(page, line, code) for page in pages if page.is_file() for line, code in blocks(page)]
    if "--list" in sys.argv:
        for page, line, _ in found:
            print(f"{page.relative_to(root)}:{line}")
        return
    # The blocks run elsewhere: PYTHONPATH's entries as absolute paths.
    env = dict(os.environ)
    if env.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve()) for p in env["PYTHONPATH"].split(os.pathsep) if p)
    failures = 0
    for page, line, code in found:
        where = f"{page.relative_to(root)}:{line}"
        with tempfile.TemporaryDirectory(prefix="kmini-doc-") as work:
            r = subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True,
                               text=True, timeout=240)
        if r.returncode != 0:
            failures += 1
            print(f"FAILED {where} (exit {r.returncode}):\n{r.stdout}{r.stderr}")
        else:
            print(f"ok     {where}")
    print(f"{len(found) - failures} of {len(found)} python blocks in README.md and docs/*.md ran")
    if not found:
        print("no python blocks found: README.md has one, so the pages were not read")
        sys.exit(1)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
