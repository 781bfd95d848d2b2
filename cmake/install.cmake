# Installs libfa2, its headers and a CMake package: find_package(fa2) gives fa2::fa2.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS fa2 EXPORT fa2Targets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES include/fa2/fa2.h ${PROJECT_BINARY_DIR}/include/fa2/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fa2)
install(EXPORT fa2Targets NAMESPACE fa2:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fa2)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/fa2Config.cmake.in
  ${PROJECT_BINARY_DIR}/fa2Config.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fa2)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/fa2ConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/fa2Config.cmake ${PROJECT_BINARY_DIR}/fa2ConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fa2)

# fa2.pc, for builds without CMake. Relocatable: its prefix is relative to the
# file itself, unless the install directories were given as absolute paths.
set(pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${pc_dir}")
  set(FA2_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH up /prefix/${pc_dir} /prefix)
  string(REGEX REPLACE "/$" "" up "${up}")
  set(FA2_PC_PREFIX "\${pcfiledir}/${up}")
endif()
foreach(kind LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${kind}}")
    set(FA2_PC_${kind} "${CMAKE_INSTALL_${kind}}")
  else()
    set(FA2_PC_${kind} "\${prefix}/${CMAKE_INSTALL_${kind}}")
  endif()
endforeach()
# A static libfa2 (FA2_SHARED=OFF) needs its backends' libraries and the C++ runtime.
set(FA2_PC_LIBS_PRIVATE "")
if(NOT FA2_SHARED)
  set(libs ${FA2_PKG_CONFIG_LIBS} -lstdc++ -lm)
  list(REMOVE_DUPLICATES libs)
  list(JOIN libs " " FA2_PC_LIBS_PRIVATE)
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/fa2.pc.in ${PROJECT_BINARY_DIR}/fa2.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/fa2.pc DESTINATION ${pc_dir})
