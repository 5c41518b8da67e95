#!/usr/bin/env python3
"""The wgmma probe (benchmarks/wgmma_probe/wgmma_probe.cu) as nvcc builds it for sm_90a.

Where nvcc is found (NVCC, PATH, /usr/local/cuda/bin; else exit 77, skipped,
saying so), compiles the probe with -gencode=arch=compute_90a,code=sm_90a and
ptxas -v and checks what needs no GPU:
  - ptxas compiled the three wgmma kernels (N = 256, 128, 8) and the mma.sync
    kernel for sm_90a, none with spills or a stack frame, and printed no note
    that it serialized the wgmma instructions (which it does when it cannot
    keep them asynchronous, at a cost in rate);
  - where cuobjdump is found beside nvcc or on PATH: the SASS of each wgmma
    kernel has a warpgroup MMA instruction (...GMMA...) and the mma.sync
    kernel a warp MMA (...MMA...); without cuobjdump this part is said to be
    skipped;
  - the program refuses bad arguments with exit 2 before touching CUDA.
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
exe = os.path.join(work, "kmini_wgmma_probe")
cmd = [nvcc, "-std=c++17", "-O3", "-gencode=arch=compute_90a,code=sm_90a", "-Xptxas", "-v",
       os.path.join(src, "benchmarks/wgmma_probe/wgmma_probe.cu"), "-o", exe]
b = subprocess.run(cmd, capture_output=True, text=True)
log = b.stdout + b.stderr
with open(os.path.join(work, "ptxas.txt"), "w") as f:
    f.write(log)
if b.returncode != 0 and re.search(r"Unsupported gpu architecture 'compute_90a'", log):
    print("this nvcc has no sm_90a (CUDA 12 or newer has): skipped")
    sys.exit(77)
failures = []
if b.returncode != 0:
    print(log[-3000:])
    sys.exit("nvcc failed (exit %d): %s" % (b.returncode, " ".join(cmd)))

# ptxas -v: one block per entry function, "Compiling entry function 'NAME' for 'sm_90a'" first.
kernels = {}
name = None
for line in log.splitlines():
    m = re.search(r"Compiling entry function '([^']+)' for '(sm_\w+)'", line)
    if m:
        name = m.group(1)
        kernels[name] = {"arch": m.group(2), "lines": []}
    elif name:
        kernels[name]["lines"].append(line)
wanted = {"wgmma_kernelILi256ELi1E": "wgmma n256", "wgmma_kernelILi128ELi1E": "wgmma n128",
          "wgmma_kernelILi8ELi8E": "wgmma n8", "mma_sync_kernel": "mma.sync"}
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
serial = [l for l in log.splitlines() if re.search(r"wgmma", l, re.I) and re.search(r"serializ", l, re.I)]
if serial:
    failures.append("ptxas serialized wgmma: " + " | ".join(serial))

# SASS, where cuobjdump is there.
cuobjdump = shutil.which("cuobjdump") or next(
    (p for p in [os.path.join(os.path.dirname(nvcc), "cuobjdump")] if os.access(p, os.X_OK)), None)
if not cuobjdump:
    print("no cuobjdump: the SASS part skipped")
else:
    d = subprocess.run([cuobjdump, "--dump-sass", exe], capture_output=True, text=True)
    if d.returncode != 0:
        failures.append("cuobjdump --dump-sass failed: " + d.stderr.strip()[-400:])
    else:
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
            want = "GMMA" if what.startswith("wgmma") else "MMA"
            if not any(want in o for o in ops):
                failures.append("%s: no %s instruction in its SASS" % (what, want))

for args in (["--bogus"], ["--seconds", "0"], ["--repeats", "x"], ["--json"]):
    r = subprocess.run([exe] + args, capture_output=True, text=True)
    if r.returncode != 2 or "usage" not in r.stderr:
        failures.append("%s: exit %d (expected 2 and a usage line): %s" % (args, r.returncode, r.stderr.strip()))

for f in failures:
    print("FAIL:", f)
print("wgmma probe: %s" % ("compiled for sm_90a, checks passed" if not failures else "%d failures" % len(failures)))
sys.exit(1 if failures else 0)
