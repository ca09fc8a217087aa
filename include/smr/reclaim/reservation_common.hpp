// What the reservation reclaimers (hp, he, ibr, wfe, and nbr's reservations)
// share: the era node header, the fence, and the scan helpers (the protect
// slots: slots.hpp).
#pragma once

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>

#include "smr/core/check.hpp"
#include "smr/core/fence.hpp"
#include "smr/core/limbo_bag.hpp"
#include "smr/core/retired_node.hpp"
#include "smr/core/scan_buffer.hpp"
#include "smr/reclaim/slots.hpp"

namespace smr {

/// The node header of he, ibr and wfe: the retired-node link plus the era
/// the node was allocated in and the era read after its unlink. A node may be
/// freed once no thread's reservation falls in [birth_era, retire_era].
struct era_node_header : core::retired_node {
    std::uint64_t birth_era = 0;
    std::uint64_t retire_era = 0;
};

namespace detail {

/// "No reservation" for an era slot. Eras start at 1.
inline constexpr std::uint64_t no_era = 0;

// The reservation schemes' fences (core::fence) only decide *which* values a
// scan sees (the announce-then-validate argument of Michael's hazard
// pointers); every edge from a reader's last use of a node to its free goes
// through a release store (end_op, or a slot overwritten by a later protect)
// and the scan's acquire load, which TSan does check.

/// The eras reserved by all threads, sorted, for "is any reserved era in
/// [birth, retire]?" in O(log n). The buffer lives in the scanning thread's
/// slot and is sized when the thread registers (reserve), so a scan never
/// allocates.
class era_set {
  public:
    void reserve(std::size_t eras) { eras_.reserve(eras); }
    void clear() noexcept { eras_.clear(); }
    void add(std::uint64_t era) noexcept {
        if (era != no_era) eras_.push_back(era);
    }
    void seal() noexcept { std::sort(eras_.begin(), eras_.end()); }
    bool any_in(std::uint64_t lower, std::uint64_t upper) const noexcept {
        auto it = std::lower_bound(eras_.begin(), eras_.end(), lower);
        return it != eras_.end() && *it <= upper;
    }
    std::size_t size() const noexcept { return eras_.size(); }

  private:
    core::scan_buffer<std::uint64_t> eras_;
};

/// collect_reserved's loads, appended to `out` (neither cleared nor
/// sealed): a scan that must read one kind of cell of every thread before
/// another (hp_pp's frontiers, then its hazards) gathers twice.
template <class Cells>
void gather_reserved(core::scan_buffer<const void*>& out, int limit, Cells&& cells,
                     bool honest) noexcept {
    for (int i = 0; i < limit; ++i) {
        for (const std::atomic<const void*>& cell : cells(i)) {
            const void* p = cell.load(std::memory_order_acquire);
            if (p != nullptr && honest) out.push_back(p);
        }
    }
}

/// A scan's first step in the schemes that reserve nodes by address (hp's
/// hazards, nbr's reservations): every non-null pointer that a thread below
/// `limit` publishes in its cells (`cells(i)`, a range of
/// std::atomic<const void*>), gathered into `out` and sorted for
/// contains(). Each load is acquire: it pairs with the release store that
/// last wrote the cell (the protect or read_phase_end that published the
/// node, or the end of the operation that cleared it), so what the owner
/// did with a node it no longer reserves happens before the scanner frees
/// it. `honest` false (a mutant of the calling scheme) gathers nothing.
template <class Cells>
void collect_reserved(core::scan_buffer<const void*>& out, int limit, Cells&& cells,
                      bool honest) noexcept {
    out.clear();
    gather_reserved(out, limit, cells, honest);
    out.seal();
}

/// A reclaim's second step in the schemes that signal (nbr, nbrplus and
/// the Publish-on-Ping schemes): takes out of `bag` the nodes among its
/// first `count` that `unreserved` accepts and returns them; the reserved
/// ones stay, in order, ahead of the nodes after the first `count`.
template <class Unreserved>
core::limbo_bag take_unreserved(core::limbo_bag& bag, std::size_t count,
                                Unreserved&& unreserved) noexcept {
    core::limbo_bag safe;
    if (count >= bag.size()) {
        // The whole bag: the few reserved nodes leave it, the rest is
        // compacted in place and freed as it stands, no entry copied into
        // another bag (one thread, dgt_bst 100K keys, nbr: 703.1 -> 694.4
        // instructions per operation).
        core::limbo_bag reserved = bag.extract_unless(unreserved);
        swap(safe, bag);
        swap(bag, reserved);
        return safe;
    }
    // A bookmarked prefix (a low-watermark reclaim): the nodes after it wait
    // for their own grace period.
    core::limbo_bag kept;
    for (std::size_t k = 0; k < count; ++k) {
        const core::retired_entry entry = bag.pop_front();
        if (!entry) break;
        if (unreserved(entry.node)) {
            safe.push_back(entry);
        } else {
            kept.push_back(entry);
        }
    }
    kept.splice_back(bag);  // reserved (older) nodes first, then the rest
    swap(kept, bag);
    return safe;
}

}  // namespace detail
}  // namespace smr
