"""kmini.rk4 against a plain numpy RK4 (rk4_numpy.py), its errors and Ctrl-C."""

import numpy as np
import pytest

import kmini
from ctrl_c import seconds_to_interrupt
from rk4_numpy import rk4 as numpy_rk4, start


def rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


@pytest.mark.parametrize("shape", [(7, 9), (13,), (2, 3, 5), (1, 1)])
@pytest.mark.parametrize("coupling", ["per_step", "per_stage"])
@pytest.mark.parametrize("kerr,method", [(0.0, "auto"), (0.0, "stages"), (0.0, "affine"), (1.3, "auto")])
def test_rk4_double_equals_numpy(shape, coupling, kerr, method):
    F0, G0 = start(shape)
    n = int(np.prod(shape))
    F, G, delta = kmini.rk4(F0, G0, steps=40, dt=0.01, g=1.0 / n, kerr=kerr, coupling=coupling, method=method)
    Fr, Gr, dr = numpy_rk4(F0, G0, 40, 0.01, 1.0 / n, kerr, coupling == "per_stage")
    assert F.shape == shape and G.shape == shape and delta.shape == (41,)
    assert F.dtype == np.complex128
    # Rounding only: the numpy reference sums and orders differently.
    assert rel(F, Fr) < 1e-12 and rel(G, Gr) < 1e-12 and rel(delta, dr) < 1e-12
    # The κ = 0 solution is far away: the Kerr term is what is checked.
    if kerr:
        assert rel(F, numpy_rk4(F0, G0, 40, 0.01, 1.0 / n, 0.0, coupling == "per_stage")[0]) > 1e-3


@pytest.mark.parametrize("coupling", ["per_step", "per_stage"])
def test_rk4_single_precision_from_complex64(coupling):
    F0, G0 = start((16, 16), seed=2)
    F, G, delta = kmini.rk4(F0.astype(np.complex64), G0.astype(np.complex64), steps=20, dt=0.01, g=1 / 256,
                            coupling=coupling)
    assert F.dtype == np.complex64 and G.dtype == np.complex64 and delta.dtype == np.complex128
    Fr, _, dr = numpy_rk4(F0.astype(np.complex64), G0.astype(np.complex64), 20, 0.01, 1 / 256, 0.0,
                          coupling == "per_stage")
    assert rel(F, Fr) < 2e-5 and rel(delta, dr) < 2e-5
    # precision= overrides the dtype.
    F64, _, _ = kmini.rk4(F0.astype(np.complex64), G0, steps=20, dt=0.01, g=1 / 256, coupling=coupling,
                          precision="double")
    assert F64.dtype == np.complex128


def test_inputs_are_not_changed_and_real_inputs_convert():
    F0, G0 = start((5, 5))
    keep_F, keep_G = F0.copy(), G0.copy()
    kmini.rk4(F0, G0, steps=3, dt=0.1, g=0.04, coupling="per_step")
    np.testing.assert_array_equal(F0, keep_F)
    np.testing.assert_array_equal(G0, keep_G)
    F, G, _ = kmini.rk4(np.ones((3, 3)), np.zeros((3, 3), dtype=np.int32), steps=2, dt=0.1, g=0.1,
                        coupling="per_step")
    Fr, Gr, _ = numpy_rk4(np.ones((3, 3)), np.zeros((3, 3)), 2, 0.1, 0.1)
    assert rel(F, Fr) < 1e-13 and rel(G, Gr) < 1e-13
    # int64 within 2^53 converts exactly, as for discount; beyond it does not.
    F, G, _ = kmini.rk4(np.ones((3, 3), dtype=np.int64), np.zeros((3, 3), dtype=np.int64), steps=2, dt=0.1, g=0.1,
                        coupling="per_step")
    assert rel(F, Fr) < 1e-13 and rel(G, Gr) < 1e-13
    with pytest.raises(TypeError, match="F0: dtype int64 does not convert exactly to complex128"):
        kmini.rk4(np.full((2, 2), 2**60, dtype=np.int64), np.zeros((2, 2)), steps=1, dt=0.1, g=0.1)


def test_zero_steps_returns_the_start():
    F0, G0 = start((4,))
    F, G, delta = kmini.rk4(F0, G0, steps=0, dt=0.1, g=0.5, coupling="per_stage")
    np.testing.assert_array_equal(F, F0)
    np.testing.assert_array_equal(G, G0)
    assert delta.shape == (1,) and abs(delta[0] - 0.5 * F0.sum()) < 1e-14


