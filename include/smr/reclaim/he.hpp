// he: Hazard Eras (Ramalhete and Correia, "Brief Announcement: Hazard Eras -
// Non-Blocking Memory Reclamation", SPAA 2017).
//
// Hazard pointers with eras in place of addresses. A global era counter
// advances every `epoch_freq` x T allocations of a thread, T the threads
// registered (the IBR benchmark's epochFreq x task_num) and whenever a thread scans (as the IBR
// benchmark's HE does, so a retire-only phase still moves eras). Every node carries the era it was
// allocated in (birth, stamped in on_allocate) and the era read after its
// unlink (retire). protect(tid, slot, src) announces the current era in the
// slot and re-reads the era until it is stable, so the node it returns was
// reachable while the announced era was current. A thread scans its retire
// list when it reaches `bag_threshold` nodes and frees every node whose
// [birth, retire] interval contains no announced era.
//
// Trade-offs. Against HP: protect writes and fences only when the era has
// changed since the slot's last announcement, which with `epoch_freq` = 150
// is rare, so traversals cost almost as little as under epochs. That fence is
// hp's pair (domain_config::fence): asymmetric by default, a compiler barrier
// on the reader's side and a membarrier per scan. Against
// epochs: a stalled thread pins only the nodes alive at the eras it
// announced (at most `max_protect_slots` eras), not everything retired after
// it stalled, so garbage stays bounded. The cost is two 8-byte stamps per
// node and a scan that tests every retired node. Like HP it cannot protect a
// traversal through already-unlinked nodes (lazylist, dgt_bst): the unlinked
// node's successor may have been retired in an era the reader never
// announced. Those combinations compile but are unsafe.
//
// Progress: protect is lock-free (it retries only when the era moves; a
// thread that allocates in a tight loop can starve it, which is what WFE
// fixes); every other hook is wait-free. Memory: per thread, bag_threshold
// plus the nodes whose lifetimes contain an announced era; a stalled thread
// pins at most the nodes alive during the `max_protect_slots` eras it holds.
#pragma once

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>

#include "smr/core/asymmetric_fence.hpp"
#include "smr/core/limbo_bag.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/padded.hpp"
#include "smr/core/unrolled.hpp"
#include "smr/reclaim/era_domain.hpp"
#include "smr/reclaim/reservation_common.hpp"
#include "smr/reclaim/traits.hpp"

namespace smr {

namespace detail {

/// A thread's hazard eras for one traversal (domain_base::reader): its era
/// slots, the global era and the fence mode, read once.
class era_reader : public indexed_slots {
  public:
    era_reader(std::atomic<std::uint64_t>* eras, const std::atomic<std::uint64_t>& global_era,
               core::fence_pair fences) noexcept
        : eras_(eras), global_era_(&global_era), fences_(fences) {}

    /// The same reader with era slot `first` as its slot 0 (block_reader).
    era_reader shifted(int first) const noexcept {
        era_reader moved = *this;
        moved.eras_ += first;
        return moved;
    }

    template <class T>
    T* protect(int index, const std::atomic<T*>& source) const noexcept {
        check_slot(index);
        auto& reserved = eras_[index];
        std::uint64_t prev = reserved.load(std::memory_order_relaxed);  // our own slot
        for (;;) {
            // seq_cst (acquire on every target, a plain load on x86): pairs
            // with the release (or CAS) that published the node, and is the
            // reader's half of the stamp argument (era_domain.hpp).
            T* ptr = source.load(std::memory_order_seq_cst);
            // seq_cst: the increment that wrote this era precedes in S every
            // later seq_cst load of ours (the stamp argument). Read after the
            // pointer, it also bounds the node's birth era from above.
            const std::uint64_t era = global_era_->load(std::memory_order_seq_cst);
            if (era == prev || SMR_MUTANT("he_protect_skips_validation")) return ptr;
            // The Dekker pair with scan, as in hp.hpp: the reader's fence
            // orders the announcement before the next source load, the
            // scan's after its unlinks, so the re-read misses the unlink
            // only if the scan sees the era. Release because the store
            // overwrites the era that protected earlier reads (a scan
            // reading it, acquire, may free their nodes).
            reserved.store(era, std::memory_order_release);
            fences_.reader(reserved, source);
            prev = era;
        }
    }

  private:
    std::atomic<std::uint64_t>* eras_;
    const std::atomic<std::uint64_t>* global_era_;
    core::fence_pair fences_;
};

struct he_reservations {
    /// Announced eras, no_era when unused. Read by every scan; alone on their lines.
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> eras[max_protect_slots] = {};
};
using he_local = era_thread_state<he_reservations, era_set>;

}  // namespace detail

/// Hazard Eras; see the comment at the top of this file.
class he_domain : public era_domain<he_domain, detail::he_local> {
    using base = era_domain<he_domain, detail::he_local>;
    friend base;

  public:
    static constexpr reclaimer_traits traits{
        .name = "he",
        .family = reclaimer_family::reservation,
        .garbage_bounded = true,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = false,
        .protect_uses_slots = true,
        .nests = false,
        .reads = {.bag_threshold = true, .epoch_freq = true, .fence = true},
    };

    using base::base;

    /// Room for every era of every thread the domain can hold, so that the
    /// scan inside retire (noexcept) never allocates.
    void on_thread_enter(int tid) {
        local(tid).scratch.reserve(config().max_threads * max_protect_slots);
    }

    /// Reads the source and the era until the era is the one reserved
    /// (detail::era_reader).
    template <class T>
    T* on_protect(int tid, int index, const std::atomic<T*>& source) noexcept {
        return make_reader(tid).protect(index, source);
    }
    detail::era_reader make_reader(int tid) noexcept {
        return {local(tid).eras, global_era_, fences_};
    }

    /// Clears every slot (as hp's end_op: cheaper than tracking the used ones).
    void on_end_op(int tid) noexcept {
        core::for_each_unrolled(local(tid).eras, [](std::atomic<std::uint64_t>& era) {
            // release: the operation's reads happen before a scan that reads
            // no_era (acquire) and frees what they read.
            era.store(detail::no_era, std::memory_order_release);
        });
    }

  private:
    void scan(int tid, std::uint64_t last_retire_era) {
        auto& me = local(tid);
        // As the IBR benchmark's HE: move the era on (unless another thread
        // just did), so readers that start now do not pin our list.
        if (global_era_.load(std::memory_order_relaxed) == last_retire_era) advance_era(tid);
        // The reclaimer's side of protect's pair: the unlinks of our list
        // (ours, or an orphan's, which reach us through the orphanage's
        // release and acquire) precede the slot loads.
        if (!SMR_MUTANT("era_scan_skips_reclaimer_fence") && fences_.reclaimer()) {
            count_heavy_barrier(tid);
        }
        me.scratch.clear();
        const int limit = threads().scan_limit();
        for (int i = 0; i < limit; ++i) {
            for (const auto& entry : local(i).eras) {
                // acquire: pairs with end_op's release of the slot.
                const std::uint64_t era = entry.load(std::memory_order_acquire);
                if (!SMR_MUTANT("he_scan_ignores_reservations")) me.scratch.add(era);
            }
        }
        me.scratch.seal();
        core::limbo_bag safe = me.retired.extract_unless([&](core::retired_node* n) {
            const auto* node = static_cast<const era_node_header*>(n);
            return me.scratch.any_in(node->birth_era, node->retire_era);
        });
        schedule_next_scan(me);
        dispose_safe(tid, safe);
    }
};

}  // namespace smr
