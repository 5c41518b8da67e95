"""The typed results of kmini's functions (as numpy's SVDResult): named
tuples, so fields read by name and a tuple unpacks as before."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, NamedTuple, Optional, Union

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from ._kmini import DeviceArray


class RK4Result(NamedTuple):
    """What kmini.rk4 returns: the fields after the last step and the coupling of every step.

    Attributes
    ----------
    F : numpy.ndarray or kmini.DeviceArray
        F after the last step: complex64 or complex128 (the precision), F0's shape; a device
        array for a device array F0.
    G : numpy.ndarray or kmini.DeviceArray
        The same for G.
    delta : numpy.ndarray
        delta[0 .. steps], complex128: the coupling of every step.
    """

    F: Union[npt.NDArray[np.complexfloating[Any, Any]], DeviceArray]
    G: Union[npt.NDArray[np.complexfloating[Any, Any]], DeviceArray]
    delta: npt.NDArray[np.complex128]


class GramResult(NamedTuple):
    """What kmini.gram returns; an output not asked for is None.

    Attributes
    ----------
    C : numpy.ndarray or kmini.DeviceArray or None
        With dense=True: int32 counts or float32 similarities, rows x targets (triangle='upper':
        the packed upper triangle); a device array for device inputs.
    top_k : numpy.ndarray or None
        With top_k: rows x k records (j int64, value), best first; a missing one has j = -1.
    pairs : numpy.ndarray or None
        With pairs_min: records (i int64, j int64, value) with value >= pairs_min.
    counts : numpy.ndarray or None
        With count_at_least: int64, the pairs at or above each threshold.
    row_counts : numpy.ndarray
        int32, the ones in each row of A (this rank's rows with comm=).
    slices : int
        The slices computed.
    distribution : {'replicated', 'ring'}
        The plan that ran.
    ring_schedule : {'slices', 'circulant'} or None
        With the ring: its schedule.
    summary : dict or None
        With write={'summary': ...}: the summary file's JSON.
    ids : list of str or None
        A given as Fingerprints (kmini.read_fps): the IDs of C's rows.
    target_ids : list of str or None
        ... and of its columns (B's, or A's again): top_k's and pairs' j.
    """

    C: Optional[Union[npt.NDArray[Union[np.int32, np.float32]], DeviceArray]]
    top_k: Optional[npt.NDArray[np.void]]
    pairs: Optional[npt.NDArray[np.void]]
    counts: Optional[npt.NDArray[np.int64]]
    row_counts: npt.NDArray[np.int32]
    slices: int
    distribution: str
    ring_schedule: Optional[str]
    summary: Optional[Dict[str, Any]]
    ids: Optional[List[str]] = None
    target_ids: Optional[List[str]] = None


class Fingerprints(NamedTuple):
    """What kmini.read_fps returns: an FPS file's records as kmini.gram takes them (A or B, no copy).

    Attributes
    ----------
    ids : list of str
        One per record, in the file's order (unique).
    words : numpy.ndarray
        uint64, records x ceil(num_bits / 64): bit k of a fingerprint in bit k % 64 of word k // 64.
    num_bits : int
        The fingerprints' width (#num_bits=, else 4 x the hex digits).
    type : str
        The header's #type= ('' when absent).
    software : str
        The header's #software= ('' when absent).
    """

    ids: List[str]
    words: npt.NDArray[np.uint64]
    num_bits: int
    type: str
    software: str


def gram_result(ns: Any, ids: Optional[List[str]] = None, target_ids: Optional[List[str]] = None) -> GramResult:
    """The compiled module's result (attributes; summary as JSON text) as a GramResult."""
    import json
    summary = json.loads(ns.summary) if ns.summary else None
    return GramResult(ns.C, ns.top_k, ns.pairs, ns.counts, ns.row_counts, ns.slices, ns.distribution,
                      ns.ring_schedule, summary, ids, target_ids)
