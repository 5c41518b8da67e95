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
from typing import Any, Iterable, Mapping, Optional, Union

import numpy as np

from . import _kmini
from ._kmini import _finalize  # noqa: F401  (the atexit handler, for tests)
from ._results import Fingerprints, GramResult, RK4Result, gram_result

__version__: str = _kmini.__version__
__all__ = ["gram", "rk4", "discount", "info", "read_fps", "GramResult", "RK4Result", "Fingerprints",
           "__version__"]

if hasattr(_kmini, "DeviceArray"):
    DeviceArray = _kmini.DeviceArray
    __all__.append("DeviceArray")

Number = Union[int, float, np.integer, np.floating]


def info() -> dict:
    """This build: kmini and Kokkos versions, execution and memory space, concurrency (starts Kokkos)."""
    return _kmini.info()


def discount(mult_by: Any, discount: Any, *, out: Optional[np.ndarray] = None, stores: str = "auto") -> Any:
    """cv[d, i, n] = mult_by[i, n] * discount[d, i, n].

    mult_by: (ids, terms); discount: (dates, ids, terms). float32 when both
    are float32, else float64 (exact conversions only). out: an ndarray of the
    result's dtype and shape, written in place. stores: as the deck's
    discount.stores ('auto', 'regular', 'streaming').
    """
    return _kmini.discount(mult_by, discount, out, stores)


def rk4(F0: Any, G0: Any, *, steps: int = 100, dt: Number = 1e-3, g: Union[Number, str] = "auto",
        kerr: Number = 0.0, coupling: str = "per_stage", method: str = "auto", precision: Optional[str] = None,
        delta0: Union[Number, complex, np.complexfloating] = 0j, comm: Any = None) -> RK4Result:
    """Integrates dF/dt = -2iF - i delta (2G - 1) - i kerr |F|^2 F, dG/dt = -i (conj(delta) F - delta conj(F)).

    delta = g * sum(F) over every element (of every rank of ``comm``), with
    RK4 for ``steps`` steps of ``dt``. Returns an RK4Result (F, G,
    delta[0..steps]), a named tuple; F0 and G0 are not changed. The defaults are the deck's (rk4.steps, rk4.dt,
    rk4.g: auto = 1 / the number of elements, rk4.coupling: per_stage, ...);
    delta0 is the delta of step 1 with coupling='per_step'. precision:
    'single' or 'double', default from F0's dtype (complex64: single).
    comm: an mpi4py intracommunicator; each rank passes its own elements,
    and every other argument the same on every rank (one that differs is a
    ValueError on every rank, naming it).
    """
    return RK4Result(*_kmini.rk4(F0, G0, steps, dt, g, kerr, coupling, method, precision, delta0, comm))


def read_fps(path: Union[str, "os.PathLike[str]"]) -> Fingerprints:
    """A chemfp FPS fingerprint file: its IDs and its fingerprints as uint64 words.

    Returns a Fingerprints (ids, words, num_bits, type, software), read and
    checked as the CLI reads a deck's gram.A.file: a malformed line, hex of
    odd length or of another width than #num_bits, a missing or repeated ID,
    bits set past num_bits are a ValueError naming the file and line. Pass it
    as A or B of kmini.gram (its words with cols=num_bits, no copy); the
    result's ids and target_ids are then the records' IDs.
    """
    return Fingerprints(*_kmini._read_fps(os.fspath(path)))


def _fingerprint_input(X: Any, cols: Optional[int], name: str) -> tuple:
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
    first = {}
    for i, ident in enumerate(ids):
        if ident in first:
            raise ValueError(f"{name}: ID {ident!r} at rows {first[ident]} and {i}, expected unique IDs "
                             "(as read_fps and the CLI require)")
        first[ident] = i
    return X.words, X.num_bits, ids


