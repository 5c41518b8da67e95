# nvcc itself, for what is compiled for sm_90a alone, outside Kokkos'
# architecture flags (nvcc_wrapper builds for Kokkos' architecture, and an
# sm_90 pass rejects wgmma): gram's wgmma engine (src/gram/impl/
# gram_wgmma_engine.cu) and the wgmma probe (benchmarks/wgmma_probe/).
#   KMINI_NVCC                nvcc (found beside CUDA, or set)
#   KMINI_NVCC_HOST_COMPILER  its host compiler (-ccbin; empty: nvcc's default)
#   KMINI_NVCC_SM90A          the command's start: nvcc, -ccbin, C++17, -O3, sm_90a, src/ included
# kmini_require_nvcc(WHAT OPTION) stops the configuration, naming WHAT and
# OPTION (the option that turns it off), where no nvcc was found.
find_program(KMINI_NVCC nvcc HINTS ${CUDAToolkit_BIN_DIR} ENV CUDA_HOME ENV CUDA_PATH ENV CUDA_ROOT /usr/local/cuda
             PATH_SUFFIXES bin DOC "nvcc for the wgmma engine and probe (sm_90a)")
set(KMINI_NVCC_HOST_COMPILER "" CACHE FILEPATH
    "Host compiler nvcc uses for the wgmma engine and probe (-ccbin; empty: nvcc's default)")
set(KMINI_NVCC_SM90A ${KMINI_NVCC})
if(KMINI_NVCC_HOST_COMPILER)
  list(APPEND KMINI_NVCC_SM90A -ccbin ${KMINI_NVCC_HOST_COMPILER})
endif()
list(APPEND KMINI_NVCC_SM90A -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I${PROJECT_SOURCE_DIR}/src)

function(kmini_require_nvcc what option)
  if(NOT KMINI_NVCC)
    message(FATAL_ERROR " kmini: ${what} needs nvcc, which was not found (set KMINI_NVCC, or -D${option}=OFF)")
  endif()
endfunction()
