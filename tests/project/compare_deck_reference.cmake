# project.deck_reference: docs/deck-reference.md is exactly what
# `kmini describe --markdown` prints from the kernels' declarations.
# -DKMINI=<binary> -DREFERENCE=<docs/deck-reference.md>
execute_process(COMMAND ${KMINI} describe --markdown OUTPUT_VARIABLE generated RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kmini describe --markdown: exit ${rc}")
endif()
file(READ ${REFERENCE} committed)
if(NOT generated STREQUAL committed)
  message(FATAL_ERROR "${REFERENCE} is stale: regenerate it with `kmini describe --markdown > docs/deck-reference.md`")
endif()
