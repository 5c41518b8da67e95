#!/usr/bin/env python3
"""rk4 with the Kerr term against an independent numpy RK4, and across rank counts.

Usage: check_rk4_kerr.py OUT_DIR KMINI [MPIEXEC NUMPROC_FLAG [FLAGS...]]

Writes random initial fields (complex128, complex G), runs kmini (double precision,
method stages, kerr = 0.9) with coupling per_step and per_stage on 1 rank and, given an
MPI launcher, on 2 and 3 ranks, and checks:
  * the delta history and the final F, G of the 1-rank run against a plain numpy RK4
    of the same equations, stage by stage (relative error <= 1e-10);
  * 2 and 3 ranks against 1 rank: agreement to rounding (relative <= 1e-13).
Exit 77 (ctest: skipped) when numpy is missing.
"""
import os
import subprocess
import sys

try:
    import numpy as np
except ImportError:
    print("SKIP: numpy is not available to " + sys.executable)
    sys.exit(77)

out, kmini = sys.argv[1], sys.argv[2]
launcher = sys.argv[3:]
os.makedirs(out, exist_ok=True)

n, steps, dt, kappa = 12, 200, 5e-3, 0.9
g = 1.2 / (n * n)
delta0 = 0.3 - 0.1j

rng = np.random.default_rng(2026)
F0 = (0.6 + 0.2j) + (rng.uniform(-0.5, 0.5, (n, n)) + 1j * rng.uniform(-0.5, 0.5, (n, n)))
G0 = rng.uniform(0, 1, (n, n)) + 1j * rng.uniform(-0.3, 0.3, (n, n))
np.save(os.path.join(out, "F0.npy"), F0.astype(np.complex128))
np.save(os.path.join(out, "G0.npy"), G0.astype(np.complex128))


def rhs(F, G, d, kerr=kappa):
    dF = -2j * F - 1j * d * (2 * G - 1) - 1j * kerr * np.abs(F) ** 2 * F
    dG = -1j * (np.conj(d) * F - d * np.conj(F))
    return dF, dG


def numpy_rk4(per_stage, kerr=kappa):
    F, G = F0.copy(), G0.copy()
    delta = g * F.sum() if per_stage else delta0
    history = [delta]
    for _ in range(steps):
        d1 = delta
        k1F, k1G = rhs(F, G, d1, kerr)
        F2, G2 = F + dt / 2 * k1F, G + dt / 2 * k1G
        d2 = g * F2.sum() if per_stage else delta
        k2F, k2G = rhs(F2, G2, d2, kerr)
        F3, G3 = F + dt / 2 * k2F, G + dt / 2 * k2G
        d3 = g * F3.sum() if per_stage else delta
        k3F, k3G = rhs(F3, G3, d3, kerr)
        F4, G4 = F + dt * k3F, G + dt * k3G
        d4 = g * F4.sum() if per_stage else delta
        k4F, k4G = rhs(F4, G4, d4, kerr)
        F = F + dt / 6 * (k1F + 2 * k2F + 2 * k3F + k4F)
        G = G + dt / 6 * (k1G + 2 * k2G + 2 * k3G + k4G)
        delta = g * F.sum()
        history.append(delta)
    return np.array(history), F, G


def run_kmini(coupling, ranks):
    d = os.path.join(out, f"{coupling}_np{ranks}")
    args = ["--set", "run.kernels=[rk4]", "--set", f"rk4.n={n}", "--set", f"rk4.steps={steps}",
            "--set", f"rk4.dt={dt!r}", "--set", f"rk4.g={g!r}", "--set", f"rk4.kerr={kappa!r}",
            "--set", f"rk4.delta0=[{delta0.real!r},{delta0.imag!r}]", "--set", f"rk4.coupling={coupling}",
            "--set", "rk4.precision=double", "--set", "rk4.method=stages",
            "--set", "rk4.init.F={file: %s}" % os.path.join(out, "F0.npy"),
            "--set", "rk4.init.G={file: %s}" % os.path.join(out, "G0.npy"),
            "--set", "rk4.write.delta=delta.npy", "--set", "rk4.write.F=F.npy", "--set", "rk4.write.G=G.npy",
            "--out", d]
    cmd = [kmini] + args
    if launcher:
        cmd = launcher[:2] + [str(ranks)] + launcher[2:] + cmd
    elif ranks > 1:
        return None
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"kmini {coupling} on {ranks} rank(s): exit {r.returncode}\n{r.stdout}\n{r.stderr}")
        sys.exit(1)
    return (np.load(os.path.join(d, "delta.npy")), np.load(os.path.join(d, "F.npy")),
            np.load(os.path.join(d, "G.npy")))


def rel(a, b):
    (da, Fa, Ga), (db, Fb, Gb) = a, b
    ed = np.max(np.abs(da - db)) / np.max(np.abs(db))
    scale = max(1.0, np.max(np.abs(Fb)), np.max(np.abs(Gb)))
    ef = max(np.max(np.abs(Fa - Fb)), np.max(np.abs(Ga - Gb))) / scale
    return ed, ef


failed = False
for coupling in ("per_step", "per_stage"):
    ref = numpy_rk4(coupling == "per_stage")
    one = run_kmini(coupling, 1)
    ed, ef = rel(one, ref)
    linear, _ = rel(one, numpy_rk4(coupling == "per_stage", 0.0))
    # The Kerr term matters at this tolerance: the kappa = 0 solution is far off.
    ok = ed <= 1e-10 and ef <= 1e-10 and linear > 1e-4
    print(f"{coupling}: kmini vs numpy without the Kerr term: delta {linear:.3g} (must be > 1e-4)")
    print(f"{coupling}: kmini vs numpy: delta {ed:.3g}, fields {ef:.3g} (|delta| up to "
          f"{np.max(np.abs(ref[0])):.3g}) {'ok' if ok else 'FAIL'}")
    failed |= not ok
    for ranks in (2, 3):
        other = run_kmini(coupling, ranks)
        if other is None:
            print(f"{coupling}: no MPI launcher, {ranks} ranks not run")
            continue
        ed, ef = rel(other, one)
        ok = ed <= 1e-13 and ef <= 1e-13
        print(f"{coupling}: {ranks} ranks vs 1 rank: delta {ed:.3g}, fields {ef:.3g} {'ok' if ok else 'FAIL'}")
        failed |= not ok
sys.exit(1 if failed else 0)
