"""Every pairing of input forms for A and B gives the same C: 0/1 elements
(bool, uint8), np.packbits bytes (numpy's big bit order), uint64 words
(column k in bit k % 64 of word k // 64) in native, little- and big-endian
byte order. One bit convention, whatever the forms."""
import itertools

import numpy as np
import pytest

import kmini


def words_of(A):
    rows, cols = A.shape
    W = np.zeros((rows, (cols + 63) // 64), dtype=np.uint64)
    for k in range(cols):
        W[:, k // 64] |= A[:, k].astype(np.uint64) << np.uint64(k % 64)
    return W


FORMS = {
    "bool": lambda A: (A, False),
    "uint8": lambda A: (A.astype(np.uint8), False),
    "packbits": lambda A: (np.packbits(A, axis=1), True),
    "words": lambda A: (words_of(A), True),
    "words_le": lambda A: (words_of(A).astype("<u8"), True),
    "words_be": lambda A: (words_of(A).astype(">u8"), True),
}
PACKED = [k for k, f in FORMS.items() if f(np.zeros((1, 1), bool))[1]]


@pytest.mark.parametrize("cols", [13, 64, 70, 200])
@pytest.mark.parametrize("form_a,form_b", list(itertools.product(PACKED, PACKED)))
def test_packed_forms_of_a_and_b_give_the_same_c(form_a, form_b, cols):
    r = np.random.default_rng(cols)
    A, B = r.random((11, cols)) < 0.4, r.random((7, cols)) < 0.6
    want = A.astype(np.int64) @ B.T.astype(np.int64)
    a, _ = FORMS[form_a](A)
    b, _ = FORMS[form_b](B)
    res = kmini.gram(a, b, cols=cols)
    np.testing.assert_array_equal(res.C, want)
    np.testing.assert_array_equal(res.row_counts, A.sum(axis=1))


@pytest.mark.parametrize("form", list(FORMS))
def test_every_form_of_a_alone_gives_numpy_s_product(form):
    A = np.random.default_rng(2).random((9, 77)) < 0.5
    a, packed = FORMS[form](A)
    res = kmini.gram(a, cols=77 if packed else None, top_k=2, pairs_min=3)
    np.testing.assert_array_equal(res.C, A.astype(np.int64) @ A.T.astype(np.int64))
    ref = kmini.gram(A, top_k=2, pairs_min=3)
    np.testing.assert_array_equal(res.top_k, ref.top_k)
    np.testing.assert_array_equal(res.pairs, ref.pairs)


def test_padding_bits_are_checked_in_the_documented_place():
    A = np.zeros((2, 10), bool)
    P = np.packbits(A, axis=1)
    P[1, 1] = 0x01  # column 15 of a 10-column row (packbits: the first column is the high bit)
    with pytest.raises(ValueError, match="B: bits set past cols=10 in the last byte of row 1"):
        kmini.gram(np.packbits(A, axis=1), P, cols=10)
    W = words_of(A).astype(">u8")
    W[0, 0] = np.uint64(1 << 12)  # column 12 of a 10-column row
    with pytest.raises(ValueError, match="A: bits set past cols=10 in the last word of row 0"):
        kmini.gram(W, cols=10)
