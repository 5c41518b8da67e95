#!/usr/bin/env python3
"""The wgmma probe (benchmarks/wgmma_probe/wgmma_probe.cu) and gram's wgmma engine
(src/gram/impl/gram_wgmma_engine.cu) as nvcc builds them for sm_90a.

Where nvcc is found (NVCC, PATH, /usr/local/cuda/bin; else exit 77, skipped,
saying so), compiles both with -gencode=arch=compute_90a,code=sm_90a and
ptxas -v, as the build does, and checks what needs no GPU:
  - ptxas compiled every kernel for sm_90a: the probe's three wgmma kernels
    (N = 256, 128, 8) and its mma.sync kernel, the engine's tile kernel and its
    probe (N = 128); none with spills or a stack frame; the engine's tile
    kernel in at most 128 registers (two blocks of 256 threads an SM); and no
    note that ptxas serialized the wgmma instructions (which it does when it
    cannot keep them asynchronous, at a cost in rate);
  - where cuobjdump is found beside nvcc or on PATH: the SASS of each wgmma
    kernel has a warpgroup MMA instruction (...GMMA...) and the mma.sync
    kernel a warp MMA (...MMA...); without cuobjdump this part is said to be
    skipped;
  - the probe refuses bad arguments with exit 2 before touching CUDA.
Usage: check_wgmma_probe.py SOURCE_DIR WORKDIR"""
import os
import re
import shutil
import subprocess
import sys

src, work = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
nvcc = os.environ.get("NVCC") or shutil.which("nvcc") or (
    "/usr/local/cuda/bin/nvcc" if os.access("/usr/local/cuda/bin/nvcc", os.X_OK) else None)
if not nvcc:
    print("no nvcc (NVCC, PATH, /usr/local/cuda/bin): skipped")
    sys.exit(77)
cuobjdump = shutil.which("cuobjdump") or next(
    (p for p in [os.path.join(os.path.dirname(nvcc), "cuobjdump")] if os.access(p, os.X_OK)), None)
failures = []


def compile_and_check(name, source, out, extra, wanted, max_registers):
    """nvcc for sm_90a with ptxas -v; `wanted`: entry-function name parts -> what they are."""
    cmd = [nvcc, "-std=c++17", "-O3", "-gencode=arch=compute_90a,code=sm_90a", "-Xptxas", "-v",
           "-I" + os.path.join(src, "src"), *extra, os.path.join(src, source), "-o", out]
    b = subprocess.run(cmd, capture_output=True, text=True)
    log = b.stdout + b.stderr
    with open(os.path.join(work, name + ".ptxas.txt"), "w") as f:
        f.write(log)
    if b.returncode != 0 and re.search(r"Unsupported gpu architecture 'compute_90a'", log):
        print("this nvcc has no sm_90a (CUDA 12 or newer has): skipped")
        sys.exit(77)
    if b.returncode != 0:
        print(log[-3000:])
        sys.exit("nvcc failed (exit %d): %s" % (b.returncode, " ".join(cmd)))
    # ptxas -v: one block per entry function, "Compiling entry function 'NAME' for 'sm_90a'" first.
    kernels, fn = {}, None
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '([^']+)' for '(sm_\w+)'", line)
        if m:
            fn = m.group(1)
            kernels[fn] = {"arch": m.group(2), "lines": []}
        elif fn:
            kernels[fn]["lines"].append(line)
    for key, what in wanted.items():
        found = [k for k in kernels if key in k]
        if len(found) != 1:
            failures.append("%s: %d entry functions named like %s in ptxas -v" % (what, len(found), key))
            continue
        info = kernels[found[0]]
        text = "\n".join(info["lines"])
        if info["arch"] != "sm_90a":
            failures.append("%s: compiled for %s" % (what, info["arch"]))
        if "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" not in text:
            failures.append("%s: a stack frame or spills: %s" % (what, text))
        regs = re.search(r"Used (\d+) registers", text)
        print("%s: %s registers, no spills" % (what, regs.group(1) if regs else "?"))
        if what in max_registers and (not regs or int(regs.group(1)) > max_registers[what]):
            failures.append("%s: more than %d registers" % (what, max_registers[what]))
    serial = [l for l in log.splitlines() if re.search(r"wgmma", l, re.I) and re.search(r"serializ", l, re.I)]
    if serial:
        failures.append("%s: ptxas serialized wgmma: %s" % (name, " | ".join(serial)))
    check_sass(out, wanted)


def check_sass(binary, wanted):
    """Each kernel's MMA instructions in the SASS, where cuobjdump is there."""
    if not cuobjdump:
        print("no cuobjdump: the SASS part skipped")
        return
    d = subprocess.run([cuobjdump, "--dump-sass", binary], capture_output=True, text=True)
    if d.returncode != 0:
        failures.append("cuobjdump --dump-sass failed: " + d.stderr.strip()[-400:])
        return
    sass, fn = {}, None
    for line in d.stdout.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            fn = m.group(1)
            sass[fn] = []
        elif fn:
            sass[fn].append(line)
    for key, what in wanted.items():
        body = "\n".join(next((v for k, v in sass.items() if key in k), []))
        ops = sorted(set(re.findall(r"\b([A-Z0-9]*MMA(?:\.[A-Za-z0-9_]+)*)", body)))
        print("%s SASS: %s" % (what, ", ".join(ops) or "no MMA instruction"))
        want = "MMA" if what == "mma.sync" else "GMMA"
        if not any(want in o for o in ops):
            failures.append("%s: no %s instruction in its SASS" % (what, want))


exe = os.path.join(work, "kmini_wgmma_probe")
compile_and_check("probe", "benchmarks/wgmma_probe/wgmma_probe.cu", exe, [],
                  {"wgmma_kernelILi256ELi1E": "wgmma n256", "wgmma_kernelILi128ELi1E": "wgmma n128",
                   "wgmma_kernelILi8ELi8E": "wgmma n8", "mma_sync_kernel": "mma.sync"}, {})
compile_and_check("engine", "src/gram/impl/gram_wgmma_engine.cu", os.path.join(work, "gram_wgmma_engine.o"),
                  ["-Xcompiler", "-fPIC", "-c"],
                  {"wgmma_tiles": "engine tiles", "wgmma_kernelILi128ELi1E": "engine probe n128"},
                  {"engine tiles": 128})

for args in (["--bogus"], ["--seconds", "0"], ["--repeats", "x"], ["--json"]):
    r = subprocess.run([exe] + args, capture_output=True, text=True)
    if r.returncode != 2 or "usage" not in r.stderr:
        failures.append("%s: exit %d (expected 2 and a usage line): %s" % (args, r.returncode, r.stderr.strip()))

for f in failures:
    print("FAIL:", f)
print("wgmma probe and engine: %s" % ("compiled for sm_90a, checks passed" if not failures else
                                      "%d failures" % len(failures)))
sys.exit(1 if failures else 0)
