// rcu: the RCU-style epoch-based reclamation of Wen et al.'s IBR benchmark
// ("Interval-Based Memory Reclamation", PPoPP 2018), the `rcu` tracker that
// the NBR and Epochs papers compare against.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>

#include "smr/core/fence.hpp"
#include "smr/core/limbo_bag.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/padded.hpp"
#include "smr/core/retired_node.hpp"
#include "smr/reclaim/domain_base.hpp"
#include "smr/reclaim/traits.hpp"

namespace smr {

/// The node header of rcu_epoch_domain (rcu_epoch_domain::node_header): the
/// retired-node link plus the global epoch read after the node's unlink.
struct rcu_node_header : core::retired_node {
    std::uint64_t retire_epoch = 0;
};

namespace detail {

// Fences (core::fence) only decide *which* values the scan sees (see
// rcu_epoch_domain); every edge from a reader to a free goes through a
// release store and an acquire load, which TSan checks.

struct rcu_local {
    static constexpr std::uint64_t no_reservation = std::numeric_limits<std::uint64_t>::max();

    /// The epoch reserved by the running operation, or no_reservation. Read
    /// by every scan; alone on its lines.
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> reservation{no_reservation};
    /// Retired nodes in retire order, hence in non-decreasing retire_epoch,
    /// but for adopted orphans (appended, maybe older): the scan frees a
    /// prefix, so a node out of order is freed later, never early.
    alignas(core::false_sharing_range) core::limbo_bag retired;
    std::size_t next_scan_at = 0;  // retire-list length that triggers the next scan
    std::uint32_t allocations = 0;

    void drain_into(core::limbo_bag& out) noexcept { out.splice_back(retired); }
};

}  // namespace detail

/// RCU-style EBR (IBR benchmark). A global epoch counter is incremented by a
/// thread every `epoch_freq` x T of its allocations, T the threads registered. An operation
/// reserves the epoch it starts in (begin_op) and drops the reservation when it ends (end_op). A
/// retired node is stamped with the global epoch read after its unlink and appended to the thread's
/// retire list; when the list reaches `bag_threshold` nodes the thread scans: every node whose
/// retire epoch is below the minimum reservation of all threads is safe. (The class is not called
/// rcu_domain: that name is kept for a future C++26-style API.)
///
/// Why it is safe. Reader T: load the global epoch (value e), store the
/// reservation e, fence, then read shared nodes. Retirer R: unlink node X,
/// fence, load the global epoch (stamp s), later (after more fences) scan.
/// Epoch increments are seq_cst RMWs. If T reaches X, T read X's pointer
/// before the unlink, which with the two fences puts T's fence before R's in
/// the order S of seq_cst operations ([atomics.order]: a read that is
/// coherence-ordered before a write, with fences sequenced around them); then
/// (1) s >= e: the increment that produced e precedes T's fence, hence R's
/// fence, hence R's stamp load, which must see it; and (2) R's scan, after R's
/// fence, sees T's reservation or a later value (end_op's "none", or a later
/// reservation, both release stores that order T's reads before the free). So
/// X (s >= e >= min) is kept while T may hold it. No re-read of the global
/// epoch is needed after reserving (unlike ebr/debra): a stale, smaller
/// reservation only keeps more nodes. The IBR benchmark has no fence in
/// retire; it relies on the unlink being a locked RMW on x86. Here the unlink
/// may be a plain store under a lock (lazylist), which x86 lets the stamp load
/// overtake, so retire pays one fence.
///
/// Scans stop at the first node not yet safe: a thread's stamps never
/// decrease (its loads of one atomic are coherent, and a slot's next owner
/// synchronizes with the last through the registry), so the safe nodes are a
/// prefix and a scan costs O(threads + freed) instead of the whole list --
/// with a stalled thread the list grows without bound, and re-walking it
/// would make every scan slower than the last. The next scan waits for
/// another `bag_threshold` retirements.
///
/// Progress: every hook is wait-free (a scan reads each slot once). Memory:
/// about `bag_threshold` plus one epoch's retirements per thread while
/// operations finish; unbounded if a thread stalls inside an operation
/// (its reservation pins every later retire epoch).
class rcu_epoch_domain : public domain_base<rcu_epoch_domain, detail::rcu_local, rcu_node_header> {
    using base = domain_base<rcu_epoch_domain, detail::rcu_local, rcu_node_header>;

