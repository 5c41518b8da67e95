"""gram(comm=...): one problem over the ranks of an mpi4py communicator.

Each rank computes its own rows of A against every target with the one-process
module: with B, against B as it is; without, against every rank's rows of A,
gathered as words; then the outputs are reduced to what the one-input problem
defines (pairs i < j, top-k lists without the row itself, counts of the pairs
i < j over every rank). Values come from the same kernels and the same
similarity formula, so each rank's rows are byte for byte those of a
one-process call. Arguments that one rank refuses stop every rank."""
from __future__ import annotations

import operator
import os
from types import SimpleNamespace
from typing import Any, Optional, Tuple

import numpy as np

from . import _kmini


def _mpi() -> Any:
    from mpi4py import MPI
    return MPI


def _agree(comm: Any, error: Optional[BaseException]) -> None:
    """Every rank raises when one has: its own error, or one naming the first rank that refused."""
    size = comm.Get_size()
    first = comm.allreduce(comm.Get_rank() if error is not None else size, op=_mpi().MIN)
    if error is not None:
        raise error
    if first < size:
        raise RuntimeError(f"gram: rank {first} refused its arguments (see its error)")


def _whole(v: Any) -> Optional[int]:
    if isinstance(v, (bool, np.bool_)):
        return None
    try:
        return operator.index(v)
    except TypeError:
        return None


def gram_over_ranks(A: Any, B: Any, comm: Any, cols: Any, similarity: Any, top_k: Any, pairs_min: Any,
                    count_at_least: Any, dense: Any, triangle: Any, memory_budget: Any,
                    slice_rows: Any) -> SimpleNamespace:
    MPI = _mpi()
    if not isinstance(comm, MPI.Intracomm) or comm == MPI.COMM_NULL:
        raise TypeError(f"comm: got {type(comm).__name__}, expected an mpi4py intracommunicator "
                        "(e.g. MPI.COMM_WORLD)")
    one_input = B is None
    error: Optional[BaseException] = None
    words, ncols = np.zeros((0, 0), np.uint64), 0
    thresholds = None
    try:
        if not one_input and triangle == "upper":
            raise ValueError("triangle: got 'upper' with B, expected 'full' (A B^T has no symmetry)")
        words, ncols = _kmini._gram_words(A, cols, "A")
        if count_at_least is not None and not isinstance(count_at_least, (str, bytes)):
            import itertools
            count_at_least = list(itertools.islice(count_at_least, 65))  # read once; the module checks it
            thresholds = count_at_least
    except BaseException as e:  # agreed, then raised
        error = e
    _agree(comm, error)
    rows = comm.allgather(words.shape[0])
    all_cols = comm.allgather(ncols)
    if any(c != ncols for c in all_cols):
        raise ValueError(f"A: {ncols} columns, expected the same on every rank (rank by rank: {all_cols})")
    offset, total = sum(rows[:comm.Get_rank()]), sum(rows)
    mine = offset + np.arange(words.shape[0])
    k = top_k
    res = None
    try:
        if one_input:
            w = words.shape[1]
            counts = [r * w for r in rows]
            targets = np.empty((total, w), dtype=np.uint64)
            comm.Allgatherv(words, [targets, counts, [sum(counts[:i]) for i in range(len(counts))], MPI.UINT64_T])
            whole = _whole(top_k) if top_k is not None else None
            if whole is not None:
                if not 1 <= whole <= max(1, total - 1):
                    raise ValueError(f"top_k: got {whole}, expected an integer in [1, {max(1, total - 1)}]")
                k = whole + 1  # the row itself may be among the best
            res = _kmini.gram(words, targets, ncols, similarity, k, pairs_min, count_at_least,
                              True if triangle == "upper" and dense is True else dense, "full", memory_budget,
                              slice_rows)
        else:
            b_words, b_cols = _kmini._gram_words(B, cols, "B")  # B's form may differ from A's on this rank
            if b_cols != ncols:
                raise ValueError(f"B: {b_cols} columns, expected {ncols} (the columns of A)")
            res = _kmini.gram(words, b_words, ncols, similarity, top_k, pairs_min, count_at_least, dense, triangle,
                              memory_budget, slice_rows)
    except BaseException as e:
        error = e
    _agree(comm, error)
    assert res is not None
    if res.pairs is not None:
        pairs = res.pairs.copy()
        pairs["i"] += offset
        res.pairs = pairs[pairs["j"] > pairs["i"]] if one_input else pairs
    if one_input and res.top_k is not None:
        lists = res.top_k
        n = lists.shape[1]
        self_ = lists["j"] == mine[:, None]
        keep = np.where(self_.any(axis=1)[:, None], ~self_, (np.arange(n) < n - 1)[None, :])
        res.top_k = lists[keep].reshape(lists.shape[0], n - 1)
    if one_input and res.C is not None and triangle == "upper":
        parts = [res.C[li, i:] for li, i in enumerate(mine)]
        res.C = np.concatenate(parts) if parts else res.C.reshape(-1)[:0]
    if res.counts is not None:
        counted = res.counts.astype(np.int64)
        if one_input:  # (i, j), (j, i) and (i, i) were counted: keep the pairs i < j
            ones = res.row_counts.astype(np.float64)
            self_value = ones if similarity == "counts" else np.where(ones > 0, 1.0, 0.0)
            t = np.asarray(thresholds, dtype=np.float64)
            counted = counted - (self_value[:, None] >= t[None, :]).sum(axis=0)
        counted = comm.allreduce(counted, op=MPI.SUM)
        res.counts = counted // 2 if one_input else counted
    return res


