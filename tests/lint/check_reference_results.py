#!/usr/bin/env python3
"""The GPU columns of the reference-results tables (README.md, docs/performance.md) against the
results.json files they cite in docs/results/: each figure, formatted as the tables write it, must
appear in its kernel's row. And the valid-result rule (docs/benchmarks.md, rule 2): a fraction of the
roof above 100 % in those tables is marked invalid in its cell, never shown as a plain figure.
Usage: check_reference_results.py SOURCE_DIR"""
import json
import math
import re
import sys
from pathlib import Path

# docs/benchmarks.md, "The valid-result rules", rule 2: a fraction of the roof above this is invalid.
VALID_LIMIT_PERCENT = 100.0

SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def sci(v):
    """1.38·10⁹ as the tables write it (three significant digits)."""
    e = math.floor(math.log10(v))
    return f"{v / 10**e:.2f}·10{str(e).translate(SUPERSCRIPT)}"


def tb(v):
    return f"{v / 1e12:.2f} TB/s"


def pct(f):
    return f"{round(100 * f)} %" if f >= 0.095 else f"{100 * f:.1f} %"


def get(folder, name, *path):
    j = json.loads((folder / name).read_text())
    for p in path:
        j = j[p]
    return j


def expected(results):
    h100, h200 = results / "h100-2026-11-25", results / "h200-2026-11-26"
    rows = []  # (row label start, [strings the row must hold])
    for folder in (h100, h200):
        s = get(folder, "bench_stream.json", "kernels", "stream", "ops", "add_f64", "bandwidth_bytes_per_s")
        rows.append(("| stream `add_f64`", [tb(s)]))
        for deck, label in (("bench_rk4.json", "| rk4, `bench/rk4.yaml`"), ("gpu_rk4.json", "| rk4, `gpu/rk4.yaml`")):
            k = get(folder, deck, "kernels", "rk4")
            rows.append((label, [f"{sci(k['element_steps_per_s'])}, {pct(k['fraction_of_roof'])}"]))
        g = get(folder, "bench_gram.json", "kernels", "gram")
        assert g["engine"] == "tensor_core", (folder, g["engine"])
        rows.append(("| gram, `bench/gram.yaml`, tensor cores",
                     [f"{sci(g['useful_bit_ops_per_s'])}, {pct(g['fraction_of_peak'])}"]))
    d = get(h100, "bench_discount.json", "kernels", "discount", "kernel")
    rows.append(("| discount, `bench/discount.yaml`",
                 [f"{tb(d['bandwidth_bytes_per_s_per_rank'])}, {pct(d['fraction_of_roof'])}"]))
    d = get(h200, "gpu_discount_flat.json", "kernels", "discount")
    assert d["policy"] == "flat"
    rows.append(("| discount, `bench/discount.yaml`",
                 [f"{tb(d['kernel']['bandwidth_bytes_per_s_per_rank'])}, {pct(d['kernel']['fraction_of_roof'])}"]))
    g = get(h100 / "popcount_engine", "bench_gram.json", "kernels", "gram")
    assert g["engine"] == "popcount"
    rows.append(("| gram, `bench/gram.yaml`, popcount",
                 [f"{sci(g['useful_bit_ops_per_s'])}, {pct(g['fraction_of_peak'])}"]))
    g = get(h200 / "first_run", "peers.json", "gram", "kmini")
    rows.append(("| gram, `bench/gram.yaml`, popcount",
                 [f"{sci(g['useful_bit_ops_per_s'])}, {pct(g['fraction_of_peak'])}"]))
    return rows


