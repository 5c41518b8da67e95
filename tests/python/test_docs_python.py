"""Every ```python block of docs/python.md runs as written (in a fresh
interpreter each, so the MPI example starts MPI as a user's script does)."""
import os
import re
import subprocess
import sys

import pytest

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "python.md")
with open(DOC, encoding="utf-8") as f:
    BLOCKS = re.findall(r"```python\n(.*?)```", f.read(), re.S)


def test_the_page_has_an_example_per_kernel():
    for name in ("gram", "rk4", "discount"):
        assert any(f"kmini.{name}(" in b for b in BLOCKS), name


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_each_example_runs(index):
    code = BLOCKS[index]
    if "mpi4py" in code:
        pytest.importorskip("mpi4py")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=os.environ)
    assert r.returncode == 0, r.stderr[-3000:]
