# Finds Kokkos (>= 3.4) and Kokkos Kernels and exposes them as kmini::kokkos and
# kmini::kokkoskernels.
#
# The normal path is find_package(Kokkos CONFIG): Spack, a hand-built Kokkos
# (Kokkos_ROOT) or any healthy install.  Debian/Ubuntu ship only Trilinos'
# Kokkos 3.4.01, whose exported targets are named trilinos_* and carry the
# non-existent include directory /usr/lib/include.  Only when the config is
# missing or unusable do we fall back to locating the headers and libraries
# ourselves and building an imported target from them.

include_guard(GLOBAL)

# True when every include directory a target advertises exists on disk.
function(_kmini_target_usable target out)
  set(${out} FALSE PARENT_SCOPE)
  if(NOT TARGET ${target})
    return()
  endif()
  get_target_property(_incs ${target} INTERFACE_INCLUDE_DIRECTORIES)
  if(_incs)
    foreach(_d IN LISTS _incs)
      if(NOT _d MATCHES "^\\$<" AND NOT EXISTS "${_d}")
        return()
      endif()
    endforeach()
  endif()
  set(${out} TRUE PARENT_SCOPE)
endfunction()

# Reads "#define KOKKOS_VERSION 30401" from the configured header.
function(_kmini_kokkos_header_version config_header out)
  file(STRINGS "${config_header}" _line REGEX "^#define KOKKOS_VERSION [0-9]+")
  string(REGEX REPLACE ".* ([0-9]+)$" "\\1" _v "${_line}")
  math(EXPR _major "${_v} / 10000")
  math(EXPR _minor "${_v} / 100 % 100")
  math(EXPR _patch "${_v} % 100")
  set(${out} "${_major}.${_minor}.${_patch}" PARENT_SCOPE)
endfunction()

# --- Kokkos ---------------------------------------------------------------
find_package(Kokkos 3.4 CONFIG QUIET)
_kmini_target_usable(Kokkos::kokkos _kokkos_ok)

if(_kokkos_ok)
  set(KMINI_KOKKOS_SOURCE "config (${Kokkos_DIR})")
  add_library(kmini::kokkos INTERFACE IMPORTED)
  target_link_libraries(kmini::kokkos INTERFACE Kokkos::kokkos)
  set(KMINI_KOKKOS_VERSION "${Kokkos_VERSION}")
  set(KMINI_KOKKOS_LOCATION "${Kokkos_DIR}")
