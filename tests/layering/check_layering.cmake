# The include rules of the layering, checked over the
# source tree: cmake -DSRC=<tree> -P check_layering.cmake. Prints every
# violation as "<file>:<line>: includes <header> (<rule>)" and fails if any.
#
# Layers, bottom up: models/util; models/config; models/mem and
# models/interconnect (memory targets and routing: bytes and addresses);
# models/trace (+ the command set, models/pe/commands.h, plain data); the
# tl layer (tl.h over the dispatch interface tl_target.h; the address map's
# constants); the PE model; models/top; kernels (tl only); tb.
cmake_minimum_required(VERSION 3.25)
if(NOT SRC)
  message(FATAL_ERROR "usage: cmake -DSRC=<source tree> -P check_layering.cmake")
endif()
get_filename_component(SRC "${SRC}" ABSOLUTE)

# The tl layer: what a kernel sees through tl.h.
set(tl_files models/pe/tl.h models/pe/tl.cpp models/pe/tl_target.h models/pe/commands.h
    models/pe/commands.cpp models/pe/tensor_table.h models/pe/tensor_table.cpp
    models/pe/descriptor.h models/pe/descriptor.cpp models/pe/register_map.h models/pe/pe_place.h)
set(tl_headers models/pe/tl.h models/pe/tl_target.h models/pe/commands.h models/pe/tensor_table.h
    models/pe/descriptor.h models/pe/register_map.h models/pe/pe_place.h)

# Rule per file: the project headers it may include (regexes over the
# quoted path). The first matching rule applies; files under tests/ and
# fixtures are not checked.
function(allowed file out_regex out_rule)
  if(file MATCHES "^kernels/")
    set(${out_regex} "^(kernels/|models/pe/tl\\.h$)" PARENT_SCOPE)
    set(${out_rule} "kernels include only models/pe/tl.h and kernels/" PARENT_SCOPE)
    return()
  endif()
  list(FIND tl_files "${file}" in_tl)
  if(NOT in_tl EQUAL -1)
    list(JOIN tl_headers "|" alts)
    string(REPLACE "." "\\." alts "${alts}")
    set(${out_regex} "^(models/util/|models/config/|models/mem/address_map\\.h$|${alts}$)" PARENT_SCOPE)
    set(${out_rule} "the tl layer includes only itself, models/config, models/util and the address map" PARENT_SCOPE)
    return()
  endif()
  if(file MATCHES "^models/trace/")
    set(${out_regex} "^(models/util/|models/config/|models/trace/|models/pe/commands\\.h$)" PARENT_SCOPE)
    set(${out_rule} "models/trace includes nothing of models/pe but the command set" PARENT_SCOPE)
    return()
  endif()
  if(file MATCHES "^models/(mem|interconnect)/")
    set(${out_regex} "^(models/util/|models/config/|models/mem/|models/interconnect/)" PARENT_SCOPE)
    set(${out_rule} "models/mem and models/interconnect include nothing of the PE" PARENT_SCOPE)
    return()
  endif()
  if(file MATCHES "^models/config/")
    set(${out_regex} "^(models/util/|models/config/)" PARENT_SCOPE)
    set(${out_rule} "models/config includes only models/util" PARENT_SCOPE)
    return()
  endif()
  if(file MATCHES "^models/util/")
    set(${out_regex} "^models/util/" PARENT_SCOPE)
    set(${out_rule} "models/util includes only itself" PARENT_SCOPE)
    return()
  endif()
  if(file MATCHES "^models/")
    set(${out_regex} "^models/" PARENT_SCOPE)
    set(${out_rule} "models never include kernels or tb" PARENT_SCOPE)
    return()
  endif()
  set(${out_regex} "" PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE files RELATIVE "${SRC}" "${SRC}/models/*.h" "${SRC}/models/*.cpp"
     "${SRC}/kernels/*.h" "${SRC}/kernels/*.cpp")
list(SORT files)
set(violations 0)
foreach(file IN LISTS files)
  allowed("${file}" regex rule)
  if(regex STREQUAL "")
    continue()
  endif()
  # One list element per line, empty lines kept (file(STRINGS) drops them).
  file(READ "${SRC}/${file}" text)
  string(REPLACE ";" "\\;" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    if(line MATCHES "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\"")
      set(header "${CMAKE_MATCH_1}")
      if(NOT header MATCHES "${regex}")
        message("${file}:${n}: includes ${header} (${rule})")
        math(EXPR violations "${violations} + 1")
      endif()
    endif()
  endforeach()
endforeach()
if(violations GREATER 0)
  message(FATAL_ERROR "layering: ${violations} violations")
endif()
list(LENGTH files checked)
message("layering: ${checked} files checked, no violations")
