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
#include "smr/reclaim/domain_base.hpp"
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

    template <class T>
    T* protect(int index, const std::atomic<T*>& source) const noexcept {
        check_slot(index);
        auto& reserved = eras_[index];
        std::uint64_t prev = reserved.load(std::memory_order_relaxed);  // our own slot
        for (;;) {
            // seq_cst (acquire on every target, a plain load on x86): pairs
            // with the release (or CAS) that published the node, and is the
            // reader's half of the stamp argument in retire.
            T* ptr = source.load(std::memory_order_seq_cst);
            // seq_cst: the increment that wrote this era precedes in S every
            // later seq_cst load of ours (retire's argument). Read after the
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

struct he_local {
    /// Announced eras, no_era when unused. Read by every scan; alone on their lines.
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> eras[max_protect_slots] = {};
    alignas(core::false_sharing_range) std::uint32_t allocations = 0;
    core::limbo_bag retired;
    std::size_t next_scan_at = 0;
    era_set scratch;

    void drain_into(core::limbo_bag& out) noexcept { out.splice_back(retired); }
};

}  // namespace detail

/// Hazard Eras; see the comment at the top of this file.
class he_domain : public domain_base<he_domain, detail::he_local, era_node_header> {
    using base = domain_base<he_domain, detail::he_local, era_node_header>;

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

    using node_header = era_node_header;

    using base::base;

    /// Room for every era of every thread the domain can hold, so that the
    /// scan inside retire (noexcept) never allocates.
    void on_thread_enter(int tid) {
        local(tid).scratch.reserve(config().max_threads * max_protect_slots);
    }

    /// Reads the source and the era until the era is the one reserved
    /// (detail::era_reader).
    template <class T>
    T* protect(int tid, int index, const std::atomic<T*>& source) noexcept {
        return reader(tid).protect(index, source);
    }
    detail::era_reader reader(int tid) noexcept { return {local(tid).eras, global_era_, fences_}; }

    /// Clears every slot (as hp's end_op: cheaper than tracking the used ones).
    void end_op(int tid) noexcept {
        core::for_each_unrolled(local(tid).eras, [](std::atomic<std::uint64_t>& era) {
            // release: the operation's reads happen before a scan that reads
            // no_era (acquire) and frees what they read.
            era.store(detail::no_era, std::memory_order_release);
        });
    }

    /// Every `epoch_freq` x T allocations of this thread advance the era
    /// (domain_config::epoch_freq).
    void tick_clock(int tid) noexcept {
        if (clock_due(local(tid).allocations)) advance_era(tid);
    }

    void on_allocate(int tid, era_node_header& node) noexcept {
        tick_clock(tid);
        // relaxed: a reader reaches the node only through its publication,
        // which happens after this load, so the reader's later era loads
        // return this era or a later one (coherence).
        node.birth_era = global_era_.load(std::memory_order_relaxed);
    }

    template <class T>
    void retire(int tid, T* node) noexcept {
        count_retired(tid, node);
        auto& me = local(tid);
        // seq_cst fence, in either fence mode: the unlink (the caller's last
        // write, maybe a plain store under a lock) precedes the stamp load,
        // so the stamp is at least every era a reader that still reached the
        // node validated. If our load missed the increment to era e, this
        // fence precedes it in S, and so every reader's seq_cst loads after
        // its load of e: its source load then sees the unlink. The reader's
        // side is protect's seq_cst loads, not its fence, which may be a
        // compiler barrier.
        core::fence();
        node->retire_era = global_era_.load(std::memory_order_relaxed);
        adopt_orphans(tid, me.retired);
        me.retired.push_back(node);
        if (me.next_scan_at == 0) me.next_scan_at = config().bag_threshold;
        if (me.retired.size() >= me.next_scan_at) scan(tid, node->retire_era);
        hand_over_if_offline(tid);
    }

    /// Clears every reservation and orphans the retire list (judged node
    /// by node, by its eras, in the adopter's scan).
    void on_thread_exit(int tid) noexcept { end_op(tid); }
    void hand_over_garbage(int tid) noexcept { orphans().give(local(tid).retired, 0); }
    /// A barrier's round: adopt every orphan and scan now (moving the era on,
    /// so that readers that start now reserve none of the adopted eras).
    void flush_step(int tid) {
        adopt_orphans(tid, local(tid).retired);
        scan(tid, global_era_.load(std::memory_order_relaxed));
    }

    std::uint64_t global_era() const noexcept {
        return global_era_.load(std::memory_order_relaxed);
    }

  private:
    void advance_era(int tid) noexcept {
        // seq_cst: era increments are in S, which the stamp argument needs.
        const std::uint64_t era = global_era_.fetch_add(1, std::memory_order_seq_cst) + 1;
        note_epoch_advanced(tid, era);
    }

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
        me.next_scan_at = me.retired.size() + config().bag_threshold;
        dispose_safe(tid, safe);
    }

    alignas(core::false_sharing_range) std::atomic<std::uint64_t> global_era_{1};
    /// Read by every protect; on a line of its own (global_era_'s is
    /// written at every era increment).
    alignas(core::false_sharing_range) core::fence_pair fences_{config().fence};

  public:
    /// The fences this domain's readers and scans use (config().fence, or
    /// symmetric where asymmetric is unavailable).
    fence_mode fence() const noexcept { return fences_.mode(); }
};

}  // namespace smr
