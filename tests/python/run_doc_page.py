#!/usr/bin/env python3
"""Runs a guide page's commands in order, in one temporary directory: every ```sh block (bash -e) and
every ```python block marked `<!-- page-test -->` (left to this test by docs.python_examples, since it
needs the files the commands before it wrote). `kmini` is the build's binary (first on PATH),
`python3` this interpreter, `scripts/` the source tree's. Exits 77 (skipped) when the page needs RDKit and this Python has none.

Usage: run_doc_page.py PAGE KMINI SOURCE_DIR
"""
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

FENCE = re.compile(r"^```(sh|python)\s*$")
MARK = "<!-- page-test -->"


def blocks(path):
    """(line, language, code) of the page's sh blocks and its marked python blocks, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m:
            previous = next((l.strip() for l in reversed(lines[:i]) if l.strip()), "")
            start = i + 1
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                i += 1
            if m.group(1) == "sh" or previous == MARK:
                out.append((start, m.group(1), "\n".join(lines[start:i]) + "\n"))
        i += 1
    return out


def main():
    page, kmini, source = Path(sys.argv[1]), Path(sys.argv[2]).resolve(), Path(sys.argv[3]).resolve()
    found = blocks(page)
    text = page.read_text(encoding="utf-8")
    if "rdkit" in text.lower():
        try:
            import rdkit  # noqa: F401
        except ImportError:
            print("skipped: the page's commands need RDKit (apt-get install python3-rdkit rdkit-data)")
            sys.exit(77)
        data = "/usr/share/RDKit/Data/NCI/first_5K.smi"
        if data in text and not Path(data).exists():
            print("skipped: no rdkit-data (apt-get install rdkit-data)")
            sys.exit(77)
    env = dict(os.environ)
    bin_dir = Path(tempfile.mkdtemp(prefix="kmini-page-bin-"))
    os.symlink(sys.executable, bin_dir / "python3")  # the page's python3 is this interpreter
    env["PATH"] = os.pathsep.join([str(kmini.parent), str(bin_dir), env.get("PATH", "")])
    if env.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve()) for p in env["PYTHONPATH"].split(os.pathsep) if p)
    with tempfile.TemporaryDirectory(prefix="kmini-page-") as work:
        os.symlink(source / "scripts", Path(work) / "scripts")
        for line, language, code in found:
            cmd = ["bash", "-e", "-o", "pipefail", "-c", code] if language == "sh" else [sys.executable, "-c", code]
            r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=300)
            print(f"--- {page.name}:{line} ({language}), exit {r.returncode}\n{r.stdout}{r.stderr}")
            if r.returncode != 0:
                sys.exit(1)
    print(f"{len(found)} blocks of {page.name} ran")


if __name__ == "__main__":
    main()
