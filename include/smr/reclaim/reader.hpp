// Readers and their slots: what every scheme's domain.reader(self) shares.
//
// A reader is a thread's protect for one traversal (domain_base::reader):
// reader.protect(slot, source) is domain.protect(self, slot, source) with what
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
//
// A structure does not number the thread's slots itself: its operation
// borrows a block of them from its guard (smr::lend_slots, guards.hpp) and
// traverses through the block's reader (block_reader below), whose slots
// 0 to N - 1 are the block's, wherever the guard placed it.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "smr/core/check.hpp"
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
/// source) is the domain's protect(self, slot, source).
template <class Domain>
class forwarding_reader
    : public std::conditional_t<Domain::traits.protect_uses_slots, indexed_slots, unused_slots> {
  public:
    forwarding_reader(Domain& domain, typename Domain::lent self) noexcept
        : domain_(&domain), self_(self) {}

    /// The same reader with slot `first` as its slot 0 (block_reader).
    forwarding_reader shifted(int first) const noexcept
        requires(Domain::traits.protect_uses_slots) {
        forwarding_reader moved = *this;
        moved.first_.index += first;
        return moved;
    }

    template <class T>
    T* protect(int slot, const std::atomic<T*>& source) const noexcept {
        return domain_->protect(self_, first_.index + slot, source);
    }
    template <class T>
    T* protect(unused_slot /*slot*/, const std::atomic<T*>& source) const noexcept {
        return domain_->protect(self_, 0, source);
    }
    /// protect for a link inside `parent` (smr::protect_in below), where
    /// the scheme takes parents; elsewhere smr::protect_in calls protect.
    template <class T, class Parent>
    T* protect_in(int slot, const std::atomic<T*>& source, const Parent* parent) const noexcept
        requires(Domain::traits.protect_takes_parents) {
        return domain_->protect_in(self_, first_.index + slot, source, parent);
    }

  private:
    struct first_slot {
        int index = 0;
    };
    struct no_first_slot {
        static constexpr int index = 0;
    };
    Domain* domain_;
    typename Domain::lent self_;
    /// Where slot 0 is (shifted); only where protect reads the slot.
    [[no_unique_address]] std::conditional_t<Domain::traits.protect_uses_slots, first_slot,
                                             no_first_slot>
        first_{};
};

/// `Reader` restricted to the N slots a guard lent a traversal
/// (smr::lend_slots): Reader::shifted(first) numbers them 0 to N - 1, and
/// this checks that a slot named by position is one of them, in every build
/// (folded for a constant position; a rotating one is named once per
/// traversal through first_slots, or, where slots are indexes, checked at
/// each protect as the scheme's own protect does). Copyable, and valid while
/// the block it came from lives.
template <class Reader, std::size_t N>
class block_reader {
  public:
    using slot_type = typename Reader::slot_type;
    /// Whether protect_from checks the node it steps out of (unlink.hpp).
    static constexpr bool checks_sources = requires { requires Reader::checks_sources; };

    /// `shifted`: the thread's reader, its slot 0 moved to the block's first.
    explicit block_reader(Reader shifted) noexcept : inner_(shifted) {}

    slot_type slot(int position) const noexcept { return inner_.slot(checked(position)); }
    int index(slot_type slot) const noexcept { return inner_.index(slot); }

    template <class T>
    T* protect(slot_type slot, const std::atomic<T*>& source) const noexcept {
        if constexpr (std::is_same_v<slot_type, int>) {
            return inner_.protect(checked(slot), source);
        } else {
            return inner_.protect(slot, source);
        }
    }
    /// A link inside a held node (smr::protect_in), where the inner reader
    /// takes the node.
    template <class T, class Parent>
    T* protect_in(slot_type slot, const std::atomic<T*>& source,
                  const Parent* parent) const noexcept requires requires(const Reader& inner) {
        inner.protect_in(slot, source, parent);
    }
    {
        if constexpr (std::is_same_v<slot_type, int>) {
            return inner_.protect_in(checked(slot), source, parent);
        } else {
            return inner_.protect_in(slot, source, parent);
        }
    }
    /// A step out of a node that may be unlinked (smr::protect_from,
    /// unlink.hpp), where the inner reader checks it.
    template <class T, class From>
    auto protect_from(slot_type slot, const std::atomic<T*>& source,
                      const From& from) const noexcept requires requires(const Reader& inner) {
        inner.protect_from(slot, source, from);
    }
    {
        if constexpr (std::is_same_v<slot_type, int>) {
            return inner_.protect_from(checked(slot), source, from);
        } else {
            return inner_.protect_from(slot, source, from);
        }
    }

  private:
    static int checked(int position) noexcept {
        SMR_CHECK(static_cast<unsigned>(position) < N,
                  "protect: slot position outside the block its guard lent (0 to N - 1)");
        return position;
    }

    Reader inner_;
};

}  // namespace smr::detail

namespace smr {

/// reader.protect(slot, source) for `source`, a link inside `parent`, a node
/// the traversal holds protected (nullptr: a root, outside every node the
/// domain frees). A scheme whose helpers may read `source` on the reader's
/// behalf (crystalline's wait-free protect) keeps `parent` alive for them
/// while they do; every other reader protects as protect does, and the
/// parent costs nothing. A structure passes the parent at every protect
/// whose source lies in a node.
template <class Reader, class Slot, class T, class Parent>
inline T* protect_in(const Reader& reader, Slot slot, const std::atomic<T*>& source,
                     const Parent* parent) noexcept {
    if constexpr (requires { reader.protect_in(slot, source, parent); }) {
        return reader.protect_in(slot, source, parent);
    } else {
        return reader.protect(slot, source);
    }
}

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