else()
  find_path(KMINI_KOKKOS_INCLUDE_DIR Kokkos_Core.hpp PATH_SUFFIXES trilinos kokkos
            DOC "Directory holding Kokkos_Core.hpp")
  find_library(KMINI_KOKKOSCORE_LIBRARY NAMES kokkoscore trilinos_kokkoscore)
  find_library(KMINI_KOKKOSCONTAINERS_LIBRARY NAMES kokkoscontainers trilinos_kokkoscontainers)
  if(NOT KMINI_KOKKOS_INCLUDE_DIR OR NOT KMINI_KOKKOSCORE_LIBRARY)
    message(FATAL_ERROR
      "kmini: Kokkos >= 3.4 not found. Set Kokkos_ROOT to a Kokkos install "
      "(Spack: spack env activate . && spack install), or on Debian/Ubuntu "
      "install libtrilinos-kokkos-dev (scripts/run.sh does this).")
  endif()
  _kmini_kokkos_header_version("${KMINI_KOKKOS_INCLUDE_DIR}/KokkosCore_config.h" KMINI_KOKKOS_VERSION)
  if(KMINI_KOKKOS_VERSION VERSION_LESS 3.4)
    message(FATAL_ERROR "kmini: Kokkos ${KMINI_KOKKOS_VERSION} in ${KMINI_KOKKOS_INCLUDE_DIR} is older than 3.4")
  endif()
  set(KMINI_KOKKOS_SOURCE "fallback (headers ${KMINI_KOKKOS_INCLUDE_DIR}; the installed CMake config is unusable)")
  set(KMINI_KOKKOS_LOCATION "${KMINI_KOKKOS_INCLUDE_DIR}")
  find_package(Threads REQUIRED)
  add_library(kmini::kokkos INTERFACE IMPORTED)
  set_target_properties(kmini::kokkos PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${KMINI_KOKKOS_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${KMINI_KOKKOSCONTAINERS_LIBRARY};${KMINI_KOKKOSCORE_LIBRARY};Threads::Threads;${CMAKE_DL_LIBS}")
  # A fallback install is checked for what kmini needs: a host backend, no GPU.
  file(STRINGS "${KMINI_KOKKOS_INCLUDE_DIR}/KokkosCore_config.h" _gpu REGEX "^#define KOKKOS_ENABLE_(CUDA|HIP|SYCL)$")
  if(_gpu)
    message(FATAL_ERROR "kmini: the fallback finder only supports host-backend Kokkos; point Kokkos_ROOT at a GPU install's CMake config")
  endif()
endif()

# Which backends are enabled, read from the configured header (works for both paths).
find_file(KMINI_KOKKOS_CONFIG_H KokkosCore_config.h
          HINTS ${KMINI_KOKKOS_INCLUDE_DIR} ${Kokkos_DIR}/../../../include ${Kokkos_INCLUDE_DIRS}
          PATH_SUFFIXES trilinos NO_DEFAULT_PATH)
set(KMINI_KOKKOS_BACKENDS "")
if(_kokkos_ok AND DEFINED Kokkos_DEVICES)
  set(KMINI_KOKKOS_BACKENDS ${Kokkos_DEVICES})
elseif(KMINI_KOKKOS_CONFIG_H)
  foreach(_b SERIAL OPENMP THREADS CUDA HIP SYCL)
    file(STRINGS "${KMINI_KOKKOS_CONFIG_H}" _on REGEX "^#define KOKKOS_ENABLE_${_b}$")
    if(_on)
      list(APPEND KMINI_KOKKOS_BACKENDS ${_b})
    endif()
  endforeach()
endif()
if(KMINI_KOKKOS_BACKENDS STREQUAL "")
  message(FATAL_ERROR "kmini: could not read the enabled Kokkos backends from KokkosCore_config.h")
endif()
message(STATUS "kmini: Kokkos ${KMINI_KOKKOS_VERSION} [${KMINI_KOKKOS_BACKENDS}] via ${KMINI_KOKKOS_SOURCE}")
include(KminiBackend)
kmini_check_required_backend()  # the preset's backend (KMINI_REQUIRE_BACKEND) is there

# --- Kokkos Kernels --------------------------------------------------------
# Same prefix as Kokkos first (a Spack view, a hand-built pair), then the usual search.
find_package(KokkosKernels CONFIG QUIET HINTS "${Kokkos_DIR}/../../..")
_kmini_target_usable(Kokkos::kokkoskernels _kk_ok)
if(_kk_ok)
  add_library(kmini::kokkoskernels INTERFACE IMPORTED)
  target_link_libraries(kmini::kokkoskernels INTERFACE Kokkos::kokkoskernels kmini::kokkos)
  message(STATUS "kmini: Kokkos Kernels ${KokkosKernels_VERSION} via config (${KokkosKernels_DIR})")
elseif(_kokkos_ok)
  # Never pair a config-found Kokkos with another install's Kokkos Kernels.
  message(FATAL_ERROR
    "kmini: Kokkos ${KMINI_KOKKOS_VERSION} was found through its CMake config (${Kokkos_DIR}) but no "
    "matching Kokkos Kernels config was: set KokkosKernels_ROOT to a Kokkos Kernels built against it.")
else()
  # Debian/Trilinos: the same include directory as the fallback Kokkos.
  find_path(KMINI_KOKKOSKERNELS_INCLUDE_DIR KokkosBlas3_gemm.hpp HINTS ${KMINI_KOKKOS_INCLUDE_DIR}
            PATH_SUFFIXES trilinos kokkos-kernels)
  find_library(KMINI_KOKKOSKERNELS_LIBRARY NAMES kokkoskernels trilinos_kokkoskernels)
  if(NOT KMINI_KOKKOSKERNELS_INCLUDE_DIR OR NOT KMINI_KOKKOSKERNELS_LIBRARY)
    message(FATAL_ERROR
      "kmini: Kokkos Kernels not found. Set KokkosKernels_ROOT, or on Debian/Ubuntu "
      "install libtrilinos-kokkos-kernels-dev (scripts/run.sh does this).")
  endif()
  # Debian's build uses the BLAS/LAPACK TPLs; link them when the header says so.
  set(_kk_tpls "")
  file(STRINGS "${KMINI_KOKKOSKERNELS_INCLUDE_DIR}/KokkosKernels_config.h" _blas REGEX "^#define KOKKOSKERNELS_ENABLE_TPL_BLAS$")
  if(_blas)
    find_package(BLAS REQUIRED)
    find_package(LAPACK REQUIRED)
    set(_kk_tpls ${LAPACK_LIBRARIES} ${BLAS_LIBRARIES})
  endif()
  add_library(kmini::kokkoskernels INTERFACE IMPORTED)
  set_target_properties(kmini::kokkoskernels PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${KMINI_KOKKOSKERNELS_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${KMINI_KOKKOSKERNELS_LIBRARY};kmini::kokkos;${_kk_tpls}")
  message(STATUS "kmini: Kokkos Kernels via fallback (${KMINI_KOKKOSKERNELS_LIBRARY})")
endif()
