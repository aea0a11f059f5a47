# Library sources of the schedule templates and the compiler driver, compiled into tune_codegen
# (codegen/CMakeLists.txt includes this file before add_library).
set(TUNE_TEMPLATE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/catalog.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv2d_cpu_blocked.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv2d_cpu_blocked_nest.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv2d_cpu_direct.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv2d_cpu_direct_nest.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv2d_cpu_library.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv2d_cpu_loops.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv2d_cpu_pointwise.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv2d_cpu_winograd.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv2d_cpu_winograd_nest.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv2d_cuda_tensor_core.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv2d_gpu_direct.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv2d_gpu_implicit_gemm.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv2d_gpu_library.cc
  ${CMAKE_CURRENT_LIST_DIR}/cpu_vector_info.cc
  ${CMAKE_CURRENT_LIST_DIR}/gemm_cpu_blocked.cc
  ${CMAKE_CURRENT_LIST_DIR}/gemm_cpu_blocked_nest.cc
  ${CMAKE_CURRENT_LIST_DIR}/gemm_cpu_library.cc
  ${CMAKE_CURRENT_LIST_DIR}/gemm_cuda_mma.cc
  ${CMAKE_CURRENT_LIST_DIR}/gemm_cuda_wgmma.cc
  ${CMAKE_CURRENT_LIST_DIR}/gemm_gpu_library.cc
  ${CMAKE_CURRENT_LIST_DIR}/gemm_gpu_tiled.cc
  ${CMAKE_CURRENT_LIST_DIR}/tensor_core_gemm.cc
  ${CMAKE_CURRENT_LIST_DIR}/gpu_template_util.cc
  ${CMAKE_CURRENT_LIST_DIR}/gpu_tiled_matmul.cc
  ${CMAKE_CURRENT_LIST_DIR}/library_call.cc
  ${CMAKE_CURRENT_LIST_DIR}/template.cc
  ${CMAKE_CURRENT_LIST_DIR}/template_features.cc
  ${CMAKE_CURRENT_LIST_DIR}/template_util.cc
  ${CMAKE_CURRENT_LIST_DIR}/ukernel_templates.cc
  ${CMAKE_CURRENT_LIST_DIR}/winograd_transform.cc
  ${CMAKE_CURRENT_LIST_DIR}/../c_header.cc
  ${CMAKE_CURRENT_LIST_DIR}/../compiler.cc
)

