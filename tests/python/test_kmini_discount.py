"""The Python module kmini: discount and info, against numpy.

Run by ctest (python.kmini) with PYTHONPATH at the build tree's python/ folder:
    PYTHONPATH=build/python /usr/bin/python3 -m pytest -q tests/python
"""
import os
import resource
import subprocess
import sys

import numpy as np
import pytest

import kmini


def rng_arrays(dates, ids, terms, dtype, seed=0):
    r = np.random.default_rng(seed)
    return (r.uniform(-2, 2, (ids, terms)).astype(dtype), r.uniform(0, 1, (dates, ids, terms)).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(1, 1, 1), (3, 5, 7), (13, 1, 31), (2, 17, 1), (0, 4, 3), (5, 0, 2)])
def test_discount_equals_numpy_exactly(dtype, shape):
    m, x = rng_arrays(*shape, dtype)
    cv = kmini.discount(m, x)
    assert cv.dtype == dtype and cv.shape == shape
    # One IEEE multiply per element on both sides: bitwise equal.
    np.testing.assert_array_equal(cv, m[None, :, :] * x)


def test_out_is_written_in_place():
    m, x = rng_arrays(4, 6, 5, np.float64, seed=1)
    out = np.full(x.shape, np.nan)
    r = kmini.discount(m, x, out=out)
    assert np.shares_memory(r, out) and r.ctypes.data == out.ctypes.data
    np.testing.assert_array_equal(out, m * x)


def test_inputs_of_the_right_layout_are_not_copied():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    assert kmini._kmini._input_pointer(a, "float64") == a.ctypes.data  # wrapped, not copied
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert kmini._kmini._input_pointer(b, "float32") == b.ctypes.data
    # Another layout or dtype that converts exactly: one copy.
    assert kmini._kmini._input_pointer(a.T, "float64") != a.ctypes.data
    assert kmini._kmini._input_pointer(b, "float64") != b.ctypes.data


def test_exact_conversions_are_copied_once_and_others_refused():
    m, x = rng_arrays(2, 3, 4, np.float64, seed=2)
    ints = np.arange(12, dtype=np.int32).reshape(3, 4)
    np.testing.assert_array_equal(kmini.discount(ints, x), ints.astype(np.float64) * x)
    np.testing.assert_array_equal(kmini.discount(m.T.copy().T, x), m * x)  # Fortran order
    big = np.arange(12, dtype=np.int64).reshape(3, 4)  # int64 within 2^53: exact
    np.testing.assert_array_equal(kmini.discount(big, x), big * x)
    with pytest.raises(TypeError, match="does not convert exactly"):
        kmini.discount(np.full((3, 4), 2**60, dtype=np.int64), x)
    with pytest.raises(TypeError, match="complex128 does not convert exactly to float64"):
        kmini.discount(m.astype(np.complex128), x)
    with pytest.raises(TypeError, match="mult_by"):
        kmini.discount(np.array([["a"]]), x)
    # float32 with float64: the result is float64, as numpy's multiply.
    assert kmini.discount(m.astype(np.float32), x).dtype == np.float64


def test_bad_shapes_and_outs_are_clear_errors():
    m, x = rng_arrays(2, 3, 4, np.float64, seed=3)
    with pytest.raises(ValueError, match=r"mult_by: shape \(3,\), expected \(ids, terms\)"):
        kmini.discount(m[:, 0], x)
    with pytest.raises(ValueError, match=r"discount: shape \(2, 4, 3\), expected \(dates, 3, 4\)"):
        kmini.discount(m, x.transpose(0, 2, 1))
    with pytest.raises(TypeError, match="out: dtype float32"):
        kmini.discount(m, x, out=np.empty(x.shape, np.float32))
    with pytest.raises(ValueError, match="out: expected a C-contiguous"):
        kmini.discount(m, x, out=np.empty(x.shape[::-1]).T)
    with pytest.raises(ValueError, match=r"out: shape \(2, 3\), expected \(2, 3, 4\)"):
        kmini.discount(m, x, out=np.empty((2, 3)))
    with pytest.raises(ValueError, match="shares memory with an input"):
        kmini.discount(m, x, out=x)
    read_only = np.empty(x.shape)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        kmini.discount(m, x, out=read_only)


