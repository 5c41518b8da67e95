#!/usr/bin/python3
"""Writes the numpy reference files for kmini's structured .npy output (run
with a python that has numpy; the committed files came from numpy 1.24.2):
  pairs_f4_3.npy, pairs_i4_0.npy, topk_f4_2x3.npy  small structured arrays;
  numpy_headers.txt  one line per (element type, shape): the header numpy's
                     np.save writes, in hex (checked against npy::make_header).
Usage: make_structured.py [DIR] (default: this script's folder)."""
import io
import os
import sys

import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))


def pairs_dtype(value):
    return np.dtype([("i", "<i8"), ("j", "<i8"), ("value", value)])


def topk_dtype(value):
    return np.dtype([("j", "<i8"), ("value", value)])


p = np.zeros(3, pairs_dtype("<f4"))
p["i"] = [0, 0, 2]
p["j"] = [1, 5, 3]
p["value"] = [0.5, 0.25, 1.0]
np.save(os.path.join(out, "pairs_f4_3.npy"), p)
np.save(os.path.join(out, "pairs_i4_0.npy"), np.zeros(0, pairs_dtype("<i4")))
t = np.zeros((2, 3), topk_dtype("<f4"))
t["j"] = [[4, 2, -1], [0, 1, 3]]
t["value"] = [[0.75, 0.5, 0.0], [1.0, 0.125, 0.0]]
np.save(os.path.join(out, "topk_f4_2x3.npy"), t)

# Headers: element type as "f8" or "i:i8,j:i8,value:f4", shape as "3x4" ("" for a scalar).
types = {
    "f8": np.dtype("<f8"),
    "i4": np.dtype("<i4"),
    "u1": np.dtype("|u1"),
    "i:i8,j:i8,value:f4": pairs_dtype("<f4"),
    "i:i8,j:i8,value:i4": pairs_dtype("<i4"),
    "j:i8,value:f4": topk_dtype("<f4"),
    "j:i8,value:i4": topk_dtype("<i4"),
}
shapes = [(), (0,), (1,), (9,), (10,), (123456789,), (10**12,), (10**18,), (3, 4), (100000, 16),
          (1, 10**11), (12, 10**12), (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13)]  # (1, 10**11): j,value aligned
with open(os.path.join(out, "numpy_headers.txt"), "w") as f:
    for name, dt in types.items():
        for shape in shapes:
            d = {"descr": np.lib.format.dtype_to_descr(dt), "fortran_order": False, "shape": shape}
            b = io.BytesIO()
            np.lib.format._write_array_header(b, d, None)  # what np.save writes before the data
            f.write("%s %s %s\n" % (name, "x".join(str(s) for s in shape) or "-", b.getvalue().hex()))
