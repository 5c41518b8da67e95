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
Gram as the users run it (torch): A random 0/1 at density 0.1 (--torch-rows x
--torch-cols, the users' 10^4 x 10^5 by default) in its own A.npy, Jaccard, every
row's 16 best partners and the pairs at Jaccard >= 0.058:
  - kmini on that file with those outputs: its results.json phases and time to
    solution, and its wall time from here;
  - a PyTorch pipeline from the same A.npy, timed phase by phase with
    torch.cuda.synchronize at each boundary: startup (the CUDA context), read
    (np.load), to_device (int8, padded with zero rows and columns: torch._int_mm
    needs more than 16 rows and sizes that are multiples of 8; zeros add nothing
    to a count and are cut off),
    product (torch._int_mm(A, A^T): exact int32 counts on the int8 tensor cores),
    similarity (Jaccard from the counts and the rows' ones, in float64 as kmini
    computes it), top_k (torch.topk per row, the diagonal excluded), pairs
    (i < j at or above the minimum, to the host) and write (np.save of the same
    records kmini writes).
  Checked: the counts of 16 spread rows exactly against numpy (float32 BLAS,
  exact below 2^24 columns); kmini's top-k values exactly and its partners
  against the peer's similarities (torch.topk orders ties as it likes; kmini
  takes the smaller j first, so indices are compared where values differ);
  kmini's pairs record by record.
Roofs with the kernels' own traffic (CuPy, float64, 2^27 elements: 1 GiB an array),
best of 10 with CUDA events: copy (b = a) and scale (b = 3 a), one load and one store
an element as discount's and rk4's step kernels, and add (c = a + b), two loads and
one store as the stream kernel's add_f64; bytes counted as read plus written.
--only gram,rk4,torch,roofs picks the peers (default: all). Prints one JSON document
(also DIR/peers.json).
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


# --- the PyTorch pipeline: its numpy-testable parts, then the GPU part -------

# torch._int_mm(a, b): a is m x k, b k x n, int8; m > 16, k and n multiples of 8.
INT_MM_MULTIPLE = 8
INT_MM_MIN_ROWS = 17


