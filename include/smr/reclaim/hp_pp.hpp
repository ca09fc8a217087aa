// hp_pp: HP++, hazard pointers for traversals through unlinked nodes (Jung,
// Lee, Kim, Kang, "Applying Hazard Pointers to More Concurrent Data
// Structures", SPAA 2023, DOI 10.1145/3558481.3591102).
//
// ---- The problem -------------------------------------------------------------
//
// A hazard pointer is safe because its validation re-reads the link it came
// from and finds it unchanged, so the node was still reachable once the
// hazard was visible. Out of an unlinked node that proves nothing: its
// links are frozen (marked), so the re-read always succeeds, and the node
// it names may have been unlinked and freed meanwhile (Harris's list, the
// lazy list, most trees). This is why hp refuses those structures.
//
// ---- HP++ --------------------------------------------------------------------
//
// The unlinker helps. Before its write that unlinks a set of nodes it
// protects their *frontier* -- the node their links lead to outside the set
// (smr::begin_unlink, reclaim/unlink.hpp) -- in a cell of its own that scans
// read; after the write it does not retire the nodes yet: it *invalidates*
// them (a flag in each node's header) and only then, past a fence, releases
// the frontier cells and retires the nodes. A reader that steps out of a
// node `from` (smr::protect_from) announces the successor, fences, and
// checks `from`'s flag as well as the link: invalidated, it restarts from
// the root; not invalidated, either `from` is still linked (plain hazard
// pointers' case) or its unlinker has not passed its fence yet, and then the
// unlinker's frontier cell still holds the successor -- or the successor is
// one of the same unlink's nodes, not retired before that fence.
//
// Why the reader is safe (symmetric fences; the asymmetric pair replaces the
// reader's fence by the reclaimer's membarrier, as in hp). Reader R:
// announce n; fence F_R; load from's flag, false. Unlinker U: flag store;
// fence F_U; release store clearing its frontier cell. Any scanner Z:
// fence; acquire loads of *every thread's frontier cells first*, then of the
// hazard cells. R's flag load missed U's store, so F_R precedes F_U in S.
// If Z read U's cell holding n, n stays. If it read the cleared cell, F_U
// happens before Z's later load of R's hazard (the release/acquire pair on
// U's cell), which then cannot miss R's announcement sequenced before F_R:
// [atomics.order] p4.4 would put F_U before F_R. Reading the hazards first
// would leave a window: Z reads R's cell before R announces and U's cell
// after U cleared it. The frontier's own announcement needs no fence: the
// frontier is unlinked only after U's unlink succeeded (it is reachable
// only through the unlinked nodes until then), so U's announcement happens
// before its retire by the release/acquire chain on the links, and before
// every scan that could free it.
//
// Invalidation is batched, as in the artifact: an unlink's nodes wait in
// the thread's `unlinked` bag, its frontier in one of hp_pp_frontier_cells
// cells; the scan (every R retires and unlinks) or a full set of cells
// invalidates the whole batch under one reclaimer fence, then releases the
// cells. Between an unlink and its batch its nodes are garbage, counted as
// retired.
//
// Progress: protect_from is lock-free (it retries while the link changes)
// and fails only on an invalidated node, which happens once per unlinked
// node a traversal stands on; the rest is hp's. Memory: per thread at most
// R + H retired nodes after a scan, H = threads x (max_protect_slots +
// frontier cells), and the batch: at most hp_pp_frontier_cells unlinks.
#pragma once

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "smr/core/asymmetric_fence.hpp"
#include "smr/core/check.hpp"
#include "smr/core/limbo_bag.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/padded.hpp"
#include "smr/core/retired_node.hpp"
#include "smr/core/scan_buffer.hpp"
#include "smr/core/unrolled.hpp"
#include "smr/reclaim/hp.hpp"
#include "smr/reclaim/reservation_common.hpp"
#include "smr/reclaim/retire_list.hpp"
#include "smr/reclaim/traits.hpp"
#include "smr/reclaim/unlink.hpp"

namespace smr {

/// hp_pp's node header: the invalidation flag (the artifact keeps it in the
/// tag bits of the node's links, which a domain cannot name).
struct hp_pp_node_header : core::retired_node {
    /// Set once, by the unlinker's batch, before the node is retired.
    std::atomic<bool> invalidated{false};
};

/// Frontier cells per thread: the unlinks a batch holds before it is
/// invalidated (the artifact's reclamation period, 128 unlinks and retires).
inline constexpr int hp_pp_frontier_cells = 128;

namespace detail {

/// `ptr` without the tag bits a link may carry below T's alignment.
template <class T>
T* untagged(T* ptr) noexcept {
    constexpr auto tag_bits = std::uintptr_t{alignof(T)} - 1;
    return reinterpret_cast<T*>(reinterpret_cast<std::uintptr_t>(ptr) & ~tag_bits);
}

/// hp's reader with HP++'s step out of a node that may be unlinked.
class hp_pp_reader : public hazard_reader {
  public:
    using hazard_reader::hazard_reader;
    hp_pp_reader(hazard_reader base) noexcept : hazard_reader(base) {}  // NOLINT: shifted's

