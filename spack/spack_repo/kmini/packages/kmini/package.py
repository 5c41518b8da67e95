# Spack package for kmini, written for Package API v2 (Spack >= 1.0 with the
# spack/spack-packages repository: build systems are imported from
# spack_repo.builtin.build_systems, like the kokkos, cabana and arborx packages).
#
#   spack repo add ./spack/spack_repo/kmini
#   spack install kmini +cuda cuda_arch=90      # GPU nodes (H100/H200; 80 = A100)
#   spack install kmini +openmp                 # CPU nodes
#
# The dependency ranges are the ones kmini is built and tested against; the
# project's spack.yaml uses the same ranges (tests/scripts/check_spack_package.py).
import os

from spack_repo.builtin.build_systems.cmake import CMakePackage
from spack_repo.builtin.build_systems.cuda import CudaPackage

from spack.package import *

# kmini has no public release yet: the recipe builds the git checkout it is
# shipped in (<checkout>/spack/spack_repo/kmini/packages/kmini/package.py).
_CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), *[os.pardir] * 5))


class Kmini(CMakePackage, CudaPackage):
    """Kokkos + MPI mini-app: stream bandwidth, RK4 for coupled complex fields,
    a broadcast-multiply "discount" kernel and a bit-packed Gram product, each
    verified against a host reference on every run, with a results.json for
    scaling studies."""

    git = f"file://{_CHECKOUT}"

    # The checkout's main branch; `spack develop kmini@=main` (the project's
    # spack.yaml) builds the working tree instead.
    version("main", branch="main")

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
    depends_on("py-numpy", when="+python", type=("build", "run"))

    # Built and tested: Kokkos 3.4 (Debian, Serial; not offered here) and 4.x.
    # Kokkos 5 defaults to C++20 and CUDA >= 12.2 and has not been tried.
    depends_on("kokkos@4.3:4")
    depends_on("kokkos-kernels@4.3:4")

    depends_on("kokkos+openmp", when="+openmp")

    # CUDA: kmini is compiled through Kokkos' nvcc_wrapper, and its kernels are
    # KOKKOS_LAMBDAs (Kokkos 4's Spack package leaves CUDA lambdas off by default).
    depends_on("kokkos+cuda+wrapper+cuda_lambda", when="+cuda")
    depends_on("kokkos-kernels+cuda", when="+cuda")
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
        if spec.satisfies("+cuda"):
            args.append(self.define("CMAKE_CXX_COMPILER", self["kokkos"].kokkos_cxx))
            args.append(self.define("KMINI_REQUIRE_BACKEND", "CUDA"))
        elif spec.satisfies("+openmp"):
            args.append(self.define("KMINI_REQUIRE_BACKEND", "OPENMP"))
        return args
