#!/usr/bin/env python3
"""scripts/gpu/check_lambda_wrappers.py against what it must find.

1. The symbols of the CUDA unit tests that crashed on an H200
   (tests/data/nm/unit_tests_cuda_h200.txt: the helper and wrapper-member
   symbols of three lambdas, from `nm -C` of that binary): summarise_slice's
   first lambda (whose merged destructor crashed) and rk4::local_sums' first
   lambda have helpers in several units; discount::fill_arange's has one.
   With the second unit's helpers removed, nothing is found; an empty listing
   is exit 2.
2. Where nvcc is found (NVCC, PATH, /usr/local/cuda/bin; else this part is
   said to be skipped): the two-unit reproducer of tests/data/cuda_lambda/,
   built as a lambda and as a functor and run on the CPU (no GPU needed). The
   lambda build must crash when only its second unit runs and must be
   flagged; the functor build must run and pass the check.
Usage: test_check_lambda_wrappers.py CHECKER NM_LISTING REPRODUCER_DIR WORKDIR"""
import os
import shutil
import signal
import subprocess
import sys

checker, listing, repro, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
failures = []


def check(paths, nm=False):
    r = subprocess.run([sys.executable, checker] + (["--nm"] if nm else []) + paths, capture_output=True, text=True)
    return r.returncode, sorted({o.split(": ")[2] for o in r.stdout.splitlines() if o.count(": ") >= 3})


def listed(lines, name):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.writelines(lines)
    return check([path], nm=True)


def expect(what, got, want):
    if got != want:
        failures.append("%s: got %r, expected %r" % (what, got, want))


# --- 1. the H200 binary's symbols -------------------------------------------------
lines = open(listing).readlines()
expect("H200 listing", listed(lines, "as_built.txt"),
       (1, ["kmini::gram::summarise_slice, lambda 1", "kmini::rk4::local_sums, lambda 1"]))
# Keep each lambda's helpers of its first unit only (the lowest address per variable).
first = {}
for l in lines:
    if "__nv_hdl_helper" in l:
        key = l.split(" ", 2)[2]
        first[key] = min(first.get(key, l), l, key=lambda x: int(x.split()[0], 16))
one_unit = [l for l in lines if "__nv_hdl_helper" not in l or first[l.split(" ", 2)[2]] == l]
expect("H200 listing, one unit's helpers", listed(one_unit, "one_unit.txt"), (0, []))
expect("empty listing: status", listed([], "empty.txt")[0], 2)

# --- 2. the reproducer, built with nvcc and run on the CPU ------------------------
nvcc = os.environ.get("NVCC") or shutil.which("nvcc") or (
    "/usr/local/cuda/bin/nvcc" if os.access("/usr/local/cuda/bin/nvcc", os.X_OK) else None)
if not nvcc:
    print("no nvcc: the reproducer part skipped (the listing part ran)")
else:
    units = [os.path.join(repro, "first_unit.cu"), os.path.join(repro, "second_unit.cu")]
    for kind, flags in (("lambda", []), ("functor", ["-DAS_FUNCTOR"])):
        exe = os.path.join(work, "repro_" + kind)
        b = subprocess.run([nvcc, "--extended-lambda", "-O2"] + flags + units + ["-o", exe],
                           capture_output=True, text=True)
        if b.returncode != 0:
            failures.append("nvcc %s: %s" % (kind, (b.stderr or b.stdout).strip()[-400:]))
            continue
        alone = subprocess.run([exe], capture_output=True).returncode
        both = subprocess.run([exe, "both"], capture_output=True).returncode
        found = check([exe])
        if kind == "lambda":
            expect("lambda, second unit alone: killed by SIGSEGV", alone, -signal.SIGSEGV)
            expect("lambda, first unit first", both, 0)
            expect("lambda: flagged", found, (1, ["run, lambda 1"]))
        else:
            expect("functor, second unit alone", alone, 0)
            expect("functor, both", both, 0)
            expect("functor: not flagged", found, (0, []))
    print("reproducer built with %s" % nvcc)

for f in failures:
    print("FAIL", f)
print("%d checks failed" % len(failures) if failures else "all checks passed")
sys.exit(1 if failures else 0)
