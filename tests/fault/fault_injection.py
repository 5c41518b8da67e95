#!/usr/bin/env python3
"""Fault injection against the real kmini binary: every scenario
injects a fault a batch job meets and checks what the user is promised.

  full_disk OUTPUT NP     a small tmpfs filled up (needs root to mount; else skipped, exit 77)
  fsize_limit OUTPUT      `ulimit -f` below the output's size (EFBIG; no root needed)
  signal SIG NP           SIGTERM/SIGINT sent the moment a temporary output file appears
  sigkill                 SIGKILL mid-write: what is left, and that it is recognisable
  ring_rank NP            gram.distribution: ring, SIGTERM to one rank (not mpirun) mid-ring
  ring_rank_circulant NP  the same with gram.ring_schedule: circulant (top-k, no file written mid-ring)
  long_name NP            a 230-character output name works; a 300-character one is exit 2
  read_only NP            outputs on a read-only file system: exit 2 before anything runs
  directory_in_the_way NP a directory where each output goes: exit 2 before anything runs

Promises checked: the exit status; exactly one `kmini: error:` line naming the
file and the OS error; the previous good file of that name unchanged
(byte-identical); no `*.kmini-tmp.*` file left behind (except after SIGKILL).
Only the standard library is used: any python3 runs it.
"""
import os
import re
import resource
import shutil
import signal
import subprocess
import tempfile
import sys
import time

SKIP = 77
KMINI = os.environ["KMINI"]
MPIEXEC = os.environ.get("MPIEXEC", "mpiexec").split(";")
WORK = os.environ["WORK"]
MARKER = ".kmini-tmp."

# Each output: the deck settings that write it (relative to --out) and its file name.
# Sizes are chosen so that each output is several hundred KiB: far above the free
# space left on the filled file system and above the file-size limit.
OUTPUTS = {
    "gram_C": (["--set", "run.kernels=[gram]", "--set", "gram.A={random: {rows: 600, cols: 640, density: 0.2, seed: 1}}",
                "--set", "gram.row_slice=256", "--set", "gram.write.C=C.npy"], "C.npy"),
    # the top-k file: each rank writes its rows with independent MPI-IO writes
    "gram_top_k": (["--set", "run.kernels=[gram]", "--set",
                    "gram.A={random: {rows: 3000, cols: 640, density: 0.2, seed: 1}}", "--set", "gram.row_slice=256",
                    "--set", "gram.write.top_k={path: top.npy, k: 16}"], "top.npy"),
    # the pairs file: records streamed slice by slice, each rank's in place (about 1 MB here)
    "gram_pairs": (["--set", "run.kernels=[gram]", "--set",
                    "gram.A={random: {rows: 3000, cols: 640, density: 0.2, seed: 1}}", "--set", "gram.row_slice=256",
                    "--set", "gram.similarity=jaccard", "--set", "gram.write.pairs={path: pairs.npy, min: 0.16}"],
                   "pairs.npy"),
    "rk4_F": (["--set", "run.kernels=[rk4]", "--set", "rk4.n=300", "--set", "rk4.steps=4", "--set", "rk4.write.F=F.npy"],
              "F.npy"),
    "rk4_checkpoint": (["--set", "run.kernels=[rk4]", "--set", "rk4.n=300", "--set", "rk4.steps=4",
                        "--set", "rk4.checkpoint={every: 4, path: ckpt.npy}"], "ckpt.npy"),
    "rk4_delta_csv": (["--set", "run.kernels=[rk4]", "--set", "rk4.n=8", "--set", "rk4.steps=6000",
                       "--set", "rk4.write.delta=delta.csv"], "delta.csv"),
    "discount_cv": (["--set", "run.kernels=[discount]", "--set", "discount.dates=20", "--set", "discount.ids=1000",
                     "--set", "discount.terms=5", "--set", "discount.write.cv=cv.npy"], "cv.npy"),
    "results_json": (["--set", "run.kernels=[stream]", "--set", "stream.n=1000", "--set", "stream.repeat=1"],
                     "results.json"),
}


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def launcher(np):
    if np <= 1:
        return [KMINI]
    return MPIEXEC[:1] + ["-n", str(np)] + [f for f in MPIEXEC[1:] if f] + [KMINI]


