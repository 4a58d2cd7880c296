# Installs libtilebench_timing for C users: the library, its header, a
# pkg-config file (tilebench-timing.pc) and a CMake package
# (find_package(tilebench) gives the imported target tilebench::timing).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

target_include_directories(tilebench_timing INTERFACE
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(tilebench_timing PROPERTIES EXPORT_NAME timing)
install(TARGETS tilebench_timing EXPORT tilebenchTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/tilebench/timing.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tilebench)

configure_file(${PROJECT_SOURCE_DIR}/cmake/tilebench-timing.pc.in
               ${PROJECT_BINARY_DIR}/tilebench-timing.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tilebench-timing.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

set(TB_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tilebench)
install(EXPORT tilebenchTargets NAMESPACE tilebench:: DESTINATION ${TB_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tilebenchConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tilebenchConfig.cmake INSTALL_DESTINATION ${TB_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tilebenchConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tilebenchConfig.cmake
              ${PROJECT_BINARY_DIR}/tilebenchConfigVersion.cmake
        DESTINATION ${TB_CMAKE_DIR})
