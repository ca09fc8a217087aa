// Readers and their slots: what every scheme's domain.reader(tid) shares.
//
// A reader is a thread's protect for one traversal (domain_base::reader):
// reader.protect(slot, source) is domain.protect(tid, slot, source) with what
// the scheme needs per node loaded once. A slot names the reservation a
// protect fills. Structures name slots by index (0 to max_protect_slots - 1);
// a traversal that keeps several nodes protected hand over hand can instead
// ask once for each slot it will use, reader.slot(index), and protect through
// those: the index is checked and turned into an address there, once per
// traversal, not once per node visited. reader.index(slot) gives the index
// back (for a window a structure returns).
//
// A scheme whose protect ignores slots (reclaimer_traits::protect_uses_slots
// false) gives slots that hold nothing, so a traversal's slot bookkeeping
// compiles away; hp's slots are its hazard cells (hp.hpp), every other
// scheme's are their indexes.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "smr/reclaim/slots.hpp"

namespace smr::detail {

/// The slot of a scheme whose protect reads none: nothing to keep or rotate.
struct unused_slot {};

/// The slots of a scheme whose protect is given the index: the index itself
/// (the scheme's protect checks it).
struct indexed_slots {
    using slot_type = int;
    static constexpr int slot(int index) noexcept { return index; }
    static constexpr int index(int slot) noexcept { return slot; }
};

/// The slots of a scheme whose protect ignores them.
struct unused_slots {
    using slot_type = unused_slot;
    /// Checked although unused (slots.hpp): hp would index its array with it.
    static unused_slot slot(int index) noexcept {
        check_slot(index);
        return {};
    }
    static constexpr int index(unused_slot /*slot*/) noexcept { return 0; }
};

/// The reader a scheme without per-traversal state gives: protect(slot,
/// source) is the domain's protect(tid, slot, source).
template <class Domain>
class forwarding_reader
    : public std::conditional_t<Domain::traits.protect_uses_slots, indexed_slots, unused_slots> {
  public:
    forwarding_reader(Domain& domain, int tid) noexcept : domain_(&domain), tid_(tid) {}

    template <class T>
    T* protect(int slot, const std::atomic<T*>& source) const noexcept {
        return domain_->protect(tid_, slot, source);
    }
    template <class T>
    T* protect(unused_slot /*slot*/, const std::atomic<T*>& source) const noexcept {
        return domain_->protect(tid_, 0, source);
    }

  private:
    Domain* domain_;
    int tid_;
};

}  // namespace smr::detail

namespace smr {

/// Slots 0 to N - 1 of `reader`, asked once. A traversal that rotates over
/// them by a run-time index (a std::size_t, slot ^= 1 hand over hand)
/// protects through slots[index] rather than passing the index to protect:
/// the indexes are checked here, once per traversal, where the compiler
/// cannot fold a check of a rotating index per node (141 of 661 instructions
/// per operation on dgt_bst at 100,000 keys under `none`), and a scheme that
/// ignores slots compiles the array and the rotation away.
template <std::size_t N, class Reader>
auto first_slots(const Reader& reader) noexcept {
    static_assert(N <= static_cast<std::size_t>(max_protect_slots), "more slots than a thread has");
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
        return std::array{reader.slot(static_cast<int>(I))...};
    }
    (std::make_index_sequence<N>{});
}

}  // namespace smr
