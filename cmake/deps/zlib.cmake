# dsmc: zlib (zlib1g-dev) compresses the appended data of the binary VTK XML files (.vti, .vtp)
# that kedr dsmc writes. Without it those files are binary but uncompressed.
find_package(ZLIB QUIET)
set(KEDR_HAVE_ZLIB OFF)
if(ZLIB_FOUND)
  set(KEDR_HAVE_ZLIB ON) # cmake/kedrConfig.cmake.in and kedr-static.pc need it too
  list(APPEND KEDR_DEPS ZLIB::ZLIB)
  list(APPEND KEDR_DEFS KEDR_HAVE_ZLIB=1)
  list(APPEND KEDR_FOUND zlib=ON)
else()
  list(APPEND KEDR_MISSING "zlib (zlib1g-dev: compressed VTK files of kedr dsmc)")
endif()
