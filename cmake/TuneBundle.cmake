# The relocatable build of deploy/bundle (-DTUNE_LLVM_STATIC=ON): tune's own libraries are shared
# (libtune_codegen.so holds the static LLVM components once, instead of a copy in every program),
# every ELF gets RUNPATH $ORIGIN/../lib, shared libraries land in <build>/lib next to the runtime
# shims, and an ELF-only ld.lld is built from LLVM's static lld libraries (the daemon links kernel
# libraries with it; GPU hosts have no LLVM installed). Compile flags stay those of the normal
# build (no <target>_EXPORTS defines), so a bundle build reuses the normal build's ccache entries.

# Before the project's folders: defaults their targets pick up.
macro(tune_bundle_setup)
  set(BUILD_SHARED_LIBS ON)
  set(CMAKE_LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib)
  set(CMAKE_BUILD_WITH_INSTALL_RPATH ON)
  set(CMAKE_INSTALL_RPATH "\$ORIGIN/../lib")
  add_link_options(-Wl,--enable-new-dtags)
endmacro()

function(tune_bundle_targets_in dir out_var)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    tune_bundle_targets_in(${sub} sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${out_var} ${targets} PARENT_SCOPE)
endfunction()

# After the project's folders.
function(tune_bundle_finish)
  tune_bundle_targets_in(${PROJECT_SOURCE_DIR} targets)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "SHARED_LIBRARY" OR type STREQUAL "MODULE_LIBRARY")
      set_target_properties(${target} PROPERTIES DEFINE_SYMBOL "")
    endif()
  endforeach()
  # The GPU backends' components, whatever codegen/ lists today: static archives add only the
  # objects something references, so listing a component nobody uses costs nothing.
  llvm_map_components_to_libnames(gpu_llvm_libs
    nvptxcodegen nvptxdesc nvptxinfo amdgpucodegen amdgpuasmparser amdgpudesc amdgpuinfo
    amdgpuutils x86codegen x86asmparser x86desc x86info passes ipo)
  target_link_libraries(tune_codegen PRIVATE ${gpu_llvm_libs})
  add_subdirectory(${PROJECT_SOURCE_DIR}/deploy/bundle ${PROJECT_BINARY_DIR}/deploy/bundle)
endfunction()