    hp_pp_reader shifted(int first) const noexcept { return {hazard_reader::shifted(first)}; }

    /// smr::protect_from refuses to fall back to protect for this reader.
    static constexpr bool checks_sources = true;

    template <class T, class From>
    link_read<T> protect_from(int index, const std::atomic<T*>& source,
                              const From& from) const noexcept {
        return protect_from(slot(index), source, from);
    }

    /// Announce, fence, then check `from`'s flag and re-read its link (top
    /// of this file): the successor, or nothing valid when `from` is
    /// invalidated. The link's value comes back as read, tag bits and all;
    /// the hazard names the node.
    template <class T, class From>
    link_read<T> protect_from(slot_type slot, const std::atomic<T*>& source,
                              const From& from) const noexcept {
        static_assert(std::is_base_of_v<hp_pp_node_header, From>,
                      "protect_from: `from` must be a node of this domain");
        hazard_slot cell(cell_of(slot), fences());
        T* ptr = source.load(std::memory_order_acquire);  // pairs with the link's publication
        for (;;) {
            // The node itself: a link out of a marked node carries the mark
            // in its low bits (Harris's list), and a cell naming the tagged
            // address would protect nothing.
            cell.announce(SMR_MUTANT("hp_pp_announces_tagged_link") ? ptr : untagged(ptr));
            // acquire: after the fence; an invalidation missed here is one
            // whose unlinker still holds the frontier (top of this file).
            if (from.invalidated.load(std::memory_order_acquire) &&
                !SMR_MUTANT("hp_pp_ignores_invalidation")) {
                return {nullptr, false};
            }
            T* again = source.load(std::memory_order_acquire);
            if (again == ptr) return {ptr, true};
            ptr = again;
        }
    }
};

struct hp_pp_local {
    /// The thread's hazard pointers, as hp's. Read by every scan.
    alignas(core::false_sharing_range) std::atomic<const void*> hazards[max_protect_slots] = {};
    /// The frontiers of the unlinks not yet invalidated: cells 0 to
    /// frontier_used - 1. Read by every scan, before the hazards.
    alignas(core::false_sharing_range) std::atomic<const void*> frontier[hp_pp_frontier_cells] = {};
    alignas(core::false_sharing_range) int frontier_used = 0;
    core::limbo_bag unlinked;  // unlinked, not yet invalidated: their frontiers are held
    core::limbo_bag retired;
    std::size_t next_scan_at = 0;
    core::scan_buffer<const void*> scratch;