def test_results_outlive_the_call_and_memory_stays_bounded():
    m, x = rng_arrays(8, 50, 5, np.float64, seed=4)
    kept = [kmini.discount(m, x) for _ in range(3)]
    del m, x
    for r in kept[1:]:
        np.testing.assert_array_equal(r, kept[0])
    m, x = rng_arrays(16, 256, 16, np.float64, seed=5)  # 512 KiB per result
    for _ in range(50):
        kmini.discount(m, x)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(1000):
        kmini.discount(m, x)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 16 * 1024, f"resident memory grew by {grown_kib} KiB over 1000 calls"


def test_info_names_the_build():
    d = kmini.info()
    assert d["kokkos_version"].count(".") == 2
    assert d["execution_space"] and d["memory_space"] and d["concurrency"] >= 1


def run_python(code, **env):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=60)


def test_a_malformed_kokkos_variable_is_a_value_error_not_an_abort():
    r = run_python("import kmini\ntry:\n    kmini.info()\nexcept ValueError as e:\n    print('ValueError:', e)\n",
                   KOKKOS_NUM_THREADS="abc")
    assert r.returncode == 0, r.stderr
    assert "ValueError: environment variable KOKKOS_NUM_THREADS=abc: expected a whole number N >= 1" in r.stdout


def test_kokkos_is_finalised_at_exit():
    r = run_python("import kmini, numpy as np\nprint(kmini.discount(np.ones((1, 2)), np.ones((1, 1, 2))).sum())")
    assert r.returncode == 0 and r.stdout.strip() == "2.0", r.stderr
    assert "Kokkos::finalize" not in r.stderr  # no complaint of a missing finalize


@pytest.mark.parametrize("stores", ["auto", "regular", "streaming"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_store_kind_gives_numpy_s_bits(stores, dtype):
    if stores == "streaming":
        try:
            kmini.discount(np.ones((1, 1)), np.ones((1, 1, 1)), stores="streaming")
        except ValueError as e:
            pytest.skip(str(e))
    m, x = rng_arrays(7, 33, 5, dtype, seed=6)  # rows not a multiple of the vector width
    np.testing.assert_array_equal(kmini.discount(m, x, stores=stores), m[None] * x)
    out = np.empty_like(x)
    kmini.discount(m, x, out=out[:, :, :], stores=stores)
    np.testing.assert_array_equal(out, m * x)
    with pytest.raises(ValueError, match="stores: got 'fast'"):
        kmini.discount(m, x, stores="fast")


class FakeDeviceArray:
    """Something that says it lives on a GPU (what CuPy, numba and PyTorch expose)."""

    def __init__(self, shape, typestr="<f8"):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (4096, False), "version": 3,
                                         "strides": None}


@pytest.mark.skipif(kmini.info()["device_arrays"], reason="a device build uses device arrays")
def test_device_arrays_are_refused_by_host_builds_naming_the_argument():
    m, x = np.ones((2, 3)), np.ones((4, 2, 3))
    for kwargs, name in (({"mult_by": FakeDeviceArray((2, 3)), "discount": x}, "mult_by"),
                         ({"mult_by": m, "discount": FakeDeviceArray((4, 2, 3))}, "discount"),
                         ({"mult_by": m, "discount": x, "out": FakeDeviceArray((4, 2, 3))}, "out")):
        with pytest.raises(TypeError, match=name + r": a CUDA device array \(__cuda_array_interface__\), but this "
                                                   "kmini build runs its kernels on the host"):
            kmini.discount(kwargs.pop("mult_by"), kwargs.pop("discount"), **kwargs)
    assert not hasattr(kmini, "DeviceArray")


cupy = pytest.importorskip("cupy") if kmini.info()["device_arrays"] else None


@pytest.mark.skipif(cupy is None, reason="a host build, or no CuPy: device arrays are checked on a GPU")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cupy_arrays_are_used_in_place_and_results_stay_on_the_device(dtype):
    r = np.random.default_rng(2)
    m, x = r.random((30, 7)).astype(dtype), r.random((5, 30, 7)).astype(dtype)
    dm, dx = cupy.asarray(m), cupy.asarray(x)
    cv = kmini.discount(dm, dx)
    assert isinstance(cv, kmini.DeviceArray) and cv.shape == x.shape and cv.dtype == dtype
    on_gpu = cupy.asarray(cv)  # no copy: the same device pointer
    assert on_gpu.data.ptr == cv.__cuda_array_interface__["data"][0]
    np.testing.assert_array_equal(cv.get(), np.multiply(m, x))
    out = cupy.zeros_like(dx)
    assert kmini.discount(dm, dx, out=out) is out
    np.testing.assert_array_equal(cupy.asnumpy(out), np.multiply(m, x))
    with pytest.raises(TypeError, match="discount: not a device array"):
        kmini.discount(dm, x)
