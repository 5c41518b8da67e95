#!/usr/bin/python3
"""ctest: the valid-result rules and the benchmark scripts, on tiny decks.

usage: check_bench_scripts.py OUTDIR KMINI LAUNCHER_TEMPLATE

  * a roof forced low through the test hook (KMINI_TEST_ROOF_SCALE) marks every kernel above
    100 % of it invalid, in results.json and in the summary; a plain run records the load;
  * the repeat statistics and verdicts of scripts/kmini_results.py;
  * every figure a kernel declares (`kmini describe --json`) is a number in a plain run's
    results.json, and every kernel declares how a scaling study sizes it;
  * scripts/bench.py --ranks 2 --launcher: two ranks, spreads and verdicts in bench.json;
  * bench.py and scaling.py without a kmini binary: one line, exit 2;
  * scaling.py study --repeat 2: median and min-max per point;
  * scaling.py model --device RESULTS.json: the gram rate read from that file.
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys

out, kmini, launcher = sys.argv[1:4]
try:
    import yaml  # noqa: F401  (scaling.py reads decks with PyYAML)
except ImportError:
    print("skipped: this python3 has no PyYAML, which scripts/scaling.py needs")
    sys.exit(77)
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(root, "scripts"))
import kmini_results as kr  # noqa: E402

shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
tiny = ["--set", "run.kernels=[stream,rk4,discount,gram]", "--set", "stream.n=20000", "--set", "stream.repeat=2",
        "--set", "rk4.n=16", "--set", "rk4.steps=4", "--set", "discount.dates=3", "--set", "discount.ids=50",
        "--set", "discount.terms=2", "--set", "gram.A.random.rows=64", "--set", "gram.A.random.cols=256",
        "--set", "gram.probe=true"]


def run(cmd, env=None, expect=0):
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if done.returncode != expect:
        sys.exit(f"{' '.join(cmd)}: exit {done.returncode}, expected {expect}\n{done.stdout}")
    return done.stdout


def results(d):
    with open(os.path.join(d, "results.json")) as f:
        return json.load(f)


# --- the roof hook: fractions above 100 % are flagged, never reported as valid ---
env = dict(os.environ, KMINI_TEST_ROOF_SCALE="0.001")
text = run([kmini] + tiny + ["--out", os.path.join(out, "forced")], env=env)
res = results(os.path.join(out, "forced"))
for name in ("rk4", "discount", "gram"):
    k = res["kernels"][name]
    assert k["verified"] is True, name
    assert k["valid"] is False, (name, k.get("invalid_reasons"))
    assert any("above 100 %" in r for r in k["invalid_reasons"]), (name, k["invalid_reasons"])
    assert any("KMINI_TEST_ROOF_SCALE" in r for r in k["invalid_reasons"]), k["invalid_reasons"]
    assert kr.roof_fraction(res, name) > 1.0, name
    assert kr.run_verdict(res, name)[0] is False
assert re.search(r"validity:.*rk4 INVALID \([^)]* at [0-9.e+]+ % of its roof", text), text
assert "machine load:" in text, text

# --- a plain run: valid, the load recorded ---
run([kmini] + tiny + ["--out", os.path.join(out, "plain")])
res = results(os.path.join(out, "plain"))
load = res["load"]
if load["measured"]:
    for key in ("load_average_before", "load_average_after", "other_processes_cpu_seconds", "wall_seconds"):
        assert load[key] >= 0, (key, load)
    assert isinstance(load["loaded"], bool)
    assert load["loaded"] == (load["other_processes_cores"] > 0.1 or
                              load["steal_seconds"] / load["wall_seconds"] > 0.1), load
for name in ("stream", "rk4", "discount", "gram"):
    k = res["kernels"][name]
    # A tiny run can still be invalid on a busy machine, but only with a stated reason.
    assert k["valid"] == (not k["invalid_reasons"]), k
    assert kr.roof_fraction(res, name) is None or kr.roof_fraction(res, name) <= 1.0 or not k["valid"], name

# --- what the kernels declare for the scripts: figures present, scaling rules complete ---
described = kr.describe(kmini)
assert described is not None, "kmini describe --json failed"
rules = kr.scaling_rules(described)
for name in ("stream", "rk4", "discount", "gram"):
    figs = kr.figures(described, name)
    assert figs, name
    for label, path, unit, scale in figs:
        assert isinstance(kr.get(res["kernels"][name], path), (int, float)), (name, label, path)
    assert rules[name]["growth"] in ("linear", "sqrt", "per_rank"), rules[name]
    assert rules[name]["key"].startswith(name + "."), rules[name]
assert "run" not in rules and kr.figures(described, "run") == []
unverified = os.path.join(out, "unverified")
run([kmini] + tiny + ["--set", "run.verify=false", "--set", "run.kernels=[stream]", "--out", unverified])
assert results(unverified)["kernels"]["stream"]["invalid_reasons"] == ["not verified (run.verify: false)"]

# --- repeat statistics and verdicts ---
assert kr.spread([3.0, None, 1.0, 2.0]) == (2.0, 1.0, 3.0)
assert kr.spread([4.0, 1.0]) == (2.5, 1.0, 4.0)
assert kr.spread([None]) == (None, None, None)
assert kr.verdict_text([(True, False, []), (True, False, [])]) == "valid"
assert kr.verdict_text([(True, True, []), (True, False, [])]) == "valid, loaded machine (1 of 2 run(s))"
assert kr.verdict_text([(False, False, ["b", "a"]), (True, True, [])]) == "INVALID (1 of 2 run(s): a; b)"
old = {"kernels": {"rk4": {"verified": True, "fraction_of_roof": 1.3}}}  # no verdict of its own
assert kr.run_verdict(old, "rk4")[0] is False and "above 100 %" in kr.run_verdict(old, "rk4")[2][0]
# A committed file older than `roof` (schema_version 2): its fraction where that kmini wrote it.
with open(os.path.join(root, "docs", "results", "h100-2026-11-25", "bench_discount.json")) as f:
    legacy = json.load(f)
assert "roof" not in legacy["kernels"]["discount"]
assert kr.roof_fraction(legacy, "discount") == legacy["kernels"]["discount"]["kernel"]["fraction_of_roof"]

# --- ranks x threads above the cores: named in the verdict ---
crowded = {"mpi": {"ranks": 2, "hosts": ["h"]}, "kokkos": {"concurrency": 4}, "device": {"kind": "host CPU"},
           "load": {"cpus": 4, "loaded": False}, "kernels": {"k": {"valid": True, "invalid_reasons": []}}}
assert kr.oversubscription(crowded) == "oversubscribed: 2 ranks x 4 threads on 4 cores"
assert kr.verdict_text([kr.run_verdict(crowded, "k")]) == \
    "valid, oversubscribed: 2 ranks x 4 threads on 4 cores (1 of 1 run(s))"
crowded["kokkos"]["concurrency"] = 2
assert kr.oversubscription(crowded) is None  # 2 x 2 on 4 cores
crowded["device"]["kind"] = "CUDA GPU"  # a GPU rank: one host thread, whatever the device's concurrency
crowded["kokkos"]["concurrency"] = 100000
assert kr.oversubscription(crowded) is None
cores = os.cpu_count() or 1
if cores <= 8:  # one rank more than the cores, for real
    over = os.path.join(out, "oversubscribed")
    cmd = kr.launch_command(launcher, cores + 1, kmini, tiny + ["--set", "run.kernels=[stream]", "--out", over])
    done = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=kr.launch_env(cores + 1))
    assert done.returncode == 0, (cmd, done.stdout)
    res = results(over)
    threads = res["kokkos"]["concurrency"]
    want = (f"oversubscribed: {cores + 1} ranks" + (f" x {threads} threads" if threads > 1 else "")
            + f" on {cores} cores")
    assert res["mpi"]["ranks"] == cores + 1 and res["load"]["cpus"] == cores, (res["mpi"], res["load"])
    assert kr.run_verdict(res, "stream")[3] == want, (kr.run_verdict(res, "stream"), want)
    assert want in kr.verdict_text([kr.run_verdict(res, "stream")]), kr.verdict_text([kr.run_verdict(res, "stream")])

# --- the launcher templates ---
assert kr.launch_command("mpirun", 4, "/k", ["a b"]) == "mpirun -n 4 /k 'a b'"
assert kr.launch_command("mpirun --bind-to core", 2, "/k", ["d"]) == "mpirun --bind-to core -n 2 /k d"
assert kr.launch_command("srun", 2, "/k", []).startswith("srun -n 2 --cpus-per-task=")

# --- missing binary: one line, exit 2 ---
for script, args in (("bench.py", []), ("scaling.py", ["study", os.path.join(root, "inputs", "default.yaml")])):
    done = subprocess.run([sys.executable, os.path.join(root, "scripts", script)] + args +
                          ["--kmini", os.path.join(out, "no-such-kmini")], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    assert done.returncode == 2, (script, done.returncode, done.stderr)
    assert "no kmini binary at" in done.stderr and "--kmini" in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr

# --- bench.py on 2 ranks through a launcher ---
deck = os.path.join(out, "tiny.yaml")
with open(deck, "w") as f:
    f.write("run: {kernels: [stream, rk4, discount, gram]}\nstream: {n: 20000, repeat: 2}\n"
            "rk4: {n: 16, steps: 4}\ndiscount: {dates: 4, ids: 50, terms: 2, repeat: 2}\n"
            "gram: {A: {random: {rows: 64, cols: 256}}, probe: true}\n")
text = run([sys.executable, os.path.join(root, "scripts", "bench.py"), "--kmini", kmini, "--ranks", "2",
            "--launcher", launcher, "--repeat", "2", "--no-numpy", "--out", os.path.join(out, "bench"), deck],
           env=kr.launch_env(2))
with open(os.path.join(out, "bench", "bench.json")) as f:
    bench = json.load(f)
assert bench["ranks"] == 2 and bench["machine"]["mpi"]["ranks"] == 2, bench["machine"]
for run_dir in ("run0", "run1"):
    assert results(os.path.join(out, "bench", "tiny", run_dir))["mpi"]["ranks"] == 2
e = bench["decks"][os.path.relpath(deck, root)]["discount"]
bench_fom_name = results(os.path.join(out, "bench", "tiny", "run0"))["kernels"]["discount"]["fom"]["name"]
f0 = next(iter(e["figures"].values()))
assert len(f0["runs"]) == 2 and f0["min"] <= f0["value"] <= f0["max"], f0
assert f0["value"] == sorted(f0["runs"])[0] / 2 + sorted(f0["runs"])[1] / 2
assert e["verdict"].startswith(("valid", "INVALID")), e["verdict"]
assert e["fom"]["name"] == bench_fom_name, e["fom"]  # results.json's fom comes first
assert re.search(r"discount: \S+ [0-9.e+]+ \S+ \(min-max [0-9.e+-]+, 2 runs\): (valid|INVALID)", text), text
# bench.md: each kernel's figure of merit once, in results.json's own unit, first; the fraction of the
# roof says what it divides (gram: executed bit-ops over its probe, with useful / executed).
with open(os.path.join(out, "bench", "bench.md")) as f:
    bench_md = f.read()
tiny_runs = [results(os.path.join(out, "bench", "tiny", d)) for d in ("run0", "run1")]
for name, e in bench["decks"][os.path.relpath(deck, root)].items():
    foms = [r["kernels"][name]["fom"] for r in tiny_runs]
    value = sorted(f["value"] for f in foms)[0] / 2 + sorted(f["value"] for f in foms)[1] / 2
    label = foms[0]["name"]
    row = [line for line in bench_md.splitlines() if line.startswith(f"| {os.path.relpath(deck, root)} | {name} |")]
    assert row and row[0].split(" | ")[2:4] == [f"figure of merit: {label}", f"{value:.4g} {foms[0]['unit']}"], row
    for lab, path, unit, scale in kr.figures(described, name):  # the declaration's copy of the fom: not again
        repeated = all(kr.same(kr.get(r["kernels"][name], path), r["kernels"][name]["fom"]["value"]) for r in tiny_runs)
        assert not (repeated and lab in e["figures"]), (name, lab, list(e["figures"]))
    assert sum(1 for line in row if f"{value:.4g}" in line) == 1, row
    fr = e.get("fraction_of_roof")
    if fr and fr["median"] is not None:
        roof = tiny_runs[0]["kernels"][name]["roof"]
        assert f"{100 * fr['median']:.3g}% (" in row[0] and f" over {roof['name']} (" in row[0], row[0]
gram_row = next(line for line in bench_md.splitlines() if " | gram | figure of merit" in line)
ratios = sorted(r["kernels"]["gram"]["useful_bit_ops_per_s"] / r["kernels"]["gram"]["executed_bit_ops_per_s"]
                for r in tiny_runs)
assert "executed bit-ops/s over " in gram_row, gram_row
assert f"figure of merit / executed bit-ops/s = {(ratios[0] + ratios[1]) / 2:.3g}" in gram_row, (gram_row, ratios)

# --- scaling.py study --repeat 2 ---
study = os.path.join(out, "study")
run([sys.executable, os.path.join(root, "scripts", "scaling.py"), "study", os.path.join(root, "inputs", "default.yaml"),
     "--kernels", "stream", "--ranks", "1,2", "--mode", "strong", "--repeat", "2", "--launcher", launcher, "--kmini",
     kmini, "--out", study, "--quiet", "--set", "stream.n=20000", "--set", "stream.repeat=2"], env=kr.launch_env(2))
with open(os.path.join(study, "scaling.csv"), newline="") as f:
    rows = list(csv.DictReader(f))
assert [int(r["ranks"]) for r in rows] == [1, 2], rows
for r in rows:
    times = [float(t) for t in r["runs_seconds"].split()]
    assert int(r["repeats"]) == 2 and len(times) == 2, r
    assert float(r["seconds"]) == kr.spread(times)[0], r
    assert float(r["seconds_min"]) == min(times) and float(r["seconds_max"]) == max(times), r
    assert float(r["efficiency_min"]) <= float(r["efficiency"]) <= float(r["efficiency_max"]), r
    assert r["verdict"].startswith(("valid", "INVALID")), r
t1 = float(rows[0]["seconds"])
assert abs(float(rows[1]["efficiency"]) - t1 / float(rows[1]["seconds"]) / 2) < 1e-9  # from the medians
with open(os.path.join(study, "summary.md")) as f:
    summary = f.read()
assert "2 run(s) per point" in summary and "load average" in summary, summary

# --- the model reads a measured results file ---
gram_run = os.path.join(out, "plain", "results.json")
rate = results(os.path.join(out, "plain"))["kernels"]["gram"]["useful_bit_ops_per_s"]
text = run([sys.executable, os.path.join(root, "scripts", "scaling.py"), "model", "--device", gram_run,
            "--rows", "1000", "--cols", "2000", "--max-gpus", "4", "--out", os.path.join(out, "model")])
assert f"{rate:.3g} useful bit-ops/s per GPU, measured on" in text, text
compute_1 = float(re.search(r"^\| 1 \| [^|]+ \| [^|]+ \| ([^|]+) \|", text, re.M).group(1))
assert abs(compute_1 - 1000 * 1000 * 2000 / rate) <= 1e-3 * compute_1 + 1e-12, (compute_1, rate)
print("bench scripts: verdicts, load, spreads, launcher, missing binary and the measured model OK")
