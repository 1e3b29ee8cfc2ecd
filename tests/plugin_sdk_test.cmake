# The plugin SDK from a plugin author's side (ctest: plugin_sdk_out_of_tree): install kernlab to a
# fresh prefix, build plugins/example as a project of its own against the installed package
# (find_package(kernlab), no Boost), and have the installed kernlab list the result.
#
#   cmake -DKERNLAB_BUILD_DIR=... -DEXAMPLE_DIR=... -DWORK_DIR=... -DCUDA_ARCHITECTURES=...
#         [-DCUDA_COMPILER=...] [-DCUDA_LAUNCHER=...] -P plugin_sdk_test.cmake
include("${CMAKE_CURRENT_LIST_DIR}/run_step.cmake")

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
set(build "${WORK_DIR}/example build")  # a space on purpose: paths must survive it
run_step("cmake --install" "${CMAKE_COMMAND}" --install "${KERNLAB_BUILD_DIR}" --prefix "${prefix}")
foreach(f include/kernlab/plugin_api.h lib/cmake/kernlab/kernlabConfig.cmake
          lib/cmake/kernlab/kernlabConfigVersion.cmake lib/cmake/kernlab/KernlabPlugin.cmake)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "cmake --install did not install ${f}")
  endif()
endforeach()

set(configure "${CMAKE_COMMAND}" -S "${EXAMPLE_DIR}" -B "${build}" -DCMAKE_BUILD_TYPE=Release
    "-Dkernlab_DIR=${prefix}/lib/cmake/kernlab" "-DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES}")
if(CUDA_COMPILER)
  list(APPEND configure "-DCMAKE_CUDA_COMPILER=${CUDA_COMPILER}")
endif()
if(CUDA_LAUNCHER)
  list(APPEND configure "-DCMAKE_CUDA_COMPILER_LAUNCHER=${CUDA_LAUNCHER}")
endif()
run_step("configuring plugins/example against the installed kernlab" ${configure})
run_step("building plugins/example" "${CMAKE_COMMAND}" --build "${build}")

run_step("kernlab --list" "${prefix}/bin/kernlab" --list --no-cache --plugin-dir "${build}")
string(FIND "${step_output}" "atomic_sum" at)
string(FIND "${step_output}" "${build}/kernlab_example.so" from)
string(FIND "${step_output}" "warning" warned)
if(at EQUAL -1 OR from EQUAL -1 OR NOT warned EQUAL -1)
  message(FATAL_ERROR "the installed kernlab does not list the out-of-tree example plugin "
                      "(reduce.atomic_sum from ${build}/kernlab_example.so) cleanly:\n${step_output}")
endif()
message(STATUS "the out-of-tree plugin is listed:\n${step_output}")