def expected_latest(results):
    """README's column of the H200 run of 2026-11-27 (the performance record has its own table)."""
    f = results / "h200-2026-11-27"
    rows = [("| stream `add_f64`", [tb(get(f, "bench_stream.json", "kernels", "stream", "ops", "add_f64",
                                         "bandwidth_bytes_per_s"))])]
    for deck, label in (("bench_rk4.json", "| rk4, `bench/rk4.yaml`"), ("gpu_rk4.json", "| rk4, `gpu/rk4.yaml`")):
        k = get(f, deck, "kernels", "rk4")
        rows.append((label, [f"{sci(k['element_steps_per_s'])}, {pct(k['fraction_of_roof'])}"]))
    d = get(f, "bench_discount.json", "kernels", "discount", "kernel")
    rows.append(("| discount, `bench/discount.yaml`",
                 [f"{tb(d['bandwidth_bytes_per_s_per_rank'])}, {pct(d['fraction_of_roof'])}"]))
    g = get(f, "peers.json", "gram", "kmini")
    rows.append(("| gram, `bench/gram.yaml`, popcount",
                 [f"{sci(g['useful_bit_ops_per_s'])}, {pct(g['fraction_of_peak'])}"]))
    g = get(f, "bench_gram.json", "kernels", "gram")
    assert g["engine"] == "tensor_core" and g["tensor_core_tile"] == "warp32x64", g["engine"]
    rows.append(("| gram, `bench/gram.yaml`, tensor cores",
                 [f"{sci(g['useful_bit_ops_per_s'])}, {pct(g['fraction_of_peak'])}"]))
    return rows


def reference_table(lines):
    """The rows of the table under the '## Reference results' heading."""
    start = next((i for i, l in enumerate(lines) if l.strip() == "## Reference results"), None)
    if start is None:
        return []
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        if line.startswith("|") and not re.match(r"^\|[-| ]+\|$", line):
            rows.append(line)
    return rows


def unmarked_invalid(rows):
    """(row label, cell) of every cell with a fraction above the valid limit that does not say it is invalid."""
    found = []
    for row in rows:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        for cell in cells[1:]:
            fractions = [float(m) for m in re.findall(r"(\d+(?:\.\d+)?)\s*%", cell)]
            if any(f > VALID_LIMIT_PERCENT for f in fractions) and "invalid" not in cell.lower():
                found.append((cells[0], cell))
    return found


def main():
    root = Path(sys.argv[1])
    rows = expected(root / "docs" / "results")
    latest = expected_latest(root / "docs" / "results")
    failures = 0
    for doc, prefix in ((root / "README.md", ""), (root / "docs" / "performance.md", "inputs/")):
        lines = doc.read_text().splitlines()
        for label, wanted in rows:
            label = label.replace("`bench/", f"`{prefix}bench/").replace("`gpu/", f"`{prefix}gpu/")
            if prefix and label.startswith("| stream"):
                label = "| stream `add_f64`, `inputs/bench/stream.yaml`"
            if prefix and "tensor cores" in label:
                label = label.replace("tensor cores", "tensor-core engine")
            if prefix and label.startswith("| gram") and "popcount" in label:
                label = label.replace(", popcount", ", popcount engine")
            row = [l for l in lines if l.startswith(label)]
            for w in wanted:
                if not row or not any(w in r for r in row):
                    print(f"{doc.name}: the row '{label}' does not hold {w!r} (from docs/results)")
                    failures += 1
    readme = (root / "README.md").read_text().splitlines()
    for label, wanted in latest:
        row = [l for l in readme if l.startswith(label)]
        for w in wanted:
            if not row or not any(r.rstrip().endswith(f"| {w} |") for r in row):
                print(f"README.md: the row '{label}' does not end with {w!r} (from docs/results/h200-2026-11-27)")
                failures += 1
    for doc in (root / "README.md", root / "docs" / "performance.md"):
        rows = reference_table(doc.read_text().splitlines())
        if not rows:
            print(f"{doc.name}: no table under '## Reference results'")
            failures += 1
        for label, cell in unmarked_invalid(rows):
            print(f"{doc.name}: the row '{label}' shows '{cell}': above {VALID_LIMIT_PERCENT:g} % of its roof is "
                  f"invalid (docs/benchmarks.md, the valid-result rules) and must say so in the cell")
            failures += 1
    if failures:
        sys.exit(1)
    print(f"reference results: {len(rows) + len(latest)} figures checked in README.md and docs/performance.md")


if __name__ == "__main__":
    main()