    void drain_into(core::limbo_bag& out) noexcept { out.splice_back(retired); }
};

}  // namespace detail

/// HP++; see the comment at the top of this file.
class hp_pp_domain
    : public retire_list_domain<hp_pp_domain, detail::hp_pp_local, hp_pp_node_header> {
    using base = retire_list_domain<hp_pp_domain, detail::hp_pp_local, hp_pp_node_header>;

  public:
    static constexpr reclaimer_traits traits{
        .name = "hp_pp",
        .family = reclaimer_family::reservation,
        .garbage_bounded = true,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = false,
        .protect_uses_slots = true,
        .nests = false,
        .invalidates_unlinked = true,
        .reads = {.bag_threshold = true,
                  .hp_scan_factor = true,
                  .hp_scan_offset = true,
                  .fence = true},
    };

    using base::base;

    /// An unlink in progress (smr::begin_unlink): holds a frontier cell;
    /// gives it back if nothing was retired through it (the unlink failed),
    /// and otherwise leaves it to the batch, which may run now.
    class [[nodiscard]] unlink_scope {
      public:
        unlink_scope(const unlink_scope&) = delete;
        unlink_scope& operator=(const unlink_scope&) = delete;
        ~unlink_scope() { domain_.end_unlink(tid_, cell_, retired_any_); }

        template <class T>
        void retire(T* node) noexcept {
            domain_.count_retired(tid_, node);
            domain_.local(tid_).unlinked.push_back(node);
            retired_any_ = true;
        }

      private:
        friend hp_pp_domain;
        unlink_scope(hp_pp_domain& domain, int tid, int cell) noexcept
            : domain_(domain), tid_(tid), cell_(cell) {}
        hp_pp_domain& domain_;
        int tid_;
        int cell_;
        bool retired_any_ = false;
    };

    /// Protects `frontier` in a cell of the thread's own before the caller's
    /// unlink (no fence: top of this file).
    template <class T>
    unlink_scope begin_unlink(lent self, T* frontier) noexcept {
        const int tid = tid_of(self);
        auto& me = local(tid);
        if (me.frontier_used == hp_pp_frontier_cells) invalidate_batch(tid);
        std::atomic<const void*>& cell = me.frontier[me.frontier_used++];
        if (!SMR_MUTANT("hp_pp_frontier_unprotected")) {
            // release: as a hazard's announcement.
            cell.store(static_cast<const core::retired_node*>(frontier), std::memory_order_release);
        }
        return unlink_scope(*this, tid, me.frontier_used - 1);
    }

    template <class T>
    T* on_protect(int tid, int index, const std::atomic<T*>& source) noexcept {
        return make_reader(tid).protect(index, source);
    }
    detail::hp_pp_reader make_reader(int tid) noexcept {
        return detail::hazard_reader{local(tid).hazards, fences_};
    }

    /// Room for every cell of every thread the domain can hold, so that the
    /// scan inside retire (noexcept) never allocates.
    void on_thread_enter(int tid) {
        local(tid).scratch.reserve(config().max_threads *
                                   (max_protect_slots + hp_pp_frontier_cells));
    }

    /// hp's: clears the hazards (the frontier cells outlive the operation).
    void on_end_op(int tid) noexcept { detail::clear_hazard_cells(local(tid).hazards); }

    template <class T>
    void on_retire(int tid, T* node) noexcept {
        count_retired(tid, node);
        append_retired<&hp_pp_domain::scan>(tid, node);
    }

    void on_thread_exit(int tid) noexcept {
        on_end_op(tid);
        invalidate_batch(tid);
    }
    /// The batch first: its nodes join the retire list the orphanage takes.
    void hand_over_garbage(int tid) noexcept {
        invalidate_batch(tid);
        base::hand_over_garbage(tid);
    }
    void flush_step(int tid) {
        adopt_all_orphans(tid);
        scan(tid);
    }

    fence_mode fence() const noexcept { return fences_.mode(); }

    /// hp's R, over the hazard slots alone: a thread's frontier cells are
    /// released at each of its batches and hold a few nodes at a time, and
    /// counting all 128 would raise R seventeenfold (a scan keeps at most
    /// the hazards and the frontiers held; the bound at the top of the file).
    std::size_t scan_threshold() const noexcept {
        return detail::hazard_scan_threshold(config(), registry().scan_limit());
    }

  private:
    /// After an unlink: a failed one gives its cell back; a successful one
    /// may complete the retire list's count to a scan.
    void end_unlink(int tid, int cell, bool retired_any) noexcept {
        auto& me = local(tid);
        if (!retired_any) {
            SMR_CHECK(cell == me.frontier_used - 1,
                      "smr::begin_unlink: another unlink began and ended inside this one");
            // release: as end_op's clear.
            me.frontier[--me.frontier_used].store(nullptr, std::memory_order_release);
            return;
        }
        adopt_orphans(tid, me.retired);  // as a retire does (retire_list.hpp)
        if (me.next_scan_at == 0) me.next_scan_at = scan_threshold();
        if (me.retired.size() + me.unlinked.size() >= me.next_scan_at) scan(tid);
        hand_over_if_offline(tid);
    }

    /// Invalidates the batch's nodes, fences, and only then releases its
    /// frontier cells and retires the nodes (top of this file). Returns
    /// whether it fenced (a scan that follows needs its own fence only if
    /// not).
    bool invalidate_batch(int tid) noexcept {
        auto& me = local(tid);
        if (me.unlinked.empty()) return false;
        me.unlinked.for_each([](const core::retired_entry& entry) {
            // relaxed: the fence below orders it before the cells' release.
            static_cast<hp_pp_node_header*>(entry.node)
                ->invalidated.store(true, std::memory_order_relaxed);
        });
        reclaimer_fence(tid);
        release_frontier(me);
        me.retired.splice_back(me.unlinked);
        return true;
    }

    static void release_frontier(detail::hp_pp_local& me) noexcept {
        for (int i = 0; i < me.frontier_used; ++i) {
            // release: pairs with a scan's acquire load, which then sees
            // every hazard announced before the invalidation (top of file).
            me.frontier[i].store(nullptr, std::memory_order_release);
        }
        me.frontier_used = 0;
    }

    void reclaimer_fence(int tid) noexcept {
        if (fences_.reclaimer()) count_heavy_barrier(tid);
    }

    void scan(int tid) {
        auto& me = local(tid);
        // The reclaimer's side of hp's pair, and of the invalidation's: one
        // fence for both when a batch was pending.
        if (!invalidate_batch(tid)) reclaimer_fence(tid);
        // Every thread's frontier cells before any hazard (top of file).
        me.scratch.clear();
        detail::gather_reserved(
            me.scratch,
            threads().scan_limit(), [this](int i) -> const auto& { return local(i).frontier; },
            true);
        detail::gather_reserved(
            me.scratch,
            threads().scan_limit(), [this](int i) -> const auto& { return local(i).hazards; },
            true);
        me.scratch.seal();
        core::limbo_bag safe = me.retired.extract_unless([&](core::retired_node* node) {
            return me.scratch.contains(static_cast<const void*>(node));
        });
        schedule_next_scan(me);
        dispose_safe(tid, safe);
    }

    alignas(core::false_sharing_range) core::fence_pair fences_{config().fence};
};

}  // namespace smr
