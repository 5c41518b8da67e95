"""Typed results: kmini.gram returns a GramResult and kmini.rk4 an RK4Result,
named tuples (as numpy's SVDResult) whose fields carry the same values as the
outputs they name, checked against numpy."""
import numpy as np

import kmini


def test_gram_returns_a_gram_result_with_every_output():
    A = np.random.default_rng(4).random((12, 90)) < 0.4
    res = kmini.gram(A, top_k=3, pairs_min=20, count_at_least=[15])
    assert isinstance(res, kmini.GramResult)
    assert res._fields == ("C", "top_k", "pairs", "counts", "row_counts", "slices", "distribution",
                           "ring_schedule", "summary", "ids", "target_ids")
    C = A.astype(np.int32) @ A.T.astype(np.int32)
    np.testing.assert_array_equal(res.C, C)
    np.testing.assert_array_equal(res.row_counts, A.sum(axis=1))
    upper = C[np.triu_indices(len(A), 1)]
    assert list(res.counts) == [np.count_nonzero(upper >= 15)]
    assert len(res.pairs) == np.count_nonzero(upper >= 20)
    assert res.top_k.shape == (12, 3) and res.distribution == "replicated"
    assert res.ring_schedule is None and res.summary is None
    assert res.ids is None and res.target_ids is None  # arrays have no IDs (Fingerprints do)
    assert res[0] is res.C  # a tuple too


def test_rk4_returns_an_rk4_result_that_unpacks_as_before():
    F0, G0 = np.full(8, 0.1 + 0.05j), np.full(8, 0.5 + 0j)
    res = kmini.rk4(F0, G0, steps=4, dt=1e-3, g=0.125)
    assert isinstance(res, kmini.RK4Result) and res._fields == ("F", "G", "delta")
    F, G, delta = res
    assert F is res.F and G is res.G and delta is res.delta
    assert delta.shape == (5,) and delta.dtype == np.complex128
    np.testing.assert_allclose(delta[0], 0.125 * F0.sum(), rtol=1e-15)  # per_stage: delta[0] = g sum(F0)
    np.testing.assert_allclose(delta[-1], 0.125 * F.sum(), rtol=1e-12)  # and after the last step
