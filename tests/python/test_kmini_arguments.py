"""Arguments as Python users pass them: numpy scalars of every kind where
their value is kept, complex where a real is wanted refused, booleans refused
where a number is meant, out= only an ndarray, masked arrays refused,
iterables bounded before they are read, sizes checked before they are
multiplied; every error one line naming the argument, with no array repr."""
import itertools

import numpy as np
import pytest

import kmini

F0 = np.full(16, 0.1 + 0.05j)
G0 = np.full(16, 0.5 + 0j)
A = np.random.default_rng(1).random((12, 40)) < 0.5


def one_line_naming(excinfo, name):
    text = str(excinfo.value)
    assert "\n" not in text and text.startswith(name + ": ") and "array(" not in text, text
    return text


@pytest.mark.parametrize("scalar", [np.float64, np.float32, np.float16, np.int8, np.int32, np.int64, np.uint16,
                                    float, int])
def test_real_numpy_scalars_are_accepted_with_their_value(scalar):
    dt = scalar(0.125) if np.issubdtype(scalar, np.floating) else scalar(1)
    want = kmini.rk4(F0, G0, steps=3, dt=float(dt), g=2.0, kerr=1.0)
    got = kmini.rk4(F0, G0, steps=np.int64(3), dt=dt, g=scalar(2), kerr=scalar(1))
    for x, y in zip(got, want):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("name", ["dt", "g", "kerr"])
@pytest.mark.parametrize("value", [np.complex128(1e-3), np.complex64(1e-3 + 1e-3j), 1e-3 + 0j])
def test_a_complex_where_a_real_is_wanted_is_a_type_error(name, value):
    with pytest.raises(TypeError) as e:
        kmini.rk4(F0, G0, steps=1, **{name: value})
    assert "imaginary part" in one_line_naming(e, name)


def test_delta0_takes_complex_numbers_of_every_kind():
    base = kmini.rk4(F0, G0, steps=3, coupling="per_step", delta0=0.25 - 0.5j)
    for d0 in (np.complex64(0.25 - 0.5j), np.complex128(0.25 - 0.5j)):
        got = kmini.rk4(F0, G0, steps=3, coupling="per_step", delta0=d0)
        np.testing.assert_array_equal(got[2], base[2])


@pytest.mark.parametrize("call,name", [
    (lambda v: kmini.rk4(F0, G0, steps=1, dt=v), "dt"),
    (lambda v: kmini.rk4(F0, G0, steps=1, g=v), "g"),
    (lambda v: kmini.rk4(F0, G0, steps=v), "steps"),
    (lambda v: kmini.gram(A, top_k=v), "top_k"),
    (lambda v: kmini.gram(A, pairs_min=v), "pairs_min"),
    (lambda v: kmini.gram(A, slice_rows=v), "slice_rows"),
    (lambda v: kmini.gram(np.packbits(A, axis=1), cols=v), "cols"),
    (lambda v: kmini.gram(A, memory_budget=v), "memory_budget"),
])
@pytest.mark.parametrize("value", [True, np.bool_(True)])
def test_booleans_are_refused_where_a_number_is_meant(call, name, value):
    with pytest.raises(TypeError) as e:
        call(value)
    one_line_naming(e, name)


def test_words_for_dense_and_flags_are_checked():
    with pytest.raises(TypeError) as e:
        kmini.gram(A, dense=1)
    assert one_line_naming(e, "dense") == "dense: got 1, expected True or False"
    with pytest.raises(TypeError) as e:
        kmini.gram(A, similarity=2)
    one_line_naming(e, "similarity")


def test_integers_are_not_floats():
    with pytest.raises(TypeError) as e:
        kmini.gram(np.packbits(A, axis=1), cols=40.0)
    assert one_line_naming(e, "cols") == "cols: got 40.0, expected an integer >= 0"
    assert kmini.gram(np.packbits(A, axis=1), cols=np.int16(40)).C.sum() == kmini.gram(A).C.sum()


def test_out_is_only_an_ndarray():
    m, x = np.ones((2, 3)), np.ones((4, 2, 3))
    for out in ([0.0] * 24, np.ma.masked_array(np.zeros((4, 2, 3)))):
        with pytest.raises(TypeError) as e:
            kmini.discount(m, x, out=out)
        one_line_naming(e, "out")
    out = np.zeros((4, 2, 3))
    assert kmini.discount(m, x, out=out) is out and out.sum() == 24


