#!/usr/bin/python3
"""kmini scaling studies: strong and weak scaling over MPI ranks, CSV, plots, and a performance model.

  scripts/scaling.py study DECK [--kernels K,...] [--ranks 1,2,4] [--mode strong|weak|both] [--repeat 3]
                     [--launcher mpirun|srun|'TEMPLATE'] [--kmini build/bin/kmini] [--out DIR] [--dry-run]
  scripts/scaling.py model [--device h100|h200|RESULTS.json|DIR] [--rows 100000] [--cols 200000]
                     [--max-gpus 1024] [--summary-only] [--out DIR]

`study` runs kmini `--repeat` times per (kernel, mode, rank count), each kernel sized by the deck key
its declaration names (`kmini describe --json`: scaling.size_key, grown as scaling.growth in a weak
study; `--set KEY=N` of that key sets the one-rank size the study scales), collects every results.json
into DIR/scaling.csv (per point the median time and its min-max, and the size read back from the
runs' results.json: a run whose results.json records another size than the point's makes it invalid),
plots DIR/<kernel>_<mode>.png (time, speedup, parallel efficiency against ranks: medians
with min-max error bars, the ideal line and the model's prediction) and writes DIR/summary.md with
each point's verdict (docs/benchmarks.md: the valid-result rules) and the machine's load.
Efficiencies come from the medians.
`model` predicts many-GPU scaling of gram from a measured device: the kernels' rates and the device's
bandwidth are read from a results.json of that device (`--device h100` or `h200`: the committed GPU
results in docs/results/; or a results.json or a folder of them). The formulas are in
docs/benchmarks.md ("Performance model"); they are implemented in `predict_seconds`.

Needs Debian's python3 with numpy, matplotlib and yaml (/usr/bin/python3 has them).
Exit status: 0 done, 1 a kmini run failed, 2 bad usage or no kmini binary.
"""
import argparse
import csv
import glob
import json
import math
import os
import platform
import subprocess
import sys

from kmini_results import (timed_seconds, describe, fom, get, host_load, launch_command, launch_env, require_kmini,
                           roof_divides, roof_fraction, roof_text, run_verdict, scaling_rules, spread, verdict_text)

try:
    import yaml
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as e:  # the pyenv python3 on PATH lacks them
    sys.exit(f"scaling.py: {e}; run it with /usr/bin/python3 "
             "(apt-get install python3-matplotlib python3-yaml)")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# How each kernel's problem grows in a weak study is in its declaration (`kmini describe --json`:
# scaling.size_key and scaling.growth, read by kmini_results.scaling_rules):
#   growth: 'linear' (size ∝ ranks), 'sqrt' (size ∝ √ranks: the work is quadratic in it),
#           'per_rank' (the key is already per rank: unchanged in weak, divided in strong)
# The metric a study times is each kernel's fom.seconds in results.json (kmini_results.timed_seconds).
GROWTHS = ("linear", "sqrt", "per_rank")

# ------------------------------------------------------------------ model ----

class Network:
    """Latency (s) and bandwidth (bytes/s) of the interconnect; I/O bandwidth per rank and in all."""

    def __init__(self, latency=2e-6, bandwidth=25e9, io_per_rank=2e9, io_total=100e9):
        self.latency, self.bandwidth = latency, bandwidth
        self.io_per_rank, self.io_total = io_per_rank, io_total

    def allreduce(self, p, nbytes):
        # Recursive doubling: log2(p) rounds of latency + message.
        return 0.0 if p <= 1 else math.ceil(math.log2(p)) * (self.latency + nbytes / self.bandwidth)

    def broadcast(self, p, nbytes):
        # Pipelined (scatter + allgather) broadcast: ~2 message times + log2(p) latencies.
        return 0.0 if p <= 1 else 2 * nbytes / self.bandwidth + math.ceil(math.log2(p)) * self.latency

    def write(self, p, nbytes):
        # Every rank writes its share; the file system caps the total.
        return nbytes / min(p * self.io_per_rank, self.io_total) if nbytes else 0.0


def predict_seconds(kernel, p, base, mode, net):
    """Predicted seconds at p ranks from single-rank figures `base` (see single_rank_figures).

    compute: strong scaling divides the single-rank compute by p; weak scaling keeps it.
    RK4      = steps · (compute per step + one allreduce of two complex sums)
    Gram     = broadcast of packed A + triangular compute + writes of C
    discount = compute + writes of cv
    stream   = compute (no communication)
    """
    share = 1.0 / p if mode == "strong" else 1.0
    if kernel == "rk4":
        return base["steps"] * (base["step_seconds"] * share + net.allreduce(p, 24))  # 3 doubles
    if kernel == "gram":
        a_bytes = base["a_bytes"] * (math.sqrt(p) if mode == "weak" else 1.0)
        c_bytes = base["c_bytes"] * (p if mode == "weak" else 1.0)
        return net.broadcast(p, a_bytes) + base["compute_seconds"] * share + net.write(p, c_bytes)
    if kernel == "discount":
        out = base["out_bytes"] * (p if mode == "weak" else 1.0)
        return base["compute_seconds"] * share + net.write(p, out)
    return base["compute_seconds"] * share


