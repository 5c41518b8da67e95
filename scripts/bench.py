#!/usr/bin/python3
"""kmini benchmark suite: the decks in inputs/bench/, the machine probes and the baselines.

  scripts/bench.py [--kmini build/bin/kmini] [--repeat 3] [--out bench-out] [--no-numpy] [DECK ...]

Runs every benchmark deck `--repeat` times (each run already reports its own best-of-`repeat`
timings) and takes the median of each figure over the runs. The machine probes come with the decks:
stream bandwidth (the stream kernel: the roof for bandwidth-bound kernels) and the AND+popcount peak
(the gram kernel's register-blocked probe on cache-resident data). Baselines: KokkosBlas::gemm
(gram's `baseline: true`, timed in the same run) and numpy (scripts/compare_numpy*.py, where
Debian's python3-numpy is present). Writes OUT/bench.json and OUT/bench.md.
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys

from kmini_results import BASELINES, FIGURES, ROOF, baseline_env, get

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# numpy comparisons: (script, regex of the ratio numpy_time / kmini_time in its output).
NUMPY = {
    "rk4": ("scripts/compare_numpy_rk4.py", r"ratio numpy / kmini:\s*([0-9.eE+-]+)x"),
    "discount": ("scripts/compare_numpy_discount.py", r"ratio numpy\(out=\) / kmini kernel:\s*([0-9.eE+-]+)"),
    # kmini's useful bit-ops/s over numpy's float32 GEMM multiply-adds/s (OpenBLAS, one thread, where installed)
    "gram": ("scripts/compare_numpy_gram.py", r"ratio kmini / numpy:\s*([0-9.eE+-]+)x"),
}


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def run_deck(kmini, deck, out, repeat):
    runs = []
    for i in range(repeat):
        d = os.path.join(out, os.path.splitext(os.path.basename(deck))[0], f"run{i}")
        cmd = [kmini, deck, "--out", d]
        print("  " + " ".join(cmd), flush=True)
        # Thread placement for Kokkos' OpenMP backend, unless set (see scripts/setup.sh).
        env = dict(os.environ)
        env.setdefault("OMP_PROC_BIND", "spread")
        env.setdefault("OMP_PLACES", "threads")
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        if done.returncode != 0:
            sys.exit(f"bench.py: {' '.join(cmd)} failed (exit {done.returncode}):\n{done.stdout[-2000:]}")
        with open(os.path.join(d, "results.json")) as f:
            runs.append(json.load(f))
    return runs


def numpy_ratio(kernel, deck, kmini, out):
    script, pattern = NUMPY[kernel]
    path = os.path.join(ROOT, script)
    if not os.path.exists(path):
        return None, f"{script} not present", None
    name = os.path.splitext(os.path.basename(deck))[0]
    cmd = ["/usr/bin/python3", path, "--kmini", kmini, "--out", os.path.join(out, f"numpy-{name}")]
    if kernel in ("rk4", "gram"):  # the numpy side follows the deck (rk4: model and coupling; gram: A's shape)
        cmd += ["--deck", deck]
    print("  " + " ".join(cmd), flush=True)
    # The baseline runs as on a user's machine: without the OpenBLAS forcing
    # variables of the development machines (kmini_results.baseline_env; the
    # kmini runs inside the script get them back).
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=baseline_env())
    for line in done.stdout.splitlines():  # which OpenBLAS kernel ran (OPENBLAS_VERBOSE=2 and the script's own line)
        if line.startswith("Core: ") or line.startswith("OpenBLAS core: "):
            print("    " + line, flush=True)
    m = re.search(pattern, done.stdout)
    core = re.search(r"^OpenBLAS core: (\S+)", done.stdout, re.M)  # which OpenBLAS kernel numpy ran
    core = core.group(1) if core else None
    if done.returncode == 77:  # the script's own reason, e.g. a matrix too large for numpy
        return None, (done.stdout.strip().splitlines() or ["skipped"])[-1], core
    if done.returncode != 0 or not m:
        return None, f"{script} failed (exit {done.returncode})", core
    return float(m.group(1)), None, core


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("decks", nargs="*", help="benchmark decks (default: inputs/bench/*.yaml)")
    ap.add_argument("--kmini", default=os.path.join(ROOT, "build", "bin", "kmini"))
    ap.add_argument("--repeat", type=int, default=3, help="runs per deck; medians are reported (default 3)")
    ap.add_argument("--out", default="bench-out")
    ap.add_argument("--no-numpy", action="store_true", help="skip the numpy baselines")
    a = ap.parse_args()
    decks = a.decks or sorted(glob.glob(os.path.join(ROOT, "inputs", "bench", "*.yaml")))
    have_numpy = not a.no_numpy and subprocess.run(["/usr/bin/python3", "-c", "import numpy"],
                                                   stderr=subprocess.DEVNULL).returncode == 0
    os.makedirs(a.out, exist_ok=True)

    report = {"decks": {}, "machine": None}
    for deck in decks:
        print(f"{os.path.relpath(deck, ROOT)}:", flush=True)
        runs = run_deck(a.kmini, deck, a.out, a.repeat)
        report["machine"] = {k: runs[0][k] for k in ("kmini_version", "build", "kokkos", "host", "device", "mpi")
                             if k in runs[0]}
        entry = {}
        for kernel in runs[0]["kernels"]:
            ks = [r["kernels"][kernel] for r in runs]
            e = {"verified": all(k.get("verified") is not False for k in ks), "figures": {}, "baselines": {}}
            for label, path, unit, scale in FIGURES.get(kernel, []):
                v = median([get(k, path) for k in ks])
                if v is not None:
                    e["figures"][label] = {"value": v * scale, "unit": unit,
                                           "runs": [get(k, path) * scale for k in ks if get(k, path) is not None]}
            if kernel in ROOF:
                e["fraction_of_roof"] = median([get(k, ROOF[kernel]) for k in ks])
            for name, path in BASELINES.get(kernel, []):
                v = median([get(k, path) for k in ks])
                if v is not None:
                    e["baselines"][name] = v
            if kernel in NUMPY and have_numpy:
                ratio, why, core = numpy_ratio(kernel, deck, a.kmini, a.out)
                e["baselines"]["numpy"] = ratio if ratio is not None else why
                if core:
                    e["baselines"]["numpy's OpenBLAS core"] = core
            entry[kernel] = e
        report["decks"][os.path.relpath(deck, ROOT)] = entry

    lines = ["# kmini benchmarks", "",
             f"kmini {report['machine']['kmini_version']}, Kokkos {report['machine']['kokkos']['version']} "
             f"{report['machine']['kokkos']['execution_space']}, {report['machine']['mpi']['ranks']} rank(s); "
             f"medians of {a.repeat} runs.",
             f"Revision {report['machine'].get('build', {}).get('git_revision', 'unknown')}, "
             f"{report['machine'].get('build', {}).get('build_type', '?')} build, on "
             f"{report['machine'].get('device', {}).get('name', 'unknown')} "
             f"({report['machine'].get('host', {}).get('name', 'unknown host')}).", "",
             "| deck | kernel | figure | median | of roof | baselines (kmini speedup) | verified |",
             "|---|---|---|---|---|---|---|"]
    for deck, entry in report["decks"].items():
        for kernel, e in entry.items():
            roof = f"{100 * e['fraction_of_roof']:.0f}%" if e.get("fraction_of_roof") is not None else "-"
            base = ", ".join(f"{n}: {v:.3g}×" if isinstance(v, float) else f"{n}: {v}" for n, v in e["baselines"].items()) or "-"
            for i, (label, f) in enumerate(e["figures"].items()):
                lines.append(f"| {deck} | {kernel} | {label} | {f['value']:.4g} {f['unit']} | "
                             f"{roof if i == 0 else ''} | {base if i == 0 else ''} | {'yes' if e['verified'] else 'NO'} |")
    for name, text in (("bench.json", json.dumps(report, indent=2) + "\n"), ("bench.md", "\n".join(lines) + "\n")):
        tmp = os.path.join(a.out, name + ".tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(a.out, name))
    print("\n".join(lines))
    print(f"\nwrote {a.out}/bench.json and {a.out}/bench.md")


if __name__ == "__main__":
    main()
