# cmake -P script of the tests Package.install_and_consume and
# Package.example_vp: install BUILD_DIR into WORK_DIR/prefix, configure and
# build CONSUMER_SRC against it (only CMAKE_PREFIX_PATH points there:
# find_package must do the rest), run its EXECUTABLE (default: consumer).
foreach(v BUILD_DIR CONSUMER_SRC WORK_DIR CXX)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_package_test: -D${v}= is required")
  endif()
endforeach()

if(NOT EXECUTABLE)
  set(EXECUTABLE consumer)
endif()
set(prefix ${WORK_DIR}/prefix)
set(consumer_build ${WORK_DIR}/consumer-build)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "run_package_test: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(step_out "${out}" PARENT_SCOPE)
endfunction()

set(config_args)
if(CONFIG)
  set(config_args --config ${CONFIG})
endif()
step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} ${config_args})

# What the package must hold: namespaced headers, no testbench headers, the
# package files.
foreach(f include/kernbench/models/top/pe_top.h include/kernbench/models/tl/tl.h
          include/kernbench/kernels/gemm/gemm_tiled_single_op.h share/kernbench_sc/pe.yaml)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "run_package_test: ${f} not installed")
  endif()
endforeach()
file(GLOB_RECURSE cfg ${prefix}/*/kernbench_scConfig.cmake)
file(GLOB_RECURSE ver ${prefix}/*/kernbench_scConfigVersion.cmake)
if(NOT cfg OR NOT ver)
  message(FATAL_ERROR "run_package_test: kernbench_scConfig.cmake or its version file not installed")
endif()
if(EXISTS ${prefix}/include/kernbench/tb)
  message(FATAL_ERROR "run_package_test: testbench headers installed")
endif()
# The public headers are a deliberate set (cmake/KbPackage.cmake): headers
# only the libraries' sources use are not installed.
foreach(f models/util/hex.h models/util/checked.h models/isa/command_check.h models/top/deadlock.h)
  if(EXISTS ${prefix}/include/kernbench/${f})
    message(FATAL_ERROR "run_package_test: internal header ${f} installed")
  endif()
endforeach()

set(launcher_arg)
if(LAUNCHER)
  set(launcher_arg -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
step("consumer configure" ${CMAKE_COMMAND} -S ${CONSUMER_SRC} -B ${consumer_build}
     -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX} ${launcher_arg}
     -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
step("consumer build" ${CMAKE_COMMAND} --build ${consumer_build})
step("consumer run" ${consumer_build}/${EXECUTABLE})
# The consumer's output for ctest's PASS_REGULAR_EXPRESSION.
message("${step_out}")
