# `cmake --install`: tune's programs (bin/, install() beside each target), the runtime shims and
# the GPU runtime (lib/, where the programs look: common/runtime_libs.h, lib/ beside bin/), and
# the CMake package (lib/cmake/tune: tuneConfig.cmake, tuneConfigVersion.cmake, TuneKernels.cmake)
# so that another project's find_package(tune) gives tune_add_kernel_library. The folders are
# bin/ and lib/ literally (not GNUInstallDirs' lib/<multiarch>): the programs find lib/ from bin/.
# Test: tests/install.
include(CMakePackageConfigHelpers)

set(TUNE_INSTALL_BINDIR bin)
set(TUNE_INSTALL_LIBDIR lib)
set(TUNE_INSTALL_CMAKEDIR lib/cmake/tune)

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/tuneConfig.cmake.in ${PROJECT_BINARY_DIR}/cmake/tuneConfig.cmake
  INSTALL_DESTINATION ${TUNE_INSTALL_CMAKEDIR}
  PATH_VARS TUNE_INSTALL_BINDIR TUNE_INSTALL_LIBDIR)
# 0.x: a minor version may change the function's arguments.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/tuneConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/tuneConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/tuneConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/TuneKernels.cmake
  DESTINATION ${TUNE_INSTALL_CMAKEDIR})
