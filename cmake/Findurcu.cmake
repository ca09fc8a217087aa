# Finds liburcu (userspace RCU; Debian: liburcu-dev) without pkg-config, which a fresh machine may
# lack. Defines urcu_FOUND and the imported targets urcu::qsbr and urcu::memb (the two flavours
# smr/reclaim/urcu.hpp adapts).
find_path(urcu_INCLUDE_DIR urcu/urcu-qsbr.h)
find_library(urcu_QSBR_LIBRARY urcu-qsbr)
find_library(urcu_MEMB_LIBRARY urcu-memb)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(urcu
  REQUIRED_VARS urcu_INCLUDE_DIR urcu_QSBR_LIBRARY urcu_MEMB_LIBRARY)
mark_as_advanced(urcu_INCLUDE_DIR urcu_QSBR_LIBRARY urcu_MEMB_LIBRARY)

if(urcu_FOUND)
  foreach(flavour IN ITEMS qsbr memb)
    string(TOUPPER ${flavour} upper)
    if(NOT TARGET urcu::${flavour})
      add_library(urcu::${flavour} UNKNOWN IMPORTED)
      set_target_properties(urcu::${flavour} PROPERTIES
        IMPORTED_LOCATION "${urcu_${upper}_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${urcu_INCLUDE_DIR}"
        # liburcu's headers are the system's: their macros and casts are not ours to warn about.
        INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${urcu_INCLUDE_DIR}")
    endif()
  endforeach()
endif()
