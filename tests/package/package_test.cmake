# Package.install_and_consume: install this build into a
# temporary prefix, configure and build tests/package/consumer against it
# with find_package, run it (tests/package/run_package_test.cmake).
set(KB_PACKAGE_LAUNCHER "")
if(CMAKE_CXX_COMPILER_LAUNCHER)
  set(KB_PACKAGE_LAUNCHER ${CMAKE_CXX_COMPILER_LAUNCHER})
endif()
add_test(NAME Package.install_and_consume
  COMMAND ${CMAKE_COMMAND}
          -DBUILD_DIR=${CMAKE_CURRENT_BINARY_DIR}
          -DCONSUMER_SRC=${CMAKE_CURRENT_SOURCE_DIR}/tests/package/consumer
          -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/package-test
          -DCXX=${CMAKE_CXX_COMPILER}
          -DLAUNCHER=${KB_PACKAGE_LAUNCHER}
          -DCONFIG=$<CONFIG>
          -P ${CMAKE_CURRENT_SOURCE_DIR}/tests/package/run_package_test.cmake)
# The libraries must be built before they are installed: the suite's build
# builds them (every test links kb_tb). The consumer's build is ~1 compile.
set_tests_properties(Package.install_and_consume PROPERTIES TIMEOUT 180
  PASS_REGULAR_EXPRESSION "spin latency_ps=1500000 commands=0\ngemm latency_ps=[1-9][0-9]* commands=[1-9]")

# The example VP: examples/vp against an install, its
# driver on PE 0's regs and a tl kernel on PE 1, both checked in data mode.
add_test(NAME Package.example_vp
  COMMAND ${CMAKE_COMMAND}
          -DBUILD_DIR=${CMAKE_CURRENT_BINARY_DIR}
          -DCONSUMER_SRC=${CMAKE_CURRENT_SOURCE_DIR}/examples/vp
          -DEXECUTABLE=kernbench_vp
          -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/example-vp-test
          -DCXX=${CMAKE_CXX_COMPILER}
          -DLAUNCHER=${KB_PACKAGE_LAUNCHER}
          -DCONFIG=$<CONFIG>
          -P ${CMAKE_CURRENT_SOURCE_DIR}/tests/package/run_package_test.cmake)
set_tests_properties(Package.example_vp PROPERTIES TIMEOUT 300
  PASS_REGULAR_EXPRESSION "driver gemm 64x64x64: .*, 4 descriptors, OK\n.*driver gqa tile .*, 8 descriptors, OK\n.*pe1 tl_gemm .* OK\nvp: PASS")
