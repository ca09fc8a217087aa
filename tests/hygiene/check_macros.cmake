# cmake -DCXX=<compiler> -DSOURCE_DIR=<smrlab> -P check_macros.cmake
#
# Fails if including the library (every header but the liburcu adapter's, whose users asked for
# liburcu and its macros) defines a macro that is not SMR_-prefixed and that the system headers
# the library includes do not define themselves.
file(GLOB_RECURSE headers RELATIVE "${SOURCE_DIR}/include" "${SOURCE_DIR}/include/smr/*.hpp")
list(FILTER headers EXCLUDE REGEX "reclaim/(urcu|measured)\\.hpp$")

set(library "")
set(system "")
foreach(header IN LISTS headers)
  string(APPEND library "#include \"${header}\"\n")
  file(STRINGS "${SOURCE_DIR}/include/${header}" includes REGEX "^#include <")
  foreach(line IN LISTS includes)
    # Some are conditional in the library (the sanitizer's interface): include what exists.
    string(REGEX REPLACE "^#include (<[^>]+>).*" "\\1" name "${line}")
    string(APPEND system "#if __has_include(${name})\n#include ${name}\n#endif\n")
  endforeach()
endforeach()

# The names of the macros defined after preprocessing `source` with CXX (and the library's
# include path), in `out`.
function(defined_macros source out)
  execute_process(COMMAND "${CXX}" -std=c++20 "-I${SOURCE_DIR}/include" -dM -E "${source}"
    OUTPUT_VARIABLE lines ERROR_VARIABLE errors RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${CXX} -dM -E ${source} failed: ${errors}")
  endif()
  string(REGEX MATCHALL "#define [A-Za-z_][A-Za-z0-9_]*" names "${lines}")
  list(TRANSFORM names REPLACE "#define " "")
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

set(work "${CMAKE_CURRENT_BINARY_DIR}/check_macros")
file(WRITE "${work}/with_library.cpp" "${library}")
file(WRITE "${work}/with_system.cpp" "${system}")
defined_macros("${work}/with_library.cpp" with_library)
defined_macros("${work}/with_system.cpp" with_system)
list(REMOVE_ITEM with_library ${with_system})
list(FILTER with_library EXCLUDE REGEX "^SMR_")
if(with_library)
  list(JOIN with_library ", " leaked)
  message(FATAL_ERROR "the library's headers define macros without the SMR_ prefix: ${leaked}")
endif()
list(LENGTH headers count)
message(STATUS "no macro leaks from ${count} headers")
