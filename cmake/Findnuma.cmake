# Finds libnuma (Debian: libnuma-dev) without pkg-config. Defines numa_FOUND and the imported
# target numa::numa, which smrbench links for --numa (bench/numa.hpp); without it smrbench
# builds and refuses --numa local and interleave with one line.
find_path(numa_INCLUDE_DIR numa.h)
find_library(numa_LIBRARY numa)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(numa REQUIRED_VARS numa_INCLUDE_DIR numa_LIBRARY)
mark_as_advanced(numa_INCLUDE_DIR numa_LIBRARY)

if(numa_FOUND AND NOT TARGET numa::numa)
  add_library(numa::numa UNKNOWN IMPORTED)
  set_target_properties(numa::numa PROPERTIES
    IMPORTED_LOCATION "${numa_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${numa_INCLUDE_DIR}")
endif()
