#!/usr/bin/python3
"""ctest: run a tiny strong+weak scaling study at 1 and 2 ranks and check its products.

usage: check_scaling_study.py OUTDIR LAUNCHER_TEMPLATE KMINI

  * stream, strong and weak: the CSV, the PNGs and summary.md;
  * a weak study whose --set names each kernel's scaled key (its declaration's scaling.size_key): that value
    is the one-rank size the study grows, and every size the CSV and summary.md report is the one the
    run's own results.json records (`deck`), which is the declared growth of the --set value;
  * a kmini that runs another size than the study asks for (a wrapper forcing the key): the point
    reports the size that ran and is invalid, never the size the study intended.
"""
import csv
import json
import math
import os
import re
import shutil
import stat
import subprocess
import sys

out, launcher, kmini = sys.argv[1:4]
try:  # scaling.py reads decks with PyYAML; an interpreter without it (a GPU node's) skips
    import yaml  # noqa: F401
except ImportError:
    print("skipped: this python3 has no PyYAML, which scripts/scaling.py needs")
    sys.exit(77)
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(root, "scripts"))
import kmini_results as kr  # noqa: E402

shutil.rmtree(out, ignore_errors=True)
scaling = [sys.executable, os.path.join(root, "scripts", "scaling.py"), "study"]