def gram(A: Any, B: Any = None, *, cols: Optional[int] = None, similarity: str = "counts",
         top_k: Optional[int] = None, pairs_min: Optional[Number] = None,
         count_at_least: Optional[Iterable[Number]] = None, dense: bool = True, triangle: str = "full",
         memory_budget: Union[Number, str] = "auto", slice_rows: Union[int, str, None] = "auto",
         write: Optional[Mapping[str, Union[str, "os.PathLike[str]"]]] = None, comm: Any = None,
         distribution: str = "replicated", ring_schedule: str = "auto",
         empty_similarity: Number = 0.0, top_k_min: Number = 0.0) -> GramResult:
    """C = A A^T (or A B^T) of 0/1 matrices: C[i, j] = the columns where rows i and j are both 1.

    A, B: bool/uint8 0/1 elements, or with cols= np.packbits(A, axis=1) bytes
    or uint64 words (column k in bit k % 64 of word k // 64; either byte
    order); with cols= the packed forms (bytes, words) may differ between A
    and B (cols= is for both); or a Fingerprints (kmini.read_fps), whose IDs
    the result then carries (ids: A's; target_ids: B's, or A's with one
    input; with comm= ids are this rank's rows' and, with one input,
    target_ids is None: the columns are every rank's rows). similarity: counts (int32),
    jaccard (also named tanimoto), dice, cosine (float32); two rows without
    ones score empty_similarity (0, or 1 as RDKit's BulkTanimotoSimilarity).
    top_k_min: each row's top_k best at or above it (the others missing).
    Returns a GramResult (a named tuple) with C (dense=True;
    triangle='upper': the packed upper triangle), top_k (rows x k records j,
    value), pairs (records i, j, value >= pairs_min), counts (pairs at or
    above each count_at_least threshold), row_counts, slices, distribution and
    ring_schedule (the plan that ran; None unless the ring). Computed in
    slices of slice_rows rows (default: as many as memory_budget allows;
    bytes or '512M' as in the deck, default 'auto': half the memory this
    process may use); beyond the budget: MemoryError (ValueError for a
    slice_rows that does not fit) before anything is allocated.

    comm: an mpi4py intracommunicator; each rank passes its own contiguous
    block of rows of A (in rank order) and gets its own rows of C, top_k and
    pairs (i global), the counts of the whole problem and the row_counts of
    its rows: byte for byte those of a one-process call. One collective call
    runs the CLI's plan (gram.distribution): 'replicated' (B whole on every
    rank; every rank holds all of A's packed rows) or 'ring' (B, too, in
    contiguous blocks of rows in rank order; each rank holds about 1/P of
    the packed rows and the others pass by, ring_schedule as the deck's);
    'auto' plans replicated where it fits memory_budget, else ring (B in
    blocks). Over two ranks or more the plan sets the slice height from the
    budget, the lowest of any rank's, less this call's dense C. One process
    (comm=None, or one rank) holds the whole problem whatever the
    distribution.

    write: the CLI's files of the outputs, {"C": path, "pairs": path,
    "top_k": path, "summary": path} (the deck's gram.write.C,
    write.pairs.path, write.top_k.path and write.summary; summary also sets
    the result's summary, the file's JSON as a dict), byte for byte the
    CLI's, written collectively with comm= and atomically (a temporary file
    renamed when complete). Each path is checked as the CLI checks its
    outputs before anything is computed: its suffix (.npy; .json for the
    summary), a directory that exists, no directory or special file at the
    path, no file named twice; a symbolic link is written through (the link
    stays, the file it points to is replaced), as numpy writes.

    With comm=, every argument but A, B and memory_budget (the lowest is
    taken) must be the same on every rank: one that differs is a ValueError
    on every rank, naming it, before anything is computed.
    """
    from . import _over_ranks
    if comm is not None:
        _over_ranks.check_comm(comm)
    A, cols_a, ids = _fingerprint_input(A, cols, "A")
    B, cols_b, b_ids = _fingerprint_input(B, cols_a, "B")
    cols = cols_b if cols_b is not None else cols_a
    target_ids = b_ids if B is not None else ids
    if B is not None and b_ids is None:
        target_ids = None
    files = _over_ranks.agree_write(write, dense, top_k, pairs_min, comm)
    summary = "summary" in files
    if comm is not None:
        res = _over_ranks.gram_over_ranks(A, B, comm, cols, similarity, top_k, pairs_min, count_at_least, dense,
                                          triangle, memory_budget, slice_rows, distribution, ring_schedule, summary,
                                          empty_similarity, top_k_min)
        if B is None:  # the columns are every rank's rows
            target_ids = None
    else:
        res = _kmini.gram(A, B, cols, similarity, top_k, pairs_min, count_at_least, dense, triangle, memory_budget,
                          slice_rows, distribution, ring_schedule, summary, empty_similarity, top_k_min)
    if files:
        _over_ranks.write_outputs(res, files, comm, triangle)
    return gram_result(res, ids, target_ids)


def _python_default(entry: dict) -> Any:
    """A deck key's default as the keyword argument's (delta0's [re, im] is a complex)."""
    default = entry["default"]
    if entry["type"] == "reals" and isinstance(default, list) and len(default) == 2:
        return complex(default[0], default[1])
    return None if default == [] else default  # an empty list: nothing asked for


# Defaults and help from the kernels' declarations: the keyword arguments that
# are deck keys take their defaults from there (the signatures above say the
# same, which tests/python/test_kmini_declaration.py checks against
# `kmini describe --json`), and each docstring ends with the keys' help lines.
# precision: the deck's default is single; here it follows F0's dtype.
_PYTHON_OWN_DEFAULT = {("rk4", "precision")}


def _declare(function: Any, arguments: list) -> None:
    lines = ["", "Deck keys (the kernel's declaration; `kmini describe`):"]
    for entry in arguments:
        name = entry["name"]
        if (function.__name__, name) not in _PYTHON_OWN_DEFAULT and name in (function.__kwdefaults__ or {}):
            default = _python_default(entry)
            if default is not None:
                function.__kwdefaults__[name] = default
        unit = f" [{entry['unit']}]" if entry["unit"] else ""
        lines.append(f"    {name} ({entry['key']}){unit}: {entry['help']}")
    function.__doc__ = (function.__doc__ or "").rstrip() + "\n" + "\n".join(lines) + "\n"


_declare(rk4, _kmini._rk4_arguments())
_declare(gram, _kmini._gram_arguments())
_declare(discount, _kmini._discount_arguments())
