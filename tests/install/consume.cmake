# cmake -P consume.cmake: install the fa2 build in BUILD_DIR into WORK_DIR/prefix
# (a fresh one), configure and build tests/install as an outside project with
# only that prefix to find fa2 in, build the same program from fa2.pc through
# pkg-config, and run both. Any failed step fails the test; the smoke
# program's own output says SKIPPED when the CPU backend is not in the build.
foreach(var BUILD_DIR WORK_DIR SOURCE_DIR VERSION GENERATOR C_COMPILER CXX_COMPILER FLAGS)
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
          -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
          "-DCMAKE_C_FLAGS=${FLAGS}" "-DCMAKE_CXX_FLAGS=${FLAGS}"
          -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
          -DFA2_EXPECTED_VERSION=${VERSION} -DFA2_SMOKE_SOURCE=${SOURCE_DIR}/tests/c_api_smoke.c
  COMMAND_ERROR_IS_FATAL ANY OUTPUT_QUIET)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build
                COMMAND_ERROR_IS_FATAL ANY OUTPUT_QUIET)
set(consumers ${WORK_DIR}/build/consumer)

# The same program built without CMake, from what pkg-config says of fa2.pc.
find_program(PKG_CONFIG NAMES pkg-config pkgconf)
if(PKG_CONFIG)
  set(ENV{PKG_CONFIG_PATH} "")
  file(GLOB_RECURSE pc_file ${prefix}/*/fa2.pc)
  get_filename_component(pc_dir "${pc_file}" DIRECTORY)
  set(ENV{PKG_CONFIG_LIBDIR} "${pc_dir}")
  execute_process(COMMAND ${PKG_CONFIG} --cflags --libs --static fa2 OUTPUT_VARIABLE pc_flags
                  OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  execute_process(COMMAND ${PKG_CONFIG} --variable=libdir fa2 OUTPUT_VARIABLE pc_libdir
                  OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
  separate_arguments(flags UNIX_COMMAND "${FLAGS}")
  execute_process(COMMAND ${C_COMPILER} -std=c99 ${flags} ${SOURCE_DIR}/tests/c_api_smoke.c
                          ${pc_flags} -lm -Wl,-rpath,${pc_libdir} -o ${WORK_DIR}/pc_consumer
                  COMMAND_ERROR_IS_FATAL ANY)
  list(APPEND consumers ${WORK_DIR}/pc_consumer)
else()
  message("install_and_consume: no pkg-config here, fa2.pc not checked")
endif()

foreach(consumer IN LISTS consumers)
  execute_process(COMMAND ${consumer} RESULT_VARIABLE result)
  if(result EQUAL 77)
    message("install_and_consume: SKIPPED (the CPU backend is not in this build)")
  elseif(NOT result EQUAL 0)
    message(FATAL_ERROR "install_and_consume: ${consumer}, built against the installed fa2, failed (${result})")
  endif()
endforeach()
