"""Reading kmini's results.json, for every script that does: one getter, and per kernel what the
kernel's declaration (`kmini describe --json`) says the benchmark and scaling scripts report and
how a scaling study sizes it.

  from kmini_results import get, load, fom, roof_fraction, timed_seconds, spread, run_verdict, verdict_text
  from kmini_results import describe, figures, scaling_rules, roof_divides, roof_text, oversubscription
"""
import json
import os
import shlex
import statistics
import subprocess
import sys

# What each kernel reports besides its fom, and the deck key a scaling study sizes it by, are
# in its declaration (src/<kernel>/<kernel>_declaration.cpp), read through describe() below.

# results.json files written before schema_version 2 have no `fom`: where their figure of merit
# lies, as (label, path under kernels.<name>, unit, scale).
LEGACY_FOM = {
    "stream": ("add f64 bandwidth", ["ops", "add_f64", "bandwidth_bytes_per_s"], "GB/s", 1e-9),
    "rk4": ("element-steps/s", ["element_steps_per_s"], "Gelem-steps/s", 1e-9),
    "discount": ("kernel bandwidth", ["kernel", "bandwidth_bytes_per_s_per_rank"], "GB/s", 1e-9),
    "gram": ("useful bit-ops/s", ["useful_bit_ops_per_s"], "Tbit-ops/s", 1e-12),
}
# results.json files written before schema_version 2 (the committed GPU results of 2026-11-25 and -26)
# have no `roof`: their kernels wrote the fraction as one of these keys, in the kernel's entry or one
# object below it (discount's `kernel`). Newer files carry it as kernels.<name>.roof.fraction.
LEGACY_FRACTION_KEYS = ("fraction_of_roof", "fraction_of_peak")
# The last line of each benchmarks/compare_numpy_<kernel>.py: kmini's speedup over numpy.
SPEEDUP_LINE = "kmini speedup over numpy:"


def in_run_baseline(entry):
    """(name, kmini's speedup) of a kernel entry's in-run baseline (kernels.<name>.baseline, where
    its deck asks for one: its `name` and kmini's `speedup` over it; older files: gram's
    `gram_speedup`), or None."""
    b = entry.get("baseline")
    if not isinstance(b, dict):
        return None
    speedup = b.get("speedup", b.get("gram_speedup"))
    return (b.get("name", "baseline"), speedup) if speedup is not None else None


# Where the timed part lies in those files; newer ones carry it as kernels.<name>.fom.seconds.
LEGACY_TIME = {
    "stream": ["ops", "add_f64", "best_seconds"],
    "rk4": ["loop_seconds"],
    "discount": ["kernel", "best_seconds"],
    "gram": ["compute_seconds"],
}


def fom(results, name):
    """(label, value, unit, higher_is_better) of kernel `name`'s figure of merit in one results.json:
    its `fom` object where the run wrote one, else LEGACY_FOM (value in LEGACY_FOM's unit)."""
    entry = results["kernels"][name]
    f = entry.get("fom")
    if isinstance(f, dict) and f.get("value") is not None:
        return f.get("name", "figure of merit"), f["value"], f.get("unit", ""), f.get("higher_is_better", True)
    if name not in LEGACY_FOM:
        return "figure of merit", None, "", True
    label, path, unit, scale = LEGACY_FOM[name]
    v = get(entry, path)
    return label, (v * scale if v is not None else None), unit, True


