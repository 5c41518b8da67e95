"""The types of kmini's arguments: each choice as a Literal type, numbers, arrays.

The options of each choice are the kernel's declaration's (the deck key's
options in src/<kernel>/<kernel>_declaration.cpp, which the compiled module
checks every call against); tests/python/test_kmini_types.py reads them from
the compiled module and fails where a Literal type here says otherwise.
"""
from __future__ import annotations

from typing import Any, Dict, Literal, Protocol, Union

import numpy as np
import numpy.typing as npt

# gram
Similarity = Literal["counts", "jaccard", "dice", "cosine", "tversky", "tanimoto"]  # gram.similarity (tanimoto: jaccard)
Triangle = Literal["full", "upper"]  # gram.triangle
Distribution = Literal["replicated", "ring", "auto"]  # gram.distribution
RingSchedule = Literal["auto", "circulant", "slices"]  # gram.ring_schedule
# rk4
Coupling = Literal["per_step", "per_stage"]  # rk4.coupling
Method = Literal["auto", "affine", "stages"]  # rk4.method
Precision = Literal["single", "double"]  # rk4.precision
# discount
Stores = Literal["auto", "regular", "streaming"]  # discount.stores
# A number key that also takes the word auto (rk4.g, gram.memory_budget, gram.row_slice).
Auto = Literal["auto"]

Integer = Union[int, np.integer[Any]]
Real = Union[int, float, np.integer[Any], np.floating[Any]]
Complex = Union[Real, complex, np.complexfloating[Any, Any]]
Size = Union[Real, str]  # bytes, or a size as the deck reads it: "512M", "1.5GiB"


class CudaArrayLike(Protocol):
    """An array in GPU memory (CuPy, Numba, PyTorch, kmini.DeviceArray): the CUDA array interface."""

    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]: ...


ArrayInput = Union[npt.ArrayLike, CudaArrayLike]  # a numpy array, what numpy converts, or a device array
