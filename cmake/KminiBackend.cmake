# The Kokkos backend a build promises (the openmp and cuda presets set
# KMINI_REQUIRE_BACKEND), checked with one clear line naming Kokkos_ROOT,
# instead of quietly configuring against another Kokkos (Debian's Serial one)
# or failing inside CMake's compiler detection.
#
#   kmini_pick_cuda_compiler()      before project(): CUDA builds compile through
#                                   $Kokkos_ROOT/bin/nvcc_wrapper
#   kmini_pick_hip_compiler()       before project(): HIP builds compile with the
#                                   compiler Kokkos was built with (hipcc, or
#                                   clang++-19 for gfx942)
#   kmini_check_required_backend()  after Kokkos is found (KminiFindKokkos.cmake)
#
# Messages start with a space: CMake prints such text as is, on one line, where
# it would otherwise wrap it at 80 columns.

include_guard(GLOBAL)

set(KMINI_REQUIRE_BACKEND "" CACHE STRING
    "Kokkos backend this build must have (SERIAL, OPENMP, THREADS, CUDA, HIP, SYCL; set by the openmp, cuda and hip presets); empty: any")
string(TOUPPER "${KMINI_REQUIRE_BACKEND}" _kmini_required_backend)

# Kokkos_ROOT as given: the cache (presets pass $env{Kokkos_ROOT}, maybe empty) or the environment.
function(_kmini_kokkos_root out)
  set(root "${Kokkos_ROOT}")
  if(root STREQUAL "" AND DEFINED ENV{Kokkos_ROOT})
    set(root "$ENV{Kokkos_ROOT}")
  endif()
  set(${out} "${root}" PARENT_SCOPE)
endfunction()

function(kmini_pick_cuda_compiler)
  if(NOT _kmini_required_backend STREQUAL "CUDA" OR CMAKE_CXX_COMPILER)
    return()
  endif()
  _kmini_kokkos_root(root)
  if(root STREQUAL "")
    message(FATAL_ERROR " kmini: the CUDA build compiles through Kokkos' nvcc_wrapper, but Kokkos_ROOT is not set: "
                        "set Kokkos_ROOT to a Kokkos install with CUDA (Spack: Kokkos_ROOT=$SPACK_ENV/.spack-env/view)")
  endif()
  set(config_h "${root}/include/KokkosCore_config.h")
  if(EXISTS "${config_h}")
    file(STRINGS "${config_h}" cuda REGEX "^#define KOKKOS_ENABLE_CUDA$")
    if(NOT cuda)
      message(FATAL_ERROR " kmini: the CUDA build needs Kokkos' CUDA backend, but the Kokkos at Kokkos_ROOT=${root} "
                          "has none (${config_h}): set Kokkos_ROOT to a Kokkos install with CUDA")
    endif()
  endif()
  if(NOT EXISTS "${root}/bin/nvcc_wrapper")
    message(FATAL_ERROR " kmini: the CUDA build compiles through Kokkos' nvcc_wrapper, but Kokkos_ROOT=${root} has no "
                        "bin/nvcc_wrapper: set Kokkos_ROOT to a Kokkos install with CUDA (Spack: kokkos +cuda +wrapper), "
                        "or give -DCMAKE_CXX_COMPILER=<path to nvcc_wrapper>")
  endif()
  set(CMAKE_CXX_COMPILER "${root}/bin/nvcc_wrapper" CACHE FILEPATH "C++ compiler: Kokkos' nvcc_wrapper (CUDA build)")
endfunction()

# The compiler a HIP Kokkos was built with (its KokkosConfigCommon.cmake names
# it: hipcc, or Debian's clang++-19 for gfx942, whose device flags Kokkos' target
# carries), else hipcc on the PATH: kmini's device code must be compiled by the same.
function(kmini_pick_hip_compiler)
  if(NOT _kmini_required_backend STREQUAL "HIP" OR CMAKE_CXX_COMPILER)
    return()
  endif()
  _kmini_kokkos_root(root)
  if(root STREQUAL "")
    message(FATAL_ERROR " kmini: the HIP build compiles with the compiler Kokkos was built with (hipcc or clang++), but Kokkos_ROOT is not set: "
                        "set Kokkos_ROOT to a Kokkos install with HIP (scripts/gpu/build_deps.sh PREFIX --backend hip, docs/amd.md)")
  endif()
  set(config_h "${root}/include/KokkosCore_config.h")
  if(EXISTS "${config_h}")
    file(STRINGS "${config_h}" hip REGEX "^#define KOKKOS_ENABLE_HIP$")
    if(NOT hip)
      message(FATAL_ERROR " kmini: the HIP build needs Kokkos' HIP backend, but the Kokkos at Kokkos_ROOT=${root} "
                          "has none (${config_h}): set Kokkos_ROOT to a Kokkos install with HIP")
    endif()
  endif()
  file(GLOB common "${root}/lib*/cmake/Kokkos/KokkosConfigCommon.cmake")
  set(compiler "")
  if(common)
    list(GET common 0 common)
    file(STRINGS "${common}" line REGEX "^set\\(Kokkos_CXX_COMPILER \"[^\"]+\"\\)")
    string(REGEX REPLACE "^set\\(Kokkos_CXX_COMPILER \"([^\"]+)\"\\).*" "\\1" compiler "${line}")
  endif()
  if(NOT compiler OR NOT EXISTS "${compiler}")
    find_program(KMINI_HIPCC NAMES hipcc)
    set(compiler "${KMINI_HIPCC}")
  endif()
  if(NOT compiler)
    message(FATAL_ERROR " kmini: the HIP build compiles with the compiler Kokkos was built with, but Kokkos_ROOT=${root} names "
                        "none that exists (its lib/cmake/Kokkos/KokkosConfigCommon.cmake) and hipcc is not on the PATH "
                        "(Debian: apt-get install hipcc libamdhip64-dev; for gfx942 clang-19 too, docs/amd.md)")
  endif()
  set(CMAKE_CXX_COMPILER "${compiler}" CACHE FILEPATH "C++ compiler: the one Kokkos was built with (HIP build: hipcc or clang++)")
endfunction()

# KMINI_KOKKOS_BACKENDS, KMINI_KOKKOS_VERSION and KMINI_KOKKOS_LOCATION come from KminiFindKokkos.cmake.
function(kmini_check_required_backend)
  if(_kmini_required_backend STREQUAL "" OR _kmini_required_backend IN_LIST KMINI_KOKKOS_BACKENDS)
    return()
  endif()
  _kmini_kokkos_root(root)
  if(root STREQUAL "")
    set(root_text "Kokkos_ROOT is not set")
  else()
    set(root_text "Kokkos_ROOT=${root}")
  endif()
  string(REPLACE ";" ", " have "${KMINI_KOKKOS_BACKENDS}")
  message(FATAL_ERROR " kmini: this build needs Kokkos' ${_kmini_required_backend} backend (KMINI_REQUIRE_BACKEND, set by "
                      "the preset) but found Kokkos ${KMINI_KOKKOS_VERSION} with ${have} only, at "
                      "${KMINI_KOKKOS_LOCATION} (${root_text}): set Kokkos_ROOT to a Kokkos install with "
                      "${_kmini_required_backend}")
endfunction()
