// ibr: 2GEIBR, the tagged two-global-era interval-based reclamation of Wen,
// Izraelevitz, Cai, Beadle and Scott ("Interval-Based Memory Reclamation",
// PPoPP 2018), the `2geibr` the NBR paper benchmarks against.
//
// Every node carries its birth era (stamped in on_allocate) and its retire
// era (read after its unlink). Each thread reserves one interval of eras,
// [lower, upper]: begin_op sets both to the current era; protect raises upper
// to the current era whenever the era has moved since the last raise, and
// re-reads the source until the era is stable. A node may be freed when its
// [birth, retire] intersects no thread's reservation. The global era advances
// every `epoch_freq` x T allocations of a thread, T the threads registered
// (the IBR benchmark's epochFreq x task_num);
// threads scan their retire lists at `bag_threshold` nodes.
//
// Trade-offs. One reservation per thread instead of one per pointer: protect
// costs a load and a compare in the common case (no fence unless the era
// moved), so traversals run at nearly epoch speed, and the interval covers
// every node read during the operation, so the data structure needs no slot
// discipline. Against epochs, a stalled thread's interval stops growing: it
// pins the nodes alive during [lower, upper], not the whole future, so garbage
// stays bounded. Against HE, a long operation's interval covers every era it
// lived through, so it pins more than HE's few eras; a scan is O(log threads)
// per node (intervals sorted by lower bound, with prefix maxima of upper).
// Like HP and HE, ibr cannot protect a traversal through already-unlinked
// nodes (lazylist, dgt_bst): such a node's successor may have been born and
// retired outside the reader's interval. Those combinations compile but are
// unsafe.
//
// Progress: protect is lock-free (it retries only when the era moves);
// everything else is wait-free. Memory: per thread, bag_threshold plus the
// nodes whose lifetimes intersect a reservation; a stalled thread pins the
// nodes alive during its interval, which stops growing when it stalls.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <utility>

#include "smr/core/asymmetric_fence.hpp"
#include "smr/core/limbo_bag.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/padded.hpp"
#include "smr/core/scan_buffer.hpp"
#include "smr/reclaim/era_domain.hpp"
#include "smr/reclaim/reservation_common.hpp"
#include "smr/reclaim/traits.hpp"

namespace smr {

namespace detail {

struct ibr_local {
    static constexpr std::uint64_t none = std::numeric_limits<std::uint64_t>::max();

    /// The reservation [lower, upper]; lower == none outside operations.
    /// Read by every scan; alone on their lines.
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> lower{none};
    std::atomic<std::uint64_t> upper{0};
    /// Our own: the clock and the retire list (era_thread_state's members,
    /// beside the cached upper on one line instead of a line of their own).
    alignas(core::false_sharing_range) std::uint64_t upper_cache = 0;
    std::uint32_t allocations = 0;
    core::limbo_bag retired;
    std::size_t next_scan_at = 0;
    /// The scan's intervals sorted by lower, upper replaced by the prefix
    /// maximum of upper; reused.
    core::scan_buffer<std::pair<std::uint64_t, std::uint64_t>> scratch;  // sized at registration

    void drain_into(core::limbo_bag& out) noexcept { out.splice_back(retired); }
};

}  // namespace detail

/// 2GEIBR; see the comment at the top of this file.
class ibr_domain : public era_domain<ibr_domain, detail::ibr_local> {
    using base = era_domain<ibr_domain, detail::ibr_local>;
    friend base;
    static constexpr std::uint64_t none = detail::ibr_local::none;

  public:
    static constexpr reclaimer_traits traits{
        .name = "ibr",
        .family = reclaimer_family::reservation,
        .garbage_bounded = true,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = false,
        .reads = {.bag_threshold = true, .epoch_freq = true, .fence = true},
    };

    using base::base;

    /// Room for every thread's interval, so that the scan inside retire
    /// (noexcept) never allocates.
    void on_thread_enter(int tid) { local(tid).scratch.reserve(config().max_threads); }

