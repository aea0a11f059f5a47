# tune_add_kernel_library: tuned kernels at build time.
#
#   include(TuneKernels)
#   tune_add_kernel_library(
#     TARGET my_kernels                       # library target to link
#     DB ${CMAKE_SOURCE_DIR}/tuning.db        # tuning log (may not exist: default configs)
#     TARGET_STRING "llvm -mcpu=native -threads=1"
#     WORKLOADS "gemm:M=512,N=512,K=512" "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1"
#     [NAMES my_gemm my_conv]                 # C function names, in WORKLOADS order
#     [TEMPLATES gemm.cuda.cublas ...]        # schedule templates, in WORKLOADS order (names:
#                                             #   CMake drops empty list items)
#     [WORKLOADS_FILE model.txt]              # a model's workloads file (relative: to the
#                                             #   current source folder), after WORKLOADS
#     [HEADER my_kernels.h]                   # header file name (default <TARGET>.h)
#     [EXTERN_KERNELS ukernel.json ...]       # micro-kernel manifests -libs= may name
#     [CODEGEN_PLUGINS /path/to/plugin ...])  # codegen plugins whose families the log names
#
# Libraries: with a TARGET_STRING that says -libs=openblas,dnnl, kernels whose best records are
# library candidates call tune's runtime shims (libtune_openblas.so, libtune_dnnl.so); the
# library links them (DT_NEEDED, found through its RUNPATH), so consumers need nothing more. A
# micro-kernel's library (EXTERN_KERNELS) is called but not linked: link it into the consumer
# too, or load it before the kernel library. The header lists both kinds.
#
# WORKLOADS_FILE: one workload per line, optionally followed by a weight (ignored here), `#`
# comments (common/workload_list.h). Each workload becomes a kernel with its default name
# (e.g. tune_gemm_M512_N512_K512) after the WORKLOADS ones; one listed in WORKLOADS too is built
# once, with its NAMES / TEMPLATES entry. WORKLOADS, WORKLOADS_FILE or both must be given, and
# the file must exist when CMake configures. Changing the file rebuilds the library.
#
# GPU targets: with TARGET_STRING "cuda -arch=sm_90" or "rocm -mcpu=gfx90a" the library is host
# code that embeds the device code (PTX / HSA code object) and exports
# `int NAME(<device pointers>, void* stream)` (see the generated header). It links tune's GPU
# runtime libtune_gpurt.so (DT_NEEDED, found through its RUNPATH: $ORIGIN, then the folder
# tune-compile took it from), which opens libcuda.so.1 / libamdhip64.so with dlopen on the first
# call, so consumers build and link without CUDA or ROCm. <TARGET> carries libtune_gpurt.so as
# a link dependency, so consumers may call tune_gpurt_last_error() (declared in the header).
# Inside the tune project the tune_gpurt target is used (and built first); elsewhere
# lib/libtune_gpurt.so beside tune-compile's bin/ folder.
#
# At build time tune-compile writes lib<TARGET>.so and the header into
# ${CMAKE_CURRENT_BINARY_DIR}/<TARGET>/; they are rebuilt when tune-compile, the tuning log or
# the workloads file changes (and, with Ninja, when the arguments change). <TARGET> is an
# IMPORTED shared library whose include directory holds the header, so
# `target_link_libraries(app PRIVATE my_kernels)` and `#include "my_kernels.h"` is all a consumer
# needs. Inside the tune project the tune-compile target is used; elsewhere the tune-compile
# program is looked up on PATH (or set TUNE_COMPILE_EXECUTABLE).
include_guard(GLOBAL)

# Sets `out` to tune's runtime library `target` (lib<target>.so) for a kernel library to link:
# the target itself inside the tune project (and adds it to the caller's `depends`), else the
# file in lib/ beside the installed tune-compile, which must exist.
macro(_tune_runtime_library out target what)
  if(TARGET ${target})
    set(${out} ${target})
    list(APPEND depends ${target})
  else()
    get_filename_component(_tune_tool_dir ${TUNE_COMPILE_EXECUTABLE} DIRECTORY)
    get_filename_component(${out} ${_tune_tool_dir}/../lib/lib${target}.so ABSOLUTE)
    if(NOT EXISTS ${${out}})
      message(FATAL_ERROR "tune_add_kernel_library(${ARG_TARGET}): ${what} ${${out}} does not "
                          "exist (install tune with its lib/ folder)")
    endif()
  endif()
endmacro()

