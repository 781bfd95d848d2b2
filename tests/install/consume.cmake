# cmake -P consume.cmake: install the fa2 build in BUILD_DIR into WORK_DIR/prefix
# (a fresh one), configure and build tests/install as an outside project with
# only that prefix to find fa2 in, and run what it built. Any failed step
# fails the test; the smoke program's own output says SKIPPED when the CPU
# backend is not in the build.
foreach(var BUILD_DIR WORK_DIR SOURCE_DIR VERSION GENERATOR C_COMPILER C_FLAGS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "consume.cmake: -D${var}=... missing")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix}
                COMMAND_ERROR_IS_FATAL ANY OUTPUT_QUIET)
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install -B ${WORK_DIR}/build -G ${GENERATOR}
          -DCMAKE_C_COMPILER=${C_COMPILER} "-DCMAKE_C_FLAGS=${C_FLAGS}"
          -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
          -DFA2_EXPECTED_VERSION=${VERSION} -DFA2_SMOKE_SOURCE=${SOURCE_DIR}/tests/c_api_smoke.c
  COMMAND_ERROR_IS_FATAL ANY OUTPUT_QUIET)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build
                COMMAND_ERROR_IS_FATAL ANY OUTPUT_QUIET)
execute_process(COMMAND ${WORK_DIR}/build/consumer RESULT_VARIABLE result)
if(result EQUAL 77)
  message("install_and_consume: SKIPPED (the CPU backend is not in this build)")
elseif(NOT result EQUAL 0)
  message(FATAL_ERROR "install_and_consume: the consumer built against the installed fa2 failed (${result})")
endif()