WRITABLE = ("C", "pairs", "top_k")


def check_write(write: Any, dense: Any, top_k: Any, pairs_min: Any) -> dict:
    """write= as {output: path}, checked before anything is computed."""
    if write is None:
        return {}
    if not hasattr(write, "items") or isinstance(write, (str, bytes)):
        raise TypeError(f"write: got {type(write).__name__}, expected a mapping such as {{'C': 'c.npy'}}")
    files = {}
    for key, path in write.items():
        if key not in WRITABLE:
            raise ValueError(f"write: got key {key!r}, expected 'C', 'pairs' or 'top_k'")
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"write: {key}: got {type(path).__name__}, expected a path (str or os.PathLike)")
        files[key] = os.fspath(path)
    if "C" in files and dense is not True:
        raise ValueError("write: 'C' needs dense=True (C is written from the dense result)")
    if "pairs" in files and pairs_min is None:
        raise ValueError("write: 'pairs' needs pairs_min")
    if "top_k" in files and top_k is None:
        raise ValueError("write: 'top_k' needs top_k")
    return files


def write_outputs(res: SimpleNamespace, files: dict, comm: Any, triangle: Any) -> None:
    """The CLI's .npy files of res, this rank's rows at their place (collective with comm)."""
    def place(n: int) -> Tuple[int, int]:  # this rank's first element, and the total
        if comm is None:
            return 0, n
        first = comm.exscan(n)
        return (first or 0), comm.allreduce(n)

    rows = len(res.row_counts)
    row0, total_rows = place(rows)
    if "C" in files:
        if triangle == "upper":
            first, total = place(res.C.shape[0])
            _kmini._write_npy(files["C"], res.C, first, [total], comm)
        else:
            targets = res.C.shape[1]
            _kmini._write_npy(files["C"], res.C, row0 * targets, [total_rows, targets], comm)
    if "pairs" in files:
        first, total = place(len(res.pairs))
        _kmini._write_npy(files["pairs"], res.pairs, first, [total], comm)
    if "top_k" in files:
        k = res.top_k.shape[1]
        _kmini._write_npy(files["top_k"], res.top_k, row0 * k, [total_rows, k], comm)