def padded_shape(rows, cols):
    """The shape A is padded to with zero rows and columns for torch._int_mm(A, A^T)."""
    up = lambda n: -(-n // INT_MM_MULTIPLE) * INT_MM_MULTIPLE
    return up(max(rows, INT_MM_MIN_ROWS)), up(cols)


def pad(A):
    """A (numpy, 0/1) with zero rows and columns to padded_shape."""
    rows, cols = A.shape
    out = np.zeros(padded_shape(rows, cols), dtype=np.int8)
    out[:rows, :cols] = A
    return out


def jaccard(c, ones_i, ones_j):
    """kmini's Jaccard (src/gram/gram_similarity.hpp): c / (|a| + |b| - c) in
    double, a zero denominator (two empty rows, c = 0) taken as 1. float64 numpy
    arrays or torch tensors: counts c (rows_i x rows_j), the rows' ones."""
    u = ones_i[:, None] + ones_j[None, :] - c
    return c / (u + (u <= 0))


def pair_mask(values, minimum, i, j):
    """kmini's pairs of one input: i < j with value >= minimum (i, j: the rows'
    and columns' indices, numpy arrays or torch tensors)."""
    return (values >= minimum) & (j[None, :] > i[:, None])


def top_k_as_kmini(values, index):
    """A top-k (values, indices) with the diagonal masked to -inf into kmini's
    records' convention: a missing partner is (j -1, value -1.0)."""
    missing = np.isneginf(values)
    return np.where(missing, -1, index).astype(np.int64), np.where(missing, -1.0, values).astype(np.float32)


def compare_top_k(kmini_j, kmini_v, peer_j, peer_v, values32):
    """kmini's top-k lists against a peer's: values equal position by position
    (float32, as written), and each of kmini's partners has that value in the
    peer's similarities `values32` (float32, rows x targets): where values tie,
    any order of the partners is a top-k, so indices are compared only through
    their values. Returns a dict; `agree` is the verdict."""
    rows = kmini_j.shape[0]
    values_equal = bool(np.array_equal(kmini_v, peer_v))
    present = kmini_j >= 0
    at = np.where(present, values32[np.arange(rows)[:, None], np.where(present, kmini_j, 0)], -1.0)
    partners_hold_values = bool(np.array_equal(at, kmini_v))
    distinct = bool(all(len(set(r[r >= 0])) == int(np.count_nonzero(r >= 0)) for r in kmini_j))
    no_self = bool(not np.any(kmini_j == np.arange(rows)[:, None]))
    same_index = float(np.mean(np.all(kmini_j == peer_j, axis=1))) if rows else 1.0
    return {"values_equal": values_equal, "kmini_partners_hold_their_values": partners_hold_values,
            "kmini_partners_distinct_and_not_self": distinct and no_self,
            "rows_with_identical_indices": same_index,
            "agree": values_equal and partners_hold_values and distinct and no_self}


def compare_pairs(kmini_pairs, i, j, v):
    """kmini's pairs file (records i, j, value) against a peer's (i, j, float32 value)."""
    same = (len(kmini_pairs) == len(i) and np.array_equal(kmini_pairs["i"], i)
            and np.array_equal(kmini_pairs["j"], j) and np.array_equal(kmini_pairs["value"], v))
    return {"kmini_pairs": int(len(kmini_pairs)), "peer_pairs": int(len(i)), "agree": bool(same)}


def checked_rows(rows, n=16):
    """n rows spread over the matrix, first and last included."""
    return np.unique(np.linspace(0, rows - 1, num=min(n, rows)).round().astype(np.int64))


def reference_counts(A, rows):
    """C(rows, :) = A[rows] A^T from numpy: float32 BLAS, exact while cols < 2^24."""
    assert A.shape[1] < 2 ** 24
    a = A.astype(np.float32)
    return (a[rows] @ a.T).astype(np.int64)


def write_top_k(path, j, v):
    rec = np.empty(j.shape, dtype=[("j", "<i8"), ("value", "<f4")])
    rec["j"], rec["value"] = j, v
    np.save(path, rec)


def write_pairs(path, i, j, v):
    rec = np.empty(len(i), dtype=[("i", "<i8"), ("j", "<i8"), ("value", "<f4")])
    rec["i"], rec["j"], rec["value"] = i, j, v
    np.save(path, rec)


def random_binary(path, rows, cols, density, seed, block=1000):
    """A 0/1 uint8 matrix written to path block by block (10^9 values at once
    would need 8 GB of doubles)."""
    rng = np.random.default_rng(seed)
    A = np.lib.format.open_memmap(path, mode="w+", dtype=np.uint8, shape=(rows, cols))
    for r0 in range(0, rows, block):
        n = min(block, rows - r0)
        A[r0:r0 + n] = rng.random((n, cols), dtype=np.float32) < density
    A.flush()
    del A


def packbits_file(a_path, packed_path, block=1000):
    """np.packbits of A.npy's rows (the packed form users keep), written block by block."""
    A = np.load(a_path, mmap_mode="r")
    rows, cols = A.shape
    P = np.lib.format.open_memmap(packed_path, mode="w+", dtype=np.uint8, shape=(rows, (cols + 7) // 8))
    for r0 in range(0, rows, block):
        P[r0:r0 + block] = np.packbits(A[r0:r0 + block], axis=1)
    P.flush()
    del P, A


def torch_pipeline(torch, a_path, out_dir, k, minimum, cols=None):
    """The users' pipeline in PyTorch, phase by phase (seconds), end to end from
    A.npy (or, with cols=, its np.packbits form, unpacked on the device) to the
    files. Returns (phases, what the checks need)."""
    dev = torch.device("cuda")
    sync = torch.cuda.synchronize
    phases = {}
    clock = [time.perf_counter()]

    def phase(name):
        sync()
        now = time.perf_counter()
        phases[name] = now - clock[0]
        clock[0] = now

    torch.zeros(1, device=dev)  # the CUDA context, as kmini's start-up holds Kokkos'
    phase("startup")
    A = np.load(a_path)
    phase("read")
    rows = A.shape[0]
    cols = A.shape[1] if cols is None else cols
    pr, pc = padded_shape(rows, cols)
    dA = torch.zeros((pr, pc), dtype=torch.int8, device=dev)
    if A.shape[1] == cols:
        dA[:rows, :cols] = torch.from_numpy(A).to(dev, non_blocking=False).to(torch.int8)
    else:  # packbits bytes: column 8b + i is bit 7 - i of byte b
        shifts = torch.arange(7, -1, -1, device=dev, dtype=torch.uint8)
        bits = (torch.from_numpy(A).to(dev).unsqueeze(-1) >> shifts) & 1
        dA[:rows, :cols] = bits.reshape(rows, -1)[:, :cols].to(torch.int8)
    phase("to_device")
    C = torch._int_mm(dA, dA.t())[:rows, :rows]
    phase("product")
    ones = dA[:rows].sum(dim=1, dtype=torch.int64).double()
    J = jaccard(C.double(), ones, ones)
    phase("similarity")
    masked = J.clone()
    masked.fill_diagonal_(-math.inf)
    tv, ti = torch.topk(masked, min(k, rows), dim=1)
    tv, ti = tv.cpu().numpy(), ti.cpu().numpy()
    phase("top_k")
    idx = torch.arange(rows, device=dev)
    pi, pj = torch.nonzero(pair_mask(J, minimum, idx, idx), as_tuple=True)  # row-major: kmini's order
    pv = J[pi, pj].float().cpu().numpy()
    pi, pj = pi.cpu().numpy(), pj.cpu().numpy()
    phase("pairs")
    top_j, top_v = top_k_as_kmini(tv, ti)
    if top_j.shape[1] < k:  # fewer partners than k: kmini pads its lists
        pad_cols = k - top_j.shape[1]
        top_j = np.pad(top_j, ((0, 0), (0, pad_cols)), constant_values=-1)
        top_v = np.pad(top_v, ((0, 0), (0, pad_cols)), constant_values=-1.0)
    write_top_k(os.path.join(out_dir, "top.npy"), top_j, top_v)
    write_pairs(os.path.join(out_dir, "pairs.npy"), pi, pj, pv)
    phase("write")
    if A.shape[1] != cols:
        A = np.unpackbits(A, axis=1, count=cols)  # for the checks, after the last phase
    check = checked_rows(rows)
    return phases, {"A": A, "check_rows": check, "counts": C[torch.as_tensor(check, device=dev)].cpu().numpy(),
                    "J32": J.float().cpu().numpy(), "top_j": top_j, "top_v": top_v, "pairs": (pi, pj, pv)}


def users_job(torch, args, out, path, cols, name):
    """kmini and the PyTorch pipeline on one file (cols= for its packbits form), checked against each other."""
    k, minimum = out["top_k"], out["pairs_min"]
    source = f"{{file: {path}}}" if cols is None else f"{{file: {path}, packed: true, cols: {cols}}}"
    kdir = os.path.join(args.out, f"kmini_gram_users_{name}")
    t0 = time.perf_counter()
    # Verification off, as for the torch pipeline: both are checked against each other and numpy below.
    # No roof probe: the users' deck (inputs/gram.yaml) does not ask for one, the default deck does.
    res = run_kmini(args.kmini, kdir, ["run.kernels=[gram]", "run.verify=false", "gram.probe=false",
                                       f"gram.A={source}",
                                       "gram.similarity=jaccard", "gram.row_slice=auto",
                                       f"gram.write.top_k={{path: top.npy, k: {k}}}",
                                       f"gram.write.pairs={{path: pairs.npy, min: {minimum}}}"])
    wall = time.perf_counter() - t0
    g = res["kernels"]["gram"]
    kmini = {"wall_seconds": wall, "time_to_solution_seconds": g.get("time_to_solution_seconds"),
             "phases": g.get("phases"), "compute_seconds": g.get("compute_seconds"), "verified": g.get("verified"),
             "read_roof": g.get("read_roof")}
    tdir = os.path.join(args.out, f"torch_gram_users_{name}")
    os.makedirs(tdir, exist_ok=True)
    try:
        t0 = time.perf_counter()
        phases, got = torch_pipeline(torch, path, tdir, k, minimum, cols)
        wall = time.perf_counter() - t0
        entry = {"phases": phases, "time_to_solution_seconds": sum(phases.values()), "wall_seconds": wall,
                 "torch": torch.__version__, "padded_shape": list(padded_shape(*got["A"].shape))}
        ref = reference_counts(got["A"], got["check_rows"])
        entry["counts_of_checked_rows_exact"] = bool(np.array_equal(got["counts"], ref))
        ktop = np.load(os.path.join(kdir, "top.npy"))
        entry["top_k"] = compare_top_k(ktop["j"], ktop["value"], got["top_j"], got["top_v"], got["J32"])
        entry["pairs"] = compare_pairs(np.load(os.path.join(kdir, "pairs.npy")), *got["pairs"])
        if kmini["time_to_solution_seconds"]:
            entry["kmini_speedup_time_to_solution"] = entry["time_to_solution_seconds"] / kmini[
                "time_to_solution_seconds"]
    except Exception as e:
        entry = f"not run: {type(e).__name__}: {e}"
    return kmini, entry


def torch_peers(args, report):
    rows, cols = args.torch_rows, args.torch_cols
    out = {"shape": [rows, cols], "density": 0.1, "similarity": "jaccard", "top_k": 16, "pairs_min": 0.058}
    report["gram_torch"] = out
    try:
        import torch
        if not torch.cuda.is_available():
            out["torch"] = "skipped: torch sees no CUDA GPU"
            return
    except Exception as e:
        out["torch"] = f"skipped: {type(e).__name__}: {e}"
        return
    a_path = os.path.join(args.out, "A_users.npy")
    packed_path = os.path.join(args.out, "A_users_packed.npy")
    try:
        random_binary(a_path, rows, cols, 0.1, 11)
        packbits_file(a_path, packed_path)
        # The unpacked file's figures at the top level, as before; the packed file's under "packed".
        out["kmini"], out["torch"] = users_job(torch, args, out, a_path, None, "unpacked")
        kmini, entry = users_job(torch, args, out, packed_path, cols, "packed")
        out["packed"] = {"kmini": kmini, "torch": entry}
    finally:
        for f in (a_path, packed_path):
            if os.path.exists(f):
                os.remove(f)


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


def roofs(args, report):
    """Device bandwidth for one load and one store an element (copy, scale) and for two
    loads and one store (add), in bytes read plus written per second."""
    import cupy
    n = 1 << 27
    a = cupy.random.random(n)
    b = cupy.random.random(n)
    c = cupy.empty_like(a)
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    out = {"elements": n, "dtype": "float64", "repeats": 10}
    ops = {"copy": (lambda: cupy.copyto(c, a), 16), "scale": (lambda: cupy.multiply(a, 3.0, out=c), 16),
           "add": (lambda: cupy.add(a, b, out=c), 24)}
    for name, (op, bytes_per_element) in ops.items():
        op()
        best = math.inf
        for _ in range(10):
            start.record()
            op()
            stop.record()
            stop.synchronize()
            best = min(best, cupy.cuda.get_elapsed_time(start, stop) / 1e3)
        out[name + "_bytes_per_s"] = n * bytes_per_element / best
    # Checked: the last op's output against the host.
    assert bool(cupy.allclose(c, a + b)), "add: wrong sums"
    report["roofs"] = out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kmini", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--gram-rows", type=int, default=4096)
    ap.add_argument("--gram-cols", type=int, default=16384)
    ap.add_argument("--rk4-n", type=int, default=1024)
    ap.add_argument("--rk4-steps", type=int, default=100)
    ap.add_argument("--torch-rows", type=int, default=10000)
    ap.add_argument("--torch-cols", type=int, default=100000)
    ap.add_argument("--only", default="roofs,gram,rk4,torch", help="the peers to run, comma-separated")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    report = {}
    only = set(args.only.split(","))
    text = "{}"
    for name, fn in (("roofs", roofs), ("gram", gram_peers), ("rk4", rk4_peers), ("torch", torch_peers)):
        if name not in only:
            continue
        try:
            fn(args, report)
        except Exception as e:  # report, go on with the other kernel
            report[name] = {"error": f"{type(e).__name__}: {e}"}
        # After each peer, so that a time limit loses only the one it stopped.
        text = json.dumps(report, indent=1, default=str)
        with open(os.path.join(args.out, "peers.json"), "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
