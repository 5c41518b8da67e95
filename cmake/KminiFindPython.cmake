# kmini_find_python(VAR MODULES): sets VAR to the first of Debian's /usr/bin/python3
# and the python3 on PATH that imports every module in MODULES (e.g. "numpy,
# matplotlib"), else to "". Debian's interpreter has the python3-* packages
# scripts/setup.sh installs; a pyenv or module python often has not.
function(kmini_find_python var modules)
  foreach(_candidate /usr/bin/python3 python3)
    execute_process(COMMAND ${_candidate} -c "import ${modules}" RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
    if(_rc EQUAL 0)
      set(${var} ${_candidate} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${var} "" PARENT_SCOPE)
endfunction()
