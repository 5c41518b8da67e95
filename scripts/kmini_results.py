"""Reading kmini's results.json, for every script that does: one getter, and per kernel the
metric paths (under kernels.<name>) that the benchmark and scaling scripts report.

  from kmini_results import get, load, FIGURES, ROOF, BASELINES, TIME
"""
import json
import os
import subprocess
import sys

# What each kernel's benchmark reports: (label, path under kernels.<name>, unit, scale).
FIGURES = {
    "stream": [("add f64 bandwidth", ["ops", "add_f64", "bandwidth_bytes_per_s"], "GB/s", 1e-9),
               ("add i32 bandwidth", ["ops", "add_i32", "bandwidth_bytes_per_s"], "GB/s", 1e-9),
               ("exp f32 bandwidth", ["ops", "exp_f32", "bandwidth_bytes_per_s"], "GB/s", 1e-9),
               ("roof (best op)", ["roof_bandwidth_bytes_per_s"], "GB/s", 1e-9)],
    "rk4": [("element-steps/s", ["element_steps_per_s"], "Gelem-steps/s", 1e-9),
            ("bytes per element-step", ["bytes_per_element_step"], "B", 1.0),
            ("effective bandwidth", ["effective_bandwidth_bytes_per_s_per_rank"], "GB/s", 1e-9)],
    "discount": [("kernel bandwidth", ["kernel", "bandwidth_bytes_per_s_per_rank"], "GB/s", 1e-9),
                 ("end-to-end seconds", ["end_to_end", "best_seconds"], "s", 1.0)],
    "gram": [("useful bit-ops/s", ["useful_bit_ops_per_s"], "Tbit-ops/s", 1e-12),
             ("executed bit-ops/s", ["executed_bit_ops_per_s"], "Tbit-ops/s", 1e-12),
             ("AND+popcount peak (probe)", ["probe_and_popcount_peak_bit_ops_per_s"], "Tbit-ops/s", 1e-12)],
}
# Fraction of the measured roof: bandwidth kernels of the stream roof, gram of the popcount probe.
ROOF = {"rk4": ["fraction_of_roof"], "discount": ["kernel", "fraction_of_roof"], "gram": ["fraction_of_peak"]}
# In-run baselines: (name, path of the speedup over it).
BASELINES = {"gram": [("KokkosBlas::gemm float", ["baseline", "gram_speedup"])]}
# The time a scaling study measures per kernel (the kernel's timed part, not its I/O).
TIME = {
    "stream": ["ops", "add_f64", "best_seconds"],
    "rk4": ["loop_seconds"],
    "discount": ["kernel", "best_seconds"],
    "gram": ["compute_seconds"],
}


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