def describe(kmini):
    """`kmini describe --json` of this binary: {name: declaration} (keys, fom, decks, scaling,
    figures, small_run, profile_run), or None for a binary without it."""
    try:
        done = subprocess.run([kmini, "describe", "--json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True, env=kmini_env(), timeout=120)
        if done.returncode == 0:
            return {k["name"]: k for k in json.loads(done.stdout)["kernels"]}
    except (OSError, ValueError, KeyError, subprocess.TimeoutExpired):
        pass
    return None


def figures(described, name):
    """What kernel `name` declares it reports besides its fom, from describe(): a list of
    (label, path under kernels.<name>, unit, scale); empty for a kernel (or a binary) without."""
    return [(f["label"], list(f["path"]), f["unit"], f["scale"])
            for f in ((described or {}).get(name) or {}).get("figures") or []]


def scaling_rules(described):
    """How a scaling study sizes each kernel, from describe(): {name: {"key": the deck key that
    sets the size (dotted, with the section), "growth": "linear" | "sqrt" | "per_rank"}} for the
    kernels that declare it."""
    rules = {}
    for name, d in (described or {}).items():
        s = d.get("scaling")
        if isinstance(s, dict):
            rules[name] = {"key": s["size_key"], "growth": s["growth"]}
    return rules


def roof_fraction(results, name):
    """Kernel `name`'s fraction of its roof in one results.json: its `roof` object's, else (a file older
    than schema_version 2) the fraction key it wrote (LEGACY_FRACTION_KEYS), or None."""
    entry = results["kernels"][name]
    r = entry.get("roof")
    if isinstance(r, dict):
        return r.get("fraction")
    for where in [entry] + [v for v in entry.values() if isinstance(v, dict)]:
        for key in LEGACY_FRACTION_KEYS:
            if isinstance(where.get(key), (int, float)):
                return where[key]
    return None


def same(a, b, rel=1e-9):
    """Two readings of one quantity (a figure written twice in a results.json), not two quantities."""
    return isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(a - b) <= rel * max(abs(a), abs(b))


def roof_divides(results, name, described=None):
    """What kernel `name`'s fraction of its roof divides, from one results.json: a dict with the roof's
    `roof` name, `value` and `unit`, the `fraction`, the `numerator` (fraction x the roof's value, in the
    roof's unit), `what` it is (the figure of merit itself, else the figure the kernel declares with that
    value, e.g. gram's executed bit-ops/s; None when none matches), `per_rank` (that figure is per rank,
    the roof's value of all ranks: `value` and `numerator` are then given per rank), and `fom_ratio` (the
    figure of merit over the numerator where both have the roof's unit, e.g. gram's useful / executed);
    None without a roof object."""
    entry = results["kernels"][name]
    r = entry.get("roof")
    if not isinstance(r, dict) or r.get("fraction") is None or r.get("value") is None:
        return None
    numerator = r["fraction"] * r["value"]
    f = entry.get("fom") if isinstance(entry.get("fom"), dict) else {}
    candidates = [("the figure of merit", f.get("value"))] if f.get("unit") == r.get("unit") else []
    candidates += [(label, get(entry, path)) for label, path, _, _ in figures(described, name)]
    # A figure equal to the numerator, else one per rank where the roof's value is that of all ranks
    # (the fraction per rank).
    ranks = get(results, "mpi", "ranks", default=1) or 1
    what, per_rank = next((label for label, v in candidates if same(v, numerator)), None), False
    if what is None and ranks > 1:
        what = next((label for label, v in candidates if same(v, numerator / ranks)), None)
        per_rank = what is not None
    ratio = None
    if what != "the figure of merit" and f.get("unit") == r.get("unit") and f.get("value") and numerator:
        ratio = f["value"] / numerator
    return {"roof": r.get("name", "roof"), "value": r["value"] / ranks if per_rank else r["value"],
            "unit": r.get("unit", ""), "fraction": r["fraction"], "per_rank": per_rank,
            "numerator": numerator / ranks if per_rank else numerator, "what": what, "fom_ratio": ratio}


def roof_text(divides):
    """One line of what a fraction of the roof is, from roof_divides(): 'executed bit-ops/s over tc probe
    (4.28e+15 bitop/s); figure of merit / executed bit-ops/s = 1.97'."""
    if not divides:
        return ""
    what = divides["what"] or f"{divides['numerator']:.3g} {divides['unit']}"
    each = " per rank" if divides.get("per_rank") else ""
    text = f"{what} over {divides['roof']} ({divides['value']:.3g} {divides['unit']}{each})"
    if divides["fom_ratio"] is not None:
        text += f"; figure of merit / {what} = {divides['fom_ratio']:.3g}"
    return text


def duplicates_fom(results, name, path):
    """Whether the figure at `path` under kernels.<name> is the figure of merit written a second time."""
    entry = results["kernels"][name]
    f = entry.get("fom")
    return isinstance(f, dict) and same(get(entry, path), f.get("value"))


def timed_seconds(entry, name):
    """The timed part of kernel `name`'s results.json entry, not its I/O: the seconds its figure of
    merit is computed from (fom.seconds; LEGACY_TIME in older files, else the kernel's seconds)."""
    f = entry.get("fom")
    if isinstance(f, dict) and f.get("seconds") is not None:
        return f["seconds"]
    return get(entry, LEGACY_TIME.get(name, ["seconds"]), default=entry["seconds"])


def spread(values):
    """(median, min, max) of the values that are not None, or (None, None, None)."""
    values = sorted(v for v in values if v is not None)
    if not values:
        return None, None, None
    return statistics.median(values), values[0], values[-1]


def oversubscription(results):
    """'oversubscribed: 4 ranks on 2 cores' (or 'R ranks x T threads on C cores', per host where the run
    spanned several) when a run's ranks on one host, times the host threads each ran, exceed that host's
    cores; else None. From the run's results.json: mpi.ranks and mpi.hosts, kokkos.concurrency (the threads
    of a rank whose execution space is the host CPU; a GPU rank drives its device from one thread) and
    load.cpus (the cores of the busiest host)."""
    ranks = get(results, "mpi", "ranks", default=1) or 1
    hosts = max(1, len(get(results, "mpi", "hosts", default=None) or [None]))
    cores = get(results, "load", "cpus")
    if not isinstance(cores, int) or cores < 1:
        return None
    threads = get(results, "kokkos", "concurrency", default=1) if get(results, "device", "kind") == "host CPU" else 1
    threads = threads if isinstance(threads, int) and threads >= 1 else 1
    per_host = -(-ranks // hosts)
    if per_host * threads <= cores:
        return None
    used = f"{per_host} ranks" + (f" x {threads} threads" if threads > 1 else "")
    return f"oversubscribed: {used} on {cores} cores" + (f" (per host, {hosts} hosts)" if hosts > 1 else "")


def run_verdict(results, name):
    """(valid, loaded, reasons, oversubscribed) of kernel `name` in one results.json: the run's own verdict
    (`valid`, `invalid_reasons`, top-level `load.loaded`) and oversubscription() of its ranks; a results.json
    without a verdict (an older kmini) is judged here by the same rules it can check: verified, and at most
    100 % of its roof."""
    entry = results["kernels"][name]
    if "valid" in entry:
        reasons = list(entry.get("invalid_reasons", []))
        valid = bool(entry["valid"])
    else:
        reasons = []
        if entry.get("verified") is not True:
            reasons.append("not verified" if entry.get("verified") is None else "verification failed")
        fraction = roof_fraction(results, name)
        if fraction is not None and fraction > 1.0:
            reasons.append(f"{100 * fraction:.0f} % of its roof: above 100 %, so the roof was measured low")
        valid = not reasons
    loaded = bool(get(results, "load", "loaded", default=False))
    return valid, loaded, reasons, oversubscription(results)


def verdict_text(verdicts):
    """One verdict for several runs of one kernel, from run_verdict() of each: 'valid',
    'valid, loaded machine (k of N run(s))', 'valid, oversubscribed: 4 ranks on 2 cores (k of N run(s))'
    or 'INVALID (k of N run(s): reasons)', the oversubscription named after it too."""
    n = len(verdicts)
    bad = [v for v in verdicts if not v[0]]
    loaded = sum(1 for v in verdicts if v[1])
    over = [v[3] for v in verdicts if len(v) > 3 and v[3]]
    crowded = f"{'; '.join(sorted(set(over)))} ({len(over)} of {n} run(s))" if over else ""
    if bad:
        reasons = sorted({r for v in bad for r in v[2]})
        return f"INVALID ({len(bad)} of {n} run(s): {'; '.join(reasons)})" + (f"; {crowded}" if crowded else "")
    text = "valid"
    if crowded:
        text += ", " + crowded
    if loaded:
        text += f", loaded machine ({loaded} of {n} run(s))"
    return text


def require_kmini(path, who):
    """Exits with status 2 and one line when `path` is not an executable kmini."""
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        print(f"{who}: no kmini binary at {path}: build one (cmake --preset default && cmake --build "
              f"--preset default, or scripts/bench.sh) or name it with --kmini PATH", file=sys.stderr)
        sys.exit(2)


# Launchers: the kmini command for `np` ranks. A template has {np} {exe} {args} and
# optionally {cpus} and {mpi}.
LAUNCHERS = {
    "mpirun": "mpirun -n {np} {exe} {args}",
    # Slurm 22.05-23.02 do not pass the job's --cpus-per-task on to srun: it is given
    # explicitly ({cpus}: $SLURM_CPUS_PER_TASK, else 1). {mpi}: --mpi=$KMINI_SRUN_MPI when
    # set (pmix for a Spack-built OpenMPI; see scripts/slurm/kmini.sbatch), else the site's default.
    "srun": "srun -n {np} --cpus-per-task={cpus} {mpi}--gpus-per-task=1 --gpu-bind=single:1 {exe} {args}",
}


def launch_command(launcher, np_, exe, args):
    """The shell command that starts `exe args` on np_ ranks through `launcher` (a LAUNCHERS name,
    a template, or a launcher prefix such as 'mpirun --bind-to core', to which '-n {np}' and the
    command are appended)."""
    template = LAUNCHERS.get(launcher, launcher)
    if "{exe}" not in template:
        template = template + " -n {np} {exe} {args}"
    mpi = os.environ.get("KMINI_SRUN_MPI", "")
    return template.format(np=np_, exe=shlex.quote(exe), args=" ".join(shlex.quote(a) for a in args),
                           cpus=shlex.quote(os.environ.get("SLURM_CPUS_PER_TASK", "1")),
                           mpi=f"--mpi={shlex.quote(mpi)} " if mpi else "")


def launch_env(max_ranks):
    """OpenMPI refuses root and more ranks than cores unless told; both are common on
    workstations and in containers (other MPIs ignore these variables)."""
    env = dict(os.environ)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    if max_ranks > (os.cpu_count() or 1):
        env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    # Kokkos' OpenMP backend warns on every run without them (see scripts/setup.sh).
    env.setdefault("OMP_PROC_BIND", "spread")
    env.setdefault("OMP_PLACES", "threads")
    return env


def host_load():
    """(1-minute load average, busy CPU seconds of the host) from /proc, or (None, None)."""
    try:
        with open("/proc/loadavg") as f:
            load = float(f.read().split()[0])
        with open("/proc/stat") as f:
            fields = f.readline().split()
        hz = os.sysconf("SC_CLK_TCK")
        busy = sum(float(x) for x in (fields[1], fields[2], fields[3], fields[6], fields[7])) / hz
        return load, busy
    except (OSError, ValueError, IndexError):
        return None, None


def get(d, *path, default=None):
    """d[path[0]][path[1]]..., or `default` where a step is missing. The path is given as
    arguments, as one list, or dotted: get(k, "kernel", "best_seconds") == get(k, ["kernel", "best_seconds"])
    == get(k, "kernel.best_seconds")."""
    if len(path) == 1 and isinstance(path[0], (list, tuple)):
        path = tuple(path[0])
    elif len(path) == 1 and isinstance(path[0], str) and "." in path[0]:
        path = tuple(path[0].split("."))
    for k in path:
        if not isinstance(d, dict) or k not in d:
            return default
        d = d[k]
    return d


def load(path):
    """The results.json at `path`."""
    with open(path) as f:
        return json.load(f)


def kernel(results, name):
    """kernels.<name> of a results.json (KeyError when the kernel did not run)."""
    return results["kernels"][name]


# Set on the development machines to force OpenBLAS's Haswell (AVX2) kernels
# and its L2 size, whatever the CPU: an outside baseline must run as a user's
# machine would, so the baseline processes (numpy) run without them; kmini
# and tests keep them (saved under KMINI_SAVED_<name> while a baseline runs).
OPENBLAS_FORCING = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def baseline_env(env=None):
    """env (default os.environ) for a baseline process: OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE
    removed, their values kept as KMINI_SAVED_<name> for kmini_env()."""
    env = dict(os.environ if env is None else env)
    for name in OPENBLAS_FORCING:
        if name in env:
            env["KMINI_SAVED_" + name] = env.pop(name)
    return env


def kmini_env(env=None):
    """env (default os.environ) for kmini started from a baseline process: the variables
    baseline_env() removed, restored."""
    env = dict(os.environ if env is None else env)
    for name in OPENBLAS_FORCING:
        if "KMINI_SAVED_" + name in env:
            env[name] = env.pop("KMINI_SAVED_" + name)
    if env.get("KMINI_GRAM_BLAS_SET") == "1":  # compare_numpy_gram.py's own OPENBLAS_VERBOSE, for numpy only
        env.pop("OPENBLAS_VERBOSE", None)
    return env


def run_kmini(cmd, who):
    """Runs a kmini command line, printing it and its output; True on exit 0, else says so
    on stderr as `who: kmini failed (exit N)`. kmini gets the environment as it was before
    baseline_env() (the OpenBLAS settings of the machine)."""
    print("running:", " ".join(cmd), flush=True)
    run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=kmini_env())
    print(run.stdout)
    if run.returncode != 0:
        print(f"{who}: kmini failed (exit {run.returncode})", file=sys.stderr)
    return run.returncode == 0
