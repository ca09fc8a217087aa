// ebr: Fraser's three-epoch epoch-based reclamation, as Hart et al. describe
// and measure it (JPDC 2007, Section 2.2, Fig. 4; Section 3.1 for its fences).
#pragma once

#include <atomic>
#include <cstdint>

#include "smr/core/limbo_bag.hpp"
#include "smr/reclaim/epoch_bags.hpp"
#include "smr/reclaim/epoch_domain.hpp"
#include "smr/reclaim/traits.hpp"

namespace smr {

namespace detail {
/// The announcement is Hart's per-thread flag (quiescent: outside a
/// critical region) and local epoch in one word.
struct ebr_local : epoch_thread_state {
    std::uint32_t entries_since_attempt = 0;
};
}  // namespace detail

/// Fraser's EBR. A thread sets its critical-region flag and a full fence on
/// entry (begin_op) and a fence and clears the flag on exit (end_op): Hart's
/// "two fences per operation", kept on purpose, since the cost of those fences
/// is what Hart et al. compare against QSBR and NEBR. On entry the thread also
/// copies the global epoch into its local epoch; whenever its local epoch
/// changes it frees its limbo bags that are three or more epochs old (see
/// detail::epoch_bags for why three). Every `advance_every` entries (Hart: 100)
/// it tries to advance the global epoch: it scans every registered thread and
/// succeeds only if each one inside a critical region is in the global epoch.
/// Unlike DEBRA, every attempt scans all threads.
///
/// Progress: end_op and retire are wait-free; begin_op is lock-free (it retries
/// only when the global epoch advances while it announces, and each advance is
/// progress), and its advance attempt is O(threads). Memory: bounded by about
/// three epochs of retirements per thread while every thread keeps finishing
/// its operations; unbounded if a thread stalls inside a critical region (the
/// epoch then cannot advance past that thread's epoch + 1).
class ebr_domain : public epoch_domain<ebr_domain, detail::ebr_local> {
    using base = epoch_domain<ebr_domain, detail::ebr_local>;
    friend base;

  public:
    static constexpr reclaimer_traits traits{
        .name = "ebr",
        .family = reclaimer_family::epoch,
        .garbage_bounded = false,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = false,
        .threads_begin_epochs = true,
        .reads = {.advance_every = true, .min_epoch_us = true},
    };

    using base::base;

    /// critical_enter (Hart, Listing 2, line 5).
    void on_begin_op(int tid) noexcept {
        auto& me = local(tid);
        // acquire: pairs with the CAS that advanced the epoch, which happened
        // after the advancer saw every thread's earlier regions end.
        std::uint64_t epoch = global_epoch_.load(std::memory_order_acquire);
        if (epoch != me.epoch) enter_epoch_and_free(tid, epoch);  // frees outside the region
        amortized_step(tid);
        for (;;) {
            // Hart's first fence: a seq_cst RMW (xchg on x86, a full fence).
            // With the seq_cst re-read below it forms a Dekker pair with the
            // advancer's seq_cst announcement loads and CAS: either the
            // advancer sees us in the region, or we see its new epoch. The
            // re-read also proves the epoch did not move on while we were out
            // of the region; otherwise our retirements would be labelled two
            // epochs stale and freed one epoch early.
            me.announce.exchange(announcing(epoch), std::memory_order_seq_cst);
            const std::uint64_t now = global_epoch_.load(std::memory_order_seq_cst);
            if (now == epoch) break;
            epoch = now;
            enter_epoch_and_free(tid, epoch);
        }
        if (++me.entries_since_attempt >= config().advance_every) {
            me.entries_since_attempt = 0;
            try_advance(tid, epoch);
        }
    }

    /// critical_exit (Hart, Listing 2, lines 10 and 14).
    void on_end_op(int tid) noexcept {
        auto& me = local(tid);
        // Hart's second fence: a seq_cst RMW. Its release half is what safety
        // needs (the region's reads of shared nodes happen before an advancer
        // that sees the flag clear moves the epoch, and so before any free);
        // the full fence is the cost Hart et al. measure.
        me.announce.exchange(quiescent_in(me.epoch), std::memory_order_seq_cst);
    }

    /// The caller has left every operation; clearing the flag again is
    /// harmless and covers a thread that exits from inside a region by mistake.
    void on_thread_exit(int tid) noexcept { on_end_op(tid); }

  private:
    /// A retire outside a critical region runs in one of its own.
    void open_for_retire(int tid) noexcept { on_begin_op(tid); }
    void close_after_retire(int tid) noexcept { on_end_op(tid); }

    void enter_epoch_and_free(int tid, std::uint64_t epoch) noexcept {
        core::limbo_bag safe;
        enter_epoch(tid, epoch, safe);
        dispose_safe(tid, safe);
    }

    /// The fuzzy barrier: advance only if every thread in a critical region is
    /// in `epoch` (threads outside a region hold no references).
    void try_advance(int tid, std::uint64_t epoch) noexcept {
        if (!all_announced(epoch)) return;
        // After the scan: an attempt that finds a laggard, the common case
        // with threads running, pays nothing for the minimum.
        if (!epoch_due()) return;  // domain_config::min_epoch_us
        advance_from(tid, epoch);
    }
};

}  // namespace smr
