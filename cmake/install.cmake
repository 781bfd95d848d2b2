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
