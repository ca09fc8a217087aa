// epoch_pop: EpochPOP (Singh and Brown, "Publish on Ping", PPoPP 2025,
// arXiv:2501.04250; the mechanism: publish_on_ping.hpp): epochs for speed,
// hazard pointers published on ping for robustness.
//
// Every operation reserves the current epoch, as under rcu (the IBR
// benchmark's RCU-style EBR: rcu.hpp), and every pointer it reads is also
// protected in a private hazard cell, as under hp_pop. Retired nodes are
// stamped with the epoch read after their unlink. At the high watermark a
// thread first frees, as rcu does, the prefix of its list stamped below
// every reservation; if that freed little -- a thread stalled or preempted
// inside an operation holds the epochs back -- it falls back to hp_pop's
// reclaim: it pings every other thread and frees every node no published
// hazard names. Past the low watermark it waits for another thread's ping
// round, as hp_pop (signals.hpp, round_watcher). So while every thread
// makes progress it runs at epoch speed with no signal, and a stalled thread
// pins only its hazards' nodes: garbage stays bounded.
//
// Why either sweep is safe. The epoch sweep is rcu's argument (reserve's
// fence against retire's fence before the stamp: rcu.hpp); the hazard sweep
// is hp_pop's (publish_on_ping.hpp). Each frees a node only when its own
// argument says no reader can reach it, and readers pay both protections.
//
// Where we depart from the artifact (reclaimer_rcu_popplushp.h at fdf0712;
// docs/design.md, fidelity table): the reservation is a release store and a
// seq_cst fence, as rcu's (the artifact stores it with release alone, its
// seq_cst commented out, which lets the first reads of an operation pass
// the store on x86 and a reclaimer miss the reservation); the ping waits for
// the publications (as hp_pop's); the low watermark is half the high one, as
// hp_pop's (the artifact's is an eighth, with a random attempt frequency);
// the fallback's threshold is a fraction, not a count: the ping round runs
// when the epoch sweep freed less than a sixth of the high watermark (the
// artifact: fewer than 4,096 of its 24,576, the same sixth, which at
// smrbench's 2K watermark would never be reached).
//
// Trade-offs. Per operation: rcu's store and fence, and hp_pop's private
// hazard stores per node; per reclaim, no signal unless a thread holds the
// epochs back. Like hp_pop it cannot protect a traversal through unlinked
// nodes (the hazard sweep would free their successors), so the
// compatibility table treats it as a reservation scheme.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "smr/core/fence.hpp"
#include "smr/core/limbo_bag.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/padded.hpp"
#include "smr/reclaim/hp_pop.hpp"
#include "smr/reclaim/rcu.hpp"
#include "smr/reclaim/traits.hpp"

