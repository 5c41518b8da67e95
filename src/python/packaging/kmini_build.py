"""The build backend of pip install . (PEP 517): CMake builds kmini._kmini and
installs the package kmini (component python) into a staging directory,
which becomes the wheel. Standard library only, so it works offline.

The build directory: $KMINI_WHEEL_BUILD_DIR, else build-wheel/ in the source
tree (kept between installs, so a second install rebuilds only what changed).
CMake options: $CMAKE_ARGS (split as a shell does), e.g. -DKokkos_ROOT=...
"""
import base64
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
NAME = "kmini"


def _version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(kmini\s+VERSION\s+([0-9.]+)", f.read())
    if not m:
        raise RuntimeError("CMakeLists.txt: no project(kmini VERSION x.y.z)")
    return m.group(1)


def _tag():
    impl = "cp" if sys.implementation.name == "cpython" else sys.implementation.name[:2]
    py = f"{impl}{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{py}-{py}-{platform}"


def _metadata():
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {_version()}\n"
            "Summary: kmini's Kokkos kernels (gram, rk4, discount) from Python\n"
            "Requires-Python: >=3.8\nRequires-Dist: numpy\n")


def _wheel_file():
    return f"Wheel-Version: 1.0\nGenerator: kmini_build\nRoot-Is-Purelib: false\nTag: {_tag()}\n"


def _dist_info():
    return f"{NAME}-{_version()}.dist-info"


def _check_interpreter():
    """The module is built for, and imports numpy from, the interpreter that runs pip: say at once which
    one that is and what it lacks, before pip looks for numpy in a package index."""
    missing = []
    try:
        import numpy  # noqa: F401
    except ImportError:
        missing.append("numpy (Debian: apt-get install python3-numpy)")
    include = sysconfig.get_paths().get("include") or ""
    if not os.path.isfile(os.path.join(include, "Python.h")):
        missing.append(f"the Python headers ({include or 'no include directory'}/Python.h; "
                       "Debian: apt-get install python3-dev)")
    if missing:
        raise RuntimeError(f"kmini_build: the interpreter {sys.executable} (Python {sys.version.split()[0]}) lacks "
                           + " and ".join(missing) + "; kmini is built for the interpreter that runs pip: use one "
                           "that has them, e.g. Debian's /usr/bin/python3 -m venv --system-site-packages ENV "
                           "(docs/python.md)")


def get_requires_for_build_wheel(config_settings=None):
    _check_interpreter()
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    _check_interpreter()
    d = os.path.join(metadata_directory, _dist_info())
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    with open(os.path.join(d, "WHEEL"), "w", encoding="utf-8") as f:
        f.write(_wheel_file())
    return _dist_info()


def _run(cmd):
    print("kmini_build:", " ".join(shlex.quote(c) for c in cmd), flush=True)
    subprocess.run(cmd, check=True)


def _build(stage):
    build = os.environ.get("KMINI_WHEEL_BUILD_DIR") or os.path.join(ROOT, "build-wheel")
    generator = ["-G", "Ninja"] if shutil.which("ninja") and not os.path.exists(
        os.path.join(build, "Makefile")) else []
    _run(["cmake", "-S", ROOT, "-B", build, *generator, "-DCMAKE_BUILD_TYPE=Release",
          f"-DKMINI_PYTHON_INTERPRETER={sys.executable}", "-DKMINI_PYTHON_INSTALL_DIR:STRING=.",
          *shlex.split(os.environ.get("CMAKE_ARGS", ""))])
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
    _run(["cmake", "--build", build, "--target", "kmini_python", "-j", jobs])
    _run(["cmake", "--install", build, "--component", "python", "--prefix", stage])
    if not os.path.isfile(os.path.join(stage, NAME, "__init__.py")):
        raise RuntimeError("kmini_build: CMake built no Python package (are pybind11-dev and the Python "
                           "headers installed? see the configure output above)")


def _record_line(path, arcname):
    with open(path, "rb") as f:
        data = f.read()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _check_interpreter()
    name = f"{NAME}-{_version()}-{_tag()}.whl"
    with tempfile.TemporaryDirectory() as stage:
        _build(stage)
        info = os.path.join(stage, _dist_info())
        prepare_metadata_for_build_wheel(stage)
        files = []
        for base, _, names in os.walk(stage):
            for n in sorted(names):
                if n.endswith(".pyc"):
                    continue
                p = os.path.join(base, n)
                files.append((p, os.path.relpath(p, stage).replace(os.sep, "/")))
        record = f"{_dist_info()}/RECORD"
        lines = [_record_line(p, a) for p, a in files] + [f"{record},,"]
        with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
            for p, a in files:
                z.write(p, a)
            z.writestr(record, "\n".join(lines) + "\n")
        del info
    return name


def build_sdist(sdist_directory, config_settings=None):
    """The tracked files (git ls-files) as kmini-VERSION.tar.gz."""
    import tarfile
    base = f"{NAME}-{_version()}"
    names = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], check=True, capture_output=True).stdout
    path = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(path, "w:gz") as t:
        for n in names.decode().split("\0"):
            if n and os.path.exists(os.path.join(ROOT, n)):
                t.add(os.path.join(ROOT, n), f"{base}/{n}", recursive=False)
        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write(_metadata())
        t.add(f.name, f"{base}/PKG-INFO")
        os.unlink(f.name)
    return base + ".tar.gz"
