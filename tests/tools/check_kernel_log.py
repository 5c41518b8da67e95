#!/usr/bin/env python3
"""Runs kmini with the kernel logger (a Kokkos Tools library, kernel_logger.cpp)
loaded through --kokkos-tools-libs= and checks README's promise "every kernel is
named and every phase is a region":

 - the library was loaded and finalised (the flag reached this Kokkos);
 - regions nest (every pop has its push, none left open);
 - every kernel is named kmini::<kernel>::<what> and runs inside its kernel's
   region kmini::<kernel> and inside one of that kernel's phase regions
   kmini::<kernel>::<phase>;
 - the only other kernels are Kokkos' own (EXEMPT below: View initialisation and
   destruction, deep_copy's fill and copy kernels, Kokkos 4's parallel host-space copy) and Kokkos Kernels' (inside a
   KokkosBlas/KokkosKernels region, e.g. gram's gemm check and baseline), and
   they too run inside a kmini::<kernel> region;
 - every region named with --expect appears.

usage: check_kernel_log.py KMINI TOOL_LIBRARY WORK_DIR [--expect REGION,...] [-- KMINI_ARGS...]
"""
import os
import re
import subprocess
import sys

# Kernels launched by Kokkos itself, with kmini's View labels inside the brackets.
EXEMPT = [
    re.compile(r"^Kokkos::View::(initialization|destruction) \[.*\]( via memset)?$"),
    re.compile(r"^Kokkos::View(Fill|Copy)-"),        # deep_copy(view, value) / (view, view)
    re.compile(r"^Kokkos::Impl::host_space_deepcopy_"),  # Kokkos 4: large host-space deep_copy
    re.compile(r"^Kokkos::Impl::(ViewFill|ViewCopy|ViewValueFunctor)"),
    re.compile(r"^Kokkos(Blas|Kernels|Sparse)::"),  # Kokkos Kernels' own kernels
]
# Regions pushed by libraries kmini calls (inside kmini's own regions).
LIBRARY_REGION = re.compile(r"^Kokkos(Blas|Kernels|Sparse)?::")
KMINI_NAME = re.compile(r"^kmini::([A-Za-z0-9_]+)::\S")


def main(argv):
    if len(argv) < 4:
        print(__doc__)
        return 2
    kmini, tool, work = argv[1], os.path.abspath(argv[2]), os.path.abspath(argv[3])
    rest = argv[4:]
    expect = []
    if rest[:1] == ["--expect"]:
        expect = [r for r in rest[1].split(",") if r]
        rest = rest[2:]
    if rest[:1] == ["--"]:
        rest = rest[1:]
    os.makedirs(work, exist_ok=True)
    log = os.path.join(work, "kernels.log")
    if os.path.exists(log):
        os.remove(log)
    env = dict(os.environ, KMINI_KERNEL_LOG=log)
    for var in ("KOKKOS_TOOLS_LIBS", "KOKKOS_PROFILE_LIBRARY"):
        env.pop(var, None)
    cmd = [kmini] + rest + ["--out", os.path.join(work, "out"), "--kokkos-tools-libs=" + tool]
    run = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    print("command:", " ".join(cmd))
    if run.returncode != 0:
        print(run.stdout)
        print(f"FAIL: kmini exited {run.returncode}")
        return 1
    if not os.path.exists(log):
        print(run.stdout)
        print(f"FAIL: {log} was not written: --kokkos-tools-libs did not load the tool")
        return 1
    problems = check(open(log, encoding="utf-8").read().splitlines(), expect)
    for p in problems[:40]:
        print("FAIL:", p)
    if len(problems) > 40:
        print(f"... and {len(problems) - 40} more")
    return 1 if problems else 0


def check(lines, expect):
    problems = []
    stack, regions, kernels = [], set(), 0
    seen = set()  # (kernel, region stack) reported once
    if not lines or lines[0] != "init":
        problems.append("the log does not start with 'init'")
    if not lines or lines[-1] != "finalize":
        problems.append("the log does not end with 'finalize' (Kokkos was not finalised with the tool)")
    for number, line in enumerate(lines, 1):
        event, _, name = line.partition(" ")
        if event == "push":
            regions.add(name)
            in_kmini = any(r.startswith("kmini::") for r in stack)
            if not name.startswith("kmini::") and not (in_kmini and LIBRARY_REGION.match(name)):
                problems.append(f"line {number}: region '{name}' is neither kmini::... nor a library's inside one")
            elif name.startswith("kmini::") and not stack and name.count("::") != 1:
                problems.append(f"line {number}: top-level region '{name}' is not a kernel region kmini::<kernel>")
            stack.append(name)
        elif event == "pop":
            if not stack:
                problems.append(f"line {number}: pop without a region")
            else:
                stack.pop()
        elif event in ("for", "reduce", "scan"):
            kernels += 1
            where = "/".join(stack) or "(no region)"
            key = (name, where)
            if key in seen:
                continue
            seen.add(key)
            top = stack[0] if stack else ""
            m = KMINI_NAME.match(name)
            if m:
                own = "kmini::" + m.group(1)
                kmini_regions = [r for r in stack if r.startswith("kmini::")]
                if top != own:
                    problems.append(f"kernel '{name}' runs in '{where}', not inside its kernel's region '{own}'")
                elif not kmini_regions or not kmini_regions[-1].startswith(own + "::"):
                    problems.append(f"kernel '{name}' runs in '{where}': in no phase region {own}::<phase>")
            elif any(p.match(name) for p in EXEMPT):
                if not (top.startswith("kmini::") and top.count("::") == 1):
                    problems.append(f"Kokkos' kernel '{name}' runs in '{where}', outside every kmini::<kernel> region")
            else:
                problems.append(f"kernel '{name}' ({event}) in '{where}' is not named kmini::<kernel>::<what>")
        elif event not in ("init", "finalize"):
            problems.append(f"line {number}: unexpected event '{line}'")
    if stack:
        problems.append(f"regions left open at the end: {stack}")
    if kernels == 0:
        problems.append("no kernel was recorded")
    for r in expect:
        if r not in regions:
            problems.append(f"expected region '{r}' never appeared (phases seen: {sorted(regions)})")
    print(f"{len(lines)} events, {kernels} kernel launches, {len(regions)} regions")
    return problems


if __name__ == "__main__":
    sys.exit(main(sys.argv))
