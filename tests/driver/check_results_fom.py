"""results.json's common fields: every kernel's `fom` and `roof`, checked
against `kmini describe --json` (names, units) and against the kernel's own
metrics in the same file (the value and the fraction of the roof recomputed
from them), at 1 and 2 ranks; and the summary's last line names each.

usage: check_results_fom.py KMINI MPIEXEC [MPIEXEC FLAGS...]
"""
import json
import math
import subprocess
import sys
import tempfile

kmini, mpiexec, flags = sys.argv[1], sys.argv[2], sys.argv[3:]
described = json.loads(subprocess.run([kmini, "describe", "--json"], check=True, capture_output=True,
                                      text=True).stdout)
assert described["schema_version"] == 1, described["schema_version"]
declared = {k["name"]: k for k in described["kernels"] if k["name"] != "run"}

SMALL = ["--set", "stream.n=65536", "--set", "stream.repeat=2", "--set", "rk4.n=32", "--set", "rk4.steps=20",
         "--set", "discount.dates=8", "--set", "discount.ids=64", "--set", "gram.A.random.rows=96",
         "--set", "gram.A.random.cols=300"]


def close(a, b, rel=1e-9):
    return math.isclose(a, b, rel_tol=rel)


def check(ranks):
    with tempfile.TemporaryDirectory() as out:
        cmd = [mpiexec, "-n", str(ranks), *flags, kmini, *SMALL, "--out", out]
        run = subprocess.run(cmd, capture_output=True, text=True)
        assert run.returncode == 0, (cmd, run.stdout, run.stderr)
        with open(out + "/results.json") as f:
            r = json.load(f)
    assert r["schema_version"] == 2, r["schema_version"]
    last = [line for line in run.stdout.splitlines() if line.strip()][-2]  # "results: ..." follows it
    assert last.startswith("figure of merit, all ranks: "), last
    for name, k in r["kernels"].items():
        fom, roof, decl = k["fom"], k["roof"], declared[name]["fom"]
        assert fom["name"] == decl["name"] and fom["unit"] == decl["unit"], (name, fom, decl)
        assert fom["higher_is_better"] is True
        assert fom["value"] > 0 and roof["value"] > 0 and 0 < roof["fraction"], (name, fom, roof)
        assert name + " " + fom["name"] + " = " in last, (name, last)
        if name == "stream":
            add = k["ops"]["add_f64"]
            assert close(fom["value"], add["aggregate_bandwidth_bytes_per_s"]), (fom, add)
            assert fom["seconds"] == add["best_seconds"], (fom, add)
            assert close(roof["value"], k["roof_bandwidth_bytes_per_s"] * ranks)
            assert close(roof["fraction"], add["fraction_of_roof"])
        elif name == "rk4":
            assert close(fom["value"], k["element_steps_per_s"])
            assert fom["seconds"] == k["loop_seconds"], (fom, k["loop_seconds"])
            rate = fom["value"] * k["bytes_per_element_step"]  # bytes/s of all ranks together
            assert close(rate, k["aggregate_bandwidth_bytes_per_s"])
            assert close(roof["fraction"], k["fraction_of_roof"])
            assert close(roof["value"], k["roof_bandwidth_bytes_per_s"] * ranks)
        elif name == "discount":
            kern = k["kernel"]
            assert close(fom["value"], kern["aggregate_bandwidth_bytes_per_s"]), (fom, kern)
            assert fom["seconds"] == kern["best_seconds"], (fom, kern)
            assert close(roof["fraction"], kern["fraction_of_roof"])
            assert close(roof["value"], kern["roof_bandwidth_bytes_per_s"] * ranks)
        elif name == "gram":
            assert close(fom["value"], k["useful_bit_ops_per_s"])
            assert fom["seconds"] == k["compute_seconds"], (fom, k["compute_seconds"])
            # The tensor-core engine (CUDA builds) is measured against its own probe.
            tc = k["engine"] == "tensor_core"
            probe = k["probe_tensor_core_peak_bit_ops_per_s" if tc else "probe_and_popcount_peak_bit_ops_per_s"]
            assert close(roof["value"], probe)
            assert close(roof["fraction"], k["executed_bit_ops_per_s"] / roof["value"])
            assert roof["name"] == ("tc probe" if tc else decl["roof"]), (roof["name"], decl["roof"])
        # a kernel added later: the generic checks above    assert set(r["kernels"]) == set(declared), sorted(r["kernels"])
    print(f"{ranks} rank(s): fom and roof of {', '.join(r['kernels'])} agree with describe and their metrics")


for ranks in (1, 2):
    check(ranks)
