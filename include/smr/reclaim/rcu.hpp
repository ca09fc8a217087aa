// rcu and qsbr_ibr: the RCU-style epoch-based reclamation and the QSBR of
// Wen et al.'s IBR benchmark ("Interval-Based Memory Reclamation", PPoPP
// 2018), the `rcu` tracker that the NBR and Epochs papers compare against and
// the QSBR of the Epochs paper's Figure 11.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>

#include "smr/core/fence.hpp"
#include "smr/core/limbo_bag.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/padded.hpp"
#include "smr/core/retired_node.hpp"
#include "smr/reclaim/retire_list.hpp"
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

namespace detail {

/// What the IBR benchmark's two epoch schemes share (rcu_epoch_domain and
/// qsbr_ibr_domain): a global epoch that a thread moves on every
/// `epoch_freq` x T of its allocations (T the threads registered), retired
/// nodes stamped with the epoch read after their unlink, one reservation word
/// per thread, and a scan at every `bag_threshold` retirements that frees what
/// is stamped below every reservation. They differ only in when a thread
/// reserves: at each operation (rcu) or at each quiescent state (qsbr_ibr).
///
/// Why it is safe. Reader T: load the global epoch (value e), store the
/// reservation e, fence (reserve()), then read shared nodes. Retirer R:
/// unlink node X, fence, load the global epoch (stamp s), later (after more
/// fences) scan. Epoch increments are seq_cst RMWs. If T reaches X, T read
/// X's pointer before the unlink, which with the two fences puts T's fence
/// before R's in the order S of seq_cst operations ([atomics.order]: a read
/// that is coherence-ordered before a write, with fences sequenced around
/// them); then (1) s >= e: the increment that produced e precedes T's fence,
/// hence R's fence, hence R's stamp load, which must see it; and (2) R's scan,
/// after R's fence, sees T's reservation or a later value ("none", or a later
/// reservation, both release stores that order T's reads before the free).
/// So X (s >= e >= min) is kept while T may hold it. No re-read of the global
/// epoch is needed after reserving (unlike ebr/debra): a stale, smaller
/// reservation only keeps more nodes. The IBR benchmark has no fence in
/// retire; it relies on the unlink being a locked RMW on x86. Here the unlink
/// may be a plain store under a lock (lazylist), which x86 lets the stamp
/// load overtake, so retire pays one fence.
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
/// threads keep reserving; unbounded if a thread stalls holding a
/// reservation (it pins every later retire epoch).
template <class Derived>
class clocked_epochs : public retire_list_domain<Derived, rcu_local, rcu_node_header> {
    using base = retire_list_domain<Derived, rcu_local, rcu_node_header>;

  public:
    using node_header = rcu_node_header;
    static constexpr std::uint64_t no_reservation = rcu_local::no_reservation;

    using base::base;

    void on_allocate(int tid, rcu_node_header&) noexcept { tick_clock(tid); }

    /// Every `epoch_freq` x T allocations of this thread advance the global
    /// epoch (domain_config::epoch_freq).
    void tick_clock(int tid) noexcept {
        if (!this->clock_due(this->local(tid).allocations)) return;
        // seq_cst: the safety argument needs increments in S.
        const std::uint64_t epoch = global_epoch_.fetch_add(1, std::memory_order_seq_cst) + 1;
        this->note_epoch_advanced(tid, epoch);
    }

    template <class T>
    void on_retire(int tid, T* node) noexcept {
        this->count_retired(tid, node);
        // seq_cst fence: the node's unlink (the caller's last write) is
        // ordered before the stamp load against readers' fences.
        core::fence();
        node->retire_epoch = global_epoch_.load(std::memory_order_relaxed);
        this->template append_retired<&clocked_epochs::scan>(tid, node);
    }

    /// A barrier's round: adopt every orphan and scan now.
    void flush_step(int tid) noexcept {
        // Move the epoch on first: readers that keep reserving the epoch our
        // newest nodes were stamped with would otherwise keep them.
        // seq_cst: increments are in S (the class comment's argument).
        const std::uint64_t epoch = global_epoch_.fetch_add(1, std::memory_order_seq_cst) + 1;
        this->note_epoch_advanced(tid, epoch);
        // A quiescent state moves the caller's own reservation (qsbr_ibr's)
        // past the stamps it would pin; nothing under rcu.
        static_cast<Derived&>(*this).on_quiescent(tid);
        this->adopt_all_orphans(tid);
        scan(tid);
    }

    std::uint64_t global_epoch() const noexcept {
        return global_epoch_.load(std::memory_order_relaxed);
    }

