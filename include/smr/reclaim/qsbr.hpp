// qsbr: quiescent-state-based reclamation with a fuzzy barrier (Hart et al.,
// JPDC 2007, Section 2.1; the fuzzy barrier is Gupta's).
#pragma once

#include <atomic>
#include <cstdint>

#include "smr/core/limbo_bag.hpp"
#include "smr/reclaim/epoch_bags.hpp"
#include "smr/reclaim/epoch_domain.hpp"
#include "smr/reclaim/traits.hpp"

namespace smr {

namespace detail {
/// The announcement's epoch is that of the thread's last quiescent state;
/// it is quiescent while the thread is offline.
struct qsbr_local : epoch_thread_state {};
}  // namespace detail

/// QSBR as Hart et al. define it. The application declares quiescent states,
/// points where the thread holds no reference to a shared node, by calling
/// quiescent(tid) (smrbench does every `quiescent_every` operations; Hart's
/// Listing 4 once per loop of 100). Each one enters a fuzzy barrier: the
/// thread reads the global epoch, and if it moved, announces the new epoch and
/// frees its bags three epochs old; then it tries to advance the epoch, which
/// succeeds if every online thread has announced the current one. Hart et al.
/// use EBR's fuzzy barrier for both schemes (Section 4), so the attempt is the
/// same full scan as ebr's, made at every quiescent state where ebr makes it
/// every `advance_every` critical regions. Operations themselves do no epoch
/// work: begin_op only runs amortized free's step, end_op nothing.
/// thread_offline declares an extended quiescent state (the thread holds up
/// nobody until thread_online).
///
/// Why a release store suffices to announce (no fence): an announcement of
/// epoch e says "since my previous announcement I passed a quiescent state".
/// Release orders every read of the previous interval before it, so a checker
/// that sees e (acquire) knows those reads are done. A store-load reordering
/// that lets the *next* interval's reads run before the store is visible is
/// harmless: those reads happen after the thread read the global epoch e
/// (acquire), so they cannot reach a node unlinked before epoch e - 1 was
/// left, and the thread's old announcement, until the new one is visible,
/// only keeps the epoch from advancing (a late announcement delays, never
/// permits). Only going from offline to online needs the Dekker fence.
///
/// Progress: begin_op, end_op, retire and quiescent are wait-free (quiescent
/// reads every registered thread's slot: O(threads)). Blocking for
/// reclamation: an online thread that stops declaring quiescent states, even
/// outside any operation, stalls every other thread's reclamation
/// (Hart, Fig. 3). Memory: about three epochs of retirements per thread while
/// all online threads keep declaring quiescent states; unbounded otherwise.
class qsbr_domain : public epoch_domain<qsbr_domain, detail::qsbr_local> {
    using base = epoch_domain<qsbr_domain, detail::qsbr_local>;
    friend base;
    friend domain_base<qsbr_domain, detail::qsbr_local>;

  public:
    static constexpr reclaimer_traits traits{
        .name = "qsbr",
        .family = reclaimer_family::epoch,
        .garbage_bounded = false,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = true,
        .threads_begin_epochs = true,
        .reads = {.min_epoch_us = true},
    };

    using base::base;

    // on_begin_op (amortized free's step) and on_end_op (empty) are inherited.

    /// The fuzzy barrier (Hart's quiescent_state()).
    void on_quiescent(int tid) noexcept {
        auto& me = local(tid);
        // acquire: pairs with the CAS that advanced the epoch, which happened
        // after the advancer saw every thread announce the previous epoch.
        const std::uint64_t epoch = global_epoch_.load(std::memory_order_acquire);
        if (epoch != me.epoch) [[unlikely]] {
            announce_epoch(tid, epoch);
        }
        try_advance(tid, epoch);
    }

    void on_thread_enter(int tid) noexcept { thread_online(lent{tid}); }
    void on_thread_exit(int tid) noexcept { thread_offline(lent{tid}); }

  private:
    /// Leaves the extended quiescent state, with the fence QSBR otherwise
    /// avoids, and the re-read (epoch_domain::announce_online).
    void come_online(int tid) noexcept { announce_online(tid); }
    /// Enters an extended quiescent state: never blocks, holds up nobody.
    void go_offline(int tid) noexcept { announce_offline(tid); }

    /// A retire while offline comes online for it.
    void open_for_retire(int tid) noexcept { come_online(tid); }
    void close_after_retire(int tid) noexcept { go_offline(tid); }

    /// The fuzzy barrier's attempt: advance only if every online thread has
    /// announced `epoch` (this one just did). Out of line: a loop over the
    /// registered threads, run at every quiescent state.
    SMR_SLOW_PATH void try_advance(int tid, std::uint64_t epoch) noexcept {
        // seq_cst (the same instruction as quiescent()'s acquire load on x86
        // and ARMv8): thread_online's Dekker argument needs the epoch we check
        // against to precede the announcement loads in S.
        if (global_epoch_.load(std::memory_order_seq_cst) != epoch) return;
        // The other half of thread_online's Dekker pair; this thread just
        // announced `epoch` and is not scanned.
        if (!all_announced(epoch, tid)) return;  // try again at the next state
        if (!epoch_due()) return;  // domain_config::min_epoch_us (after the scan, as ebr's)
        advance_from(tid, epoch);
    }
};

}  // namespace smr
