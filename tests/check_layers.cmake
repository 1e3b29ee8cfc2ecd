# The host's layers only point down (ctest: layers_check). Each folder of host/src sits in one
# layer below; a file may include its own folder and the folders of lower layers, nothing else.
# A new folder must be placed here, which is the point: where it sits is a decision.
#   cmake -DSRC=host/src -P tests/check_layers.cmake
set(layers
  "core"                                   # errors, exit codes, Ctrl-C, reading and creating files
  "cuda nvrtc parallel process spec"       # plain data, the driver, the compiler, the header parser
  "measure plugin_host"                    # timing, L2 flush, clocks; plugin probing and loading
  "families cli"                           # the problems; the command line
  "registry"                               # discovery and selection of variants
  "record"                                 # result records and their JSON (the results format)
  "exec"                                   # one row: load, validate, time; a family's own jobs
  "tune"                                   # the tuning space, strategies and store
  "worker"                                 # rows in a child process
  "report"                                 # tables, results files, compare, plot
  "runner"                                 # the sweep: compile stage, executor, journal
  "mpi"                                    # ranks of mpirun/srun as lanes of the device pool
  "watch"                                  # --watch
  "app")                                   # the program's commands; main.cpp sits above them
get_filename_component(SRC "${SRC}" ABSOLUTE)
set(rank 0)
foreach(layer IN LISTS layers)
  string(REPLACE " " ";" folders "${layer}")
  foreach(f IN LISTS folders)
    set(rank_of_${f} ${rank})
  endforeach()
  math(EXPR rank "${rank} + 1")
endforeach()

file(GLOB folders RELATIVE "${SRC}" "${SRC}/*")
set(problems "")
foreach(folder IN LISTS folders)
  if(NOT IS_DIRECTORY "${SRC}/${folder}")
    continue()
  endif()
  if(NOT DEFINED rank_of_${folder})
    string(APPEND problems "  host/src/${folder}/ is in no layer: add it to tests/check_layers.cmake\n")
    continue()
  endif()
  file(GLOB_RECURSE files "${SRC}/${folder}/*.hpp" "${SRC}/${folder}/*.cpp" "${SRC}/${folder}/*.h"
       "${SRC}/${folder}/*.in")
  foreach(file IN LISTS files)
    file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"[a-z_0-9]+/")
    foreach(line IN LISTS includes)
      string(REGEX MATCH "\"([a-z_0-9]+)/" _ "${line}")
      set(target "${CMAKE_MATCH_1}")
      if(target STREQUAL folder OR NOT DEFINED rank_of_${target})
        continue()  # its own folder, or not one of host/src's (kernlab/plugin_api.h)
      endif()
      if(NOT rank_of_${target} LESS rank_of_${folder})
        file(RELATIVE_PATH rel "${SRC}" "${file}")
        string(STRIP "${line}" line)
        string(APPEND problems "  host/src/${rel}: ${line}: ${folder}/ may not include ${target}/, "
                               "which is not in a lower layer\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "includes that point up the host's layers (tests/check_layers.cmake):\n"
                      "${problems}")
endif()
message(STATUS "host/src: every include points down the layers")
