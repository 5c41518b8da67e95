#!/usr/bin/python3
"""kmini benchmark suite: the decks in inputs/bench/, the machine probes and the baselines.

  scripts/bench.py [--kmini build/bin/kmini] [--repeat 3] [--ranks N] [--launcher mpirun|srun|TEMPLATE]
                   [--out bench-out] [--no-numpy] [DECK ...]

Runs every benchmark deck `--repeat` times (each run already reports its own best-of-`repeat`
timings) on `--ranks` MPI ranks and reports, per kernel, the median of each figure over the runs with
its spread (min-max), the fraction of the roof measured in the same run, and the verdict of the
valid-result rules (docs/benchmarks.md): every run verified, at most 100 % of its roof, and the
machine's load (a run on a loaded machine is marked). The machine probes come with the decks: the
stream bandwidth (the roof of bandwidth-bound kernels, probed again before and after each of them)
and the AND+popcount peak (gram's probe, before and after its computation). Baselines: numpy
(benchmarks/compare_numpy*.py, one rank, where Debian's python3-numpy is present) and, where a deck
asks for it (gram.baseline: true), KokkosBlas::gemm. Writes OUT/bench.json and OUT/bench.md.
Exit status: 0 done (whatever the verdicts), 1 a kmini run failed, 2 bad usage or no kmini binary.
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys

from kmini_results import (SPEEDUP_LINE, baseline_env, describe, duplicates_fom, figures, fom, get, host_load,
                           in_run_baseline, launch_command, launch_env, require_kmini, roof_divides, roof_fraction,
                           roof_text, run_verdict, spread, verdict_text)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))




def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def run_deck(kmini, deck, out, repeat, ranks, launcher):
    runs = []
    for i in range(repeat):
        d = os.path.join(out, os.path.splitext(os.path.basename(deck))[0], f"run{i}")
        args = [deck, "--out", d]
        direct = ranks == 1 and not launcher
        cmd = [kmini] + args if direct else launch_command(launcher or "mpirun", ranks, kmini, args)
        print("  " + (" ".join(cmd) if isinstance(cmd, list) else cmd), flush=True)
        # Thread placement for Kokkos' OpenMP backend, unless set (see scripts/setup.sh).
        done = subprocess.run(cmd, shell=isinstance(cmd, str), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, env=launch_env(ranks))
        if done.returncode != 0:
            print(f"bench.py: the run above failed (exit {done.returncode}):\n{done.stdout[-2000:]}", file=sys.stderr)
            sys.exit(1)
        with open(os.path.join(d, "results.json")) as f:
            runs.append(json.load(f))
    return runs


def numpy_script(kernel):
    """benchmarks/compare_numpy_<kernel>.py, where the kernel has one (else None)."""
    path = os.path.join(ROOT, "benchmarks", f"compare_numpy_{kernel}.py")
    return path if os.path.exists(path) else None


def numpy_ratio(kernel, deck, kmini, out):
    """kmini's speedup over numpy on `deck` (the script's SPEEDUP_LINE), or None with the reason."""
    path = numpy_script(kernel)
    script = os.path.relpath(path, ROOT)
    name = os.path.splitext(os.path.basename(deck))[0]
    # The numpy side follows the deck (rk4: model and coupling; gram: A's shape; discount: sizes).
    cmd = ["/usr/bin/python3", path, "--kmini", kmini, "--out", os.path.join(out, f"numpy-{name}"), "--deck", deck]
    print("  " + " ".join(cmd), flush=True)
    # The baseline runs as on a user's machine: without the OpenBLAS forcing
    # variables of the development machines (kmini_results.baseline_env; the
    # kmini runs inside the script get them back).
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=baseline_env())
    for line in done.stdout.splitlines():  # which OpenBLAS kernel ran (OPENBLAS_VERBOSE=2 and the script's own line)
        if line.startswith("Core: ") or line.startswith("OpenBLAS core: "):
            print("    " + line, flush=True)
    m = re.search("^" + re.escape(SPEEDUP_LINE) + r"\s*([0-9.eE+-]+)", done.stdout, re.M)
    core = re.search(r"^OpenBLAS core: (\S+)", done.stdout, re.M)  # which OpenBLAS kernel numpy ran
    core = core.group(1) if core else None
    if done.returncode == 77:  # the script's own reason, e.g. a matrix too large for numpy
        return None, (done.stdout.strip().splitlines() or ["skipped"])[-1], core
    if done.returncode != 0 or not m:
        return None, f"{script} failed (exit {done.returncode})", core
    return float(m.group(1)), None, core


def fmt(v):
    return f"{v:.4g}" if isinstance(v, (int, float)) else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("decks", nargs="*", help="benchmark decks (default: inputs/bench/*.yaml)")
    ap.add_argument("--kmini", default=os.path.join(ROOT, "build", "bin", "kmini"),
                    help="the kmini binary (default: build/bin/kmini of this checkout)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per deck; medians and min-max are reported (default 3)")
    ap.add_argument("--ranks", type=int, default=1, help="MPI ranks per run (default 1)")
    ap.add_argument("--launcher", default=None,
                    help="how runs start: mpirun, srun, a prefix such as 'mpirun --bind-to core' (-n N and the "
                         "command are appended) or a template with {np} {exe} {args} (default: mpirun when "
                         "--ranks > 1, else kmini directly)")
    ap.add_argument("--out", default="bench-out")
    ap.add_argument("--no-numpy", action="store_true", help="skip the numpy baselines")
    a = ap.parse_args()
    if a.repeat < 1 or a.ranks < 1:
        ap.error("--repeat and --ranks must be at least 1")
    kmini = os.path.abspath(a.kmini)
    require_kmini(kmini, "bench.py")
    # What each kernel reports besides its fom: its declaration's figures.
    described = describe(kmini)
    if described is None:
        print(f"bench.py: {kmini} does not describe its kernels (kmini describe --json): only each kernel's "
              f"figure of merit is reported", file=sys.stderr)
    decks = a.decks or sorted(glob.glob(os.path.join(ROOT, "inputs", "bench", "*.yaml")))
    for deck in decks:
        if not os.path.isfile(deck):
            print(f"bench.py: no deck {deck}", file=sys.stderr)
            sys.exit(2)
    have_numpy = not a.no_numpy and subprocess.run(["/usr/bin/python3", "-c", "import numpy"],
                                                   stderr=subprocess.DEVNULL).returncode == 0
    os.makedirs(a.out, exist_ok=True)

    load_before, busy_before = host_load()
    report = {"decks": {}, "machine": None, "ranks": a.ranks, "repeat": a.repeat,
              "launcher": (launch_command(a.launcher or "mpirun", a.ranks, "KMINI", ["ARGS"])
                           if (a.ranks > 1 or a.launcher) else None)}
    for deck in decks:
        print(f"{os.path.relpath(deck, ROOT)}:", flush=True)
        runs = run_deck(kmini, deck, a.out, a.repeat, a.ranks, a.launcher)
        report["machine"] = {k: runs[0][k] for k in ("kmini_version", "build", "kokkos", "host", "device", "mpi")
                             if k in runs[0]}
        entry = {}
        for kernel in runs[0]["kernels"]:
            ks = [r["kernels"][kernel] for r in runs]
            verdicts = [run_verdict(r, kernel) for r in runs]
            e = {"verified": all(k.get("verified") is True for k in ks), "figures": {}, "baselines": {},
                 "verdict": verdict_text(verdicts), "valid": all(v[0] for v in verdicts),
                 "loaded_runs": sum(1 for v in verdicts if v[1]),
                 "loads": [r.get("load") for r in runs]}
            # The kernel's figure of merit (results.json `fom`), then its other figures.
            foms = [fom(r, kernel) for r in runs]
            if foms[0][1] is not None:
                med, lo, hi = spread([f[1] for f in foms])
                e["fom"] = {"name": foms[0][0], "unit": foms[0][2], "higher_is_better": foms[0][3]}
                e["figures"][foms[0][0]] = {"value": med, "min": lo, "max": hi, "unit": foms[0][2],
                                            "runs": [f[1] for f in foms]}
            for label, path, unit, scale in figures(described, kernel):
                if all(duplicates_fom(r, kernel, path) for r in runs):
                    continue  # the figure of merit again, in another unit: shown once, as results.json has it
                values = [get(k, path) * scale for k in ks if get(k, path) is not None]
                med, lo, hi = spread(values)
                if med is not None:
                    e["figures"][label] = {"value": med, "min": lo, "max": hi, "unit": unit, "runs": values}
            fractions = [roof_fraction(r, kernel) for r in runs]
            if any(f is not None for f in fractions):
                med, lo, hi = spread(fractions)
                e["fraction_of_roof"] = {"median": med, "min": lo, "max": hi, "runs": fractions}
                divides = roof_divides(runs[0], kernel, described)
                if divides:  # what the fraction divides: the figure of merit, or another figure of the run
                    ratios = [get(roof_divides(r, kernel, described), "fom_ratio") for r in runs]
                    e["fraction_of_roof"].update({"roof": divides["roof"], "divides": divides["what"],
                                                  "fom_ratio": spread(ratios)[0],
                                                  "text": roof_text(dict(divides, fom_ratio=spread(ratios)[0]))})
            in_run = [b for b in (in_run_baseline(k) for k in ks) if b]
            if in_run:
                e["baselines"][in_run[0][0]] = spread([b[1] for b in in_run])[0]
            if numpy_script(kernel) and have_numpy:
                ratio, why, core = numpy_ratio(kernel, deck, kmini, a.out)
                e["baselines"]["numpy"] = ratio if ratio is not None else why
                if core:
                    e["baselines"]["numpy's OpenBLAS core"] = core
            entry[kernel] = e
            first = next(iter(e["figures"].items()), None)
            if first:
                label, f = first
                print(f"  {kernel}: {label} {f['value']:.4g} {f['unit']} (min-max {f['min']:.4g}-{f['max']:.4g}, "
                      f"{len(f['runs'])} runs): {e['verdict']}", flush=True)
        report["decks"][os.path.relpath(deck, ROOT)] = entry
    load_after, busy_after = host_load()
    report["bench_load"] = {"load_average_before": load_before, "load_average_after": load_after}

    m = report["machine"]
    lines = ["# kmini benchmarks", "",
             f"kmini {m['kmini_version']}, Kokkos {m['kokkos']['version']} {m['kokkos']['execution_space']}, "
             f"{m['mpi']['ranks']} rank(s); medians of {a.repeat} runs, spread min-max.",
             f"Revision {m.get('build', {}).get('git_revision', 'unknown')}, "
             f"{m.get('build', {}).get('build_type', '?')} build, on "
             f"{m.get('device', {}).get('name', 'unknown')} ({m.get('host', {}).get('name', 'unknown host')}); "
             f"load average {fmt(load_before)} before, {fmt(load_after)} after.", "",
             "The first row of each kernel is its figure of merit, in its own unit (results.json `fom`); the rows "
             "under it are the other figures it declares. The fraction of the roof says what it divides: the "
             "figure of merit, or another figure of the same run (gram: the bit-ops it executed).", "",
             "| deck | kernel | figure | median | min-max | of roof (median, min-max): what over which roof "
             "| baselines (kmini speedup) | verdict |",
             "|---|---|---|---|---|---|---|---|"]
    for deck, entry in report["decks"].items():
        for kernel, e in entry.items():
            fr = e.get("fraction_of_roof")
            roof = (f"{100 * fr['median']:.3g}% ({100 * fr['min']:.3g}-{100 * fr['max']:.3g}%)"
                    if fr and fr["median"] is not None else "-")
            if fr and fr.get("text"):
                roof += ": " + fr["text"]
            base = ", ".join(f"{n}: {v:.3g}×" if isinstance(v, float) else f"{n}: {v}"
                             for n, v in e["baselines"].items()) or "-"
            for i, (label, f) in enumerate(e["figures"].items()):
                label = f"figure of merit: {label}" if i == 0 and "fom" in e else label
                lines.append(f"| {deck} | {kernel} | {label} | {f['value']:.4g} {f['unit']} | "
                             f"{f['min']:.4g}-{f['max']:.4g} | {roof if i == 0 else ''} | {base if i == 0 else ''} | "
                             f"{e['verdict'] if i == 0 else ''} |")
    for name, text in (("bench.json", json.dumps(report, indent=2) + "\n"), ("bench.md", "\n".join(lines) + "\n")):
        tmp = os.path.join(a.out, name + ".tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(a.out, name))
    print("\n".join(lines))
    print(f"\nwrote {a.out}/bench.json and {a.out}/bench.md")


if __name__ == "__main__":
    main()
