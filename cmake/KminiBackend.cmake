# The Kokkos backend a build promises (the openmp and cuda presets set
# KMINI_REQUIRE_BACKEND), checked with one clear line naming Kokkos_ROOT,
# instead of quietly configuring against another Kokkos (Debian's Serial one)
# or failing inside CMake's compiler detection.
#
#   kmini_pick_cuda_compiler()      before project(): CUDA builds compile through
#                                   $Kokkos_ROOT/bin/nvcc_wrapper
#   kmini_check_required_backend()  after Kokkos is found (KminiFindKokkos.cmake)
#
# Messages start with a space: CMake prints such text as is, on one line, where
# it would otherwise wrap it at 80 columns.

include_guard(GLOBAL)

set(KMINI_REQUIRE_BACKEND "" CACHE STRING
    "Kokkos backend this build must have (SERIAL, OPENMP, THREADS, CUDA, HIP, SYCL; set by the openmp and cuda presets); empty: any")
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
