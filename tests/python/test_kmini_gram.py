"""kmini.gram against numpy's integer product, its input forms, every output
option (similarities, top-k, pairs, counts at thresholds, the packed triangle;
in one slice and in many) against references written here in numpy, the
CLI's files for the same input, and its errors."""
import json
import os
import re
import resource
import subprocess

import numpy as np
import pytest

import kmini
from ctrl_c import seconds_to_interrupt


def numpy_counts(A, B=None):
    A = A.astype(np.int64)
    B = A if B is None else B.astype(np.int64)
    return A @ B.T


def words_of(A):
    """Column k in bit k % 64 of word k // 64 (kmini's uint64 form)."""
    rows, cols = A.shape
    W = np.zeros((rows, (cols + 63) // 64), dtype=np.uint64)
    for k in range(cols):
        W[:, k // 64] |= A[:, k].astype(np.uint64) << np.uint64(k % 64)
    return W


@pytest.mark.parametrize("rows,cols", [(1, 1), (5, 7), (37, 130), (70, 64), (129, 513), (3, 0)])
@pytest.mark.parametrize("density", [0.05, 0.5])
def test_gram_equals_numpy_in_every_input_form(rows, cols, density):
    A = np.random.default_rng(rows * 1000 + cols).random((rows, cols)) < density
    want = numpy_counts(A)
    for result in (kmini.gram(A), kmini.gram(A.astype(np.uint8)), kmini.gram(np.packbits(A, axis=1), cols=cols),
                   kmini.gram(words_of(A), cols=cols)):
        assert result.C.dtype == np.int32 and result.C.shape == (rows, rows)
        np.testing.assert_array_equal(result.C, want)
        np.testing.assert_array_equal(result.row_counts, A.sum(axis=1))


@pytest.mark.parametrize("rows_a,rows_b,cols", [(1, 9, 3), (37, 11, 130), (65, 200, 77), (4, 1, 1000)])
def test_gram_of_two_inputs(rows_a, rows_b, cols):
    r = np.random.default_rng(rows_a + rows_b)
    A, B = r.random((rows_a, cols)) < 0.3, r.random((rows_b, cols)) < 0.6
    res = kmini.gram(A, B)
    np.testing.assert_array_equal(res.C, numpy_counts(A, B))
    np.testing.assert_array_equal(res.row_counts, A.sum(axis=1))
    np.testing.assert_array_equal(kmini.gram(np.packbits(A, axis=1), np.packbits(B, axis=1), cols=cols).C,
                                  numpy_counts(A, B))


def test_other_integer_and_float_0_1_inputs_are_accepted():
    A = np.random.default_rng(3).random((9, 20)) < 0.5
    for dtype in (np.int32, np.int64, np.float64):
        np.testing.assert_array_equal(kmini.gram(A.astype(dtype)).C, numpy_counts(A))


def test_bad_inputs_are_clear_errors():
    A = np.zeros((4, 10), dtype=np.uint8)
    A[2, 3] = 2
    with pytest.raises(ValueError, match=r"A: element \(2, 3\) is 2, expected 0 or 1"):
        kmini.gram(A)
    with pytest.raises(ValueError, match=r"B: element \(0, 0\) is 0.5, expected 0 or 1"):
        kmini.gram(np.ones((2, 3)), np.full((1, 3), 0.5))
    with pytest.raises(ValueError, match=r"A: shape \(4,\), expected \(rows, cols\)"):
        kmini.gram(np.ones(4, dtype=bool))
    with pytest.raises(TypeError, match="A: dtype complex128"):
        kmini.gram(np.ones((2, 2), dtype=complex))
    with pytest.raises(ValueError, match=r"A: shape \(2, 3\), expected \(2, 2\) for cols=10"):
        kmini.gram(np.zeros((2, 3), dtype=np.uint8), cols=10)
    with pytest.raises(ValueError, match="bits set past cols=10 in the last byte"):
        kmini.gram(np.array([[0, 0x20]], dtype=np.uint8), cols=10)  # column 10 set
    with pytest.raises(ValueError, match="bits set past cols=70 in the last word"):
        kmini.gram(np.array([[0, 1 << 6]], dtype=np.uint64), cols=70)  # column 70 set
    with pytest.raises(TypeError, match="with cols=, expected uint8"):
        kmini.gram(np.zeros((2, 2), dtype=np.int32), cols=10)
    with pytest.raises(ValueError, match="B: 4 columns, expected 3"):
        kmini.gram(np.ones((2, 3), bool), np.ones((2, 4), bool))


def test_a_dense_c_beyond_the_budget_is_a_memory_error_before_allocating():
    # 10^6 rows: a dense C of 3.6 TiB, beyond any GPU's memory and this test's hosts'
    with pytest.raises(MemoryError, match=r"dense C of 1000000 x 1000000 int32 \(3\.6\d? TiB\)"):
        kmini.gram(np.zeros((1000000, 1), dtype=bool))
    with pytest.raises(MemoryError, match="more than memory_budget 1 KiB"):
        kmini.gram(np.ones((100, 8), dtype=bool), memory_budget=1024)
    assert kmini.gram(np.ones((10, 8), dtype=bool), memory_budget=1 << 20).C[0, 0] == 8


# ---------------------------------------------------------------- outputs ----

def numpy_values(A, B, similarity):
    """C's values in double, as kmini compares them (README: gram.similarity)."""
    c = numpy_counts(A, B).astype(np.float64)
    na = A.sum(axis=1).astype(np.float64)[:, None]
    nb = (A if B is None else B).sum(axis=1).astype(np.float64)[None, :]
    if similarity == "jaccard":
        return c / np.maximum(na + nb - c, 1)
    if similarity == "dice":
        return 2.0 * c / np.maximum(na + nb, 1)
    if similarity == "cosine":
        return c / np.sqrt(np.maximum(na * nb, 1))
    return c


def value_dtype(similarity):
    return "<i4" if similarity == "counts" else "<f4"


def numpy_top_k(V, k, one_input, similarity):
    """Each row's k best partners: larger value first, then smaller j; not itself
    with one input; missing entries j = -1, value 0."""
    out = np.zeros((V.shape[0], k), dtype=[("j", "<i8"), ("value", value_dtype(similarity))])
    out["j"] = -1
    for i in range(V.shape[0]):
        cand = [(-V[i, j], j) for j in range(V.shape[1]) if not (one_input and j == i)]
        for t, (negv, j) in enumerate(sorted(cand)[:k]):
            out[i, t] = (j, -negv)
    return out


def numpy_pairs(V, minimum, one_input, similarity):
    i, j = np.nonzero(V >= minimum)
    keep = i < j if one_input else np.ones(i.shape, bool)
    out = np.zeros(int(keep.sum()), dtype=[("i", "<i8"), ("j", "<i8"), ("value", value_dtype(similarity))])
    out["i"], out["j"], out["value"] = i[keep], j[keep], V[i[keep], j[keep]]
    return out


def numpy_counts_at_least(V, thresholds, one_input):
    v = V[np.triu_indices(V.shape[0], 1)] if one_input else V.ravel()
    return np.array([(v >= t).sum() for t in thresholds])


@pytest.mark.parametrize("similarity", ["counts", "jaccard", "dice", "cosine"])
@pytest.mark.parametrize("two", [False, True])
@pytest.mark.parametrize("slice_rows", [None, 1, 5, 64])
def test_every_output_equals_numpy_in_one_slice_and_many(similarity, two, slice_rows):
    r = np.random.default_rng(7 + two)
    A = r.random((41, 70)) < 0.3
    A[[3, 17]] = False  # empty rows: zero denominators, ties at 0
    A[20] = A[5]        # a duplicate row: ties
    B = (r.random((29, 70)) < 0.5) if two else None
    V = numpy_values(A, B, similarity)
    lo, mid = (5, 12) if similarity == "counts" else (0.2, 0.35)
    thresholds = [mid, 0, lo, mid]  # unsorted, repeated, as a deck may give them
    res = kmini.gram(A, B, similarity=similarity, top_k=4, pairs_min=lo, count_at_least=thresholds,
                     slice_rows=slice_rows)
    want_dtype = np.int32 if similarity == "counts" else np.float32
    assert res.C.dtype == want_dtype
    np.testing.assert_array_equal(res.C, V.astype(want_dtype))
    expect_top = numpy_top_k(V, 4, B is None, similarity)
    assert res.top_k.dtype == expect_top.dtype and res.top_k.tobytes() == expect_top.tobytes()
    expect_pairs = numpy_pairs(V, lo, B is None, similarity)
    assert res.pairs.dtype == expect_pairs.dtype and res.pairs.tobytes() == expect_pairs.tobytes()
    np.testing.assert_array_equal(res.counts, numpy_counts_at_least(V, thresholds, B is None))
    np.testing.assert_array_equal(res.row_counts, A.sum(axis=1))
    assert res.slices == (1 if slice_rows is None else -(-41 // slice_rows))


@pytest.mark.parametrize("slice_rows", [None, 3, 40])
def test_the_packed_upper_triangle(slice_rows):
    A = np.random.default_rng(11).random((40, 33)) < 0.4
    for similarity in ("counts", "cosine"):
        V = numpy_values(A, None, similarity)
        res = kmini.gram(A, triangle="upper", similarity=similarity, slice_rows=slice_rows)
        want = V[np.triu_indices(40)].astype(np.int32 if similarity == "counts" else np.float32)
        assert res.C.shape == (40 * 41 // 2,)
        np.testing.assert_array_equal(res.C, want)


def test_top_k_without_dense_c_stays_within_the_budget():
    # 3000 x 3000 int32 would be 34 MiB; 2 MiB of budget gives slices of a few rows.
    A = np.random.default_rng(5).random((3000, 64)) < 0.5
    res = kmini.gram(A, dense=False, top_k=2, memory_budget=2 << 20)
    assert res.C is None and res.slices > 10
    V = numpy_values(A[:50], A, "counts")  # rows 0..49 against all
    for i in range(50):
        V[i, i] = -1  # not itself
    best = np.argsort(-V, axis=1, kind="stable")[:, :2]
    np.testing.assert_array_equal(res.top_k["j"][:50], best)
    with pytest.raises(MemoryError, match="the packed inputs and a slice of one row need"):
        kmini.gram(A, dense=False, top_k=2, memory_budget=1000)
    with pytest.raises(MemoryError, match=r"dense=False computes in slices"):
        kmini.gram(A, memory_budget=2 << 20)


def numpy_tversky(A, B, alpha, beta):
    """c / (c + alpha |a - b| + beta |b - a|) in double; 0 where that is 0/0."""
    c = numpy_counts(A, B).astype(np.float64)
    na = A.sum(axis=1).astype(np.float64)[:, None]
    nb = B.sum(axis=1).astype(np.float64)[None, :]
    d = c + alpha * (na - c) + beta * (nb - c)
    return c / np.where(d == 0, 1, d)


@pytest.mark.parametrize("alpha,beta", [(0.9, 0.1), (1.0, 0.0), (0.0, 1.0), (0.3, 0.3), (2.0, 0.5)])
@pytest.mark.parametrize("slice_rows", [None, 4])
def test_tversky_equals_numpy_against_targets(alpha, beta, slice_rows):
    r = np.random.default_rng(19)
    A, B = r.random((37, 70)) < 0.3, r.random((26, 70)) < 0.5
    A[[2, 9]] = False  # empty queries: 0/0 with a zero weight, ties at 0
    B[4] = False
    B[11] = B[3]       # a duplicate target: ties
    V = numpy_tversky(A, B, alpha, beta)
    res = kmini.gram(A, B, similarity="tversky", tversky_alpha=alpha, tversky_beta=beta, top_k=5, pairs_min=0.4,
                     count_at_least=[0.4, 0.8], slice_rows=slice_rows)
    np.testing.assert_array_equal(res.C, V.astype(np.float32))
    assert res.top_k.tobytes() == numpy_top_k(V, 5, False, "tversky").tobytes()
    want_pairs = numpy_pairs(V, 0.4, False, "tversky")
    assert len(want_pairs) > 0 and res.pairs.tobytes() == want_pairs.tobytes()
    np.testing.assert_array_equal(res.counts, numpy_counts_at_least(V, [0.4, 0.8], False))


@pytest.mark.parametrize("two", [False, True])
def test_tversky_with_equal_weights_is_jaccard_and_dice_byte_for_byte(two):
    r = np.random.default_rng(23)
    A = r.random((33, 90)) < 0.4
    A[5] = False
    B = (r.random((21, 90)) < 0.4) if two else None
    for weight, same in ((1.0, "jaccard"), (0.5, "dice")):
        want = kmini.gram(A, B, similarity=same, top_k=4, pairs_min=0.2)
        got = kmini.gram(A, B, similarity="tversky", tversky_alpha=weight, tversky_beta=weight, top_k=4, pairs_min=0.2)
        for field in ("C", "top_k", "pairs"):
            assert getattr(got, field).tobytes() == getattr(want, field).tobytes(), (same, field)


def test_tversky_weights_are_checked():
    A, B = np.ones((5, 8), bool), np.ones((3, 8), bool)
    with pytest.raises(ValueError, match="tversky_alpha: got None with similarity='tversky', expected its weight"):
        kmini.gram(A, B, similarity="tversky", tversky_beta=0.5)
    with pytest.raises(ValueError, match="tversky_beta: got 0.5 with similarity='jaccard', expected None"):
        kmini.gram(A, B, similarity="jaccard", tversky_beta=0.5)
    with pytest.raises(ValueError, match=r"tversky_alpha: got -1, expected a finite real number >= 0"):
        kmini.gram(A, B, similarity="tversky", tversky_alpha=-1, tversky_beta=1)
    with pytest.raises(ValueError, match=r"tversky_beta: got 0 with tversky_alpha=0, expected weights alpha \+ beta > 0"):
        kmini.gram(A, B, similarity="tversky", tversky_alpha=0, tversky_beta=0)
    with pytest.raises(ValueError, match="tversky_beta: got 0.1 with tversky_alpha=0.9 and B=None, expected alpha == beta"):
        kmini.gram(A, similarity="tversky", tversky_alpha=0.9, tversky_beta=0.1)
    same = kmini.gram(A, similarity="tversky", tversky_alpha=0.7, tversky_beta=0.7)  # symmetric: one input is fine
    np.testing.assert_array_equal(same.C, np.ones((5, 5), np.float32))


def test_output_options_are_checked():
    A = np.ones((5, 8), bool)
    with pytest.raises(ValueError, match="similarity: got 'overlap', expected 'counts', 'jaccard'"):
        kmini.gram(A, similarity="overlap")
    with pytest.raises(ValueError, match=r"top_k: got 5, expected an integer in \[1, 4\]"):
        kmini.gram(A, top_k=5)  # 4 partners besides itself
    with pytest.raises(TypeError, match="top_k: got 2.5, expected an integer"):
        kmini.gram(A, top_k=2.5)
    with pytest.raises(ValueError, match="pairs_min: got -1, expected a finite real number >= 0"):
        kmini.gram(A, pairs_min=-1)
    with pytest.raises(ValueError, match=r"count_at_least\[1\]: got nan, expected a finite real number >= 0"):
        kmini.gram(A, count_at_least=[1, float("nan")])
    with pytest.raises(ValueError, match="count_at_least: more than 64 values, expected an iterable of at most 64"):
        kmini.gram(A, count_at_least=range(65))
    with pytest.raises(TypeError, match="count_at_least: got '0.5', expected an iterable of at most 64 real numbers"):
        kmini.gram(A, count_at_least="0.5")
    with pytest.raises(ValueError, match="triangle: got 'upper' with B, expected 'full'"):
        kmini.gram(A, A, triangle="upper")
    with pytest.raises(ValueError, match="triangle: got 'lower'"):
        kmini.gram(A, triangle="lower")
    with pytest.raises(ValueError, match=r"slice_rows: got 0, expected an integer >= 1"):
        kmini.gram(A, slice_rows=0)


@pytest.mark.skipif(not os.environ.get("KMINI_BINARY"), reason="KMINI_BINARY (the CLI) not set")
@pytest.mark.parametrize("two", [False, True])
def test_the_cli_writes_the_same_bytes(tmp_path, two):
    """One front end or the other: the same library kernels, the same records."""
    r = np.random.default_rng(3)
    A = r.random((45, 100)) < 0.35
    np.save(tmp_path / "a.npy", A)
    B = None
    deck = {"run": {"kernels": ["gram"], "verify": False},
            "gram": {"A": {"file": str(tmp_path / "a.npy")}, "similarity": "jaccard", "row_slice": 8,
                     "write": {"C": "c.npy", "summary": "s.json", "top_k": {"path": "t.npy", "k": 5},
                               "pairs": {"path": "p.npy", "min": 0.25}, "count_at_least": [0.3, 0.1, 0.2]}}}
    if two:
        B = r.random((23, 100)) < 0.5
        np.save(tmp_path / "b.npy", B)
        deck["gram"]["B"] = {"file": str(tmp_path / "b.npy")}
    (tmp_path / "deck.yaml").write_text(json.dumps(deck))  # JSON is YAML
    out = tmp_path / "out"
    run = subprocess.run([os.environ["KMINI_BINARY"], str(tmp_path / "deck.yaml"), "--out", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    mine = tmp_path / "mine"
    mine.mkdir()
    res = kmini.gram(A, B, similarity="jaccard", top_k=5, pairs_min=0.25, count_at_least=[0.3, 0.1, 0.2],
                     slice_rows=8, write={"C": mine / "c.npy", "top_k": str(mine / "t.npy"), "pairs": mine / "p.npy",
                                          "summary": mine / "s.json"})
    for name, ours in (("c.npy", res.C), ("t.npy", res.top_k), ("p.npy", res.pairs)):
        theirs = np.load(out / name)
        assert theirs.dtype == ours.dtype and theirs.shape == ours.shape, name
        assert theirs.tobytes() == ours.tobytes(), name
        # write=: the CLI's file, byte for byte (header included)
        assert (mine / name).read_bytes() == (out / name).read_bytes(), name
    summary = json.loads((out / "s.json").read_text())
    assert [e["pairs"] for e in summary["count_at_least"]] == list(res.counts)
    assert (mine / "s.json").read_bytes() == (out / "s.json").read_bytes()
    assert res.summary == summary


def test_write_is_checked_before_anything_is_computed(tmp_path):
    A = np.ones((4, 8), bool)
    for write, error, text in (({"D": "d.npy"}, ValueError,
                                "write: got key 'D', expected one of 'C', 'pairs', 'top_k', 'summary'"),
                               ({"C": 3}, TypeError, "write: C: got int, expected a path"),
                               ({"pairs": "p.npy"}, ValueError, "write: 'pairs' needs pairs_min"),
                               ({"top_k": "t.npy"}, ValueError, "write: 'top_k' needs top_k"),
                               ({"C": "c.npy"}, ValueError, "write: 'C' needs dense=True"),
                               ("c.npy", TypeError, "write: got str, expected a mapping")):
        with pytest.raises(error, match=text):
            kmini.gram(A, write=write, dense="C" not in write or write == "c.npy")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="write: C: cannot write .* does not exist"):
        kmini.gram(A, write={"C": tmp_path / "no" / "such" / "dir" / "c.npy"})


def test_ctrl_c_interrupts_a_long_product_between_slices():
    # ~13 s of tiles here in slices of 64 rows
    assert seconds_to_interrupt("A = np.random.default_rng(1).random((20000, 4096)) < 0.5",
                                "kmini.gram(A, dense=False, top_k=1, slice_rows=64)") < 1.0


def test_the_first_bad_value_is_named_in_row_major_order():
    A = np.zeros((9, 300), dtype=np.uint8)
    A[5, 0], A[3, 299], A[3, 7] = 7, 255, 2
    with pytest.raises(ValueError, match=r"A: element \(3, 7\) is 2, expected 0 or 1"):
        kmini.gram(A)
    P = np.zeros((4, 2), dtype=np.uint8)
    P[2, 1] = 0x01  # column 15 of cols=10
    with pytest.raises(ValueError, match="bits set past cols=10 in the last byte of row 2, expected zeros"):
        kmini.gram(P, cols=10)
    W = np.zeros((3, 2), dtype=np.uint64)
    W[1, 1] = np.uint64(1) << np.uint64(63)  # column 127 of cols=100
    with pytest.raises(ValueError, match="bits set past cols=100 in the last word of row 1"):
        kmini.gram(W, cols=100)
    W[1, 1] = np.uint64(1) << np.uint64(35)  # column 99: inside
    assert kmini.gram(W, cols=100).C[1, 1] == 1


class FakeDeviceMatrix:
    def __init__(self, shape, typestr="|u1"):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (4096, False), "version": 3}


@pytest.mark.skipif(kmini.info()["device_arrays"], reason="a device build uses device arrays")
def test_device_matrices_are_refused_by_host_builds():
    with pytest.raises(TypeError, match=r"B: a CUDA device array \(__cuda_array_interface__\), but this kmini build"):
        kmini.gram(np.ones((2, 3), bool), FakeDeviceMatrix((2, 3)))


cupy = pytest.importorskip("cupy") if kmini.info()["device_arrays"] else None


@pytest.mark.skipif(cupy is None, reason="a host build, or no CuPy: device arrays are checked on a GPU")
def test_cupy_matrices_are_read_in_place_in_every_form():
    A = np.random.default_rng(4).random((70, 130)) < 0.4
    want = numpy_counts(A)
    for arg, cols in ((cupy.asarray(A), None), (cupy.asarray(A.astype(np.uint8)), None),
                      (cupy.asarray(np.packbits(A, axis=1)), 130), (cupy.asarray(words_of(A)), 130)):
        C = kmini.gram(arg, cols=cols, top_k=3).C
        # C stays on the device: a kmini.DeviceArray that CuPy takes without a copy
        on_gpu = cupy.asarray(C)
        assert on_gpu.data.ptr == C.__cuda_array_interface__["data"][0]
        np.testing.assert_array_equal(cupy.asnumpy(on_gpu), want)
    # sliced, similarities, the packed triangle and A B^T, written in place slice by slice
    B = np.random.default_rng(5).random((23, 130)) < 0.5
    dA, dB = cupy.asarray(A), cupy.asarray(B)
    for kwargs in ({"slice_rows": 9}, {"similarity": "jaccard", "slice_rows": 9}, {"triangle": "upper"}):
        np.testing.assert_array_equal(cupy.asnumpy(cupy.asarray(kmini.gram(dA, **kwargs).C)),
                                      kmini.gram(A, **kwargs).C)
    np.testing.assert_array_equal(cupy.asnumpy(cupy.asarray(kmini.gram(dA, dB, slice_rows=9).C)), kmini.gram(A, B).C)
    bad = cupy.asarray(A.astype(np.uint8))
    bad[4, 9] = 3
    with pytest.raises(ValueError, match=r"A: element \(4, 9\) is 3, expected 0 or 1"):
        kmini.gram(bad)


def test_results_outlive_the_call_and_memory_stays_bounded():
    A = np.random.default_rng(8).random((300, 500)) < 0.3
    kept = [kmini.gram(A, top_k=3, pairs_min=40, count_at_least=[30]) for _ in range(3)]
    del A
    for r in kept[1:]:
        for name in ("C", "top_k", "pairs", "counts", "row_counts"):
            assert getattr(r, name).tobytes() == getattr(kept[0], name).tobytes(), name
    A = np.random.default_rng(9).random((200, 300)) < 0.3  # 156 KiB of C per call, plus lists and pairs
    for _ in range(50):
        kmini.gram(A, top_k=3, pairs_min=25, slice_rows=64)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(1000):
        kmini.gram(A, top_k=3, pairs_min=25, slice_rows=64)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 16 * 1024, f"resident memory grew by {grown_kib} KiB over 1000 calls"


@pytest.mark.parametrize("args,message", [
    (dict(B=False, pairs_min=2, dense=False), "prune: got True with B=None, expected False"),
    (dict(pairs_min=2), "prune: got True with dense=True, expected False"),
    (dict(dense=False, count_at_least=[]), "prune: got True, expected False without top_k, pairs_min"),
    (dict(top_k=3, dense=False), "prune: got True, expected False unless pairs_min, top_k_min"),
    (dict(pairs_min=2, count_at_least=[0, 3], dense=False), "prune: got True, expected False unless pairs_min"),
    (dict(pairs_min=2, dense=False, distribution="ring"), "prune: got True with distribution='ring'"),
])
def test_prune_where_it_cannot_apply_is_refused(args, message):
    r = np.random.default_rng(31)
    A, B = r.random((30, 50)) < 0.3, r.random((20, 50)) < 0.5
    with_b = args.pop("B", True)
    with pytest.raises(ValueError, match=re.escape(message)):
        kmini.gram(A, B if with_b else None, prune=True, **args)


@pytest.mark.parametrize("similarity,least", [("jaccard", 0.45), ("counts", 50), ("cosine", 0.6)])
def test_pruned_search_gives_the_same_results(similarity, least):
    r = np.random.default_rng(29)
    density = np.linspace(0.02, 0.9, 300)[r.permutation(300)]  # popcounts spread, in no order
    A = r.random((300, 180)) < density[:, None]
    B = r.random((260, 180)) < np.linspace(0.02, 0.9, 260)[:, None]
    kw = dict(similarity=similarity, top_k=3, top_k_min=least, pairs_min=least, count_at_least=[least, least * 1.3],
              dense=False)
    on, off = kmini.gram(A, B, prune=True, **kw), kmini.gram(A, B, **kw)
    assert on.top_k.tobytes() == off.top_k.tobytes() and on.pairs.tobytes() == off.pairs.tobytes()
    np.testing.assert_array_equal(on.counts, off.counts)
    want_pairs = numpy_pairs(numpy_values(A, B, similarity), least, False, similarity)
    assert len(want_pairs) > 0 and on.pairs.tobytes() == want_pairs.tobytes()
