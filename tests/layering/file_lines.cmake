# The lines of a file as a CMake list, for the tree checks
# (check_layering.cmake, check_citations.cmake): one element per line, empty
# lines kept. The characters a list treats specially stand in as
# placeholders, so that a ';' does not split a line and an unbalanced '['
# does not join the lines after it into one element; kb_line_text() gives
# a line's own text back.
function(kb_file_lines path out)
  file(READ "${path}" text)
  string(REPLACE "\\" "<kb-bs>" text "${text}")
  string(REPLACE "[" "<kb-lb>" text "${text}")
  string(REPLACE "]" "<kb-rb>" text "${text}")
  string(REPLACE ";" "<kb-sc>" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()

function(kb_line_text line out)
  string(REPLACE "<kb-bs>" "\\" line "${line}")
  string(REPLACE "<kb-lb>" "[" line "${line}")
  string(REPLACE "<kb-rb>" "]" line "${line}")
  string(REPLACE "<kb-sc>" ";" line "${line}")
  set(${out} "${line}" PARENT_SCOPE)
endfunction()
