// The protect slots every scheme takes: how many, and the check of an index.
#pragma once

#include "smr/core/check.hpp"

namespace smr {

/// Protect slots per thread in hp, he and wfe: the most any data structure
/// here declares (`protect_slots`: lazylist 2, dgt_bst 3), with room for
/// Harris-Michael (3) and trees that hold a few more. A compile-time constant,
/// so a slot is an array element and a scan reads a fixed-size block.
inline constexpr int max_protect_slots = 8;

namespace detail {

/// The slot numbers protect takes index a fixed array under the reservation
/// schemes: one out of range would write past it into the thread's other
/// state (or, below zero, the previous slot's). Every scheme checks it, in
/// every build, also those that ignore the slot (a program tested under
/// debra then does not first fail when switched to hp); the compiler folds
/// the compare away for a constant index.
inline void check_slot(int index) noexcept {
    SMR_CHECK(static_cast<unsigned>(index) < static_cast<unsigned>(max_protect_slots),
              "protect: hazard slot index out of range (0 to max_protect_slots - 1)");
}

}  // namespace detail
}  // namespace smr