    void on_begin_op(int tid) noexcept {
        amortized_step(tid);
        auto& me = local(tid);
        // seq_cst: see protect.
        const std::uint64_t era = global_era_.load(std::memory_order_seq_cst);
        me.upper_cache = era;
        me.upper.store(era, std::memory_order_relaxed);
        // release: a scan that reads this lower (acquire) also sees the upper
        // stored just before, never a previous operation's smaller one.
        me.lower.store(era, std::memory_order_release);
        // The reader's side of the pair with scan (hp.hpp): the
        // reservation precedes every read of this operation, or the scan's
        // unlinks precede those reads. Asymmetric by default: a compiler
        // barrier per operation, a membarrier per scan.
        fences_.reader();
    }

    template <class T>
    T* on_protect(int tid, int index, const std::atomic<T*>& source) noexcept {
        detail::check_slot(index);  // one reservation per thread, but hp's would index
        auto& me = local(tid);
        for (;;) {
            // seq_cst (acquire on every target, a plain load on x86): pairs
            // with the release (or CAS) that published the node, and is the
            // reader's half of the stamp argument (era_domain.hpp).
            T* ptr = source.load(std::memory_order_seq_cst);
            // seq_cst: the increment that wrote this era precedes in S every
            // later seq_cst load of ours (the stamp argument).
            const std::uint64_t era = global_era_.load(std::memory_order_seq_cst);
            if (era == me.upper_cache || SMR_MUTANT("ibr_protect_skips_validation")) return ptr;
            me.upper_cache = era;
            // The reader's side of the pair with scan, as in begin_op: the
            // raised upper precedes the next source load. Release so a scan
            // that reads it (acquire) is ordered after this operation's
            // earlier reads.
            me.upper.store(era, std::memory_order_release);
            fences_.reader(me.upper, source);
        }
    }

    void on_end_op(int tid) noexcept {
        // release: the operation's reads happen before a scan that reads
        // `none` (acquire) and frees what they read.
        local(tid).lower.store(none, std::memory_order_release);
    }

    /// A barrier's round: move the era on, then adopt every orphan and scan
    /// (ibr's scan does not move the era itself, as he's does): readers that
    /// keep starting in the era our newest nodes retired in would otherwise
    /// keep reserving it.
    void flush_step(int tid) {
        advance_era(tid);
        base::flush_step(tid);
    }

  private:
    /// Unlike he's, ibr's scan leaves the era where it is (2GEIBR moves it
    /// only at allocations).
    void scan(int tid, std::uint64_t /*retire_era*/) {
        auto& me = local(tid);
        // The reclaimer's side of begin_op's and protect's pair: the unlinks
        // of our list (ours, or an orphan's, through the orphanage's release
        // and acquire) precede the reservation loads.
        if (!SMR_MUTANT("era_scan_skips_reclaimer_fence") && fences_.reclaimer()) {
            count_heavy_barrier(tid);
        }
        auto& intervals = me.scratch;
        intervals.clear();
        const int limit = threads().scan_limit();
        for (int i = 0; i < limit; ++i) {
            const auto& other = local(i);
            // acquire: pairs with end_op's release (a finished operation's
            // reads happen before our frees) and with begin_op's release.
            const std::uint64_t lower = other.lower.load(std::memory_order_acquire);
            if (lower == none || SMR_MUTANT("ibr_scan_ignores_reservations")) continue;
            const std::uint64_t upper = other.upper.load(std::memory_order_acquire);
            intervals.push_back({lower, std::max(lower, upper)});
        }
        std::sort(intervals.begin(), intervals.end());
        auto* sorted = intervals.begin();
        for (std::size_t i = 1; i < intervals.size(); ++i) {
            sorted[i].second = std::max(sorted[i].second, sorted[i - 1].second);
        }
        // A node conflicts iff some reservation has lower <= retire and
        // upper >= birth: among the reservations with lower <= retire (a
        // prefix), the largest upper decides.
        core::limbo_bag safe = me.retired.extract_unless([&](core::retired_node* n) {
            const auto* node = static_cast<const era_node_header*>(n);
            auto end = std::upper_bound(
                intervals.begin(), intervals.end(), node->retire_era,
                [](std::uint64_t value, const auto& interval) { return value < interval.first; });
            return end != intervals.begin() && std::prev(end)->second >= node->birth_era;
        });
        schedule_next_scan(me);
        dispose_safe(tid, safe);
    }
};

}  // namespace smr