  protected:
    /// Reserves the current epoch: the reader's half of the class comment's
    /// argument.
    void reserve(int tid) noexcept {
        // relaxed: the fence below orders it (the increment that wrote this
        // value is a seq_cst RMW, so it precedes our fence in S).
        const std::uint64_t epoch = global_epoch_.load(std::memory_order_relaxed);
        // release: a scan that reads this reservation (acquire) is ordered
        // after this thread's reads under the reservation it replaces.
        this->local(tid).reservation.store(epoch, std::memory_order_release);
        // seq_cst fence: orders the reservation before every later read of
        // shared nodes, against retire's fence.
        core::fence();
    }

    /// Holds nothing from now on.
    void drop_reservation(int tid) noexcept {
        // release: the reads made under the reservation happen before a scan
        // that sees "none" (acquire) frees what they read.
        this->local(tid).reservation.store(no_reservation, std::memory_order_release);
    }

  private:
    void scan(int tid) noexcept {
        auto& me = this->local(tid);
        std::uint64_t min_reserved = no_reservation;
        const int limit = this->threads().scan_limit();
        for (int i = 0; i < limit; ++i) {
            // acquire: pairs with reserve's and drop_reservation's release
            // stores, so reads under a replaced reservation happen before
            // what we free.
            const std::uint64_t r = this->local(i).reservation.load(std::memory_order_acquire);
            if (r < min_reserved) min_reserved = r;
        }
        core::limbo_bag safe;
        while (!me.retired.empty() &&
               static_cast<rcu_node_header*>(me.retired.front())->retire_epoch <
                   min_reserved + (SMR_MUTANT("rcu_free_one_epoch_early") ? 1 : 0)) {
            safe.push_back(me.retired.pop_front());
        }
        this->schedule_next_scan(me);
        this->dispose_safe(tid, safe);
    }

    alignas(core::false_sharing_range) std::atomic<std::uint64_t> global_epoch_{0};
};

}  // namespace detail

/// RCU-style EBR (IBR benchmark): an operation reserves the epoch it starts
/// in (begin_op) and drops the reservation when it ends (end_op); the rest,
/// and why it is safe, is detail::clocked_epochs. (The class is not called
/// rcu_domain: that name is kept for a future C++26-style API.)
///
/// A registered thread between operations holds nothing, so offline is the
/// default: unlike ebr/nebr/qsbr, an idle thread holds up no one.
class rcu_epoch_domain : public detail::clocked_epochs<rcu_epoch_domain> {
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

    using clocked_epochs::clocked_epochs;

    void on_begin_op(int tid) noexcept {
        amortized_step(tid);
        reserve(tid);
    }
    void on_end_op(int tid) noexcept { drop_reservation(tid); }
    /// Exiting clears a reservation left by an operation still open.
    void on_thread_exit(int tid) noexcept { on_end_op(tid); }
};

/// The QSBR of the IBR benchmark, which the Epochs paper's Figure 11 measures
/// as "QSBR" (its artifact's `reclaimer_qsbr.h`): rcu's epoch clock, stamps
/// and scans, with the reservation taken at each quiescent state instead of
/// each operation. A quiescent state reserves the current epoch, which
/// covers every read until the next one: no per-operation store or fence,
/// but a thread that stops announcing quiescent states while online holds
/// every node stamped since (Hart's qsbr, by contrast, runs a fuzzy barrier
/// over epoch announcements: qsbr_domain).
///
/// Two differences from the artifact, both for safety. It reserves when a
/// thread comes online (registration, thread_online): the artifact leaves a
/// new thread's reservation at "none" until its first operation ends, so
/// that operation is unprotected. And it drops the reservation when the
/// thread goes offline or unregisters, which the artifact's fixed threads
/// never do. Its reservation is a seq_cst store; ours a release store and a
/// seq_cst fence, the same instructions on x86, and what the C++ model needs
/// to order the store before the next operation's loads.
class qsbr_ibr_domain : public detail::clocked_epochs<qsbr_ibr_domain> {
  public:
    static constexpr reclaimer_traits traits{
        .name = "qsbr_ibr",
        .family = reclaimer_family::epoch,
        .garbage_bounded = false,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = true,
        .reads = {.bag_threshold = true, .epoch_freq = true},
    };

    using clocked_epochs::clocked_epochs;

    /// The artifact's endOp: reserve the epoch now current.
    void on_quiescent(int tid) noexcept { reserve(tid); }
    void on_thread_enter(int tid) noexcept { thread_online(lent{tid}); }
    void on_thread_exit(int tid) noexcept { thread_offline(lent{tid}); }
    void come_online(int tid) noexcept {
        if (!SMR_MUTANT("qsbr_ibr_online_without_reservation")) reserve(tid);
    }
    void go_offline(int tid) noexcept { drop_reservation(tid); }
};

}  // namespace smr
