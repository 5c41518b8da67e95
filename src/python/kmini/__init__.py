"""kmini's kernels from Python: numpy arrays in and out.

gram (bit-packed C = A A^T with similarities, top-k, pairs), rk4 (coupled
complex fields with a global-sum coupling) and discount (cv = mult_by *
discount), the same kernels and the same meaning as the ``kmini`` command's
decks. ``comm=`` (an mpi4py communicator) spreads one problem over MPI ranks.
See docs/python.md.

Threads: calls from several threads are safe and exact; the kernels of one
process run one call at a time (each call converts its arguments, then waits
without the GIL for the kernels).
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import _kmini
from ._kmini import _finalize  # noqa: F401  (the atexit handler, for tests)
from ._results import Fingerprints, GramResult, RK4Result, gram_result
from ._types import (ArrayInput, Auto, Complex, Coupling, CudaArrayLike, Distribution, Integer, Method, Precision, Real,
                     RingSchedule, Similarity, Size, Stores, Triangle)

if TYPE_CHECKING:
    from mpi4py import MPI

__version__: str = _kmini.__version__
__all__ = ["gram", "rk4", "discount", "info", "read_fps", "GramResult", "RK4Result", "Fingerprints",
           "Similarity", "Triangle", "Distribution", "RingSchedule", "Coupling", "Method", "Precision", "Stores",
           "CudaArrayLike", "__version__"]

if hasattr(_kmini, "DeviceArray"):
    DeviceArray = _kmini.DeviceArray
    __all__.append("DeviceArray")

# The keyword arguments that travel beside the compiled module's options, not in them.
_NOT_OPTIONS = {"comm", "write", "out"}


def _options(function: str, values: Dict[str, Any], **own: Any) -> Dict[str, Any]:
    """The compiled module's options for a call of the package's `function`: its keyword arguments (read from
    `values`, the call's locals) but those of _NOT_OPTIONS, keyed by their names, and `own`; the module reads each one
    once, so a new keyword argument travels with no other change here."""
    keywords = globals()[function].__kwdefaults__ or {}
    options = {name: values[name] for name in keywords if name not in _NOT_OPTIONS}
    options.update(own)
    return options


def info() -> Dict[str, Any]:
    """This build: kmini and Kokkos versions, execution and memory space, concurrency (starts Kokkos).

    Returns
    -------
    dict
        kmini_version, kokkos_version, execution_space, memory_space, host_accessible, concurrency,
        device_arrays (whether device arrays go in and out), mpi_launcher, threads.

    Raises
    ------
    RuntimeError
        After the interpreter's exit has ended Kokkos.
    """
    return _kmini.info()


def discount(mult_by: ArrayInput, discount: ArrayInput, *,
             out: Optional[Union[npt.NDArray[np.floating[Any]], CudaArrayLike]] = None,
             stores: Stores = "auto") -> Union[npt.NDArray[np.floating[Any]], _kmini.DeviceArray]:
    """cv[d, i, n] = mult_by[i, n] * discount[d, i, n].

    float32 when both inputs are float32, else float64 (exact conversions only).

    Parameters
    ----------
    mult_by : array_like or device array
        (ids, terms).
    discount : array_like or device array
        (dates, ids, terms).
    out : numpy.ndarray or device array, optional
        An array of the result's dtype and shape, C-contiguous, sharing no memory with the inputs:
        written in place and returned.
    stores : {options}
        'streaming' needs a host build for a CPU with AVX.

    Returns
    -------
    numpy.ndarray or kmini.DeviceArray
        cv, (dates, ids, terms): `out` when given; a device array for device inputs.

    Raises
    ------
    TypeError
        An argument of the wrong kind, or a dtype that does not convert exactly.
    ValueError
        Shapes that do not agree, an `out` that is not writeable in place, an option not declared.
    MemoryError
        A result that cannot be allocated.
    """
    return _kmini.discount(mult_by, discount, out, _options("discount", locals()))


def rk4(F0: ArrayInput, G0: ArrayInput, *, steps: Integer = 100, dt: Real = 1e-3, g: Union[Real, Auto] = "auto",
        kerr: Real = 0.0, coupling: Coupling = "per_stage", method: Method = "auto",
        precision: Optional[Precision] = None, delta0: Complex = 0j,
        comm: Optional[MPI.Intracomm] = None) -> RK4Result:
    """Integrates dF/dt = -2iF - i delta (2G - 1) - i kerr |F|^2 F, dG/dt = -i (conj(delta) F - delta conj(F)).

    delta = g * sum(F) over every element (of every rank of `comm`), with RK4 for `steps` steps of
    `dt`. F0 and G0 are not changed. The defaults are the deck's.

    Parameters
    ----------
    F0, G0 : array_like or device array
        The fields at the start, complex (any shape, the same for both). With `comm`, this rank's
        elements.
    steps : int
    dt : float
    g : float or 'auto'
        'auto': 1 / the number of elements (of every rank).
    kerr : float
        method='affine' needs 0.
    coupling : {options}
    method : {options}
    precision : {options} or None
        The precision of F and G; None: F0's dtype's (complex64: 'single').
    delta0 : complex
        The delta of step 1 with coupling='per_step'.
    comm : mpi4py.MPI.Intracomm, optional
        Each rank passes its own elements, every other argument the same on every rank.

    Returns
    -------
    RK4Result
        (F, G, delta), a named tuple: F and G after the last step (device arrays for device
        inputs), delta[0 .. steps] complex128.

    Raises
    ------
    TypeError
        An argument of the wrong kind (a bool as a number, a complex as a real, ...).
    ValueError
        A value out of its declared range or not one of its options; with `comm`, an argument
        that differs between ranks (on every rank, naming it); fields that become non-finite.
    MemoryError
        A delta history that does not fit the memory available, before anything is allocated.
    RuntimeError
        With `comm`: another rank refused its arguments or was interrupted.
    KeyboardInterrupt
        Ctrl-C, between steps.
    """
    F, G, delta = _kmini.rk4(F0, G0, _options("rk4", locals()), comm)
    return RK4Result(F, G, delta)


def read_fps(path: Union[str, os.PathLike[str]]) -> Fingerprints:
    """A chemfp FPS fingerprint file: its IDs and its fingerprints as uint64 words.

    Read and checked as the CLI reads a deck's gram.A.file. Pass the result as A or B of
    kmini.gram (its words with cols=num_bits, no copy); the result's ids and target_ids are then
    the records' IDs.

    Parameters
    ----------
    path : str or os.PathLike
        The FPS file.

    Returns
    -------
    Fingerprints
        (ids, words, num_bits, type, software), a named tuple.

    Raises
    ------
    ValueError
        A malformed line, hex of odd length or of another width than #num_bits, a missing or
        repeated ID, bits set past num_bits, a file that cannot be read: naming the file and line.
    """
    ids, words, num_bits, kind, software = _kmini._read_fps(os.fspath(path))
    return Fingerprints(ids, words, num_bits, kind, software)


def _fingerprint_input(X: Union[ArrayInput, Fingerprints, None], cols: Optional[Integer],
                       name: str) -> Tuple[Union[ArrayInput, None], Optional[Integer], Optional[List[str]]]:
    """A Fingerprints argument as its words and cols=num_bits (cols= must agree); other arguments as they are."""
    if not isinstance(X, Fingerprints):
        return X, cols, None
    if cols is not None and cols != X.num_bits:
        raise ValueError(f"cols: got {cols}, expected {X.num_bits} (the num_bits of {name}'s fingerprints) or None")
    rows = np.shape(X.words)[0] if np.ndim(X.words) == 2 else None
    if rows is None:
        raise TypeError(f"{name}: Fingerprints.words of shape {np.shape(X.words)}, expected (records, words)")
    ids = list(X.ids)
    if len(ids) != rows:
        raise ValueError(f"{name}: {len(ids)} IDs for {rows} fingerprints, expected one ID per row")
    first: Dict[str, int] = {}
    for i, ident in enumerate(ids):
        if ident in first:
            raise ValueError(f"{name}: ID {ident!r} at rows {first[ident]} and {i}, expected unique IDs "
                             "(as read_fps and the CLI require)")
        first[ident] = i
    return X.words, X.num_bits, ids


def gram(A: Union[ArrayInput, Fingerprints], B: Union[ArrayInput, Fingerprints, None] = None, *,
         cols: Optional[Integer] = None, similarity: Similarity = "counts", top_k: Optional[Integer] = None,
         pairs_min: Optional[Real] = None, count_at_least: Optional[Iterable[Real]] = None, dense: bool = True,
         triangle: Triangle = "full", memory_budget: Union[Size, Auto] = "auto",
         slice_rows: Union[Integer, Auto, None] = "auto",
         write: Optional[Mapping[str, Union[str, os.PathLike[str]]]] = None, comm: Optional[MPI.Intracomm] = None,
         distribution: Distribution = "replicated", ring_schedule: RingSchedule = "auto",
         empty_similarity: Real = 0.0, top_k_min: Real = 0.0, tversky_alpha: Optional[Real] = None,
         tversky_beta: Optional[Real] = None, exclude_self: bool = False, prune: bool = False) -> GramResult:
    """C = A A^T (or A B^T) of 0/1 matrices: C[i, j] = the columns where rows i and j are both 1.

    With similarities, each row's top-k, the pairs above a threshold and the counts at
    thresholds: the CLI's outputs, computed as the CLI plans them (in slices of rows within
    `memory_budget`; over the ranks of `comm` by the CLI's plan).

    Parameters
    ----------
    A, B : array_like, device array or Fingerprints
        bool/uint8 0/1 elements, or with `cols` np.packbits(A, axis=1) bytes or uint64 words
        (column k in bit k % 64 of word k // 64; either byte order); the packed forms may differ
        between A and B. Or a Fingerprints (kmini.read_fps), whose IDs the result then carries.
        B: None computes A A^T. With `comm`: each rank's own contiguous block of rows of A (in
        rank order), and of B with distribution 'ring' or 'auto' (B whole on every rank with
        'replicated').
    cols : int, optional
        The columns of packed A and B (for both); a Fingerprints' num_bits when not given.
    similarity : {options}
        counts (int32), jaccard (also named tanimoto), dice, cosine, tversky (float32).
    top_k : int, optional
        Each row's top_k best partners (at or above `top_k_min`).
    pairs_min : float, optional
        The pairs i, j whose value is at least this (above 1 with a similarity is refused: no
        value reaches it).
    count_at_least : iterable of float, optional
        Thresholds: the pairs at or above each (read no further than its limit).
    dense : bool
        Whether C is computed (rows x targets); without it nothing of that size is built.
    triangle : {options}
        'upper': C is the packed upper triangle (A alone).
    memory_budget : int, float or str
        Bytes, or a size as the deck reads it ('512M'); 'auto': half the memory this process may
        use. With `comm`, the lowest of any rank's is taken.
    slice_rows : int, 'auto' or None
        The rows of C per slice; 'auto' (or None): as many as `memory_budget` allows.
    write : mapping of str to path, optional
        The CLI's files of the outputs, {"C": path, "pairs": path, "top_k": path, "summary": path}
        (the deck's gram.write.C, write.pairs.path, write.top_k.path and write.summary; summary
        also sets the result's summary), byte for byte the CLI's, written collectively with `comm`
        and atomically (a temporary file renamed when complete). Each path is checked as the CLI
        checks its outputs before anything is computed: its suffix (.npy; .json for the summary),
        a directory that exists, no directory or special file at the path, no file named twice; a
        symbolic link is written through (the link stays, the file it points to is replaced).
    comm : mpi4py.MPI.Intracomm, optional
        One problem over the communicator's ranks: one collective call runs the CLI's plan, and
        each rank gets its own rows of C, top_k and pairs (i global), the counts of the whole
        problem and the row_counts of its rows: byte for byte those of a one-process call. Every
        argument but A, B and `memory_budget` must be the same on every rank.
    distribution : {options}
        With `comm`: 'replicated' (B whole on every rank; every rank holds all of A's packed
        rows), 'ring' (B, too, in blocks of rows; each rank holds about 1/P of the packed rows and
        the others pass by) or 'auto' (replicated where it fits `memory_budget`, else the ring).
        One process holds the whole problem whatever the distribution.
    ring_schedule : {options}
        The circulant (which 'auto' picks without dense C and pairs) computes top_k and
        count_at_least only.
    empty_similarity : float
    top_k_min : float
    tversky_alpha : float, optional
        With similarity='tversky' (and only then; both weights): c / (c + alpha (|a| - c) +
        beta (|b| - c)) for row a of A and row b of B. alpha != beta needs B (A A^T computes
        each pair once: pass A again as B for all pairs).
    tversky_beta : float, optional
    exclude_self : bool
        With Fingerprints as A and B: top_k, pairs and counts leave out each query's own ID
        among the targets (C keeps it). Not with `comm`.
    prune : bool
        With B and dense=False, every output asked for with a minimum above 0: skip the tiles of
        popcount-sorted rows whose similarity bound is below it (the same results; faster where
        many tiles go). ValueError where it cannot apply.

    Returns
    -------
    GramResult
        (C, top_k, pairs, counts, row_counts, slices, distribution, ring_schedule, summary, ids,
        target_ids), a named tuple; an output not asked for is None. With `comm`, ids are this
        rank's rows' and, with A alone, target_ids is None (the columns are every rank's rows).

    Raises
    ------
    TypeError
        An argument of the wrong kind (a bool as a number, a masked array, a device array with
        `comm`, ...).
    ValueError
        A value out of its declared range or not one of its options, values other than 0 and 1,
        bits set past `cols`, a `slice_rows` beyond `memory_budget`, a bad `write` path; with
        `comm`, an argument that differs between ranks (on every rank, naming it).
    MemoryError
        Dense C or one slice beyond `memory_budget`, before anything is allocated.
    RuntimeError
        With `comm`: another rank refused its arguments or was interrupted.
    KeyboardInterrupt
        Ctrl-C, between slices or ring steps.
    """
    from . import _over_ranks
    if comm is not None:
        _over_ranks.check_comm(comm)
    a, cols_a, ids = _fingerprint_input(A, cols, "A")
    b, cols_b, b_ids = _fingerprint_input(B, cols_a, "B")
    cols = cols_b if cols_b is not None else cols_a
    target_ids = b_ids if b is not None else ids
    if b is not None and b_ids is None:
        target_ids = None
    files = _over_ranks.agree_write(write, dense, top_k, pairs_min, comm)
    options = _options("gram", locals(), cols=cols, summary="summary" in files, ids=ids if b is not None else None,
                       target_ids=b_ids)
    if comm is not None:
        _over_ranks.check_ids_over_ranks(ids, comm, "A")  # collective: every rank, Fingerprints or not
        res = _over_ranks.gram_over_ranks(a, b, options, comm)
        if b is None:  # the columns are every rank's rows
            target_ids = None
    else:
        res = _kmini.gram(a, b, options)
    if files:
        _over_ranks.write_outputs(res, files, comm, triangle)
    return gram_result(res, ids, target_ids)


def _python_default(entry: Dict[str, Any]) -> Any:
    """A deck key's default as the keyword argument's (delta0's [re, im] is a complex)."""
    default = entry["default"]
    if entry["type"] == "reals" and isinstance(default, list) and len(default) == 2:
        return complex(default[0], default[1])
    return None if default == [] else default  # an empty list: nothing asked for


# Defaults, options and help from the kernels' declarations: the keyword
# arguments that are deck keys take their defaults from there (the signatures
# above say the same, which tests/python/test_kmini_declaration.py checks
# against `kmini describe --json`), and each one's entry in the docstring's
# Parameters gets the declared options (for {options}), its default and the
# key's help. precision: the deck's default is single; here it follows F0's dtype.
_PYTHON_OWN_DEFAULT = {("rk4", "precision")}


def _parameter_line(lines: List[str], name: str) -> int:
    """The index of `name`'s entry ("name : type") in a docstring's Parameters section."""
    start = next(i for i, line in enumerate(lines) if line.strip() == "Parameters")
    indent = lines[start][:len(lines[start]) - len(lines[start].lstrip())]
    for i in range(start + 2, len(lines)):
        if lines[i].strip() == "Returns":
            break
        if lines[i].startswith(indent) and not lines[i][len(indent):].startswith(" "):  # an entry, not its text
            if name in (n.strip() for n in lines[i].split(" : ")[0].split(",")):
                return i
    raise LookupError(f"the docstring documents no parameter {name}")


def _declare(function: Callable[..., Any], arguments: List[Dict[str, Any]]) -> None:
    keywords: Dict[str, Any] = function.__kwdefaults__ or {}
    lines = (function.__doc__ or "").split("\n")
    for entry in arguments:
        name = entry["name"]
        if (function.__name__, name) not in _PYTHON_OWN_DEFAULT and name in keywords:
            default = _python_default(entry)
            if default is not None:
                keywords[name] = default
        i = _parameter_line(lines, name)
        options = "{" + ", ".join(repr(o) for o in entry.get("options", [])) + "}"
        lines[i] = lines[i].replace("{options}", options)
        indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())] + "    "
        unit = f" [{entry['unit']}]" if entry["unit"] else ""
        lines.insert(i + 1, f"{indent}The deck's {entry['key']}{unit}: {entry['help']}")
    for name, default in keywords.items():  # every keyword argument's default, as numpydoc writes it
        i = _parameter_line(lines, name)
        if "optional" not in lines[i]:
            lines[i] += f", default {default!r}"
    function.__doc__ = "\n".join(lines)


_declare(rk4, _kmini._rk4_arguments())
_declare(gram, _kmini._gram_arguments())
_declare(discount, _kmini._discount_arguments())