def run(args, np=1, limit_bytes=None, timeout=300):
    env = dict(os.environ)
    # A fresh TMPDIR per run (under the test's private one): a singleton's orted
    # outlives kmini for a moment, and a next run creating its session directory
    # at the same path can get "PMIX ERROR: NO-PERMISSIONS" on stderr.
    env["TMPDIR"] = tempfile.mkdtemp(prefix="run.", dir=os.environ.get("TMPDIR"))
    if limit_bytes is not None:
        # PMIx's shared-memory data store (a file in TMPDIR) would hit the limit
        # inside MPI_Init; its hash store keeps the limit on kmini's own files.
        env["PMIX_MCA_gds"] = "hash"

    def preexec():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    p = subprocess.run(launcher(np) + args, capture_output=True, text=True, timeout=timeout, env=env,
                       preexec_fn=preexec if limit_bytes is not None else None)
    print(f"$ {' '.join(launcher(np) + args)}\n  exit {p.returncode}\n  stderr: {p.stderr.strip()[-2000:]}")
    return p


def leftovers(directory):
    found = []
    for root, _, files in os.walk(directory):
        found += [os.path.join(root, f) for f in files if MARKER in f]
    return found


def read(path):
    with open(path, "rb") as f:
        return f.read()


def whole_npy(path):
    """True when path is a complete .npy file: its size is exactly header + data."""
    data = read(path)
    if data[:6] != b"\x93NUMPY":
        return False
    major = data[6]
    hlen = int.from_bytes(data[8:10], "little") if major == 1 else int.from_bytes(data[8:12], "little")
    start = (10 if major == 1 else 12)
    header = data[start:start + hlen].decode("latin1")
    shape = [int(x) for x in re.search(r"'shape': \(([^)]*)\)", header).group(1).replace(",", " ").split()]
    item = int(re.search(r"'descr': '[<|>]?[a-z](\d+)'", header).group(1))
    count = 1
    for d in shape:
        count *= d
    return len(data) == start + hlen + count * item


def error_lines(stderr):
    # Anywhere on a line: mpiexec merges the ranks' stderr, and another rank's
    # partial line (Kokkos' OpenMP oversubscription warning ends without a
    # newline) can precede rank 0's message.
    return re.findall(r"kmini: error:[^\n]*", stderr)


def expect_clean_failure(p, status, must_contain, directory, previous_path, previous_bytes):
    check(p.returncode == status, f"expected exit {status}, got {p.returncode}")
    lines = error_lines(p.stderr)
    check(len(lines) == 1, f"expected exactly one 'kmini: error:' line, got {len(lines)}")
    for text in must_contain:
        check(text in lines[0], f"the error line does not name {text!r}: {lines[0]!r}")
    if previous_path:
        check(os.path.exists(previous_path), f"the previous {previous_path} is gone")
        check(read(previous_path) == previous_bytes, f"the previous {previous_path} was changed")
    left = leftovers(directory)
    check(not left, f"temporary files left behind: {left}")


def fresh(directory):
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)


def mount_tmpfs(name, options):
    """Mounts a fresh tmpfs under WORK; None when that is not possible (not root)."""
    mnt = os.path.join(WORK, name)
    os.makedirs(mnt, exist_ok=True)
    subprocess.run(["umount", mnt], capture_output=True)
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", mnt],
                                           capture_output=True).returncode != 0:
        print("skipped: mounting a tmpfs needs root")
        return None
    return mnt


# ----------------------------------------------------------------- scenarios --

