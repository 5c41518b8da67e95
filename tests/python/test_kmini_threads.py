"""Calls from several threads at once (concurrent.futures) give exactly what
each call gives alone: the kernels of a process run one call at a time, the
arguments' conversion and the waiting happen without blocking other threads."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import kmini


def gram_case(seed):
    r = np.random.default_rng(seed)
    A = r.random((200 + seed % 7, 1500)) < 0.3  # large enough for calls to overlap
    return A, dict(similarity=["counts", "jaccard", "dice", "cosine"][seed % 4], top_k=3, pairs_min=0.2,
                   count_at_least=[1, 5] if seed % 4 == 0 else [0.1, 0.5], slice_rows=[None, 7][seed % 2])


def rk4_case(seed):
    r = np.random.default_rng(seed)
    F0 = r.standard_normal(200) * 0.1 + 1j * r.standard_normal(200) * 0.1
    return F0, np.full(200, 0.5 + 0j), dict(steps=50, dt=1e-3, g=1 / 200, kerr=[0.0, 0.3][seed % 2])


def discount_case(seed):
    r = np.random.default_rng(seed)
    return r.random((30, 5)), r.random((20, 30, 5))


def run_gram(seed):
    A, kw = gram_case(seed)
    return kmini.gram(A, **kw)


def run_rk4(seed):
    F0, G0, kw = rk4_case(seed)
    return kmini.rk4(F0, G0, **kw)


def run_discount(seed):
    return kmini.discount(*discount_case(seed))


def same_gram(a, b):
    for name in ("C", "top_k", "pairs", "counts", "row_counts"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


@pytest.mark.parametrize("threads", [2, 4])
def test_every_function_from_several_threads_is_exact(threads):
    seeds = list(range(12))
    alone = {("gram", s): run_gram(s) for s in seeds}
    alone.update({("rk4", s): run_rk4(s) for s in seeds})
    alone.update({("discount", s): run_discount(s) for s in seeds})
    jobs = [(f, s) for s in seeds for f in ("gram", "rk4", "discount")] * 2
    calls = {"gram": run_gram, "rk4": run_rk4, "discount": run_discount}
    with ThreadPoolExecutor(threads) as pool:
        results = list(pool.map(lambda job: calls[job[0]](job[1]), jobs))
    for (f, s), got in zip(jobs, results):
        want = alone[(f, s)]
        if f == "gram":
            same_gram(got, want)
        elif f == "rk4":
            for x, y in zip(got, want):
                np.testing.assert_array_equal(x, y)
        else:
            np.testing.assert_array_equal(got, want)


def test_gram_from_threads_equals_numpy():
    cases = [np.random.default_rng(s).random((300 + s, 2000)) < 0.3 for s in range(4)]
    wants = [A.astype(np.int64) @ A.T.astype(np.int64) for A in cases]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda i: kmini.gram(cases[i % 4], slice_rows=[None, 64][i % 2]).C, range(32)))
    for i, C in enumerate(got):
        np.testing.assert_array_equal(C, wants[i % 4])
