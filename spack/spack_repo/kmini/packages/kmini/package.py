# Spack package for kmini, written for Package API v2 (Spack >= 1.0 with the
# spack/spack-packages repository: build systems are imported from
# spack_repo.builtin.build_systems, like the kokkos, cabana and arborx packages).
#
#   spack repo add ./spack/spack_repo/kmini
#   spack install kmini +cuda cuda_arch=90      # GPU nodes (H100/H200; 80 = A100)
#   spack install kmini +openmp                 # CPU nodes
#
# A local checkout (any branch, detached HEAD or uncommitted changes) is built
# with `spack develop` (the project's spack.yaml) or, outside an environment,
#   spack dev-build -d <checkout> kmini@develop
# (docs/install.md). tests/project/check_spack_package.py checks this file
# against spack.yaml; scripts/spack/check_spack.sh installs and tests it.
import json
import os

from spack_repo.builtin.build_systems.cmake import CMakePackage
from spack_repo.builtin.build_systems.cuda import CudaPackage

from spack.package import *

# The Kokkos / Kokkos Kernels releases kmini is built and tested against with
# Spack (the Debian 3.4 build is not a Spack route). Widen only after the suite
# passed with the new release (check_spack_package.py asserts this list).
TESTED_KOKKOS = "4.6.01"

# What `spack install --test=root` runs of the suite: the quick tier (every kernel's
# unit tests, the default deck from the CLI at 1 and 2 ranks, and with +python the
# module's tests); the rest needs the project's Python tools.
CHECK_LABELS = "quick"