def test_errors_are_value_and_type_errors_with_the_cli_s_words():
    F0, G0 = start((4, 4))
    with pytest.raises(ValueError, match=r"G0: shape \(4, 3\), expected \(4, 4\)"):
        kmini.rk4(F0, G0[:, :3], steps=1, dt=0.1, g=0.1)
    with pytest.raises(ValueError, match="dt: got 0.0, expected a finite real number > 0"):
        kmini.rk4(F0, G0, steps=1, dt=0.0, g=0.1)
    with pytest.raises(ValueError, match="g: got nan, expected a finite real number"):
        kmini.rk4(F0, G0, steps=1, dt=0.1, g=float("nan"))
    with pytest.raises(ValueError, match="steps: got -1, expected an integer >= 0"):
        kmini.rk4(F0, G0, steps=-1, dt=0.1, g=0.1)
    with pytest.raises(ValueError, match="coupling: got 'per_day', expected 'per_step' or 'per_stage'"):
        kmini.rk4(F0, G0, steps=1, dt=0.1, g=0.1, coupling="per_day")
    with pytest.raises(ValueError, match="method: got 'affine', expected 'auto' or 'stages'"):
        kmini.rk4(F0, G0, steps=1, dt=0.1, g=0.1, kerr=1.0, method="affine")
    with pytest.raises(ValueError, match="precision: got 'half'"):
        kmini.rk4(F0, G0, steps=1, dt=0.1, g=0.1, precision="half")
    with pytest.raises(TypeError, match=r"F0: got ndarray of dtype <U1 and shape \(1,\), expected an array of numbers"):
        kmini.rk4(np.array(["a"]), np.array([1.0]), steps=1, dt=0.1, g=0.1)
    with pytest.raises(TypeError, match="dt: got 'fast', expected a finite real number > 0"):
        kmini.rk4(F0, G0, steps=1, dt="fast", g=0.1)
    # A blow-up is an error naming the step, not NaN returned silently.
    with pytest.raises(ValueError, match="non-finite at step"):
        kmini.rk4(F0 * 10, G0, steps=200, dt=1.0, g=1.0, kerr=50.0)


def test_ctrl_c_interrupts_a_long_integration_within_a_second():
    assert seconds_to_interrupt(
        "F0 = np.ones(4096, dtype=np.complex128); G0 = np.zeros(4096, dtype=np.complex128)",
        "kmini.rk4(F0, G0, steps=10**6, dt=1e-6, g=1e-4, coupling='per_stage', method='stages')") < 1.0


class FakeDeviceField:
    def __init__(self, shape, typestr="<c16"):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (4096, False), "version": 3}


@pytest.mark.skipif(kmini.info()["device_arrays"], reason="a device build uses device arrays")
def test_device_fields_are_refused_by_host_builds_naming_the_argument():
    F0 = np.ones(8, dtype=np.complex128)
    with pytest.raises(TypeError, match=r"G0: a CUDA device array \(__cuda_array_interface__\), but this kmini build"):
        kmini.rk4(F0, FakeDeviceField((8,)), steps=1, dt=0.1, g=0.1)
    with pytest.raises(TypeError, match=r"F0: a CUDA device array"):
        kmini.rk4(FakeDeviceField((8,), "<c8"), F0, steps=1, dt=0.1, g=0.1)


cupy = pytest.importorskip("cupy") if kmini.info()["device_arrays"] else None


@pytest.mark.skipif(cupy is None, reason="a host build, or no CuPy: device arrays are checked on a GPU")
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_cupy_fields_stay_on_the_device_between_calls(dtype):
    r = np.random.default_rng(9)
    F0 = (r.random(300) + 1j * r.random(300)).astype(dtype)
    G0 = (0.25 + 1j * r.random(300)).astype(dtype)
    want_F, want_G, want_delta = kmini.rk4(F0, G0, steps=20, dt=1e-3, g=0.01, coupling="per_step")
    F, G, delta = kmini.rk4(cupy.asarray(F0), cupy.asarray(G0), steps=10, dt=1e-3, g=0.01, coupling="per_step")
    assert isinstance(F, kmini.DeviceArray) and F.dtype == dtype
    # the second call continues from the first's device results, delta(0) from the first's last
    F, G, delta2 = kmini.rk4(F, G, steps=10, dt=1e-3, g=0.01, coupling="per_step",
                                delta0=complex(delta[-1]))
    tol = 1e-12 if dtype == np.complex128 else 1e-5
    np.testing.assert_allclose(cupy.asnumpy(cupy.asarray(F)), want_F, rtol=tol, atol=tol)
    np.testing.assert_allclose(G.get(), want_G, rtol=tol, atol=tol)
