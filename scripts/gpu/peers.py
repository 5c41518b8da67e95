#!/usr/bin/env python3
"""kmini against what its users had, on the same GPU and the same data, checked for
agreement (run by run_gpu.sh on the GPU machine; needs numpy, and numba-cuda and
CuPy where present; a missing one is reported as skipped).

usage: peers.py --kmini BUILD/bin/kmini --out DIR [--gram-rows 4096 --gram-cols 16384]
                [--rk4-n 1024 --rk4-steps 100]

Gram, A random 0/1 (density 0.5), written once to A.npy and read by every side:
  - kmini (gram.A.file, dense C written), its results.json rate;
  - the users' numba-cuda kernel: the shared-memory matrix product of numba's
    documentation (TPB x TPB float32 tiles of A and A^T), its loop over k tiles
    counted from A's columns instead of gridDim.x so that it runs on a non-square A;
  - CuPy's matrix product of the 0/1 matrix in float32 (exact below 2^24) and
    float16 (cuBLAS tensor cores; fp32 accumulate, the output rounded to fp16).
  Each C is compared with kmini's: float32 exactly; float16 within its rounding.
RK4, the coupled F, G of kmini's rk4 deck (per_step coupling, affine model):
  - kmini (init.F/G from the same .npy files), its time loop;
  - the users' per-step numba-cuda loop: each step copies F and G to the device,
    launches the stage kernels, copies them back and sums F on the host for delta.
  delta histories compared (relative 1e-3 single precision).
Prints one JSON document (also DIR/peers.json).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

# numba-cuda as installed beside numpy 2.5 still names np.row_stack, which numpy
# removed (an alias of vstack): restore the alias so that numba imports.
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack


def run_kmini(kmini, out, sets):
    cmd = [kmini, "--out", out] + [a for s in sets for a in ("--set", s)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"kmini exit {p.returncode}: {p.stderr.strip()[-400:]}")
    with open(os.path.join(out, "results.json")) as f:
        return json.load(f)


def timed(fn, sync, repeat=3):
    fn()
    sync()
    best = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        r = fn()
        sync()
        best = min(best, time.perf_counter() - t0)
    return best, r


def gram_peers(args, report):
    rows, cols = args.gram_rows, args.gram_cols
    rng = np.random.default_rng(7)
    A = (rng.random((rows, cols)) < 0.5).astype(np.uint8)
    a_path = os.path.join(args.out, "A.npy")
    np.save(a_path, A)
    def kmini_gram(engine):
        """Timed without outputs, best of 20 passes, one slice (row_slice auto: the
        built-in deck's 256-row slices left the H100 half idle, 2x slower); then
        once more writing C for the comparison. Returns (results, C's path)."""
        out_dir = os.path.join(args.out, "kmini_gram_" + engine)
        base = ["run.kernels=[gram]", "run.verify=false", "gram.row_slice=auto", f"gram.A={{file: {a_path}}}",
                f"gram.engine={engine}"]
        timed_run = run_kmini(args.kmini, out_dir + "_timed", base + ["gram.repeat=20"])["kernels"]["gram"]
        run_kmini(args.kmini, out_dir, base + ["gram.write.C=C.npy"])
        return timed_run, os.path.join(out_dir, "C.npy")

    g, c_path = kmini_gram("popcount")
    C = np.load(c_path).astype(np.int64)
    out = {"shape": [rows, cols], "kmini": {k: g.get(k) for k in ("compute_seconds", "useful_bit_ops_per_s",
                                                                  "fraction_of_peak", "probe_and_popcount_peak_bit_ops_per_s")}}
    ks = g["compute_seconds"]
    # The tensor-core engine on the same file: its C must be the same bytes.
    try:
        t, tc_path = kmini_gram("tensor_core")
        with open(c_path, "rb") as f1, open(tc_path, "rb") as f2:
            same = f1.read() == f2.read()
        out["kmini_tensor_core"] = {"compute_seconds": t["compute_seconds"],
                                    "useful_bit_ops_per_s": t["useful_bit_ops_per_s"],
                                    "C_identical_to_popcount": same}
    except Exception as e:
        out["kmini_tensor_core"] = f"not run: {type(e).__name__}: {e}"
    try:
        import cupy as cp
        dA32 = cp.asarray(A, dtype=cp.float32)
        dA16 = cp.asarray(A, dtype=cp.float16)
        sync = cp.cuda.Device().synchronize
        t32, c32 = timed(lambda: dA32 @ dA32.T, sync)
        t16, c16 = timed(lambda: dA16 @ dA16.T, sync)
        c32h = cp.asnumpy(c32).astype(np.int64)
        c16h = cp.asnumpy(c16).astype(np.float64)
        err16 = float(np.max(np.abs(c16h - C) / np.maximum(C, 1)))
        out["cupy_float32"] = {"seconds": t32, "exact": bool(np.array_equal(c32h, C)),
                               "kmini_speedup": t32 / ks}
        out["cupy_float16"] = {"seconds": t16, "max_relative_error": err16, "within_fp16_rounding": err16 <= 2.0 ** -10,
                               "kmini_speedup": t16 / ks}
        del dA32, dA16, c32, c16
    except Exception as e:  # a peer that cannot run is reported, the others still run
        out["cupy"] = f"not run: {type(e).__name__}: {e}"
    try:
        from numba import cuda, float32
        TPB = 16

        # numba's documented shared-memory matrix product, as the users' program used it.
        @cuda.jit
        def fast_matmul(A, B, C):
            sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
            sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
            x, y = cuda.grid(2)
            tx = cuda.threadIdx.x
            ty = cuda.threadIdx.y
            tiles = (A.shape[1] + TPB - 1) // TPB  # the documented kernel's gridDim.x, for a non-square A
            tmp = float32(0.)
            for i in range(tiles):
                sA[ty, tx] = 0
                sB[ty, tx] = 0
                if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
                    sA[ty, tx] = A[y, tx + i * TPB]
                if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
                    sB[ty, tx] = B[ty + i * TPB, x]
                cuda.syncthreads()
                for j in range(TPB):
                    tmp += sA[ty, j] * sB[j, tx]
                cuda.syncthreads()
            if y < C.shape[0] and x < C.shape[1]:
                C[y, x] = tmp

        dA = cuda.to_device(A.astype(np.float32))
        dAT = cuda.to_device(np.ascontiguousarray(A.T.astype(np.float32)))
        dC = cuda.device_array((rows, rows), dtype=np.float32)
        side = (rows + TPB - 1) // TPB  # one thread per element of C
        launch = lambda: fast_matmul[(side, side), (TPB, TPB)](dA, dAT, dC)
        tn, _ = timed(launch, cuda.synchronize, repeat=1)
        cn = dC.copy_to_host().astype(np.int64)
        out["numba_shared_matmul"] = {"seconds": tn, "exact": bool(np.array_equal(cn, C)),
                                      "kmini_speedup": tn / ks}
    except Exception as e:
        out["numba"] = f"not run: {type(e).__name__}: {e}"
    tc = out.get("kmini_tensor_core")
    if isinstance(tc, dict):  # each peer's time over the tensor-core engine's
        for name in ("cupy_float32", "cupy_float16", "numba_shared_matmul"):
            if isinstance(out.get(name), dict):
                out[name]["kmini_tensor_core_speedup"] = out[name]["seconds"] / tc["compute_seconds"]
    report["gram"] = out


def rk4_peers(args, report):
    n, steps = args.rk4_n, args.rk4_steps
    rng = np.random.default_rng(3)
    F0 = ((rng.random((n, n)) - 0.4) + 1j * (rng.random((n, n)) - 0.5)).astype(np.complex64)
    G0 = rng.random((n, n)).astype(np.complex64)
    f_path, g_path = os.path.join(args.out, "F0.npy"), os.path.join(args.out, "G0.npy")
    np.save(f_path, F0)
    np.save(g_path, G0)
    dt, g = 1.0e-4, 1.0 / (n * n)
    kout = os.path.join(args.out, "kmini_rk4")
    res = run_kmini(args.kmini, kout, ["run.kernels=[rk4]", "run.verify=false", f"rk4.n={n}",
                                       f"rk4.steps={steps}", f"rk4.dt={dt}", f"rk4.g={g}",
                                       "rk4.coupling=per_step", "rk4.precision=single", "rk4.delta0=[1.0, 0.0]",
                                       f"rk4.init.F={{file: {f_path}}}", f"rk4.init.G={{file: {g_path}}}",
                                       "rk4.write.delta=delta.csv"])
    r = res["kernels"]["rk4"]
    out = {"n": n, "steps": steps, "kmini": {k: r.get(k) for k in ("loop_seconds", "seconds", "element_steps_per_s")}}
    kd = None
    try:
        kd = np.loadtxt(os.path.join(kout, "delta.csv"), delimiter=",", skiprows=1)
    except Exception as e:  # the history is compared only where kmini wrote it
        out["kmini_delta"] = f"not read: {e}"
    try:
        from numba import cuda

        @cuda.jit
        def stage(F, G, Fin, Gin, kF, kG, Fout, Gout, dre, dim, h):
            # k = rhs(Fin, Gin); the next stage's state F + h k (element-wise, in place is safe)
            i, j = cuda.grid(2)
            if i < F.shape[0] and j < F.shape[1]:
                d = complex(dre, dim)
                f = Fin[i, j]
                gg = Gin[i, j]
                dF = -2j * f - 1j * d * (2 * gg - 1)
                dG = -1j * (d.conjugate() * f - d * f.conjugate())
                kF[i, j] = dF
                kG[i, j] = dG
                Fout[i, j] = F[i, j] + h * dF
                Gout[i, j] = G[i, j] + h * dG

        @cuda.jit
        def combine(F, G, k1F, k1G, k2F, k2G, k3F, k3G, k4F, k4G, dt):
            i, j = cuda.grid(2)
            if i < F.shape[0] and j < F.shape[1]:
                F[i, j] += dt / 6 * (k1F[i, j] + 2 * k2F[i, j] + 2 * k3F[i, j] + k4F[i, j])
                G[i, j] += dt / 6 * (k1G[i, j] + 2 * k2G[i, j] + 2 * k3G[i, j] + k4G[i, j])

        def seed_loop():
            F, G = F0.copy(), G0.copy()
            delta = np.complex64(1.0)
            hist = [delta]
            tpb = (16, 16)
            bpg = ((n + 15) // 16, (n + 15) // 16)
            for _ in range(steps):
                dF, dG = cuda.to_device(F), cuda.to_device(G)  # the users' per-step copies
                ks = [cuda.device_array((n, n), np.complex64) for _ in range(8)]
                Fs, Gs = cuda.device_array((n, n), np.complex64), cuda.device_array((n, n), np.complex64)
                for s, h in enumerate((dt / 2, dt / 2, dt, 0.0)):
                    Fin, Gin = (dF, dG) if s == 0 else (Fs, Gs)
                    stage[bpg, tpb](dF, dG, Fin, Gin, ks[2 * s], ks[2 * s + 1], Fs, Gs,
                                    np.float32(delta.real), np.float32(delta.imag), np.float32(h))
                combine[bpg, tpb](dF, dG, *ks, np.float32(dt))
                F, G = dF.copy_to_host(), dG.copy_to_host()
                delta = np.complex64(g * F.sum())  # on the host, as the users' program did
                hist.append(delta)
            return np.array(hist)

        t0 = time.perf_counter()  # the first run compiles the kernels (JIT), the second is timed
        hist = seed_loop()
        t_first = time.perf_counter() - t0
        t0 = time.perf_counter()
        hist = seed_loop()
        tn = time.perf_counter() - t0
        entry = {"seconds": tn, "first_run_with_jit": t_first,
                 "kmini_speedup": tn / out["kmini"]["loop_seconds"] if out["kmini"].get("loop_seconds") else None}
        if kd is not None and kd.ndim == 2 and kd.shape[0] == len(hist):
            kc = kd[:, 2] + 1j * kd[:, 3]
            rel = float(np.max(np.abs(kc - hist) / np.maximum(np.abs(hist), 1e-30)))
            entry["delta_max_relative_difference"] = rel
            entry["agree"] = rel < 1e-3
        out["numba_per_step_loop"] = entry
    except Exception as e:
        out["numba"] = f"not run: {type(e).__name__}: {e}"
    report["rk4"] = out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kmini", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--gram-rows", type=int, default=4096)
    ap.add_argument("--gram-cols", type=int, default=16384)
    ap.add_argument("--rk4-n", type=int, default=1024)
    ap.add_argument("--rk4-steps", type=int, default=100)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    report = {}
    for name, fn in (("gram", gram_peers), ("rk4", rk4_peers)):
        try:
            fn(args, report)
        except Exception as e:  # report, go on with the other kernel
            report[name] = {"error": f"{type(e).__name__}: {e}"}
    text = json.dumps(report, indent=1, default=str)
    with open(os.path.join(args.out, "peers.json"), "w") as f:
        f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
