# kernlab_add_plugin(): one precompiled kernlab plugin, a MODULE library loaded with Boost.DLL.
# Used inside kernlab's tree and, installed (lib/cmake/kernlab), by `find_package(kernlab)` in a
# plugin author's own project.
#
#   kernlab_add_plugin(<name> SOURCES <file>...
#                      [OUTPUT_DIR <dir>]     # default: ${KERNLAB_PLUGIN_OUTPUT_DIR}; outside
#                                             # kernlab's tree, the project's build folder
#                      [EXPORTS <symbol>...]  # default: kernlab_plugin
#                      [FAMILY]               # a family plugin (kernlab/family_api.h): exports
#                                             # kernlab_family, installed to <plugins>/families
#                      [NO_INSTALL])          # default: installed to ${KERNLAB_PLUGIN_INSTALL_DIR}
#                                             # (outside kernlab's tree: lib/kernlab/plugins)
#
# Creates target kernlab_plugin_<name> (alias kernlab::plugin_<name>) with the file
# kernlab_<name>.so. Every plugin:
#   - links the CUDA runtime statically and never libcuda: it must load on a machine with no
#     driver, and it must not depend on the CUDA runtime that kernlab itself was built with;
#   - compiles against kernlab::plugin_api (the one header kernlab/plugin_api.h) and needs nothing
#     else: KERNLAB_PLUGIN_EXPORT marks the entry point;
#   - exports nothing but its entry point: sources build with hidden visibility, and a linker
#     version script also hides anything a static library or a libstdc++ template instance
#     would otherwise export (today hidden visibility alone already gives exactly one symbol);
#   - links with --no-undefined, so a missing symbol fails the build, not the dlopen.
# Pass EXPORTS only to build a deliberately broken test plugin. Linking CUDA::cuda_driver (or
# libcuda by name) to a plugin is refused when the directory has been processed.

include_guard(GLOBAL)

function(kernlab_add_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "NO_INSTALL;FAMILY" "OUTPUT_DIR" "SOURCES;EXPORTS")
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "kernlab_add_plugin(${name}): no SOURCES")
  endif()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kernlab_add_plugin(${name}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_OUTPUT_DIR)
    set(arg_OUTPUT_DIR "${KERNLAB_PLUGIN_OUTPUT_DIR}")
  endif()
  if(NOT arg_OUTPUT_DIR)  # outside kernlab's own tree: `kernlab --plugin-dir <build folder>`
    set(arg_OUTPUT_DIR "${CMAKE_BINARY_DIR}")
  endif()
  set(install_dir "${KERNLAB_PLUGIN_INSTALL_DIR}")
  if(NOT install_dir)
    set(install_dir "lib/kernlab/plugins")
  endif()
  if(arg_FAMILY)
    # Beside the variant plugins, never among them: every .so there is probed as one.
    set(arg_OUTPUT_DIR "${arg_OUTPUT_DIR}/families")
    set(install_dir "${install_dir}/families")
    if(NOT arg_EXPORTS)
      set(arg_EXPORTS kernlab_family)
    endif()
  endif()
  if(NOT arg_EXPORTS)
    set(arg_EXPORTS kernlab_plugin)
  endif()

  set(target kernlab_plugin_${name})
  add_library(${target} MODULE ${arg_SOURCES})
  add_library(kernlab::plugin_${name} ALIAS ${target})

  target_link_libraries(${target} PRIVATE kernlab::plugin_api)  # kernlab/plugin_api.h
  if(IS_DIRECTORY "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/common")  # kernlab's own plugins' helpers
    target_include_directories(${target} PRIVATE "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/common")
  endif()
  target_compile_features(${target} PRIVATE cxx_std_17)
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(CUDA IN_LIST languages)
    target_compile_features(${target} PRIVATE cuda_std_17)
  endif()
  target_link_libraries(${target} PRIVATE CUDA::cudart_static)
  # No NVTX ranges of CCCL's own (CUB's device algorithms push one per call): Nsight Compute names
  # a kernel after its innermost range, and the report of `kernlab --profile` should name a
  # plugin's kernels after the row kernlab pushes around them (ncu_report.cpp also reads the row
  # from the NVTX stack, for plugins built another way).
  target_compile_definitions(${target} PRIVATE CCCL_DISABLE_NVTX)
  if(COMMAND kernlab_warnings)
    kernlab_warnings(${target})
  endif()

  # Only the entry point leaves the shared object.
  list(JOIN arg_EXPORTS "; " exported)
  set(version_script "${CMAKE_CURRENT_BINARY_DIR}/${target}.map")
  # file(CONFIGURE) rewrites the script only when it changes, so a re-run of CMake relinks nothing.
  file(CONFIGURE OUTPUT "${version_script}"
    CONTENT "{\n  global: ${exported};\n  local: *;\n};\n")
  target_link_options(${target} PRIVATE
    "LINKER:--version-script=${version_script}"
    "LINKER:--no-undefined")

  set_target_properties(${target} PROPERTIES
    PREFIX ""
    OUTPUT_NAME "kernlab_${name}"
    SUFFIX ".so"
    LIBRARY_OUTPUT_DIRECTORY "${arg_OUTPUT_DIR}"
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    CUDA_RUNTIME_LIBRARY Static
    LINK_DEPENDS "${version_script}")

  if(NOT arg_NO_INSTALL)
    install(TARGETS ${target} LIBRARY DESTINATION "${install_dir}")
  endif()

  # Checked once the directory is done, so that libraries linked after this call count too
  # (EVAL: a deferred call's arguments are otherwise expanded when it runs, not now).
  cmake_language(EVAL CODE "cmake_language(DEFER CALL _kernlab_check_plugin_links [[${target}]])")
endfunction()

# A plugin must load where no driver is installed: it may never link libcuda itself (the static
# CUDA runtime finds the driver at run time).
function(_kernlab_check_plugin_links target)
  get_target_property(libraries ${target} LINK_LIBRARIES)
  foreach(library IN LISTS libraries)
    if(library MATCHES "^(CUDA::cuda_driver|cuda|-lcuda|.*/libcuda\\.so.*)$")
      message(FATAL_ERROR "plugin ${target} links ${library}: plugins must not link libcuda, "
                          "the CUDA runtime (CUDA::cudart_static) loads the driver at run time")
    endif()
  endforeach()
endfunction()
