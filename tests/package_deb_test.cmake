# The Debian package as a user gets it (ctest: package_deb): cpack -G DEB from the build folder,
# unpacked into a scratch root with dpkg-deb, then the packaged kernlab lists the shipped families
# and compiles a variant from its own share/ folder.
#
#   cmake -DKERNLAB_BUILD_DIR=... -DWORK_DIR=... -P package_deb_test.cmake
include("${CMAKE_CURRENT_LIST_DIR}/run_step.cmake")

find_program(DPKG_DEB dpkg-deb)
if(NOT DPKG_DEB)
  message("SKIPPED: dpkg-deb is not installed (not a Debian or Ubuntu machine)")
  return()
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/root" "${WORK_DIR}/home")
run_step("cpack -G DEB" "${CMAKE_CPACK_COMMAND}" -G DEB -B "${WORK_DIR}"
         --config "${KERNLAB_BUILD_DIR}/CPackConfig.cmake")
file(GLOB debs "${WORK_DIR}/kernlab_*.deb")
list(LENGTH debs n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "cpack made ${n} .deb files in ${WORK_DIR}, not one")
endif()
run_step("dpkg-deb --info" "${DPKG_DEB}" --info ${debs})
foreach(field "Package: kernlab" "Depends: libc6" "Architecture: amd64")
  string(FIND "${step_output}" "${field}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the package's control has no '${field}':\n${step_output}")
  endif()
endforeach()
run_step("dpkg-deb -x" "${DPKG_DEB}" -x ${debs} "${WORK_DIR}/root")
set(kl "${WORK_DIR}/root/usr/bin/kernlab")
foreach(f usr/bin/kernlab usr/share/kernlab/config/kernlab.cfg
          usr/share/kernlab/kernels_src/reduce/family.toml usr/include/kernlab/plugin_api.h
          usr/lib/cmake/kernlab/kernlabConfig.cmake)
  if(NOT EXISTS "${WORK_DIR}/root/${f}")
    message(FATAL_ERROR "the package has no ${f}")
  endif()
endforeach()
set(env "${CMAKE_COMMAND}" -E env "HOME=${WORK_DIR}/home" --unset=XDG_CACHE_HOME)
foreach(family reduce matmul scan)
  run_step("the packaged kernlab --list --family ${family}" ${env} "${kl}" --list --family ${family})
  string(FIND "${step_output}" "usr/share/kernlab/kernels_src/${family}/family.toml" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the packaged kernlab does not list ${family} from its share/ folder:\n"
                        "${step_output}")
  endif()
endforeach()
run_step("the packaged kernlab --compile-only" ${env} "${kl}" --compile-only --variant reduce5
         --block 256)
string(FIND "${step_output}" "reduce.reduce5" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the packaged kernlab compiled no reduce5:\n${step_output}")
endif()
message("package_deb: ${debs} installs and runs")
