#!/usr/bin/python3
"""Writes the inputs of the gram sparse-output tests (committed; numpy 1.24.2):
  A_41x70_ties.npy  u1 41 x 70: density 0.3, rows 5 and 17 empty, rows 9 = 3
                    and 30 = 12 = 3 duplicated (ties in every similarity);
  B_23x70_u1.npy    u1 23 x 70: density 0.4, row 4 empty, row 7 = row 3 of A.
Usage: make_sparse_inputs.py [DIR] (default: this script's folder)."""
import os
import sys

import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(14)
a = (rng.random((41, 70)) < 0.3).astype(np.uint8)
a[5] = 0
a[17] = 0
a[9] = a[3]
a[12] = a[3]
a[30] = a[3]
b = (rng.random((23, 70)) < 0.4).astype(np.uint8)
b[4] = 0
b[7] = a[3]
np.save(os.path.join(out, "A_41x70_ties.npy"), a)
np.save(os.path.join(out, "B_23x70_u1.npy"), b)
