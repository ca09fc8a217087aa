// Choosing a protect slot for the next node of a hand-over-hand traversal
// that keeps three nodes protected (the Harris and Harris-Michael lists).
#pragma once

namespace smr::ds::detail {

/// The slot a sentinel (never retired, so never protected) is said to hold
/// at the start of a traversal: any of the three, so that the rotation below
/// is one subtraction with no case for "no slot"; the slot stays unannounced
/// until the traversal needs it for a node.
inline constexpr int sentinel_slot = 2;

/// The one of slots 0, 1, 2 that neither a nor b holds (a != b, both in 0..2):
/// a subtraction, where comparisons cost a traversal two branches per node.
constexpr int third_slot(int a, int b) noexcept { return 3 - a - b; }

static_assert(third_slot(sentinel_slot, 0) == 1 && third_slot(0, 1) == 2 && third_slot(2, 0) == 1 &&
              third_slot(1, 2) == 0 && third_slot(1, 0) == 2);

/// The slot for the next node when `a` and `b` hold nodes still needed:
/// third_slot, or 0 when Domain's protect ignores slots (then the
/// bookkeeping would be pure cost; see reclaimer_traits::protect_uses_slots).
template <class Domain>
constexpr int next_slot_for(int a, int b) noexcept {
    if constexpr (Domain::traits.protect_uses_slots) {
        return third_slot(a, b);
    } else {
        return 0;
    }
}

}  // namespace smr::ds::detail
