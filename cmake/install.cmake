# libkedr.so, and what `cmake --install` (make install) puts under the prefix: the headers, both
# libraries, the kedr program, pkg-config files and a CMake package (find_package(kedr)).
#
# A program links libkedr.so alone: the CUDA runtime (cudart_static), PLplot and MPI are linked
# into it, and it exports the kedr_* API only (libkedr.map), so the CUDA runtime inside cannot
# clash with another one in the same program. libkedr.a needs them all on the link line; the
# pkg-config files and the CMake package name them.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

add_library(kedr_shared SHARED $<TARGET_OBJECTS:kedr_objects>)
# Before 1.0 any minor version may change the ABI: libkedr.so.0.1.
set_target_properties(kedr_shared PROPERTIES OUTPUT_NAME kedr
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
target_include_directories(kedr_shared INTERFACE
  $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>)
target_link_libraries(kedr_shared PRIVATE ${KEDR_DEPS})
target_link_options(kedr_shared PRIVATE
  LINKER:--version-script=${CMAKE_CURRENT_SOURCE_DIR}/cmake/libkedr.map)
set_target_properties(kedr_shared PROPERTIES LINK_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/cmake/libkedr.map)

# Installed, kedr::kedr is the shared library and kedr::kedr_static the static one.
set_target_properties(kedr_shared PROPERTIES EXPORT_NAME kedr)
set_target_properties(kedr PROPERTIES EXPORT_NAME kedr_static)
install(TARGETS kedr kedr_shared EXPORT kedrTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS kedr_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/kedr DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")

set(KEDR_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kedr)
install(EXPORT kedrTargets NAMESPACE kedr:: DESTINATION ${KEDR_CMAKE_DIR})
configure_package_config_file(cmake/kedrConfig.cmake.in kedrConfig.cmake
                              INSTALL_DESTINATION ${KEDR_CMAKE_DIR})
write_basic_package_version_file(kedrConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/kedrConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/kedrConfigVersion.cmake DESTINATION ${KEDR_CMAKE_DIR})

# pkg-config: kedr.pc links libkedr.so; kedr-static.pc links libkedr.a (with --static, which
# adds Libs.private and Requires.private: what libkedr.a needs). Paths are relative to the .pc
# file, so that any --prefix given at install time holds.
set(KEDR_PC_LIBS_PRIVATE "${OpenMP_C_FLAGS} -lm")
set(KEDR_PC_REQUIRES_PRIVATE "")
if(KEDR_HAVE_CUDA)
  string(APPEND KEDR_PC_LIBS_PRIVATE
         " -L${CUDAToolkit_LIBRARY_DIR} -lcufft -lcudart_static -ldl -lrt -lpthread -lstdc++")
endif()
if(KEDR_HAVE_MPI)
  string(JOIN " " KEDR_PC_MPI ${MPI_C_LINK_FLAGS} ${MPI_C_LIBRARIES})
  string(APPEND KEDR_PC_LIBS_PRIVATE " ${KEDR_PC_MPI}")
endif()
if(FLOW_FFTW_LIB AND FLOW_FFTW_INCLUDE)
  string(APPEND KEDR_PC_LIBS_PRIVATE " -lfftw3")
endif()
if(KEDR_HAVE_ZLIB)
  string(APPEND KEDR_PC_LIBS_PRIVATE " -lz")
endif()
if(KEDR_HAVE_PLOT)
  set(KEDR_PC_REQUIRES_PRIVATE plplot)
endif()
file(RELATIVE_PATH KEDR_PC_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)   # "../.."
string(REGEX REPLACE "/$" "" KEDR_PC_PREFIX "${KEDR_PC_PREFIX}")
foreach(kind shared static)
  if(kind STREQUAL "shared")
    set(KEDR_PC_NAME kedr)
    set(KEDR_PC_LIBS "-L\${libdir} -lkedr")
  else()
    set(KEDR_PC_NAME kedr-static)
    set(KEDR_PC_LIBS "\${libdir}/libkedr.a")
  endif()
  configure_file(cmake/kedr.pc.in ${KEDR_PC_NAME}.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${KEDR_PC_NAME}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

# The README's example, compiled from an installed copy of this build in the three ways the
# README gives. Sanitizer builds are left out: a program would need their flags to link.
add_test(NAME readme_example COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tests/install/test_readme.sh
         ${CMAKE_CURRENT_SOURCE_DIR})
if(NOT KEDR_SANITIZE)
  add_test(NAME install COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tests/install/test_install.sh
           ${CMAKE_CURRENT_BINARY_DIR} ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_C_COMPILER})
  set_tests_properties(install PROPERTIES LABELS install TIMEOUT 300)
endif()
