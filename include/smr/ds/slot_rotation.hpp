// Choosing a protect slot for the next node of a hand-over-hand traversal
// that keeps three nodes protected (the Harris and Harris-Michael lists).
#pragma once

namespace smr::ds::detail {

/// The one of slots 0, 1, 2 that neither a nor b holds (-1: no slot).
constexpr int third_slot(int a, int b) noexcept {
    if (a != 0 && b != 0) return 0;
    if (a != 1 && b != 1) return 1;
    return 2;
}

static_assert(third_slot(-1, 0) == 1 && third_slot(-1, 2) == 0 && third_slot(0, 1) == 2 &&
              third_slot(2, 0) == 1 && third_slot(1, 2) == 0);

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
