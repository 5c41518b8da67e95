#!/usr/bin/python3
"""ctest: scripts/slurm/scaling.sbatch passes its arguments after DECK and KERNELS on to the study.

usage: check_slurm_scaling.py OUTDIR KMINI

Runs the batch script outside Slurm as a job would (SLURM_* set; first on PATH this python3, an `srun`
that fails if called and a `spack` that activates nothing) with `--repeat 2 --set stream.repeat=2
--set stream.n=1000 --dry-run --out DIR`: the study must print one srun command per kernel, mode, rank
count and repeat, each with the --set, the strong 2-rank one sized from the --set value, and run nothing.
"""
import os
import re
import shutil
import subprocess
import sys

out, kmini = sys.argv[1:3]
try:
    import yaml  # noqa: F401  (scaling.py reads decks with PyYAML)
except ImportError:
    print("skipped: this python3 has no PyYAML, which scripts/scaling.py needs")
    sys.exit(77)
bash = shutil.which("bash")
if bash is None:
    print("skipped: no bash")
    sys.exit(77)
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
shutil.rmtree(out, ignore_errors=True)
bin_dir, submit = os.path.join(out, "bin"), os.path.join(out, "submit")
os.makedirs(bin_dir)
os.makedirs(submit)
os.symlink(sys.executable, os.path.join(bin_dir, "python3"))
with open(os.path.join(bin_dir, "srun"), "w") as f:
    f.write("#!/bin/sh\necho 'srun was called: the dry run ran something' >&2\nexit 3\n")
with open(os.path.join(bin_dir, "spack"), "w") as f:
    f.write("#!/bin/sh\nexit 0\n")
for tool in ("srun", "spack"):
    os.chmod(os.path.join(bin_dir, tool), 0o755)
# The job's submit directory: the script runs scripts/scaling.py from there and writes scaling-<job> there.
for name in ("scripts", "inputs"):
    os.symlink(os.path.join(root, name), os.path.join(submit, name))
study = os.path.join(out, "study")
# The rest of PATH stays: kmini's MPI may start helpers from it (OpenMPI's singleton starts orted).
env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""), SLURM_SUBMIT_DIR=submit,
           SLURM_NTASKS="2", SLURM_JOB_ID="4242", SLURM_CPUS_PER_TASK="1", KMINI=os.path.abspath(kmini))
env.pop("KMINI_SRUN_MPI", None)
cmd = [bash, os.path.join(root, "scripts", "slurm", "scaling.sbatch"), "inputs/default.yaml", "stream",
       "--repeat", "2", "--set", "stream.repeat=2", "--set", "stream.n=1000", "--dry-run", "--out", study]
done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
print(done.stdout)
assert done.returncode == 0, f"{' '.join(cmd)}: exit {done.returncode}"
runs = [line for line in done.stdout.splitlines() if line.startswith("srun -n ")]
# stream, strong and weak, 1 and 2 ranks, 2 repeats each.
assert len(runs) == 2 * 2 * 2, runs
for line in runs:
    assert "--set=stream.repeat=2" in line and re.search(r"np[12]-run[01]\b", line), line
    assert "--cpus-per-task=1 " in line and "--cpu-bind=cores" in line, line
strong2 = [line for line in runs if "/strong/np2-" in line]
assert len(strong2) == 2 and all("stream.n=500" in line for line in strong2), strong2
assert not os.path.exists(os.path.join(submit, "scaling-4242")), "the study wrote beside the job, not to --out"
assert not os.path.exists(os.path.join(study, "scaling.csv")), "a dry run wrote a CSV"
print("scaling.sbatch: --repeat, --set, --dry-run and --out reach the study")
