# Code and comments cite the project's own documents (docs/cost-model.md Dn
# and TRn, docs/conventions.md n, docs/architecture.md, README), never an
# issue number or a document kept outside the repository. Checked over the
# source tree: cmake -DSRC=<tree> -P check_citations.cmake. Prints every
# citation as "<file>:<line>: <what>: <the line>" and fails if any.
#
# Scanned: models/, tb/, kernels/, tests/, examples/, scripts/, cmake/,
# CMakeLists.txt and .ci/run, but not tests/data (fixtures, this check's
# own among them), tests/goldens, tests/fuzz/corpus (recorded outputs and
# inputs), tests/trace_consumer/node_modules (third-party) or this file.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/file_lines.cmake)
if(NOT SRC)
  message(FATAL_ERROR "usage: cmake -DSRC=<source tree> -P check_citations.cmake")
endif()
get_filename_component(SRC "${SRC}" ABSOLUTE)

# What is refused, each with what a reader is told (the same index in both
# lists). "issue" in any case, as a word, with its number.
set(patterns
  "(^|[^A-Za-z])[Ii][Ss][Ss][Uu][Ee][Ss]? #?[0-9]"
  "ADR-0064"
  "STYLE\\.md"
  "DESIGN\\.md"
  "ORIGIN-NOTES")
set(whats
  "an issue number (say the reason instead)"
  "ADR-0064 (cite docs/cost-model.md)"
  "STYLE.md (cite docs/conventions.md)"
  "DESIGN.md (cite docs/architecture.md)"
  "ORIGIN-NOTES (a document outside the repository)")
list(JOIN patterns "|" any_pattern)

set(roots models tb kernels tests examples scripts cmake)
set(top_files CMakeLists.txt .ci/run)
set(excluded "^tests/(data|goldens|fuzz/corpus|trace_consumer/node_modules)/|^tests/layering/check_citations\\.cmake$")
set(text_files "(\\.(h|hh|hpp|c|cc|cpp|cxx|inc|cmake|txt|py|sh|mjs|js|json|in|dict|yaml|yml|md)|/CMakeLists\\.txt|^CMakeLists\\.txt|^\\.ci/run)$")

set(files "")
foreach(root IN LISTS roots)
  if(IS_DIRECTORY "${SRC}/${root}")
    file(GLOB_RECURSE found LIST_DIRECTORIES false RELATIVE "${SRC}" "${SRC}/${root}/*")
    list(APPEND files ${found})
  endif()
endforeach()
foreach(f IN LISTS top_files)
  if(EXISTS "${SRC}/${f}")
    list(APPEND files "${f}")
  endif()
endforeach()
list(FILTER files EXCLUDE REGEX "${excluded}")
list(FILTER files INCLUDE REGEX "${text_files}")
list(SORT files)

set(citations 0)
foreach(file IN LISTS files)
  file(READ "${SRC}/${file}" text)
  if(NOT text MATCHES "${any_pattern}")
    continue()
  endif()
  kb_file_lines("${SRC}/${file}" lines)
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    kb_line_text("${line}" line)
    if(NOT line MATCHES "${any_pattern}")
      continue()
    endif()
    string(STRIP "${line}" shown)
    set(i 0)
    foreach(pattern IN LISTS patterns)
      if(line MATCHES "${pattern}")
        list(GET whats ${i} what)
        message("${file}:${n}: ${what}: ${shown}")
        math(EXPR citations "${citations} + 1")
      endif()
      math(EXPR i "${i} + 1")
    endforeach()
  endforeach()
endforeach()
if(citations GREATER 0)
  message(FATAL_ERROR "citations: ${citations} found")
endif()
list(LENGTH files checked)
message("citations: ${checked} files checked, none found")