def study(deck, binary, where, *args):
    cmd = scaling + [os.path.join(root, "inputs", deck), "--launcher", launcher, "--kmini", binary, "--out", where,
                     "--quiet"] + list(args)
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=kr.launch_env(2))
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {done.returncode}\n{done.stdout}")
    with open(os.path.join(where, "scaling.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(where, "summary.md")) as f:
        summary = f.read()
    return rows, summary, done.stdout


def summary_rows(summary):
    """{(kernel, mode, ranks): (size_key, size, verdict, figure of merit cell, roof cell)} of summary.md's table."""
    found = {}
    for line in summary.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 12 and cells[1] in ("strong", "weak"):
            key, _, size = cells[3].partition("=")
            found[(cells[0], cells[1], int(cells[2]))] = (key, size, cells[11], cells[6], cells[7])
    return found


def point_results(where, row):
    with open(os.path.join(where, row["kernel"], row["mode"], f"np{row['ranks']}", "results.json")) as f:
        return json.load(f)


def recorded_size(where, row):
    """The scaled key's value in the point's own results.json."""
    return kr.get(point_results(where, row), ["deck"] + row["size_key"].split("."))


# --- stream, strong and weak ---
stream_out = os.path.join(out, "stream")
rows, summary, _ = study("default.yaml", kmini, stream_out, "--kernels", "stream", "--ranks", "1,2", "--mode",
                         "both", "--set", "stream.n=20000", "--set", "stream.repeat=2")
assert len(rows) == 4, rows
for r in rows:
    assert r["kernel"] == "stream" and r["mode"] in ("strong", "weak"), r
    assert float(r["seconds"]) > 0 and float(r["efficiency"]) > 0, r
    assert int(r["size"]) == recorded_size(stream_out, r), r
assert sorted(int(r["ranks"]) for r in rows) == [1, 1, 2, 2]
# stream.n is per rank: strong scaling halves it, weak keeps it, from the --set value.
sizes = {(r["mode"], int(r["ranks"])): int(r["size"]) for r in rows}
assert sizes == {("strong", 1): 20000, ("strong", 2): 10000, ("weak", 1): 20000, ("weak", 2): 20000}, sizes
for mode in ("strong", "weak"):
    png = os.path.join(stream_out, f"stream_{mode}.png")
    with open(png, "rb") as f:
        head = f.read(8)
    assert head == b"\x89PNG\r\n\x1a\n" and os.path.getsize(png) > 10000, png
assert "| stream | strong | 2 | stream.n=10000 |" in summary, summary

# --- a weak study sized by --set of every kernel's scaled key ---
described = kr.describe(kmini)
rules = kr.scaling_rules(described)
tiny = {"rk4": ["rk4.n=16", "rk4.steps=4"], "discount": ["discount.dates=3", "discount.ids=50", "discount.terms=2"],
        "gram": ["gram.A.random.rows=64", "gram.A.random.cols=256"]}
sets = [a for k in tiny for s in tiny[k] for a in ("--set", s)]
weak_out = os.path.join(out, "weak")
rows, summary, _ = study("scaling.yaml", kmini, weak_out, "--kernels", ",".join(tiny), "--ranks", "1,2", "--mode",
                         "weak", *sets)
table = summary_rows(summary)
assert len(rows) == 2 * len(tiny) and len(table) == len(rows), (rows, summary)
for r in rows:
    key = rules[r["kernel"]]["key"]
    base = int(next(s.split("=")[1] for s in tiny[r["kernel"]] if s.startswith(key + "=")))
    p = int(r["ranks"])
    growth = rules[r["kernel"]]["growth"]
    expected = {"linear": base * p, "sqrt": round(base * math.sqrt(p)), "per_rank": base}[growth]
    ran = recorded_size(weak_out, r)
    assert r["size_key"] == key and ran == expected, (r, ran, expected)
    assert int(r["size"]) == ran and int(r["size_intended"]) == ran, (r, ran)
    assert table[(r["kernel"], "weak", p)][:2] == (key, str(ran)), (table[(r["kernel"], "weak", p)], ran)
    assert "does not" not in r["verdict"] and "not the study's" not in r["verdict"], r
    # The figure of merit in the kernel's own unit and the roof's fraction, as the run wrote them.
    res = point_results(weak_out, r)["kernels"][r["kernel"]]
    cells = table[(r["kernel"], "weak", p)]
    assert cells[3] == f"{res['fom']['value']:.4g} {res['fom']['unit']}", (cells, res["fom"])
    assert cells[4].startswith(f"{100 * res['roof']['fraction']:.3g} % = ") and res["roof"]["name"] in cells[4], cells

# --- a --set of the scaled key that is no size: one line naming it, exit 2, nothing written ---
bad_out = os.path.join(out, "bad")
done = subprocess.run(scaling + [os.path.join(root, "inputs", "scaling.yaml"), "--kernels", "rk4", "--kmini", kmini,
                                 "--out", bad_out, "--set", "rk4.n=lots"], stdout=subprocess.PIPE,
                      stderr=subprocess.PIPE, text=True)
assert done.returncode == 2 and done.stderr.count("\n") == 1, (done.returncode, done.stderr)
assert "--set rk4.n=lots" in done.stderr and "positive integer" in done.stderr, done.stderr
assert not os.path.exists(bad_out), bad_out

# --- a kmini that runs another size than the study asks for ---
forced = os.path.join(out, "forcing-kmini")
os.makedirs(out, exist_ok=True)
with open(forced, "w") as f:
    f.write(f'#!/bin/sh\n[ "$1" = describe ] && exec "{kmini}" "$@"\nexec "{kmini}" "$@" --set rk4.n=16\n')
os.chmod(forced, os.stat(forced).st_mode | stat.S_IXUSR)
forced_out = os.path.join(out, "forced")
rows, summary, text = study("scaling.yaml", forced, forced_out, "--kernels", "rk4", "--ranks", "1,2", "--mode", "weak",
                            "--set", "rk4.n=16", "--set", "rk4.steps=4")
table = summary_rows(summary)
one, two = sorted(rows, key=lambda r: int(r["ranks"]))
assert recorded_size(forced_out, two) == 16 and int(two["size"]) == 16 and int(two["size_intended"]) == 23, two
assert two["valid"] == "False" and "results.json records rk4.n=16, not the study's rk4.n=23" in two["verdict"], two
assert table[("rk4", "weak", 2)][1] == "16" and table[("rk4", "weak", 2)][2].startswith("INVALID"), table
assert int(one["size"]) == 16 and "not the study's" not in one["verdict"], one
assert "not the study's rk4.n=23" in text, text
print("scaling study: CSV, PNGs and summary OK; sizes read back from every run's results.json")