def single_rank_figures(kernel, results):
    """What the model needs, read from a one-rank results.json (kernel-specific metric names
    with fallbacks, so the model degrades to 'compute only' rather than failing)."""
    k = results["kernels"][kernel]
    deck = results["deck"].get(kernel, {})
    seconds = k["seconds"]
    if kernel == "rk4":
        steps = deck.get("steps", 1)
        return {"steps": steps, "step_seconds": k.get("loop_seconds", seconds) / max(steps, 1)}
    if kernel == "gram":
        rows = get(deck, "A", "random", "rows", default=0) or k.get("rows", 0)
        cols = get(deck, "A", "random", "cols", default=0) or k.get("cols", 0)
        writes_c = bool(get(deck, "write", "C", default=""))
        return {"compute_seconds": k.get("compute_seconds", seconds), "a_bytes": rows * math.ceil(cols / 64) * 8,
                "c_bytes": 4 * rows * rows if writes_c else 0}
    if kernel == "discount":
        writes_cv = bool(get(deck, "write", "cv", default=""))
        n = deck.get("dates", 0) * deck.get("ids", 0) * deck.get("terms", 0)
        item = 4 if deck.get("precision") == "single" else 8
        return {"compute_seconds": get(k, "kernel", "best_seconds", default=seconds),
                "out_bytes": n * item if writes_cv else 0}
    return {"compute_seconds": timed_seconds(k, kernel)}


# ------------------------------------------------------------------ study ----

def deck_value(deck, dotted):
    return get(deck, dotted.split("."))


def user_size_sets(set_args, key):
    """The user's `--set KEY=VALUE` of the study's scaled key (the last one, as a string, or None) and the
    other --set arguments: the study scales that value as its base instead of letting it override every run."""
    base, rest = None, []
    for a in set_args:
        k, _, v = a[len("--set="):].partition("=")
        if k.strip() == key:
            base = v.strip()
        else:
            rest.append(a)
    return base, rest


