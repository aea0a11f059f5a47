# Read by ctest after the discovered sweep tests (TEST_INCLUDE_FILES): labels them slow as well
# as unit. gtest_discover_tests cannot pass a list-valued LABELS property itself.
foreach(test IN LISTS codegen_template_sweep_test_TESTS)
  set_tests_properties("${test}" PROPERTIES LABELS "unit;slow")
endforeach()
