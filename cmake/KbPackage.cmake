# The installed package and the kernbench_sc:: names.
#
# `cmake --install` puts the libraries' headers under
# <prefix>/include/kernbench/{models,kernels}/..., the static libraries under
# <prefix>/lib, and the package under <prefix>/lib/cmake/kernbench_sc. The
# installed targets add <prefix>/include/kernbench to the include path, so a
# consumer writes #include <models/top/pe_top.h> and the headers' own
# "models/..." includes resolve; the documented form is the namespaced one,
# #include <kernbench/models/top/pe_top.h>, which <prefix>/include (also on
# the path) resolves.
#
# The same kernbench_sc::<name> targets exist in a build tree (ALIAS), so a
# project that uses add_subdirectory links the same names.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Installed: the hardware, the tl interface and the kernels, with every
# library below them. Not kb_tb (testbenches) or the CLI.
set(KB_INSTALLED_LIBS kb_util kb_clock kb_config kb_isa kb_trace kb_tl kb_mem kb_models
    kb_kernels)
foreach(lib IN LISTS KB_INSTALLED_LIBS)
  string(REGEX REPLACE "^kb_" "" short ${lib})
  set_target_properties(${lib} PROPERTIES EXPORT_NAME ${short})
  add_library(kernbench_sc::${short} ALIAS ${lib})
endforeach()
add_library(kernbench_sc::tb ALIAS kb_tb)

# The namespaced form in a build tree too (add_subdirectory): <build>/include
# holds a link kernbench -> the source tree.
file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/include)
file(CREATE_LINK ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/include/kernbench SYMBOLIC)

# Every installed library reaches these two through kb_util or kb_isa.
foreach(lib kb_util kb_isa)
  target_include_directories(${lib} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/kernbench>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()

install(TARGETS ${KB_INSTALLED_LIBS} EXPORT kernbench_scTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The public headers (docs/installing.md, "Headers"; docs/conventions.md 18):
# what a platform, a driver or a kernel includes. The install takes these and
# every project header they include, found by following their #include lines,
# paths kept; headers only the libraries' sources use (checked arithmetic,
# message formatting, the dispatch checks, ...) stay out.
set(KB_PUBLIC_HEADERS
  models/top/pe_top.h        # a top of N PEs: the VP's entry point
  models/top/mesh_top.h      # a mesh of cubes
  models/pe/pe.h             # one PE, to wire into a platform
  models/tl/tl.h             # the kernel API
  models/isa/descriptor.h    # a driver's descriptors and tensor descriptors
  models/isa/register_map.h  # the PE's registers
  models/isa/queue.h         # the command queue's addresses and extension
  models/config/pe_config.h  # the configuration
  models/trace/chrome_trace.h
  models/trace/vcd_trace.h
  models/trace/stats.h
)
file(GLOB_RECURSE kb_kernel_headers RELATIVE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/kernels/*.h)
list(SORT kb_kernel_headers)
list(APPEND KB_PUBLIC_HEADERS ${kb_kernel_headers})

# Every header `headers` include, directly or not, themselves included.
function(kb_header_closure out)
  set(todo ${ARGN})
  set(done "")
  while(todo)
    list(POP_FRONT todo h)
    if(h IN_LIST done OR NOT EXISTS ${PROJECT_SOURCE_DIR}/${h})
      continue()
    endif()
    list(APPEND done ${h})
    file(STRINGS ${PROJECT_SOURCE_DIR}/${h} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"(models|kernels)/")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" inc "${line}")
      list(APPEND todo ${inc})
    endforeach()
  endwhile()
  list(SORT done)
  set(${out} ${done} PARENT_SCOPE)
endfunction()
kb_header_closure(KB_INSTALLED_HEADERS ${KB_PUBLIC_HEADERS})
foreach(h IN LISTS KB_INSTALLED_HEADERS)
  get_filename_component(dir ${h} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/${h} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kernbench/${dir})
endforeach()

# The default configuration, every key at its default (configs/pe.yaml): a
# VP's starting point, named by kernbench_sc_DEFAULT_CONFIG.
set(KB_CONFIG_DIR ${CMAKE_INSTALL_DATADIR}/kernbench_sc)
install(FILES ${PROJECT_SOURCE_DIR}/configs/pe.yaml DESTINATION ${KB_CONFIG_DIR})

set(KB_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kernbench_sc)
install(EXPORT kernbench_scTargets NAMESPACE kernbench_sc:: DESTINATION ${KB_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kernbench_scConfig.cmake.in
  ${PROJECT_BINARY_DIR}/kernbench_scConfig.cmake INSTALL_DESTINATION ${KB_CMAKE_DIR}
  PATH_VARS KB_CONFIG_DIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kernbench_scConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kernbench_scConfig.cmake
  ${PROJECT_BINARY_DIR}/kernbench_scConfigVersion.cmake DESTINATION ${KB_CMAKE_DIR})

# A sanitized build's libraries need the sanitizer run-time at link: whoever
# links them (the package test's consumer too) gets the flags with them.
if(KB_SANITIZE OR KB_FUZZ)
  target_link_options(kb_util INTERFACE ${KB_SANITIZER_FLAGS})
endif()