  public:
    static constexpr reclaimer_traits traits{
        .name = "rcu",
        .family = reclaimer_family::epoch,
        .garbage_bounded = false,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = false,
        .reads = {.bag_threshold = true, .epoch_freq = true},
    };

    using node_header = rcu_node_header;
    static constexpr std::uint64_t no_reservation = detail::rcu_local::no_reservation;

    using base::base;

    void begin_op(int tid) noexcept {
        amortized_step(tid);
        auto& me = local(tid);
        // relaxed: the fence below orders it (the increment that wrote this
        // value is a seq_cst RMW, so it precedes our fence in S).
        const std::uint64_t epoch = global_epoch_.load(std::memory_order_relaxed);
        // release: a scan that reads this reservation (acquire) is ordered
        // after our previous operations' reads.
        me.reservation.store(epoch, std::memory_order_release);
        // seq_cst fence: orders the reservation before every read of this
        // operation, against retire's fence (see the class comment).
        core::fence();
    }

    void end_op(int tid) noexcept {
        // release: the operation's reads happen before a scan that sees "no
        // reservation" (acquire) frees what they read.
        local(tid).reservation.store(no_reservation, std::memory_order_release);
    }

    void on_allocate(int tid, rcu_node_header&) noexcept { tick_clock(tid); }

    /// Every `epoch_freq` x T allocations of this thread advance the global
    /// epoch (domain_config::epoch_freq).
    void tick_clock(int tid) noexcept {
        if (!clock_due(local(tid).allocations)) return;
        // seq_cst: the safety argument needs increments in S.
        const std::uint64_t epoch = global_epoch_.fetch_add(1, std::memory_order_seq_cst) + 1;
        note_epoch_advanced(tid, epoch);
    }

    template <class T>
    void retire(int tid, T* node) noexcept {
        count_retired(tid, node);
        auto& me = local(tid);
        // seq_cst fence: the node's unlink (the caller's last write) is
        // ordered before the stamp load against readers' fences.
        core::fence();
        node->retire_epoch = global_epoch_.load(std::memory_order_relaxed);
        adopt_orphans(tid, me.retired);
        me.retired.push_back(node);
        if (me.next_scan_at == 0) me.next_scan_at = config().bag_threshold;
        if (me.retired.size() >= me.next_scan_at) scan(tid);
        hand_over_if_offline(tid);
    }

    /// Unlike ebr/nebr/qsbr, a registered thread between operations holds
    /// nothing, so offline is the default. Exiting clears a stale reservation
    /// and orphans the retire list: the next thread that retires adopts it
    /// into its own (the nodes carry their stamps), so it counts towards that
    /// thread's next scan.
    void on_thread_exit(int tid) noexcept { end_op(tid); }
    void hand_over_garbage(int tid) noexcept { orphans().give(local(tid).retired, 0); }
    /// A barrier's round: adopt every orphan and scan now.
    void flush_step(int tid) noexcept {
        // Move the epoch on first: readers that keep starting in the epoch
        // our newest nodes were stamped with would otherwise keep them.
        // seq_cst: increments are in S (the class comment's argument).
        const std::uint64_t epoch = global_epoch_.fetch_add(1, std::memory_order_seq_cst) + 1;
        note_epoch_advanced(tid, epoch);
        adopt_orphans(tid, local(tid).retired);
        scan(tid);
    }

    std::uint64_t global_epoch() const noexcept {
        return global_epoch_.load(std::memory_order_relaxed);
    }

  private:
    void scan(int tid) noexcept {
        auto& me = local(tid);
        std::uint64_t min_reserved = no_reservation;
        const int limit = threads().scan_limit();
        for (int i = 0; i < limit; ++i) {
            // acquire: pairs with end_op's and begin_op's release stores, so a
            // finished operation's reads happen before what we free.
            const std::uint64_t r = local(i).reservation.load(std::memory_order_acquire);
            if (r < min_reserved) min_reserved = r;
        }
        core::limbo_bag safe;
        while (!me.retired.empty() &&
               static_cast<rcu_node_header*>(me.retired.front())->retire_epoch <
                   min_reserved + (SMR_MUTANT("rcu_free_one_epoch_early") ? 1 : 0)) {
            safe.push_back(me.retired.pop_front());
        }
        me.next_scan_at = me.retired.size() + config().bag_threshold;
        dispose_safe(tid, safe);
    }

    alignas(core::false_sharing_range) std::atomic<std::uint64_t> global_epoch_{0};
};

}  // namespace smr
