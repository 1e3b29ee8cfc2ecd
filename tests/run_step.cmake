# run_step(WHAT COMMAND...): runs COMMAND for a ctest script (cmake -P), stops the script with
# WHAT, the exit code and the output when it fails, and leaves the output in step_output.
function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()
