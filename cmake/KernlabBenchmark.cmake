# kernlab_add_benchmark(): a CTest test that measures with kernlab and fails on a regression
# against a results file kept in the project (docs/ci.md). In a project that did
# find_package(kernlab):
#
#   kernlab_add_benchmark(NAME reduce_2e24
#                         BASELINE ${CMAKE_CURRENT_SOURCE_DIR}/bench/reduce_2e24.json
#                         THRESHOLD 3
#                         ARGS --variant reduce6,cub --size 2^24)
#
# The test runs `kernlab ARGS --json <build>/NAME.json`, then `kernlab compare --threshold
# THRESHOLD BASELINE <that file>`: it fails when a row is slower by more than THRESHOLD percent
# with the two intervals apart, or no longer passes (compare's exit code 1), or when either
# command fails. Without a GPU it is skipped, saying so. THRESHOLD defaults to 5 (percent);
# KERNELS_DIR adds a folder of the project's own kernels. Labels: kernlab, gpu.
set(_kernlab_benchmark_runner "${CMAKE_CURRENT_LIST_DIR}/kernlab_benchmark.sh")

function(kernlab_add_benchmark)
  cmake_parse_arguments(PARSE_ARGV 0 KB "" "NAME;BASELINE;THRESHOLD;KERNELS_DIR" "ARGS")
  if(KB_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kernlab_add_benchmark: unknown arguments: ${KB_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT KB_NAME OR NOT KB_BASELINE)
    message(FATAL_ERROR "kernlab_add_benchmark: NAME and BASELINE are required")
  endif()
  if(NOT IS_ABSOLUTE "${KB_BASELINE}")
    set(KB_BASELINE "${CMAKE_CURRENT_SOURCE_DIR}/${KB_BASELINE}")
  endif()
  if(NOT EXISTS "${KB_BASELINE}")
    list(JOIN KB_ARGS " " args_text)
    message(FATAL_ERROR "kernlab_add_benchmark(${KB_NAME}): BASELINE ${KB_BASELINE} does not "
                        "exist (write it once with: kernlab ${args_text} --json ${KB_BASELINE})")
  endif()
  if(NOT DEFINED KB_THRESHOLD)
    set(KB_THRESHOLD 5)
  endif()
  if(NOT KB_THRESHOLD MATCHES "^[0-9]+(\\.[0-9]+)?$")
    message(FATAL_ERROR "kernlab_add_benchmark(${KB_NAME}): THRESHOLD ${KB_THRESHOLD} is not a "
                        "percentage")
  endif()
  set(args ${KB_ARGS})
  if(KB_KERNELS_DIR)
    list(APPEND args --kernels-dir "${KB_KERNELS_DIR}")
  endif()
  add_test(NAME "${KB_NAME}"
           COMMAND sh "${_kernlab_benchmark_runner}" "$<TARGET_FILE:kernlab::kernlab>"
                   "${KB_BASELINE}" "${KB_THRESHOLD}" "${CMAKE_CURRENT_BINARY_DIR}/${KB_NAME}.json"
                   ${args})
  set_tests_properties("${KB_NAME}" PROPERTIES LABELS "kernlab;gpu" RUN_SERIAL TRUE
                       SKIP_REGULAR_EXPRESSION "kernlab_add_benchmark: skipped")
endfunction()
