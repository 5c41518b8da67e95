"""results.json's time to solution: every kernel's `phases` (seconds, none
negative) add up to its `time_to_solution_seconds`, which lies between the
kernel's timed part (`fom.seconds`) and the wall time of the whole run as
this script measured it from outside; the kernels' times to solution together
fit in that wall time too. Every kernel at 1 and 2 ranks, and gram reading a
file and writing every output (its read, pack, compute, outputs, write and
verification phases are there).

usage: check_results_phases.py KMINI MPIEXEC [MPIEXEC FLAGS...]
"""
import json
import math
import pathlib
import subprocess
import sys
import tempfile
import time

kmini, mpiexec, flags = sys.argv[1], sys.argv[2], sys.argv[3:]
root = pathlib.Path(__file__).resolve().parents[2]  # the decks' input paths are relative to it

SMALL = ["--set", "stream.n=65536", "--set", "stream.repeat=2", "--set", "rk4.n=32", "--set", "rk4.steps=20",
         "--set", "discount.dates=8", "--set", "discount.ids=64", "--set", "gram.A.random.rows=96",
         "--set", "gram.A.random.cols=300"]
GRAM_FILE = [str(root / "tests/data/gram/sparse.yaml")]
GRAM_PHASES = {"startup", "read", "pack", "compute", "outputs", "write", "verification"}


def run(ranks, args):
    with tempfile.TemporaryDirectory() as out:
        cmd = [mpiexec, "-n", str(ranks), *flags, kmini, *args, "--out", out]
        started = time.monotonic()
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
        wall = time.monotonic() - started
        assert done.returncode == 0, (cmd, done.stdout, done.stderr)
        with open(out + "/results.json") as f:
            return json.load(f), wall


def check(ranks, args, expect=None):
    r, wall = run(ranks, args)
    total = 0.0
    for name, k in r["kernels"].items():
        phases, tts = k["phases"], k["time_to_solution_seconds"]
        assert phases and next(iter(phases)) == "startup", (name, phases)
        assert all(s >= 0 for s in phases.values()), (name, phases)
        assert math.isclose(sum(phases.values()), tts, rel_tol=1e-12), (name, phases, tts)
        assert 0 <= k["phases_rank"] < ranks, (name, k["phases_rank"])
        # The kernel's part of it (the phases after start-up) covers its run,
        # which holds the timed part.
        assert k["fom"]["seconds"] <= tts - phases["startup"], (name, k["fom"]["seconds"], phases)
        assert tts <= wall, (name, tts, wall)
        if expect and name in expect:
            assert expect[name] <= set(phases), (name, sorted(phases), sorted(expect[name]))
        total += tts
    assert total <= wall, (total, wall)
    return r


for ranks in (1, 2):
    check(ranks, SMALL)
    check(ranks, GRAM_FILE, {"gram": GRAM_PHASES})
print("phases: every kernel at 1 and 2 ranks, gram from a file with every output")
