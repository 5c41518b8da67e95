#!/usr/bin/env python3
"""Finds, in CUDA binaries, the extended-lambda pairs that can jump to address 0.

nvcc turns a __host__ __device__ lambda (Kokkos' KOKKOS_LAMBDA) into an
__nv_hdl_wrapper_t whose copy constructor, destructor and call go through
function pointers kept in __nv_hdl_helper, which nvcc puts in an anonymous
namespace: one helper per translation unit, set when that unit constructs the
wrapper. The wrapper's out-of-line members are ordinary inline functions,
merged across units by the linker. A lambda in a header function that two
units instantiate therefore has two helpers, and a unit that calls the merged
member reads the other unit's helper, unset until that unit has run the
lambda: a call to address 0. This crashed
unit.cuda.Gram_SummaryOfTwoInputsCoversEveryElementOnce (the destructor of
summarise_slice's lambda, taken from test_gram's unit). The same bug is
reported by ArborX (PR 1297), IPPL (PR 564) and cuCollections (PR 412); kmini
keeps every kernel of a header in a functor (tests/lint/check_header_lambdas.sh).

Usage: check_lambda_wrappers.py BINARY...   (unstripped ELF files; nm -C reads them)
       check_lambda_wrappers.py --nm FILE... (listings of `nm -C --defined-only`)
Prints each lambda whose helper is in two or more units: its enclosing
function, its number, the count of units and the wrapper's merged members.
Exit 0: none; 1: some; 2: a file without symbols or unreadable.
tests/data/cuda_lambda/ reproduces the crash on a CPU (nvcc, no GPU needed).
"""
import collections
import re
import subprocess
import sys

TAG = "__nv_dl_tag<"
HELPER = "(anonymous namespace)::__nv_hdl_helper<"
WRAPPER = "__nv_hdl_wrapper_t<"
MEMBERS = ("::~__nv_hdl_wrapper_t(", "::__nv_hdl_wrapper_t(", "::operator()(")


def closing(text, start):
    """Index just past the '>' that closes the '<' at text[start]."""
    depth = 0
    for k in range(start, len(text)):
        if text[k] == "<":
            depth += 1
        elif text[k] == ">":
            depth -= 1
            if depth == 0:
                return k + 1
    return -1


def tag_of(name):
    at = name.find(TAG)
    if at < 0:
        return None
    end = closing(name, at + len(TAG) - 1)
    return name[at:end] if end > 0 else None


def describe(tag):
    """'kmini::gram::summarise_slice, lambda 1' from the tag's function and index."""
    # &(R f<...>(...)) for a template, &f for a plain function
    fn = re.search(r"&\((?:[^&]*? )?((?:(?:\w+|\(anonymous namespace\))::)*~?\w+)[<(]", tag) or re.search(
        r"&((?:(?:\w+|\(anonymous namespace\))::)*~?\w+),", tag)
    idx = re.search(r", (\d+)u>$", tag)
    return "%s, lambda %s" % (fn.group(1) if fn else tag[:120], idx.group(1) if idx else "?")


def hazards(lines):
    """Lambdas whose helper exists in two or more units: {tag: (copies, merged members)}.

    Any merged function that uses the wrapper can read the wrong unit's helper:
    its out-of-line members, and as well every template instantiated on the
    wrapper type that the compiler did not inline (Kokkos' ParallelFor<F> and
    ParallelReduce<F> among them), so a second copy is the hazard itself."""
    helpers = collections.defaultdict(set)  # (tag, fp_ variable) -> its addresses, one per unit
    members = collections.defaultdict(set)  # tag -> the wrapper's out-of-line members (reported)
    for line in lines:
        parts = line.rstrip("\n").split(" ", 2)
        if len(parts) != 3:
            continue
        address, _kind, name = parts
        if name.startswith(HELPER):
            tag = tag_of(name)
            field = name.rsplit("::", 1)[-1]
            if tag and field.startswith("fp_"):
                helpers[(tag, field)].add(address)
        elif name.startswith(WRAPPER):
            end = closing(name, len(WRAPPER) - 1)
            rest = name[end:] if end > 0 else ""
            tag = tag_of(name)
            for m in MEMBERS:
                if tag and rest.startswith(m):
                    members[tag].add(m.strip(":("))
    found = {}
    for (tag, _field), addresses in helpers.items():
        if len(addresses) > 1:
            units = max(found.get(tag, (0, None))[0], len(addresses))
            found[tag] = (units, members.get(tag, set()))
    return found


def listing(path, from_nm_file):
    if from_nm_file:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        if not lines:
            raise OSError("an empty listing")
        return lines
    run = subprocess.run(["nm", "-C", "--defined-only", path], capture_output=True, text=True)
    if run.returncode != 0 or not run.stdout.strip():
        raise OSError((run.stderr.strip() or "no symbols").splitlines()[0])
    return run.stdout.splitlines()


def main(argv):
    from_nm_file = argv[:1] == ["--nm"]
    paths = argv[1:] if from_nm_file else argv
    if not paths:
        print("usage: check_lambda_wrappers.py BINARY... | --nm NM_LISTING...")
        return 2
    status = 0
    for path in paths:
        try:
            found = hazards(listing(path, from_nm_file))
        except OSError as e:
            print("check_lambda_wrappers: %s: cannot read its symbols (%s); an unstripped binary is needed" % (path, e))
            return 2
        for tag, (copies, members) in sorted(found.items(), key=lambda kv: describe(kv[0])):
            print("check_lambda_wrappers: %s: %s: helpers in %d units%s: make it a functor" %
                  (path, describe(tag), copies, "; merged " + ", ".join(sorted(members)) if members else ""))
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
