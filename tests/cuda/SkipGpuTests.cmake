# Marks ttinterp_cuda_tests cases that print the no-GPU marker (TestSupport.cpp) as skipped.
# Included by ctest after the doctest-discovered tests, whose names it reads from
# ttinterp_cuda_tests_TESTS.
foreach(_ttinterp_test IN LISTS ttinterp_cuda_tests_TESTS)
  set_tests_properties("${_ttinterp_test}" PROPERTIES
    SKIP_REGULAR_EXPRESSION "\\[ttinterp-cuda\\] SKIPPED")
endforeach()