function(tune_add_kernel_library)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "TARGET;DB;TARGET_STRING;HEADER;WORKLOADS_FILE"
                        "WORKLOADS;NAMES;TEMPLATES;EXTERN_KERNELS;CODEGEN_PLUGINS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tune_add_kernel_library: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  foreach(required TARGET TARGET_STRING)
    if(NOT ARG_${required})
      message(FATAL_ERROR "tune_add_kernel_library: ${required} is required")
    endif()
  endforeach()
  if(NOT ARG_WORKLOADS AND NOT ARG_WORKLOADS_FILE)
    message(FATAL_ERROR "tune_add_kernel_library(${ARG_TARGET}): give WORKLOADS, WORKLOADS_FILE "
                        "or both")
  endif()
  if(ARG_WORKLOADS_FILE)
    get_filename_component(workloads_file ${ARG_WORKLOADS_FILE} ABSOLUTE
                           BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    if(NOT EXISTS ${workloads_file})
      message(FATAL_ERROR "tune_add_kernel_library(${ARG_TARGET}): WORKLOADS_FILE "
                          "${workloads_file} does not exist")
    endif()
  endif()
  list(LENGTH ARG_WORKLOADS workload_count)
  list(LENGTH ARG_NAMES name_count)
  if(name_count GREATER workload_count)
    message(FATAL_ERROR
      "tune_add_kernel_library(${ARG_TARGET}): ${name_count} NAMES for ${workload_count} WORKLOADS")
  endif()
  if(NOT ARG_HEADER)
    set(ARG_HEADER ${ARG_TARGET}.h)
  endif()

  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/${ARG_TARGET})
  set(library ${out_dir}/lib${ARG_TARGET}.so)
  set(header ${out_dir}/${ARG_HEADER})
  # The include directory must exist when the build system is generated.
  file(MAKE_DIRECTORY ${out_dir})

  if(TARGET tune-compile)
    set(tool $<TARGET_FILE:tune-compile>)
    set(tool_depends tune-compile)
  else()
    find_program(TUNE_COMPILE_EXECUTABLE tune-compile REQUIRED)
    set(tool ${TUNE_COMPILE_EXECUTABLE})
    set(tool_depends ${TUNE_COMPILE_EXECUTABLE})
  endif()

  set(args --target "${ARG_TARGET_STRING}" --out ${library} --header ${header})
  set(depends ${tool_depends})
  if(ARG_DB)
    list(APPEND args --db ${ARG_DB})
    if(EXISTS ${ARG_DB})
      list(APPEND depends ${ARG_DB})
    endif()
  endif()
  foreach(workload IN LISTS ARG_WORKLOADS)
    list(APPEND args --workload "${workload}")
  endforeach()
  set(what "${workload_count} kernel(s)")
  if(ARG_WORKLOADS_FILE)
    list(APPEND args --workloads-file ${workloads_file})
    list(APPEND depends ${workloads_file})
    get_filename_component(file_name ${workloads_file} NAME)
    if(workload_count GREATER 0)
      set(what "${workload_count} kernel(s) and those of ${file_name}")
    else()
      set(what "the kernels of ${file_name}")
    endif()
  endif()
  foreach(name IN LISTS ARG_NAMES)
    list(APPEND args --name ${name})
  endforeach()
  foreach(template IN LISTS ARG_TEMPLATES)
    list(APPEND args --template ${template})
  endforeach()
  foreach(manifest IN LISTS ARG_EXTERN_KERNELS)
    list(APPEND args --extern-kernels ${manifest})
    list(APPEND depends ${manifest})
  endforeach()
  foreach(plugin IN LISTS ARG_CODEGEN_PLUGINS)
    list(APPEND args --codegen-plugin ${plugin})
    list(APPEND depends ${plugin})
  endforeach()

  # GPU targets link tune's GPU runtime, shape ranges (a workload with LO..HI) its range
  # runtime: each must exist before tune-compile runs.
  set(gpu_runtime)
  if(ARG_TARGET_STRING MATCHES "^[ \t]*(cuda|rocm)([ \t]|$)")
    _tune_runtime_library(gpu_runtime tune_gpurt "the GPU runtime")
  endif()
  set(range_runtime)
  if(ARG_WORKLOADS MATCHES "[0-9]\\.\\.[0-9]")
    _tune_runtime_library(range_runtime tune_range "the range runtime")
  endif()

  # The runtime shims that -libs= names are linked: inside the tune project, build them first.
  if(ARG_TARGET_STRING MATCHES "-libs=([a-z0-9_,]+)")
    string(REPLACE "," ";" libs "${CMAKE_MATCH_1}")
    foreach(lib IN LISTS libs)
      if(TARGET tune_${lib})
        list(APPEND depends tune_${lib})
      endif()
    endforeach()
  endif()

  add_custom_command(
    OUTPUT ${library} ${header}
    COMMAND ${tool} ${args}
    DEPENDS ${depends}
    COMMENT "tune-compile: ${what} into lib${ARG_TARGET}.so"
    VERBATIM)
  add_custom_target(${ARG_TARGET}_generate DEPENDS ${library} ${header})

  add_library(${ARG_TARGET} SHARED IMPORTED GLOBAL)
  set_target_properties(${ARG_TARGET} PROPERTIES
    IMPORTED_LOCATION ${library}
    INTERFACE_INCLUDE_DIRECTORIES ${out_dir})
  if(gpu_runtime OR range_runtime)
    set_target_properties(${ARG_TARGET} PROPERTIES
      INTERFACE_LINK_LIBRARIES "${gpu_runtime};${range_runtime}")
  endif()
  add_dependencies(${ARG_TARGET} ${ARG_TARGET}_generate)
endfunction()