def size_that_ran(results, key):
    """The value of the scaled deck key in a run's own results.json (`deck`: the configuration the run
    used, every --set applied), or None where it does not record it."""
    v = get(results, ["deck"] + key.split("."))
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def scaled_size(growth, base, p, mode):
    """The size key's value at p ranks, from its value `base` at one rank."""
    if growth == "per_rank":
        return base if mode == "weak" else max(1, base // p)
    if mode == "strong":
        return base
    return base * p if growth == "linear" else max(1, round(base * math.sqrt(p)))


def point_figures(runs, kernel, described):
    """A point's figure of merit (the median over its runs, in the unit results.json gives it) and its
    fraction of the roof (the median), with what that fraction divides (kmini_results.roof_divides)."""
    foms = [fom(r, kernel) for r in runs]
    fractions = [roof_fraction(r, kernel) for r in runs]
    divides = roof_divides(runs[0], kernel, described) or {}
    return {"fom_name": foms[0][0], "fom": spread([f[1] for f in foms])[0], "fom_unit": foms[0][2],
            "roof_fraction": spread(fractions)[0], "roof_name": divides.get("roof"),
            "roof_divides": divides.get("what"), "roof_text": roof_text(divides)}


def machine_caption(results, deck_path):
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    k = results["kokkos"] if results else {}
    return (f"{platform.node()} ({cpu}, {os.cpu_count()} cores); Kokkos {k.get('version', '?')} "
            f"{k.get('execution_space', '?')}; deck {os.path.relpath(deck_path, ROOT)}")


def plot(kernel, mode, rows, caption, model_rows, path):
    """Time, speedup and efficiency against ranks: medians with min-max error bars; under each rank
    count the size that ran there (read from its results.json)."""
    ranks = [r["ranks"] for r in rows]
    t = [r["seconds"] for r in rows]
    lo = [r["seconds_min"] for r in rows]
    hi = [r["seconds_max"] for r in rows]
    t1 = t[0] * ranks[0] if mode == "strong" else t[0]
    fig, ax = plt.subplots(1, 3, figsize=(13, 4.2))

    def bars(values, low, high):  # asymmetric error bars from min-max
        return [[max(0.0, v - l) for v, l in zip(values, low)], [max(0.0, h - v) for v, h in zip(values, high)]]

    ax[0].errorbar(ranks, t, yerr=bars(t, lo, hi), fmt="o-", capsize=4, label="measured (median, min-max)")
    ideal_t = [t1 / p if mode == "strong" else t1 for p in ranks]
    ax[0].plot(ranks, ideal_t, "k--", label="ideal")
    if model_rows:
        ax[0].plot([m[0] for m in model_rows], [m[1] for m in model_rows], "s:", label="model")
    ax[0].set(xlabel="MPI ranks", ylabel="time (s)", title="time", ylim=(0, 1.15 * max(hi + ideal_t)))
    # Speedup and efficiency from the medians; their bars from the same point's min-max times.
    if mode == "strong":
        speedup = [t1 / x for x in t]
        s_lo = [t1 / x for x in hi]
        s_hi = [t1 / x for x in lo]
        ax[1].set(xlabel="MPI ranks", ylabel="speedup (t₁ / tₚ)", title="speedup")
    else:
        speedup = [t1 * p / x for x, p in zip(t, ranks)]  # scaled speedup
        s_lo = [t1 * p / x for x, p in zip(hi, ranks)]
        s_hi = [t1 * p / x for x, p in zip(lo, ranks)]
        ax[1].set(xlabel="MPI ranks", ylabel="scaled speedup (p · t₁ / tₚ)", title="scaled speedup")
    ax[1].errorbar(ranks, speedup, yerr=bars(speedup, s_lo, s_hi), fmt="o-", capsize=4, label="measured")
    ax[1].plot(ranks, ranks, "k--", label="ideal")
    eff = [x / p for x, p in zip(speedup, ranks)]
    e_lo = [x / p for x, p in zip(s_lo, ranks)]
    e_hi = [x / p for x, p in zip(s_hi, ranks)]
    ax[2].errorbar(ranks, eff, yerr=bars(eff, e_lo, e_hi), fmt="o-", capsize=4, label="measured")
    ax[2].axhline(1.0, color="k", ls="--", label="ideal")
    ax[2].set(xlabel="MPI ranks", ylabel="parallel efficiency (1 = ideal)", title="efficiency",
              ylim=(0, max(1.1, max(e_hi) * 1.1)))
    # Each point's size as its results.json records it, under its rank count.
    ticks = [f"{r['ranks']}\n{r['size_key'].rsplit('.', 1)[-1]}={r['size']}" for r in rows]
    for a in ax:
        a.set_xticks(ranks)
        a.set_xticklabels(ticks, fontsize=7)
        a.grid(alpha=0.3)
        a.legend()
    fig.suptitle(f"kmini {kernel}: {mode} scaling")
    fig.text(0.5, 0.01, caption, ha="center", fontsize=8)
    fig.tight_layout(rect=(0, 0.04, 1, 0.95))
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, path)


