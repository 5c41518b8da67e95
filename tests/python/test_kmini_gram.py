"""kmini.gram against numpy's integer product, its input forms and its errors."""
import numpy as np
import pytest

import kmini


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
    assert res.row_counts is None
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
    with pytest.raises(MemoryError, match=r"dense C of 100000 x 100000 int32 \(37.3 GiB\)"):
        kmini.gram(np.zeros((100000, 1), dtype=bool))
    with pytest.raises(MemoryError, match="more than memory_budget 1 KiB"):
        kmini.gram(np.ones((100, 8), dtype=bool), memory_budget=1024)
    assert kmini.gram(np.ones((10, 8), dtype=bool), memory_budget=1 << 20).C[0, 0] == 8
