# kernlab_add_benchmark() from a user's project (ctest: benchmark_gate_cmake): install kernlab to a
# fresh prefix, configure a project that registers a benchmark against the installed package, and
# check that its test exists, that a missing baseline is a configure error naming it, and that the
# test runs (here, without a GPU, it is skipped saying so; python/tests/test_benchmark_gate.py
# runs the same test script on a GPU, where a planted regression fails it).
#
#   cmake -DKERNLAB_BUILD_DIR=... -DBASELINE=... -DWORK_DIR=... -P benchmark_gate_test.cmake
include("${CMAKE_CURRENT_LIST_DIR}/run_step.cmake")

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
run_step("cmake --install" "${CMAKE_COMMAND}" --install "${KERNLAB_BUILD_DIR}" --prefix "${prefix}")

set(project "${WORK_DIR}/project")
file(MAKE_DIRECTORY "${project}")
file(COPY "${BASELINE}" DESTINATION "${project}")
get_filename_component(baseline_name "${BASELINE}" NAME)
file(WRITE "${project}/CMakeLists.txt" "
cmake_minimum_required(VERSION 3.20)
project(gate LANGUAGES NONE)
enable_testing()
find_package(kernlab 0.1 REQUIRED)
kernlab_add_benchmark(NAME reduce5_gate BASELINE \${BASELINE_FILE} THRESHOLD 3
                      ARGS --variant reduce5 --block 256 --size 2^20 --dtype int32)
")
set(configure "${CMAKE_COMMAND}" -S "${project}" -B "${project}/build"
    "-Dkernlab_DIR=${prefix}/lib/cmake/kernlab")

execute_process(COMMAND ${configure} -DBASELINE_FILE=no_such.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
string(REGEX REPLACE "[ \n]+" " " out_line "${out}")  # CMake wraps a message's lines
string(FIND "${out_line}" "BASELINE ${project}/no_such.json does not exist" named)
if(rc EQUAL 0 OR named EQUAL -1)
  message(FATAL_ERROR "a missing baseline was not a configure error naming it:\n${out}")
endif()

run_step("configuring a project that calls kernlab_add_benchmark" ${configure}
         "-DBASELINE_FILE=${baseline_name}")
run_step("ctest -N" "${CMAKE_CTEST_COMMAND}" --test-dir "${project}/build" -N)
string(FIND "${step_output}" "reduce5_gate" listed)
if(listed EQUAL -1)
  message(FATAL_ERROR "kernlab_add_benchmark registered no test:\n${step_output}")
endif()
run_step("ctest -R reduce5_gate" "${CMAKE_CTEST_COMMAND}" --test-dir "${project}/build"
         --output-on-failure -V)
string(FIND "${step_output}" "kernlab_add_benchmark: skipped" skipped)
string(FIND "${step_output}" "Passed" passed)
if(skipped EQUAL -1 AND passed EQUAL -1)
  message(FATAL_ERROR "the benchmark test neither passed nor said why it skipped:\n${step_output}")
endif()
message(STATUS "kernlab_add_benchmark works from a user's project:\n${step_output}")
