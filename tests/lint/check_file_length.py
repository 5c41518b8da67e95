#!/usr/bin/env python3
"""Every C++ source under SRC_DIR (.cpp and .hpp files) is at most MAX lines long: past that, a
file is split along a real seam (a kernel family, a phase, the printing apart from the plan).

Usage: check_file_length.py SRC_DIR [--max 500]
       check_file_length.py --self-test DATA_DIR
Prints `file: N lines, expected at most MAX` for each longer file; exit 1 if any, 0 otherwise. The
self test checks that the longest file of DATA_DIR is reported at one line less than its length
and not at its length (exit 1 otherwise)."""
import argparse
import sys
from pathlib import Path

SUFFIXES = (".cpp", ".hpp")


def sources(root):
    return sorted(p for p in Path(root).rglob("*") if p.suffix in SUFFIXES and p.is_file())


def line_count(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return sum(1 for _ in f)


def too_long(root, most):
    """(path relative to root, lines) of every source longer than `most` lines."""
    return [(p.relative_to(root), n) for p in sources(root) if (n := line_count(p)) > most]


def self_test(data):
    longest = max(sources(data), key=line_count, default=None)
    if longest is None:
        print(f"check_file_length: no source in {data}")
        return 1
    n = line_count(longest)
    below = too_long(data, n - 1)
    at = too_long(data, n)
    if (longest.relative_to(data), n) not in below or at:
        print(f"check_file_length: self test failed on {longest} ({n} lines): at {n - 1}: {below}; at {n}: {at}")
        return 1
    print(f"check_file_length: self test passed ({longest.name}, {n} lines)")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", nargs="?")
    ap.add_argument("--max", type=int, default=500)
    ap.add_argument("--self-test", metavar="DATA_DIR")
    args = ap.parse_args()
    if args.self_test:
        return self_test(Path(args.self_test))
    if not args.src:
        ap.error("SRC_DIR or --self-test DATA_DIR")
    root = Path(args.src)
    long_files = too_long(root, args.max)
    for path, n in long_files:
        print(f"{root.name}/{path}: {n} lines, expected at most {args.max} (split it along a real seam)")
    print(f"check_file_length: {len(sources(root))} files checked, {len(long_files)} above {args.max} lines")
    return 1 if long_files else 0


if __name__ == "__main__":
    sys.exit(main())
