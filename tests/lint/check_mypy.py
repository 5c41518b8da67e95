#!/usr/bin/env python3
"""The Python package kmini (src/python/kmini, with its compiled module's stub) and every ```python
block of README.md and docs/*.md that runs as a test (docs.python_examples, the pages' own tests) pass
`mypy --strict`: the
signatures, results and Literal types are what users' type checkers see. An error in a block is
reported at its page and line. Skipped (exit 77), saying why, where this interpreter has no mypy.

Usage: check_mypy.py SOURCE_DIR CACHE_DIR"""
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path


def main():
    root, cache = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    if importlib.util.find_spec("mypy") is None:
        print(f"mypy is not installed for {sys.executable} (Debian: python3-mypy): skipped")
        sys.exit(77)
    sys.path.insert(0, str(root / "tests" / "python"))
    from run_doc_examples import blocks

    pages = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    with tempfile.TemporaryDirectory(prefix="kmini-mypy-") as work:
        where = {}  # a block's file: (its page, the page's line of the block's first line)
        for page in pages:
            if not page.is_file():
                continue
            for line, code in blocks(page, skip=("<!-- no-test -->",)):  # the page tests' blocks too
                name = re.sub(r"\W", "_", f"{page.relative_to(root)}_{line}") + ".py"
                (Path(work) / name).write_text(code, encoding="utf-8")
                where[name] = (page.relative_to(root), line)
        if not where:
            print("no python blocks found: README.md has one, so the pages were not read")
            sys.exit(1)
        env = dict(os.environ, MYPYPATH=str(root / "src" / "python"))
        command = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache), "--no-color-output",
                   str(root / "src" / "python" / "kmini")] + sorted(str(Path(work) / name) for name in where)
        r = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=280)
        out = r.stdout + r.stderr
        for name, (page, first) in where.items():  # a block's file and line as the page's
            out = re.sub(re.escape(str(Path(work) / name)) + r":(\d+):",
                         lambda m: f"{page}:{first + int(m.group(1)) - 1}:", out)
    print(out, end="")
    print(f"mypy --strict: the package kmini and {len(where)} python blocks of README.md and docs/*.md"
          + ("" if r.returncode == 0 else f": FAILED (exit {r.returncode})"))
    sys.exit(1 if r.returncode else 0)


if __name__ == "__main__":
    main()