def full_disk(output, np):
    args, name = OUTPUTS[output]
    mnt = mount_tmpfs(f"full_disk.{output}.np{np}", "size=8m")
    if mnt is None:
        return SKIP
    try:
        out = os.path.join(mnt, "out")
        p = run(args + ["--out", out], np)
        check(p.returncode == 0, f"the good run failed: exit {p.returncode}")
        target = os.path.join(out, name)
        good = read(target)
        # Fill the file system: what is left is far below the output's size.
        fd = os.open(os.path.join(mnt, "filler"), os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096) > 0:
                pass
        except OSError:
            pass
        os.close(fd)
        st = os.statvfs(mnt)
        print(f"free after filling: {st.f_bavail * st.f_frsize} bytes")
        p = run(args + ["--set", "run.seed=777", "--out", out], np)
        expect_clean_failure(p, 1, [name, "No space left on device"], mnt, target, good)
    finally:
        subprocess.run(["umount", "-l", mnt], capture_output=True)
    return 0


def fsize_limit(output):
    args, name = OUTPUTS[output]
    out = os.path.join(WORK, f"fsize_limit.{output}")
    fresh(out)
    p = run(args + ["--out", out])
    check(p.returncode == 0, f"the good run failed: exit {p.returncode}")
    target = os.path.join(out, name)
    good = read(target)
    limit = min(len(good) // 2, 256 * 1024) if output != "results_json" else 64
    p = run(args + ["--set", "run.seed=777", "--out", out], limit_bytes=limit)
    expect_clean_failure(p, 1, [name, "File too large"], out, target, good)
    return 0


# A run that spends most of its time writing: checkpoints of a 1024 x 1024
# double field (32 MiB) every step.
SIGNAL_ARGS = ["--set", "run.kernels=[rk4]", "--set", "run.verify=false", "--set", "rk4.n=1024",
               "--set", "rk4.precision=double", "--set", "rk4.steps=40",
               "--set", "rk4.checkpoint={every: 1, path: ckpt.npy}"]


def start(args, np):
    return subprocess.Popen(launcher(np) + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def wait_for_temporary(directory, proc, seconds=120):
    """Waits until a temporary output file with data in it exists (an empty
    one may be the probe of the output checks, removed at once)."""
    deadline = time.time() + seconds
    while time.time() < deadline and proc.poll() is None:
        for f in leftovers(directory):
            try:
                if os.path.getsize(f) > 0:
                    return True
            except OSError:
                pass
        time.sleep(0.001)
    return False


def signal_mid_write(signame, np):
    sig = getattr(signal, signame)
    out = os.path.join(WORK, f"signal.{signame}.np{np}")
    fresh(out)
    p = run(SIGNAL_ARGS[:-4] + ["--set", "rk4.steps=2", "--set", "rk4.checkpoint={every: 1, path: ckpt.npy}",
                                "--out", out], np)
    check(p.returncode == 0, "the good run failed")
    target = os.path.join(out, "ckpt.npy")
    good = read(target)
    proc = start(SIGNAL_ARGS + ["--out", out], np)
    hit = wait_for_temporary(out, proc)
    check(hit, "no temporary file appeared while the run wrote its checkpoints")
    os.kill(proc.pid, sig)  # kmini itself, or mpirun, which forwards it to every rank
    stdout, stderr = proc.communicate(timeout=120)
    print(f"signalled {signame} mid-write: exit {proc.returncode}\n  stderr: {stderr.strip()[-2000:]}")
    status = 128 + sig
    if np <= 1:
        check(proc.returncode == status, f"expected exit {status}, got {proc.returncode}")
        lines = error_lines(stderr)
        check(len(lines) == 1 and f"terminated by {signame}" in lines[0],
              f"expected one 'terminated by {signame}' line, got {lines}")
    else:
        check(proc.returncode != 0, "mpirun exited 0 after the signal")
        lines = error_lines(stderr)
        check(len(lines) <= 1, f"more than one kmini error line: {lines}")
    check(read(target) == good or whole_npy(target), "ckpt.npy is neither the previous checkpoint nor a whole new one")
    left = leftovers(out)
    check(not left, f"temporary files left behind after {signame}: {left}")
    return 0


def rank_pids(launcher_pid):
    """The kmini processes started under the launcher (its descendants named kmini), in pid order."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append((int(entry), name))
    found, todo = [], [launcher_pid]
    while todo:
        for pid, name in children.get(todo.pop(), []):
            todo.append(pid)
            if name == "kmini":
                found.append(pid)
    return sorted(found)


def terminate_one_rank(proc, np, out, outputs):
    """SIGTERM to one rank of the running job (not the launcher): the job's
    status is that rank's (128 + 15), at most one error line, none of
    `outputs` and no temporaries in `out`."""
    ranks = rank_pids(proc.pid)
    check(len(ranks) == np, f"expected {np} kmini processes under the launcher, found {ranks}")
    os.kill(ranks[-1], signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=120)
    print(f"SIGTERM to rank pid {ranks[-1]} of {ranks}: exit {proc.returncode}\n  stderr: {stderr.strip()[-2000:]}")
    check(proc.returncode == 128 + signal.SIGTERM, f"expected exit {128 + signal.SIGTERM}, got {proc.returncode}")
    lines = error_lines(stderr)
    check(len(lines) <= 1, f"more than one kmini error line: {lines}")
    for name in outputs:
        check(not os.path.exists(os.path.join(out, name)), f"{name} exists after a rank failed mid-ring")
    left = leftovers(out)
    check(not left, f"temporary files left behind: {left}")
    return 0


def ring_rank(np):
    """gram.distribution: ring with one rank failing mid-ring (SIGTERM to that
    rank alone, while the ranks exchange chunks and write C round by round):
    every rank stops, the job's status is the failing rank's (128 + 15), at
    most one error line, and no C.npy, whole or half-written, nor temporaries."""
    out = os.path.join(WORK, f"ring_rank.np{np}")
    fresh(out)
    args = ["--set", "run.kernels=[gram]", "--set", "run.verify=false",
            "--set", "gram.A={random: {rows: 3000, cols: 4096, density: 0.3, seed: 1}}", "--set", "gram.row_slice=16",
            "--set", "gram.distribution=ring", "--set", "gram.write.C=C.npy", "--out", out]
    proc = start(args, np)
    check(wait_for_temporary(out, proc), "no temporary file of C.npy appeared while the ring ran")
    return terminate_one_rank(proc, np, out, ["C.npy"])


def ring_rank_circulant(np):
    """The same with the circulant schedule (top-k only: no file is written
    while the ring runs): SIGTERM to one rank once the slice loop runs (the
    run repeats it for many seconds): the job's status is the failing rank's,
    at most one error line, no top-k file, summary or temporaries."""
    out = os.path.join(WORK, f"ring_rank_circulant.np{np}")
    fresh(out)
    args = ["--set", "run.kernels=[gram]", "--set", "run.verify=false",
            "--set", "gram.A={random: {rows: 4000, cols: 8192, density: 0.3, seed: 1}}", "--set", "gram.row_slice=64",
            "--set", "gram.repeat=400", "--set", "gram.distribution=ring", "--set", "gram.ring_schedule=circulant",
            "--set", "gram.write={top_k: {path: top.npy, k: 8}, summary: summary.json}", "--out", out]
    proc = start(args, np)
    # Rank 0 prints "running gram" after the plan; the ring starts once the
    # rows are generated (well under a second here), and runs for many seconds.
    seen = ""
    while "running gram" not in seen and proc.poll() is None:
        line = proc.stdout.readline()
        if not line:
            break
        seen += line
    check("running gram" in seen, f"the run did not start: {seen[-2000:]}")
    time.sleep(1.5)
    check(proc.poll() is None, "the run ended before the signal (make it longer)")
    return terminate_one_rank(proc, np, out, ["top.npy", "summary.json"])


def sigkill():
    out = os.path.join(WORK, "sigkill")
    fresh(out)
    p = run(SIGNAL_ARGS[:-4] + ["--set", "rk4.steps=2", "--set", "rk4.checkpoint={every: 1, path: ckpt.npy}",
                                "--out", out])
    check(p.returncode == 0, "the good run failed")
    target = os.path.join(out, "ckpt.npy")
    # The kill may land just after a rename (nothing left to see): try a few times.
    for attempt in range(5):
        good = read(target)
        proc = start(SIGNAL_ARGS + ["--out", out], 1)
        check(wait_for_temporary(out, proc), "no temporary file appeared")
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
        # SIGKILL cannot be caught: the temporary file stays, recognisable by its
        # name (README: `find DIR -name '*.kmini-tmp.*'`), and the target is whole.
        check(read(target) == good or whole_npy(target),
              "ckpt.npy is neither the previous checkpoint nor a whole new one")
        left = leftovers(out)
        print(f"attempt {attempt}: left behind {left}")
        pattern = re.compile(r"ckpt\.npy\.kmini-tmp\.%d\.\d+$" % proc.pid)
        check(all(pattern.search(f) for f in left), f"unexpected leftovers after SIGKILL: {left}")
        for f in left:
            os.remove(f)
        if left:
            return 0
    raise Failure("no SIGKILL in 5 attempts landed while a temporary file existed")


def long_name(np):
    out = os.path.join(WORK, f"long_name.np{np}")
    fresh(out)
    base = ["--set", "run.kernels=[gram]", "--set", "gram.A={random: {rows: 100, cols: 200, density: 0.3, seed: 3}}"]
    name230 = "c" * 226 + ".npy"
    p = run(base + ["--set", f"gram.write.C={name230}", "--out", out], np)
    check(p.returncode == 0, f"a 230-character name must work, got exit {p.returncode}")
    check(os.path.getsize(os.path.join(out, name230)) > 0, "the 230-character output is missing")
    name300 = "c" * 296 + ".npy"
    p = run(base + ["--set", f"gram.write.C={name300}", "--out", out], np)
    expect_clean_failure(p, 2, ["gram.write.C", "file name has 300 characters"], out, None, None)
    return 0


def read_only(np):
    mnt = mount_tmpfs(f"read_only.np{np}", "size=1m,ro")
    if mnt is None:
        return SKIP
    try:
        out = os.path.join(WORK, f"read_only_out.np{np}")
        fresh(out)
        args, _ = OUTPUTS["gram_C"]
        p = run(args + ["--set", f"gram.write.C={mnt}/C.npy", "--out", out], np)
        expect_clean_failure(p, 2, ["gram.write.C", "Read-only file system"], out, None, None)
        check(not os.path.exists(os.path.join(out, "results.json")), "results.json written after a usage error")
    finally:
        subprocess.run(["umount", "-l", mnt], capture_output=True)
    return 0


def directory_in_the_way(np):
    """A directory where an output should go: exit 2 before anything runs, for every output."""
    for output, (args, name) in OUTPUTS.items():
        out = os.path.join(WORK, f"directory_in_the_way.{output}.np{np}")
        fresh(out)
        os.makedirs(os.path.join(out, name))
        p = run(args + ["--out", out], np)
        key = "--out" if output == "results_json" else name
        expect_clean_failure(p, 2, [key, f"{name}': it is a directory"], out, None, None)
        check(sorted(os.listdir(out)) == [name], f"something was written: {os.listdir(out)}")
    return 0


def main(argv):
    what = argv[1]
    try:
        if what == "full_disk":
            return full_disk(argv[2], int(argv[3]))
        if what == "fsize_limit":
            return fsize_limit(argv[2])
        if what == "signal":
            return signal_mid_write(argv[2], int(argv[3]))
        if what == "sigkill":
            return sigkill()
        if what == "ring_rank":
            return ring_rank(int(argv[2]))
        if what == "ring_rank_circulant":
            return ring_rank_circulant(int(argv[2]))
        if what == "long_name":
            return long_name(int(argv[2]))
        if what == "directory_in_the_way":
            return directory_in_the_way(int(argv[2]))
        if what == "read_only":
            return read_only(int(argv[2]))
    except Failure as e:
        print(f"FAILED: {e}")
        return 1
    print(f"unknown scenario {what}")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
