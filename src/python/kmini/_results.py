"""The typed results of kmini's functions (as numpy's SVDResult): named
tuples, so fields read by name and a tuple unpacks as before."""
from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional

import numpy as np
import numpy.typing as npt


class RK4Result(NamedTuple):
    """What kmini.rk4 returns: the fields after the last step and the coupling of every step."""

    F: Any  # ndarray (a device array for device input), complex, F0's shape
    G: Any  # the same for G
    delta: npt.NDArray[np.complexfloating]  # delta[0 .. steps], complex128


class GramResult(NamedTuple):
    """What kmini.gram returns; an output not asked for is None."""

    C: Optional[Any]  # ndarray (or device array) of int32 counts or float32 similarities; upper: packed
    top_k: Optional[npt.NDArray[np.void]]  # rows x k records (j int64, value), best first; missing: j = -1
    pairs: Optional[npt.NDArray[np.void]]  # records (i int64, j int64, value) with value >= pairs_min
    counts: Optional[npt.NDArray[np.int64]]  # pairs at or above each count_at_least threshold
    row_counts: npt.NDArray[np.int32]  # ones in each row of A (this rank's rows with comm=)
    slices: int  # slices computed
    distribution: str  # the plan that ran: 'replicated' or 'ring'
    ring_schedule: Optional[str]  # with the ring: 'slices' or 'circulant'
    summary: Optional[Dict[str, Any]]  # with write={'summary': ...}: the summary file's JSON
    ids: Optional[List[str]] = None  # A given as Fingerprints (kmini.read_fps): the IDs of C's rows
    target_ids: Optional[List[str]] = None  # ... and of its columns (B's, or A's again): top_k's and pairs' j


class Fingerprints(NamedTuple):
    """What kmini.read_fps returns: an FPS file's records as kmini.gram takes them (A or B, no copy)."""

    ids: List[str]  # one per record, in the file's order (unique)
    words: npt.NDArray[np.uint64]  # records x ceil(num_bits / 64): bit k of a fingerprint in bit k % 64 of word k // 64
    num_bits: int  # the fingerprints' width (#num_bits=, else 4 x the hex digits)
    type: str  # the header's #type= ('' when absent)
    software: str  # the header's #software= ('' when absent)


def gram_result(ns: Any, ids: Optional[List[str]] = None, target_ids: Optional[List[str]] = None) -> GramResult:
    """The compiled module's result (attributes; summary as JSON text) as a GramResult."""
    import json
    summary = json.loads(ns.summary) if ns.summary else None
    return GramResult(ns.C, ns.top_k, ns.pairs, ns.counts, ns.row_counts, ns.slices, ns.distribution,
                      ns.ring_schedule, summary, ids, target_ids)
