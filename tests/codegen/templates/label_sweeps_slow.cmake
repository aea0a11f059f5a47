# Read by ctest after the discovered sweep tests (TEST_INCLUDE_FILES): labels them slow as well
# as unit (gtest_discover_tests cannot pass a list-valued LABELS property itself), and lets only
# one LLVM-heavy sweep run at a time under `ctest -j`.
foreach(test IN LISTS codegen_template_sweep_test_TESTS)
  set_tests_properties("${test}" PROPERTIES LABELS "unit;slow" RESOURCE_LOCK llvm_sweep)
endforeach()