class Kmini(CMakePackage, CudaPackage):
    """Kokkos + MPI mini-app: stream bandwidth, RK4 for coupled complex fields,
    a broadcast-multiply "discount" kernel and a bit-packed Gram product, each
    verified against a host reference on every run, with a results.json for
    scaling studies."""

    # kmini has no public address yet: these two are placeholders under the reserved
    # top-level domain .invalid (RFC 2606), which never resolves, so a fetch fails at once
    # rather than reaching someone else's server. A site that serves kmini's repository
    # names it in packages.yaml, without editing this file (docs/install.md):
    #   packages: {kmini: {package_attributes: {git: "https://git.example.org/hpc/kmini.git"}}}
    # A local checkout needs no address: `spack develop` or `spack dev-build`.
    homepage = "https://kmini.invalid/"
    git = "https://kmini.invalid/kmini.git"

    license("BSD-3-Clause")

    version("develop", branch="main")

    variant("openmp", default=False, description="Use Kokkos' OpenMP host backend (threaded host runs)")
    variant("python", default=False, description="Build the Python module kmini (import kmini)")

    # Kokkos builds for exactly one CUDA architecture, so kmini takes one too
    # (CudaPackage's cuda_arch is multi-valued); it is passed on to Kokkos and
    # Kokkos Kernels below.
    variant(
        "cuda_arch",
        description="CUDA architecture (one: Kokkos builds for a single architecture)",
        values=("none",) + CudaPackage.cuda_arch_values,
        default="none",
        multi=False,
        sticky=True,
        when="+cuda",
    )
    conflicts("+cuda", when="cuda_arch=none", msg="kmini +cuda needs cuda_arch=<sm>, e.g. cuda_arch=90")

    depends_on("cxx", type="build")
    depends_on("cmake@3.21:", type="build")

    depends_on("mpi")
    depends_on("yaml-cpp@0.7:")
    depends_on("googletest", type="test")

    extends("python", when="+python")
    depends_on("python@3.8:", when="+python", type=("build", "link", "run"))
    depends_on("py-pybind11@2.10:", when="+python", type="build")
    # The module imports numpy when it is imported (nothing at build time); the quick
    # tier's python.kmini uses it under --test=root.
    depends_on("py-numpy", when="+python", type=("run", "test"))

    depends_on(f"kokkos@{TESTED_KOKKOS}")
    depends_on(f"kokkos-kernels@{TESTED_KOKKOS}")

    depends_on("kokkos+openmp", when="+openmp")
    depends_on("kokkos-kernels+openmp", when="+openmp")

    # CUDA: kmini is compiled through Kokkos' nvcc_wrapper, and its kernels are
    # KOKKOS_LAMBDAs (Kokkos 4's Spack package leaves CUDA lambdas off by default).
    # The wrapper comes from the Kokkos release kmini is tested with.
    depends_on("kokkos+cuda+wrapper+cuda_lambda", when="+cuda")
    depends_on("kokkos-kernels+cuda", when="+cuda")
    depends_on(f"kokkos-nvcc-wrapper@{TESTED_KOKKOS}", when="+cuda", type="build")
    depends_on("kokkos~cuda", when="~cuda")
    for _arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos cuda_arch={_arch}", when=f"+cuda cuda_arch={_arch}")
        depends_on(f"kokkos-kernels cuda_arch={_arch}", when=f"+cuda cuda_arch={_arch}")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define("Kokkos_ROOT", spec["kokkos"].prefix),
            self.define("KokkosKernels_ROOT", spec["kokkos-kernels"].prefix),
            self.define("MPI_HOME", spec["mpi"].prefix),
            # Spack's compiler wrapper already targets spec.target; -march=native
            # would tie the binary to the build node.
            self.define("KMINI_NATIVE", False),
            self.define("KMINI_ENABLE_TESTS", self.run_tests),
            self.define_from_variant("KMINI_PYTHON_MODULE", "python"),
        ]
        if spec.satisfies("+python"):
            args.append(self.define("KMINI_PYTHON_INTERPRETER", spec["python"].command.path))
            args.append(self.define("KMINI_PYTHON_INSTALL_DIR", python_platlib))
            # The module's tests (--test=root) set PYTHONPATH: an external numpy's directory with it.
            args.append(self.define("KMINI_PYTHON_TEST_PATH", self._external_numpy_path() or ""))
        if spec.satisfies("+cuda"):
            args.append(self.define("CMAKE_CXX_COMPILER", self._nvcc_wrapper()))
            args.append(self.define("KMINI_REQUIRE_BACKEND", "CUDA"))
            # The wgmma probe needs a Hopper nvcc target (sm_90a) of its own. It is compiled by
            # nvcc itself: its host compiler is the one nvcc_wrapper uses, not Spack's wrapper
            # (nvcc cannot read the host compiler's properties through it).
            args.append(self.define("KMINI_WGMMA_PROBE", spec.satisfies("cuda_arch=90")))
            args.append(self.define("KMINI_NVCC_HOST_COMPILER", self.compiler.cxx))
        elif spec.satisfies("+openmp"):
            args.append(self.define("KMINI_REQUIRE_BACKEND", "OPENMP"))
        return args

    def _nvcc_wrapper(self):
        """Kokkos' nvcc_wrapper, the C++ compiler of a +cuda build: Spack's Kokkos names
        the one it was built with; an external Kokkos (a site's build, e.g. for a CUDA
        that Spack's Kokkos recipe refuses) brings its own in its bin/ when it has one."""
        kokkos = self.spec["kokkos"]
        if not kokkos.external:
            return self["kokkos"].kokkos_cxx
        own = join_path(kokkos.prefix.bin, "nvcc_wrapper")
        return own if os.path.isfile(own) else self["kokkos-nvcc-wrapper"].kokkos_cxx

    def _external_numpy_path(self):
        """The directory of an external py-numpy's module (e.g. Debian's python3-numpy
        in /usr/lib/python3/dist-packages), which Spack's Python venv does not see;
        None for a Spack-built numpy, which the venv puts on PYTHONPATH itself."""
        if not self.spec.satisfies("+python ^py-numpy") or not self.spec["py-numpy"].external:
            return None
        prefix = self.spec["py-numpy"].prefix
        ver = self.spec["python"].version.up_to(2)
        for lib in ("lib", "lib64"):
            for py in (f"python{ver}", "python3"):
                for site in ("site-packages", "dist-packages"):
                    path = join_path(prefix, lib, py, site)
                    if os.path.isfile(join_path(path, "numpy", "__init__.py")):
                        return path
        return None

    def setup_run_environment(self, env):
        numpy = self._external_numpy_path()
        if numpy:
            env.append_path("PYTHONPATH", numpy)

    def setup_build_environment(self, env):
        # Open MPI refuses root (build containers) and more ranks than cores unless told.
        env.set("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.set("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        env.set("OMPI_MCA_rmaps_base_oversubscribe", "1")

    def check(self):
        """`spack install --test=root`: the quick tier (CHECK_LABELS) of the build tree."""
        with working_dir(self.build_directory):
            ctest = which("ctest", required=True)
            ctest("--output-on-failure", "-j", str(make_jobs), "-L", CHECK_LABELS)

    # --- spack test run kmini ------------------------------------------------------

    def _mpiexec(self):
        mpi = self.spec["mpi"].prefix.bin
        for name in ("mpiexec", "mpirun", "srun"):
            if os.path.exists(join_path(mpi, name)):
                return which(join_path(mpi, name))
        return which("mpiexec", "mpirun", "srun", required=True)

    def _verified_run(self, deck, ranks):
        out = f"kmini-out-{ranks}"
        os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                          OMPI_MCA_rmaps_base_oversubscribe="1")
        kmini = str(self.prefix.bin.kmini)
        mpiexec = self._mpiexec()
        mpiexec("-n", str(ranks), kmini, deck, "--out", out, output=str)
        with open(join_path(out, "results.json"), encoding="utf-8") as f:
            results = json.load(f)
        kernels = results.get("kernels") or {}
        assert results.get("mpi", {}).get("ranks") == ranks, f"{out}/results.json: {results.get('mpi')}"
        assert kernels, f"{out}/results.json lists no kernels"
        for name, k in kernels.items():
            assert k.get("verified") is True, f"{name} not verified at {ranks} rank(s): verified={k.get('verified')}"

    def test_version(self):
        """kmini --version names the Kokkos backend the spec asked for"""
        out = which(str(self.prefix.bin.kmini))("--version", output=str)
        backend = "CUDA" if self.spec.satisfies("+cuda") else "OpenMP" if self.spec.satisfies("+openmp") else "Serial"
        assert out.startswith("kmini ") and backend in out, out

    def test_data_dir(self):
        """kmini --data-dir is the prefix's share/kmini, with the decks"""
        out = which(str(self.prefix.bin.kmini))("--data-dir", output=str).strip()
        assert os.path.samefile(out, self.prefix.share.kmini), out
        assert os.path.isfile(join_path(out, "inputs", "bench", "gram.yaml"))

    def test_default_deck(self):
        """the installed inputs/default.yaml at 1 and 2 MPI ranks: every kernel verified"""
        deck = join_path(self.prefix.share.kmini, "inputs", "default.yaml")
        for ranks in (1, 2):
            with test_part(self, f"test_default_deck_{ranks}", purpose=f"default deck, {ranks} rank(s), verified"):
                self._verified_run(deck, ranks)

    def test_python(self):
        """the installed module kmini: imported from the prefix, discount equal to numpy's product"""
        if not self.spec.satisfies("+python"):
            raise SkipTest("built without +python")
        python = self.spec["python"].command
        script = (
            "import numpy as np, kmini\n"
            "m = np.random.default_rng(0).random((300, 5))\n"
            "d = np.random.default_rng(1).random((20, 300, 5))\n"
            "assert np.array_equal(kmini.discount(m, d), m * d)\n"
            "print(kmini.__file__)"
        )
        out = python("-c", script, output=str)
        assert out.strip().startswith(str(self.prefix)), out
