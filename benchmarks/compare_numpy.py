#!/usr/bin/python3
"""Runs one kmini kernel and the same problem in plain numpy, checks that they
agree and prints the speed ratio.

usage: benchmarks/compare_numpy.py KERNEL [options of benchmarks/compare_numpy_KERNEL.py]
       benchmarks/compare_numpy.py KERNEL --help

Each kernel's comparison lives in benchmarks/compare_numpy_<kernel>.py; this
dispatcher runs it with the same interpreter (one that has numpy).
"""
import os
import sys


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    kernels = sorted(f[len("compare_numpy_"):-3] for f in os.listdir(here)
                     if f.startswith("compare_numpy_") and f.endswith(".py"))
    if len(sys.argv) < 2 or sys.argv[1] not in kernels:
        sys.stderr.write(__doc__ + "\nkernels: " + ", ".join(kernels) + "\n")
        return 2
    script = os.path.join(here, "compare_numpy_%s.py" % sys.argv[1])
    os.execv(sys.executable, [sys.executable, script] + sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