def test_masked_arrays_are_refused():
    masked = np.ma.masked_array(A, mask=np.zeros_like(A))
    with pytest.raises(TypeError) as e:
        kmini.gram(masked)
    assert "mask" in one_line_naming(e, "A")
    with pytest.raises(TypeError) as e:
        kmini.discount(np.ma.masked_array(np.ones((2, 3))), np.ones((1, 2, 3)))
    one_line_naming(e, "mult_by")
    with pytest.raises(TypeError) as e:
        kmini.rk4(np.ma.masked_array(F0), G0, steps=1)
    one_line_naming(e, "F0")


def test_iterables_are_bounded_before_they_are_read():
    with pytest.raises(ValueError) as e:
        kmini.gram(A, count_at_least=itertools.count())
    assert "more than 64" in one_line_naming(e, "count_at_least")
    res = kmini.gram(A, count_at_least=(x for x in [1, 5]))
    assert list(res.counts) == list(kmini.gram(A, count_at_least=[1, 5]).counts)
    with pytest.raises(TypeError) as e:
        kmini.gram(A, count_at_least="15")
    one_line_naming(e, "count_at_least")


def test_wrong_types_name_the_argument_without_array_reprs():
    big = np.zeros((300, 300))
    cases = [
        (lambda: kmini.gram(A, B=big.astype(str)), "B"),
        (lambda: kmini.gram([[object()]]), "A"),
        (lambda: kmini.rk4(F0, G0, steps=big), "steps"),
        (lambda: kmini.rk4(F0, G0, steps=1, dt=big), "dt"),
        (lambda: kmini.discount(big, "x"), "discount"),
        (lambda: kmini.rk4(F0, G0, steps=1, coupling=big), "coupling"),
        (lambda: kmini.rk4(F0, G0, steps=1, comm=big), "rk4: comm"),
    ]
    for call, name in cases:
        with pytest.raises(TypeError) as e:
            call()
        text = one_line_naming(e, name)
        assert len(text) < 300, text


def test_an_mpi4py_on_another_mpi_library_is_refused_naming_both(monkeypatch):
    # The handle of a communicator means nothing to another MPI library: the
    # library mpi4py reports is compared with kmini's before the handle is used.
    MPI = pytest.importorskip("mpi4py.MPI")
    ours = MPI.Get_library_version().split(",")[0].rstrip("\0")
    monkeypatch.setattr(MPI, "Get_library_version", lambda: "Other MPI 9.9, build 1\n")
    with pytest.raises(RuntimeError) as e:
        kmini.rk4(F0, G0, steps=1, comm=MPI.COMM_WORLD)
    text = one_line_naming(e, "rk4: comm")
    assert "mpi4py runs on 'Other MPI 9.9' and kmini on '" + ours + "'" in text, text
    monkeypatch.undo()
    F, _, _ = kmini.rk4(F0, G0, steps=1, comm=MPI.COMM_WORLD)  # the same library: accepted
    assert F.shape == F0.shape


def test_slice_rows_stays_within_the_memory_budget():
    A = np.ones((64, 4096), bool)
    with pytest.raises(ValueError) as e:
        kmini.gram(A, memory_budget=4096, slice_rows=64)
    assert "memory_budget" in one_line_naming(e, "slice_rows")
    # the deck's units, and its cap
    assert kmini.gram(A, memory_budget="1M", slice_rows=8).slices == 8
    with pytest.raises(ValueError) as e:
        kmini.gram(A, memory_budget=2e18)
    one_line_naming(e, "memory_budget")
    with pytest.raises(ValueError) as e:
        kmini.gram(A, memory_budget="12Q")
    assert "512M" in one_line_naming(e, "memory_budget")


def test_sizes_from_arguments_are_checked_before_allocation():
    with pytest.raises(MemoryError, match=r"steps=1152921504606846976: the delta history .* beyond 2\^63 bytes"):
        kmini.rk4(F0, G0, steps=2**60)
    with pytest.raises(MemoryError, match=r"rk4: steps=1000000000000 keeps a delta history of 14.6 TiB"):
        kmini.rk4(F0, G0, steps=10**12)
    with pytest.raises(ValueError) as e:
        kmini.rk4(F0, G0, steps=2**63)
    one_line_naming(e, "steps")
    with pytest.raises(MemoryError, match="more than memory_budget 4 KiB"):
        kmini.gram(np.ones((64, 4096), bool), memory_budget=4096)