def write_atomically(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def study(args):
    deck_path = os.path.abspath(args.deck)
    if not os.path.isfile(deck_path):
        print(f"scaling.py: no deck {args.deck}", file=sys.stderr)
        sys.exit(2)
    with open(deck_path) as f:
        deck = yaml.safe_load(f) or {}
    exe = os.path.abspath(args.kmini)
    # A dry run needs the binary too: the kernels it declares, and how a study sizes each.
    require_kmini(exe, "scaling.py")
    described = describe(exe)
    if described is None:
        print(f"scaling.py: {exe} does not describe its kernels (kmini describe --json), which says how a study "
              f"sizes each: build a newer kmini or name it with --kmini PATH", file=sys.stderr)
        sys.exit(2)
    known = [k for k in described if k != "run"]
    rules = scaling_rules(described)
    kernels = args.kernels.split(",") if args.kernels else deck_value(deck, "run.kernels") or known
    for k in kernels:
        if k not in known:
            print(f"scaling.py: unknown kernel '{k}' (expected one of {', '.join(known)})", file=sys.stderr)
            sys.exit(2)
        if k not in rules or rules[k]["growth"] not in GROWTHS:
            print(f"scaling.py: kernel '{k}' declares no scaling rule this script knows (its declaration's "
                  f"scaling: the deck key that sizes it and how it grows, one of {', '.join(GROWTHS)})",
                  file=sys.stderr)
            sys.exit(2)
    try:
        ranks = [int(r) for r in args.ranks.split(",")]
    except ValueError:
        ranks = []
    if not ranks or min(ranks) < 1:
        print(f"scaling.py: --ranks {args.ranks}: expected comma-separated rank counts of at least 1, e.g. 1,2,4",
              file=sys.stderr)
        sys.exit(2)
    if args.repeat < 1:
        print("scaling.py: --repeat must be at least 1", file=sys.stderr)
        sys.exit(2)
    # Per kernel: the key that sizes it, how it grows and its one-rank size: the user's --set of that key
    # when given (the study scales it), else the deck's value. Checked before anything is written.
    plans = {}
    for kernel in kernels:
        key, growth = rules[kernel]["key"], rules[kernel]["growth"]
        given, other_sets = user_size_sets(args.set_args, key)
        base = given if given is not None else deck_value(deck, key)
        if base is None:
            print(f"scaling.py: {args.deck}: kernel {kernel} needs '{key}' in the deck (or --set {key}=N) for a study",
                  file=sys.stderr)
            sys.exit(2)
        try:
            base = int(str(base))
        except ValueError:
            base = 0
        if base < 1:
            where = f"--set {key}={given}" if given is not None else f"{args.deck}: {key}"
            print(f"scaling.py: {where}: expected a positive integer (the one-rank size the study scales)",
                  file=sys.stderr)
            sys.exit(2)
        plans[kernel] = (key, growth, base, other_sets)
    modes = ["strong", "weak"] if args.mode == "both" else [args.mode]
    net = Network(args.latency, args.bandwidth, args.io_per_rank, args.io_total)
    os.makedirs(args.out, exist_ok=True)

    load_before, busy_before = host_load()
    table, last_results = [], None
    for kernel in kernels:
        key, growth, base, other_sets = plans[kernel]
        for mode in modes:
            rows = []
            for p in ranks:
                size = scaled_size(growth, base, p, mode)
                times, verdicts, runs, ran = [], [], [], []
                for i in range(args.repeat):
                    out = os.path.join(args.out, kernel, mode, f"np{p}" + (f"-run{i}" if args.repeat > 1 else ""))
                    # The scaled key last, so that no other --set (a section holding it) overrides it.
                    kargs = [deck_path, "--set", f"run.kernels=[{kernel}]", "--set",
                             f"run.verify={str(args.verify).lower()}", "--out", out] + other_sets + [
                                 "--set", f"{key}={size}"]
                    cmd = launch_command(args.launcher, p, exe, kargs)
                    print(cmd, flush=True)
                    if args.dry_run:
                        continue
                    done = subprocess.run(cmd, shell=True, env=launch_env(max(ranks)),
                                          stdout=subprocess.DEVNULL if args.quiet else None)
                    if done.returncode != 0:
                        print(f"scaling.py: the run above failed with exit status {done.returncode}", file=sys.stderr)
                        sys.exit(1)
                    with open(os.path.join(out, "results.json")) as f:
                        res = json.load(f)
                    last_results = res
                    kres = res["kernels"][kernel]
                    times.append(timed_seconds(kres, kernel))
                    verdict = run_verdict(res, kernel)
                    # What ran is what the run's results.json says; a run of another size is not this point.
                    ran.append(size_that_ran(res, key))
                    if ran[-1] != size:
                        what = "no size" if ran[-1] is None else f"{key}={ran[-1]}"
                        why = f"results.json records {what}, not the study's {key}={size}"
                        print(f"scaling.py: {out}: {why}: the point is invalid", file=sys.stderr)
                        verdict = (False, verdict[1], list(verdict[2]) + [why]) + tuple(verdict[3:])
                    verdicts.append(verdict)
                    runs.append(res)
                if args.dry_run:
                    continue
                med, lo, hi = spread(times)
                # One size, unless the repeats ran different ones.
                sizes = sorted({"unknown" if v is None else str(v) for v in ran})
                rows.append({"kernel": kernel, "mode": mode, "ranks": p, "size_key": key, "size": "/".join(sizes),
                             "size_intended": size,
                             "seconds": med, "seconds_min": lo, "seconds_max": hi, "repeats": len(times),
                             "runs_seconds": " ".join(f"{t:.6g}" for t in times),
                             "verified": all(get(r, "kernels", kernel, "verified") is True for r in runs),
                             "valid": all(v[0] for v in verdicts), "loaded_runs": sum(1 for v in verdicts if v[1]),
                             "oversubscribed_runs": sum(1 for v in verdicts if v[3]),
                             "verdict": verdict_text(verdicts), "results": runs[0]})
                rows[-1].update(point_figures(runs, kernel, described))
            if args.dry_run or not rows:
                continue
            base_fig = single_rank_figures(kernel, rows[0]["results"])
            t1 = rows[0]["seconds"]
            for r in rows:
                p = r["ranks"]
                r["speedup"] = (t1 / r["seconds"]) if mode == "strong" else (t1 * p / r["seconds"])
                r["efficiency"] = r["speedup"] / p
                r["efficiency_min"] = (t1 / r["seconds_max"] if mode == "strong" else t1 * p / r["seconds_max"]) / p
                r["efficiency_max"] = (t1 / r["seconds_min"] if mode == "strong" else t1 * p / r["seconds_min"]) / p
                r["model_seconds"] = predict_seconds(kernel, p, base_fig, mode, net) * (
                    t1 / predict_seconds(kernel, rows[0]["ranks"], base_fig, mode, net))
            caption = machine_caption(rows[0]["results"], deck_path) + f"; medians of {args.repeat} run(s)"
            plot(kernel, mode, rows, caption, [(r["ranks"], r["model_seconds"]) for r in rows],
                 os.path.join(args.out, f"{kernel}_{mode}.png"))
            table += rows
    if args.dry_run:
        return
    load_after, busy_after = host_load()
    fields = ["kernel", "mode", "ranks", "size_key", "size", "size_intended", "seconds", "seconds_min", "seconds_max",
              "repeats", "runs_seconds", "speedup", "efficiency", "efficiency_min", "efficiency_max", "model_seconds",
              "fom_name", "fom", "fom_unit", "roof_fraction", "roof_name", "roof_divides", "verified", "valid",
              "loaded_runs", "oversubscribed_runs", "verdict"]
    tmp = os.path.join(args.out, "scaling.csv.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(table)
    os.replace(tmp, os.path.join(args.out, "scaling.csv"))
    loaded = sum(r["loaded_runs"] for r in table)
    crowded = sum(r["oversubscribed_runs"] for r in table)
    total = sum(r["repeats"] for r in table)
    fmt = lambda v: f"{v:.3g}" if isinstance(v, (int, float)) else "unknown"
    md = ["# kmini scaling study\n", f"{machine_caption(last_results, deck_path)}\n",
          f"{args.repeat} run(s) per point: seconds is the median, with its min-max; speedup and efficiency "
          f"from the medians (efficiency's range from the point's min-max). Machine load: load average "
          f"{fmt(load_before)} before the study, {fmt(load_after)} after; {loaded} of {total} runs on a loaded "
          f"machine (other processes took CPU time during the run: see each results.json's `load`); {crowded} of "
          f"{total} runs oversubscribed (more ranks x threads than the host's cores). The size is each point's as "
          f"its runs' results.json record it; the figure of merit is the median over the point's runs, in the "
          f"kernel's own unit; the fraction of the roof says what it divides (notes below the table).\n",
          "| kernel | mode | ranks | size (as run) | seconds (median) | min-max | figure of merit (median) "
          "| of roof (median) | speedup | efficiency (min-max) | model (s) | verdict |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    notes = {}
    for r in table:
        fom_cell = f"{r['fom']:.4g} {r['fom_unit']}" if r["fom"] is not None else "-"
        roof_cell = "-"
        if r["roof_fraction"] is not None:
            roof_cell = f"{100 * r['roof_fraction']:.3g} % = {r['roof_divides'] or '?'} / {r['roof_name']}"
            notes.setdefault(r["kernel"], r["roof_text"])
        md.append(f"| {r['kernel']} | {r['mode']} | {r['ranks']} | {r['size_key']}={r['size']} | {r['seconds']:.4g} "
                  f"| {r['seconds_min']:.4g}-{r['seconds_max']:.4g} | {fom_cell} | {roof_cell} | {r['speedup']:.3g} "
                  f"| {r['efficiency']:.3g} ({r['efficiency_min']:.3g}-{r['efficiency_max']:.3g}) "
                  f"| {r['model_seconds']:.4g} | {r['verdict']} |")
    if notes:
        md.append("\nOf roof: " + "; ".join(f"{k}: {t}" for k, t in notes.items()) + ".")
    md.append("\nPlots: " + ", ".join(f"`{k}_{m}.png`" for k in kernels for m in modes))
    write_atomically(os.path.join(args.out, "summary.md"), "\n".join(md) + "\n")
    print("\n".join(md))
    print(f"wrote {args.out}/scaling.csv, {args.out}/summary.md and {len(kernels) * len(modes)} plots")


# ------------------------------------------------------------- model only ----

def ring_model(n, cols, p, rate, net, word_bytes=8):
    """gram.distribution: ring, the circulant schedule: rank r holds row block r
    (n/p rows) and pairs it with blocks r + s mod p for s = 0 .. floor(p/2) (the last round split
    in half when p is even): ceil((p+1)/2) rounds; each round costs the larger of a block pair's
    computation (its C block and, through the transpose, its mirror: 2 (n/p)^2 cols useful
    bit-ops; round 0 is the diagonal block, (n/p)^2 cols) and the transfer of one block to the next
    rank (alpha + block bytes / beta). Returns (seconds, compute seconds, transfer seconds not hidden)."""
    rounds = math.ceil((p + 1) / 2)
    block = n / p
    block_bytes = block * math.ceil(cols / 64) * word_bytes
    xfer = net.latency + block_bytes / net.bandwidth if p > 1 else 0.0
    total = compute = 0.0
    for s in range(rounds):
        c = (block * block * cols if s == 0 else 2 * block * block * cols) / rate
        if p % 2 == 0 and s == p // 2 and s > 0:
            c /= 2  # the pair (r, r + p/2) is shared by two ranks: each computes half
        t = max(c, xfer) if s < rounds - 1 or p == 1 else c  # the next block travels behind this round
        total += t
        compute += c
    return total, compute, total - compute


def piece_rows(n, cols, p, word_bytes=8):
    """Rows of the circulant's pieces as gram_plan.cpp plans them (GPU rows, no padding): 1 MiB of
    packed rows but at least 256, at most a quarter of a block, whole 64-row tiles."""
    row = math.ceil(cols / 64) * word_bytes
    block = math.ceil(n / p)
    pr = min(max(int(2 ** 20 // row), 256), (block + 3) // 4)
    return max(1, pr // 64 * 64 if pr >= 64 else pr)


def gpu_memory(n, cols, p, k=16, slice_rows=64, word_bytes=8):
    """Bytes per GPU: (replicated) packed A, a slice of C of `slice_rows` rows (int32, all n columns)
    and the top-k lists (n k entries of 16 bytes); (ring) as kmini's circulant holds it
    (gram.ring_schedule: circulant, top-k / summary outputs): its block of packed A and two piece
    buffers (none on one GPU), a window of `slice_rows` rows x one piece (int32), the top-k lists of
    its own rows and those of the partner's piece in hand."""
    row = math.ceil(cols / 64) * word_bytes
    block = math.ceil(n / p)
    pr = piece_rows(n, cols, p, word_bytes)
    replicated = n * row + slice_rows * n * 4 + n * k * 16
    buffers = 2 * pr if p > 1 else 0
    ring = (block + buffers) * row + min(slice_rows, block) * pr * 4 + block * k * 16 + (pr * k * 16 if p > 1 else 0)
    return replicated, ring


def device_results(device):
    """The results.json files of a measured device: `device` names a folder of docs/results/ by its
    prefix (h100, h200: the newest such folder), a folder of results.json files, or one file."""
    if os.path.isfile(device):
        return [device]
    folder = device if os.path.isdir(device) else None
    if folder is None:
        found = sorted(d for d in glob.glob(os.path.join(ROOT, "docs", "results", device.lower() + "-*"))
                       if os.path.isdir(d))
        if not found:
            known = sorted({os.path.basename(d).split("-")[0]
                            for d in glob.glob(os.path.join(ROOT, "docs", "results", "*-*"))})
            print(f"scaling.py: --device {device}: no results.json or folder of that name, and no measured "
                  f"device of that name in docs/results/ (measured: {', '.join(known) or 'none'})", file=sys.stderr)
            sys.exit(2)
        folder = found[-1]
    return sorted(glob.glob(os.path.join(folder, "*.json")))


def measured_rates(paths):
    """What the model takes from a device's results: per kernel the best verified figure of merit
    (gram useful bit-ops/s, rk4 element-steps/s, discount kernel bytes/s, stream roof bytes/s) per
    rank, the device's bandwidth (the stream roof, else a roof another kernel measured), the
    device's name, and which file gave each."""
    rates = {"device": None, "files": {}}
    paths_of = {"gram": ["useful_bit_ops_per_s"], "rk4": ["element_steps_per_s"],
                "discount": ["kernel", "bandwidth_bytes_per_s_per_rank"], "stream": ["roof_bandwidth_bytes_per_s"]}
    for path in paths:
        try:
            with open(path) as f:
                res = json.load(f)
        except (OSError, ValueError):
            continue
        if not isinstance(res, dict) or "kernels" not in res:
            continue
        ranks = get(res, "mpi", "ranks", default=1) or 1
        rates["device"] = rates["device"] or get(res, "device", "name")
        for name, entry in res["kernels"].items():
            if entry.get("verified") is False or name not in paths_of:
                continue
            v = get(entry, paths_of[name])
            if name == "gram" and v is not None:
                v /= ranks  # useful bit-ops/s of all ranks: per GPU
            if v is not None and v > rates.get(name, 0):
                rates[name] = v
                rates["files"][name] = os.path.relpath(path, ROOT)
            roof = get(entry, "roof_bandwidth_bytes_per_s") or get(entry, "kernel", "roof_bandwidth_bytes_per_s")
            if roof and roof > rates.get("bandwidth", 0):
                rates["bandwidth"] = roof
                rates["files"]["bandwidth"] = os.path.relpath(path, ROOT)
    return rates


def model(args):
    """Gram prediction for many GPUs from a measured device's rate (--device) or a stated one."""
    net = Network(args.latency, args.bandwidth, args.io_per_rank, args.io_total)
    useful = args.rows * args.rows * args.cols
    rates = None
    if args.useful_bitops_per_gpu is None:
        rates = measured_rates(device_results(args.device))
        if "gram" not in rates:
            print(f"scaling.py: --device {args.device}: no verified gram run in its results", file=sys.stderr)
            sys.exit(2)
        args.useful_bitops_per_gpu = rates["gram"]
        source = (f"{rates['gram']:.3g} useful bit-ops/s per GPU, measured on {rates['device'] or args.device} "
                  f"(`{rates['files']['gram']}`)")
    else:
        source = f"{args.useful_bitops_per_gpu:.3g} useful bit-ops/s per GPU (given, --useful-bitops-per-gpu)"
    base = {"compute_seconds": useful / args.useful_bitops_per_gpu,
            "a_bytes": args.rows * math.ceil(args.cols / 64) * 8,
            "c_bytes": 0 if args.summary_only else 4 * args.rows * args.rows}
    gpus = [2 ** k for k in range(0, int(math.log2(args.max_gpus)) + 1)]
    rows = []
    for p in gpus:
        t = predict_seconds("gram", p, base, "strong", net)
        parts = (net.broadcast(p, base["a_bytes"]), base["compute_seconds"] / p, net.write(p, base["c_bytes"]))
        ring, _, exposed = ring_model(args.rows, args.cols, p, args.useful_bitops_per_gpu, net)
        ring += net.write(p, base["c_bytes"])
        mem_rep, mem_ring = gpu_memory(args.rows, args.cols, p, args.top_k)
        rows.append((p, t, *parts, ring, exposed, mem_rep, mem_ring))
    os.makedirs(args.out, exist_ok=True)
    gb = 1e9
    md = [f"# Gram {args.rows} × {args.cols} on 1–{args.max_gpus} GPUs (model)\n",
          f"Assumptions: {source}; interconnect latency "
          f"{args.latency:g} s, bandwidth {args.bandwidth / 1e9:g} GB/s; output written at "
          f"{args.io_per_rank / 1e9:g} GB/s per rank, {args.io_total / 1e9:g} GB/s in all; "
          f"C {'not written (write.summary / top-k)' if args.summary_only else 'written as int32'}. "
          f"Replicated: A broadcast, then the triangle in row slices. Ring: the circulant schedule "
          f"(ceil((P+1)/2) rounds, each the larger of a block pair's computation and one block's transfer). "
          f"Memory per GPU: replicated = packed A + a 64-row slice of C + top-{args.top_k} lists of all rows; "
          f"ring = its block of packed A + two piece buffers (1 MiB of rows, at least 256) + a 64-row window of "
          f"a piece + the top-{args.top_k} lists of its rows (and of the partner piece in hand).\n",
          "| GPUs | replicated (s) | broadcast A (s) | compute (s) | write C (s) | ring (s) "
          "| ring transfer not hidden (s) "
          "| replicated GB/GPU | ring GB/GPU | speedup (replicated) | efficiency |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    t1 = rows[0][1]
    for p, t, b, c, w, ring, exposed, mr, mg in rows:
        md.append(f"| {p} | {t:.4g} | {b:.3g} | {c:.4g} | {w:.3g} | {ring:.4g} | {exposed:.3g} | {mr / gb:.3g} "
                  f"| {mg / gb:.3g} | {t1 / t:.3g} | {t1 / t / p:.3g} |")
    if rates:
        md += ["", f"Measured rates of {rates['device'] or args.device} (per GPU, best verified run of each kernel):",
               "",
               "| kernel | figure | value | file |", "|---|---|---|---|"]
        what = {"stream": ("stream roof", "B/s"), "rk4": ("element-steps/s", "1/s"),
                "discount": ("kernel bandwidth", "B/s"), "gram": ("useful bit-ops/s", "1/s")}
        for k, (label, unit) in what.items():
            if k in rates:
                md.append(f"| {k} | {label} | {rates[k]:.3g} {unit} | `{rates['files'][k]}` |")
        if "bandwidth" in rates:
            md.append(f"| (device) | bandwidth roof | {rates['bandwidth']:.3g} B/s | `{rates['files']['bandwidth']}` |")
    write_atomically(os.path.join(args.out, "gram_model.md"), "\n".join(md) + "\n")
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.loglog([r[0] for r in rows], [r[1] for r in rows], "o-", label="model: replicated")
    ax.loglog([r[0] for r in rows], [r[5] for r in rows], "s-", label="model: ring")
    ax.loglog([r[0] for r in rows], [r[3] for r in rows], ":", label="compute")
    ax.loglog([r[0] for r in rows if r[0] > 1], [r[2] for r in rows if r[0] > 1], ":", label="broadcast A")
    if not args.summary_only:
        ax.loglog([r[0] for r in rows], [r[4] for r in rows], ":", label="write C")
    ax.loglog([r[0] for r in rows], [t1 / r[0] for r in rows], "k--", label="ideal")
    ax.set(xlabel="GPUs (one MPI rank each)", ylabel="time (s)",
           title=f"kmini gram {args.rows}×{args.cols}: predicted strong scaling")
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    measured = f" ({rates['device']})" if rates and rates.get("device") else ""
    fig.text(0.5, 0.01, f"model (docs/benchmarks.md); {args.useful_bitops_per_gpu:.2g} useful bit-ops/s/GPU{measured},"
             f" {args.bandwidth / 1e9:g} GB/s links, {args.io_total / 1e9:g} GB/s file system", ha="center", fontsize=7)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    tmp = os.path.join(args.out, "gram_model.png.tmp.png")
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, os.path.join(args.out, "gram_model.png"))
    print("\n".join(md))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    net = argparse.ArgumentParser(add_help=False)
    net.add_argument("--latency", type=float, default=2e-6, help="interconnect latency, s (default 2e-6)")
    net.add_argument("--bandwidth", type=float, default=25e9, help="interconnect bandwidth, bytes/s (default 25e9)")
    net.add_argument("--io-per-rank", type=float, default=2e9, help="write bandwidth per rank, bytes/s")
    net.add_argument("--io-total", type=float, default=100e9, help="file-system write bandwidth, bytes/s")

    s = sub.add_parser("study", parents=[net], help="run a strong and/or weak scaling study")
    s.add_argument("deck")
    s.add_argument("--kernels", help="comma-separated kernels (default: the deck's run.kernels)")
    s.add_argument("--ranks", default="1,2", help="comma-separated rank counts (default 1,2)")
    s.add_argument("--mode", choices=["strong", "weak", "both"], default="both")
    s.add_argument("--launcher", default="mpirun",
                   help="mpirun, srun, or a template with {np} {exe} {args} and optionally {cpus} {mpi} "
                        "(default mpirun)")
    s.add_argument("--kmini", default=os.path.join(ROOT, "build", "bin", "kmini"),
                   help="the kmini binary (default: build/bin/kmini of this checkout; build-cuda/bin/kmini for GPUs)")
    s.add_argument("--repeat", type=int, default=1,
                   help="runs per point: the median is reported with its min-max (default 1; 3 or more to compare)")
    s.add_argument("--out", default="scaling-out")
    s.add_argument("--verify", dest="verify", action="store_true", default=True,
                   help="verify every run (the default: an unverified result is not valid)")
    s.add_argument("--no-verify", dest="verify", action="store_false", help="skip verification (faster; invalid)")
    s.add_argument("--set", dest="set_args", action="append", default=[], type=lambda v: f"--set={v}",
                   help="extra deck override for every run; a --set of the key that sizes a kernel (its declaration's "
                        "scaling.size_key, `kmini describe --json`) is that kernel's one-rank size, which the study "
                        "scales (weak) or keeps (strong) instead of the deck's")
    s.add_argument("--dry-run", action="store_true",
                   help="print the commands, run nothing (the binary is still asked how each kernel scales)")
    s.add_argument("--quiet", action="store_true", help="hide kmini's own output")
    s.set_defaults(func=study)

    m = sub.add_parser("model", parents=[net], help="predict Gram scaling to many GPUs")
    m.add_argument("--rows", type=int, default=100000)
    m.add_argument("--cols", type=int, default=200000)
    m.add_argument("--max-gpus", type=int, default=1024)
    m.add_argument("--device", default="h100",
                   help="the measured device whose rates the model takes: h100 or h200 (the newest folder of "
                        "docs/results/ of that name), a results.json, or a folder of them (default h100)")
    m.add_argument("--useful-bitops-per-gpu", type=float, default=None,
                   help="a stated gram rate per GPU instead of a measured device's")
    m.add_argument("--summary-only", action="store_true", help="C is not written (write.summary)")
    m.add_argument("--top-k", type=int, default=16, help="k of the top-k lists in the memory per GPU (default 16)")
    m.add_argument("--out", default="scaling-out")
    m.set_defaults(func=model)

    args = ap.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
