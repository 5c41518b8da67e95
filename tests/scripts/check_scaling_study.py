#!/usr/bin/python3
"""ctest: run a tiny strong+weak scaling study at 1 and 2 ranks and check its products.

usage: check_scaling_study.py OUTDIR LAUNCHER_TEMPLATE KMINI
"""
import csv
import os
import shutil
import subprocess
import sys

out, launcher, kmini = sys.argv[1:4]
try:  # scaling.py reads decks with PyYAML; an interpreter without it (a GPU node's) skips
    import yaml  # noqa: F401
except ImportError:
    print("skipped: this python3 has no PyYAML, which scripts/scaling.py needs")
    sys.exit(77)
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
shutil.rmtree(out, ignore_errors=True)
cmd = [sys.executable, os.path.join(root, "scripts", "scaling.py"), "study", os.path.join(root, "inputs", "default.yaml"),
       "--kernels", "stream", "--ranks", "1,2", "--mode", "both", "--launcher", launcher, "--kmini", kmini,
       "--out", out, "--quiet", "--set", "stream.n=20000", "--set", "stream.repeat=2"]
subprocess.run(cmd, check=True)

with open(os.path.join(out, "scaling.csv"), newline="") as f:
    rows = list(csv.DictReader(f))
assert len(rows) == 4, rows
for r in rows:
    assert r["kernel"] == "stream" and r["mode"] in ("strong", "weak"), r
    assert float(r["seconds"]) > 0 and float(r["efficiency"]) > 0, r
assert sorted(int(r["ranks"]) for r in rows) == [1, 1, 2, 2]
# Strong scaling halves the per-rank size; weak keeps it.
sizes = {(r["mode"], int(r["ranks"])): int(r["size"]) for r in rows}
assert sizes[("strong", 2)] == sizes[("strong", 1)] // 2 and sizes[("weak", 2)] == sizes[("weak", 1)], sizes
for mode in ("strong", "weak"):
    png = os.path.join(out, f"stream_{mode}.png")
    with open(png, "rb") as f:
        head = f.read(8)
    assert head == b"\x89PNG\r\n\x1a\n" and os.path.getsize(png) > 10000, png
with open(os.path.join(out, "summary.md")) as f:
    assert "| stream | strong | 2 |" in f.read()
print("scaling study: CSV, PNGs and summary OK")
