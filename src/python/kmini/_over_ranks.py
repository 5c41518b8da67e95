"""gram(comm=...): one problem over the ranks of an mpi4py communicator.

One collective call of the library runs the CLI's orchestration and plan
over the communicator (gram.distribution: replicated, every rank holding all
of A's packed rows; ring, each holding a share that travels), computes each
rank's slices of the plan (with one input the symmetric half once), and gives
each rank its own rows of every output. Arguments that one rank refuses stop
every rank (it raises its error, the others a RuntimeError naming it)."""
from __future__ import annotations

import os
import reprlib
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple, Union

from . import _kmini

if TYPE_CHECKING:
    from mpi4py import MPI


def check_comm(comm: object) -> None:
    """comm= is an mpi4py intracommunicator this process may use, checked before the package's own
    collectives: in a forked child, after MPI's end or with mpi4py on another MPI library, the
    kernels' error, and no collective."""
    from mpi4py import MPI
    if not isinstance(comm, MPI.Intracomm) or comm == MPI.COMM_NULL:
        raise TypeError(f"comm: got {type(comm).__name__}, expected an mpi4py intracommunicator "
                        "(e.g. MPI.COMM_WORLD)")
    _kmini._check_comm(comm, "gram")


def check_ids_over_ranks(ids: Optional[List[str]], comm: MPI.Intracomm, name: str) -> None:
    """Each rank's Fingerprints of A are its own block of records: an ID on two ranks (such as the whole file
    passed on every rank, where each molecule would meet its own copies) is a ValueError on every rank."""
    every = comm.allgather(ids)
    first: Dict[str, int] = {}
    for rank, rank_ids in enumerate(every):
        for ident in rank_ids or []:
            if first.setdefault(ident, rank) != rank:
                raise ValueError(f"{name}: ID {ident!r} on ranks {first[ident]} and {rank}, expected each rank's own "
                                 "block of records (e.g. Fingerprints(fp.ids[a:b], fp.words[a:b], ...)), not the "
                                 "whole file on every rank")


def gram_over_ranks(A: object, B: object, options: Dict[str, Any], comm: MPI.Intracomm) -> SimpleNamespace:
    """The collective call of the compiled module: A, B and the options (kmini.gram's keyword arguments)."""
    check_comm(comm)
    return _kmini._gram_over(A, B, options, comm)


def check_write(write: Optional[Mapping[str, Union[str, os.PathLike[str]]]], dense: bool, top_k: object,
                pairs_min: object) -> Dict[str, str]:
    """write= as {output: path}, checked as the CLI checks its gram.write.* keys before anything is computed."""
    if write is None:
        return {}
    if not hasattr(write, "items") or isinstance(write, (str, bytes)):
        raise TypeError(f"write: got {type(write).__name__}, expected a mapping such as {{'C': 'c.npy'}}")
    files = {}
    for key, path in write.items():
        if not isinstance(key, str):
            raise TypeError(f"write: got key {key!r}, expected an output's name such as 'C'")
        if not isinstance(path, (str, os.PathLike)) or isinstance(os.fspath(path), bytes):
            raise TypeError(f"write: {key}: got {type(path).__name__}, expected a path (str or os.PathLike)")
        files[key] = os.fspath(path)
    _kmini._check_write(list(files.items()))  # names, suffixes, the files themselves: the CLI's checks
    if "C" in files and dense is not True:
        raise ValueError("write: 'C' needs dense=True (C is written from the dense result)")
    if "pairs" in files and pairs_min is None:
        raise ValueError("write: 'pairs' needs pairs_min")
    if "top_k" in files and top_k is None:
        raise ValueError("write: 'top_k' needs top_k")
    return files


def agree_write(write: Optional[Mapping[str, Union[str, os.PathLike[str]]]], dense: bool, top_k: object,
                pairs_min: object, comm: Optional[MPI.Intracomm]) -> Dict[str, str]:
    """check_write, and with comm agreed by every rank before anything is
    computed: a rank's refusal is its own error there and a RuntimeError naming
    it on the others; the ranks write the files together, so write= is the
    same on every rank."""
    try:
        files, error = check_write(write, dense, top_k, pairs_min), None
    except (TypeError, ValueError) as e:
        files, error = {}, e
    if comm is None:
        if error is not None:
            raise error
        return files
    every = comm.allgather(None if error is not None else files)  # None: that rank refused
    if error is not None:
        raise error
    if None in every:
        raise RuntimeError(f"gram: rank {every.index(None)} refused its arguments (see its error)")
    for q, other in enumerate(every):
        if other != every[0]:
            raise ValueError(f"write: rank {q} passed {reprlib.repr(other or None)}, rank 0 "
                             f"{reprlib.repr(every[0] or None)}, expected the same on every rank")
    return files


def write_outputs(res: SimpleNamespace, files: Dict[str, str], comm: Optional[MPI.Intracomm], triangle: str) -> None:
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
    if "summary" in files:
        _kmini._write_text(files["summary"], res.summary, comm)
    if "top_k" in files:
        k = res.top_k.shape[1]
        _kmini._write_npy(files["top_k"], res.top_k, row0 * k, [total_rows, k], comm)