namespace smr {

namespace detail {

struct epoch_pop_local : hp_pop_local {
    static constexpr std::uint64_t no_reservation = rcu_local::no_reservation;
    /// The epoch reserved by the running operation, or no_reservation. Read
    /// by every epoch sweep; alone on its lines.
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> reservation{no_reservation};
    std::uint32_t allocations = 0;  // the owner's: the clock's count
};

}  // namespace detail

/// EpochPOP; see the comment at the top of this file. Parameters: those of
/// hp_pop, and epoch_freq (rcu's clock).
class epoch_pop_domain
    : public detail::pop_hazards<epoch_pop_domain, detail::epoch_pop_local, rcu_node_header> {
    using base = detail::pop_hazards<epoch_pop_domain, detail::epoch_pop_local, rcu_node_header>;

  public:
    using node_header = rcu_node_header;
    static constexpr std::uint64_t no_reservation = detail::epoch_pop_local::no_reservation;

    static constexpr reclaimer_traits traits{
        .name = "epoch_pop",
        .family = reclaimer_family::reservation,
        .garbage_bounded = true,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .pings = true,
        .needs_quiescent_states = false,
        .protect_uses_slots = true,
        .nests = false,
        .reads = {.bag_threshold = true,
                  .epoch_freq = true,
                  .nbr_low_watermark = true,
                  .nbr_high_watermark = true,
                  .pop_signal = true},
    };
    static constexpr const char* mutant_ping_skips_wait = "epoch_pop_ping_skips_wait";
    static constexpr const char* mutant_reclaims_without_ping = "epoch_pop_reclaims_without_ping";

    explicit epoch_pop_domain(const domain_config& cfg) : base(cfg, "epoch_pop") {}

    // ---- operations -------------------------------------------------------------

    /// Reserves the current epoch (rcu's reserve: rcu.hpp's argument).
    void on_begin_op(int tid) noexcept {
        amortized_step(tid);
        // relaxed: the fence below orders it (the increment that wrote this
        // value is a seq_cst RMW, so it precedes our fence in S).
        const std::uint64_t epoch = global_epoch_.load(std::memory_order_relaxed);
        // release: a sweep that reads this reservation (acquire) is ordered
        // after this thread's reads under the reservation it replaces.
        local(tid).reservation.store(epoch, std::memory_order_release);
        // seq_cst fence: the reservation before every later read of shared
        // nodes, against retire's fence (the artifact's hole: top of file).
        core::fence();
    }

    /// Clears the hazards and drops the reservation: release, so the
    /// operation's reads happen before a sweep that sees "none" (acquire).
    void on_end_op(int tid) noexcept {
        clear_hazards(tid);
        local(tid).reservation.store(no_reservation, std::memory_order_release);
    }
    void on_thread_exit(int tid) noexcept {
        on_end_op(tid);
        base::on_thread_exit(tid);
    }

    void on_allocate(int tid, rcu_node_header&) noexcept { tick_clock(tid); }
    /// Every `epoch_freq` x T allocations of this thread move the epoch on.
    void tick_clock(int tid) noexcept {
        if (clock_due(local(tid).allocations)) advance_epoch(tid);
    }

    template <class T>
    void on_retire(int tid, T* node) noexcept {
        count_retired(tid, node);
        // seq_cst fence: the unlink before the stamp load (rcu.hpp).
        core::fence();
        node->retire_epoch = global_epoch_.load(std::memory_order_relaxed);
        append_retired(tid, node, [this, tid] { return sweep_epochs(tid); });
    }

    /// A barrier's round: move the epoch on, sweep by epochs, then the
    /// ping round and hazard sweep of everything left.
    void flush_step(int tid) noexcept {
        advance_epoch(tid);
        adopt_orphans(tid, local(tid).retired);
        (void)sweep_epochs(tid);
        base::flush_step(tid);
    }

    std::uint64_t global_epoch() const noexcept {
        return global_epoch_.load(std::memory_order_relaxed);
    }

  private:
    void advance_epoch(int tid) noexcept {
        // seq_cst: increments are in S (rcu.hpp's argument).
        const std::uint64_t epoch = global_epoch_.fetch_add(1, std::memory_order_seq_cst) + 1;
        note_epoch_advanced(tid, epoch);
    }

    /// rcu's scan: frees the prefix of the list stamped below every
    /// reservation. True if it freed at least a sixth of the high
    /// watermark, so no ping round is needed.
    SMR_SLOW_PATH bool sweep_epochs(int tid) noexcept {
        auto& me = local(tid);
        std::uint64_t min_reserved = no_reservation;
        const int limit = threads().scan_limit();
        for (int i = 0; i < limit; ++i) {
            // acquire: pairs with begin_op's and end_op's release stores.
            const std::uint64_t r = local(i).reservation.load(std::memory_order_acquire);
            if (r < min_reserved) min_reserved = r;
        }
        core::limbo_bag safe;
        while (!me.retired.empty() &&
               static_cast<rcu_node_header*>(me.retired.front())->retire_epoch < min_reserved) {
            safe.push_back(me.retired.pop_front());
        }
        const std::size_t freed = safe.size();
        dispose_safe(tid, safe);
        return freed >= std::max<std::size_t>(watermarks().high / 6, 1) ||
               SMR_MUTANT("epoch_pop_never_pings");
    }

    alignas(core::false_sharing_range) std::atomic<std::uint64_t> global_epoch_{0};
};

}  // namespace smr
