"""pip install . as a Python user installs kmini, offline: a virtual
environment with the system's site packages (Debian's numpy, mpi4py), pip
install --no-build-isolation --no-index of the source tree, then from outside
the tree: import kmini (from the environment, not the checkout), a computation
against numpy, python -m kmini, and Debian's mypy on a typed example (which
must pass) and on a wrong call (which it must reject).

Usage: check_pip_install.py SOURCE_DIR WORK_DIR [CMAKE_ARGS]
The build directory is SOURCE_DIR/build-wheel-test (a sibling of build/, so
ccache finds the same relative paths and recompiles nothing that build/ has
compiled). Exit 77 (skipped) when pip or venv is missing."""
import os
import shutil
import subprocess
import sys
import textwrap

source, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
cmake_args = sys.argv[3] if len(sys.argv) > 3 else ""
python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
for module in ("venv", "pip"):
    if subprocess.run([python, "-c", f"import {module}"], capture_output=True).returncode:
        print(f"skipped: {python} has no {module} (Debian: python3-{module})")
        sys.exit(77)

shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
env_dir = os.path.join(work, "venv")
subprocess.run([python, "-m", "venv", "--system-site-packages", env_dir], check=True)
py = os.path.join(env_dir, "bin", "python")
env = dict(os.environ, KMINI_WHEEL_BUILD_DIR=os.path.join(source, "build-wheel-test"), CMAKE_ARGS=cmake_args,
           PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONPATH="")
r = subprocess.run([py, "-m", "pip", "install", "--no-build-isolation", "--no-index", "-q", source], env=env,
                   cwd=work, capture_output=True, text=True)
if r.returncode:
    print(r.stdout[-6000:], r.stderr[-6000:])
    sys.exit("pip install failed")

check = textwrap.dedent("""
    import os, sys
    import numpy as np
    import kmini
    assert os.path.realpath(kmini.__file__).startswith(os.path.realpath(sys.prefix)), kmini.__file__
    A = np.random.default_rng(0).random((30, 100)) < 0.5
    assert (kmini.gram(A).C == A.astype(int) @ A.T.astype(int)).all()
    print(kmini.__version__)
""")
r = subprocess.run([py, "-c", check], cwd=work, env=env, capture_output=True, text=True)
if r.returncode:
    sys.exit("import kmini from the environment failed: " + r.stderr[-3000:])
version = r.stdout.strip()
r = subprocess.run([py, "-m", "kmini"], cwd=work, env=env, capture_output=True, text=True)
if r.returncode or f"kmini_version: {version}" not in r.stdout:
    sys.exit("python -m kmini: " + r.stdout + r.stderr)
print(f"installed kmini {version} into {env_dir}; python -m kmini:\n{r.stdout}")

mypy = shutil.which("mypy", path="/usr/bin:" + os.environ.get("PATH", ""))
if not mypy:
    print("mypy not found (Debian: mypy): the typing check is skipped")
    sys.exit(0)
good = os.path.join(work, "typed_example.py")
with open(good, "w") as f:
    f.write(textwrap.dedent("""
        from typing import Tuple
        import numpy as np
        import kmini

        def similar(a: np.ndarray) -> kmini.GramResult:
            return kmini.gram(a, similarity="jaccard", top_k=2, memory_budget="64M", count_at_least=[0.5])

        def fields(f: np.ndarray, g: np.ndarray) -> Tuple[object, object, np.ndarray]:
            return kmini.rk4(f, g, steps=10, dt=1e-3, coupling="per_step", delta0=0.5j)

        version: str = kmini.__version__
    """))
bad = os.path.join(work, "wrong_call.py")
with open(bad, "w") as f:
    f.write("import kmini\nkmini.rk4(1, 2, steps='10')\nkmini.gram(None, toop_k=2)\n")
for path, want in ((good, 0), (bad, 1)):
    r = subprocess.run([mypy, "--no-incremental", "--python-executable", py, path], cwd=work, capture_output=True,
                       text=True)
    print(f"mypy {os.path.basename(path)}: {r.stdout.strip()}")
    if r.returncode != want:
        sys.exit(f"mypy on {os.path.basename(path)}: exit {r.returncode}, expected {want}: {r.stdout}{r.stderr}")
