// qsbr: quiescent-state-based reclamation with a fuzzy barrier (Hart et al.,
// JPDC 2007, Section 2.1; the fuzzy barrier is Gupta's).
#pragma once

#include <atomic>
#include <cstdint>

#include "smr/core/limbo_bag.hpp"
#include "smr/core/padded.hpp"
#include "smr/reclaim/domain_base.hpp"
#include "smr/reclaim/epoch_bags.hpp"
#include "smr/reclaim/traits.hpp"

namespace smr {

namespace detail {
struct qsbr_local {
    /// (epoch of the last quiescent state << 1) | offline. Read by checkers;
    /// alone on its lines.
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> announce{1};
    alignas(core::false_sharing_range) std::uint64_t epoch = 0;  // owner's copy
    epoch_bags bags;

    void drain_into(core::limbo_bag& out) noexcept { bags.drain_into(out); }
};
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
class qsbr_domain : public domain_base<qsbr_domain, detail::qsbr_local> {
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

    using domain_base::domain_base;

    // begin_op (amortized free's step) and end_op (empty) are inherited.

    /// Online, between quiescent states; or offline (then it comes online
    /// for the retire, docs/design.md "Retire outside an operation").
    template <class T>
    void retire(int tid, T* node) noexcept {
        slot& s = slot_of(tid);
        count_retired(s, node);
        // relaxed: the thread's own flag, written only by itself.
        if ((s.local.announce.load(std::memory_order_relaxed) & 1) != 0) [[unlikely]] {
            return retire_while_offline(tid, core::entry_of(node));
        }
        s.local.bags.add(core::entry_of(node));
    }

    /// The fuzzy barrier (Hart's quiescent_state()).
    void quiescent(int tid) noexcept {
        auto& me = local(tid);
        // acquire: pairs with the CAS that advanced the epoch, which happened
        // after the advancer saw every thread announce the previous epoch.
        const std::uint64_t epoch = global_epoch_.load(std::memory_order_acquire);
        if (epoch != me.epoch) [[unlikely]] {
            announce_epoch(tid, epoch);
        }
        try_advance(tid, epoch);
    }

    void on_thread_enter(int tid) noexcept { thread_online(tid); }
    void on_thread_exit(int tid) noexcept { thread_offline(tid); }
    void hand_over_garbage(int tid) noexcept { local(tid).bags.orphan_into(orphans()); }

    std::uint64_t global_epoch() const noexcept {
        return global_epoch_.load(std::memory_order_relaxed);
    }

  private:
    friend class domain_base<qsbr_domain, detail::qsbr_local>;

    /// Leaves the extended quiescent state, with the fence QSBR otherwise
    /// avoids, and the re-read (a thread that read epoch e while offline must
    /// not announce e after the global epoch moved to e + 2).
    void come_online(int tid) noexcept {
        auto& me = local(tid);
        // acquire: as in quiescent().
        std::uint64_t epoch = global_epoch_.load(std::memory_order_acquire);
        core::limbo_bag safe;
        if (epoch != me.epoch) enter_epoch(tid, epoch, safe);
        for (;;) {
            // seq_cst store + seq_cst re-read: a Dekker pair with the
            // checker's seq_cst announcement load and CAS; either the checker
            // sees us online, or we see its new epoch.
            me.announce.store(epoch << 1, std::memory_order_seq_cst);
            const std::uint64_t now = global_epoch_.load(std::memory_order_seq_cst);
            if (now == epoch) break;
            epoch = now;
            enter_epoch(tid, epoch, safe);
        }
        dispose_safe(tid, safe);  // after the announcement, as in announce_epoch
    }

    /// Enters an extended quiescent state: never blocks, holds up nobody.
    /// Clears the flag (thread_offline, after which the garbage is handed over).
    void go_offline(int tid) noexcept {
        auto& me = local(tid);
        // release: the online stretch's reads happen before a checker that
        // sees us offline advances the epoch.
        me.announce.store((me.epoch << 1) | 1, std::memory_order_release);
    }

    /// An offline thread's local epoch may be any number of epochs behind:
    /// labelled with it, the node would be freed while readers that entered
    /// later epochs still hold it. Online, the thread has caught up with the
    /// global epoch and announced it (with thread_online's fence).
    SMR_SLOW_PATH void retire_while_offline(int tid, core::retired_entry entry) noexcept {
        come_online(tid);
        local(tid).bags.add(entry);
        go_offline(tid);
        hand_over_if_offline(tid);
    }

    /// A quiescent state that found a new epoch: enter it, announce it, and
    /// only then free what became safe. While this thread frees, the others
    /// may already advance; freeing first would hold every thread's epoch
    /// (and so every bag) for as long as the batch takes, the very cost the
    /// batch-against-amortized comparison measures.
    SMR_SLOW_PATH void announce_epoch(int tid, std::uint64_t epoch) noexcept {
        auto& me = local(tid);
        core::limbo_bag safe;
        enter_epoch(tid, epoch, safe);
        // release: this thread's reads of shared nodes so far happen before a
        // checker that sees the announcement lets the epoch move on. No
        // fence: see the class comment.
        me.announce.store(epoch << 1, std::memory_order_release);
        dispose_safe(tid, safe);
    }

    /// Takes `epoch` as the local epoch; adds what it makes safe to `safe`.
    void enter_epoch(int tid, std::uint64_t epoch, core::limbo_bag& safe) noexcept {
        auto& me = local(tid);
        me.epoch = epoch;
        note_epoch_begun(tid, epoch, me.bags.size());
        me.bags.advance(epoch, safe, orphans(), adopter(tid));
    }

    /// The fuzzy barrier's attempt: advance only if every online thread has
    /// announced `epoch` (this one just did). Out of line: a loop over the
    /// registered threads, run at every quiescent state.
    SMR_SLOW_PATH void try_advance(int tid, std::uint64_t epoch) noexcept {
        // seq_cst (the same instruction as quiescent()'s acquire load on x86
        // and ARMv8): thread_online's Dekker argument needs the epoch we check
        // against to precede the announcement loads in S.
        if (global_epoch_.load(std::memory_order_seq_cst) != epoch) return;
        const int limit = threads().scan_limit();
        for (int i = 0; i < limit; ++i) {
            if (i == tid) continue;
            // seq_cst: the other half of thread_online's Dekker pair; the
            // acquire half pairs with quiescent()'s and thread_offline's
            // release stores.
            const std::uint64_t seen = local(i).announce.load(std::memory_order_seq_cst);
            const bool offline = (seen & 1) != 0;
            if (!offline && (seen >> 1) != epoch) return;  // i lags: try again at the next state
        }
        if (!epoch_due()) return;  // domain_config::min_epoch_us (after the scan, as ebr's)
        std::uint64_t expected = epoch;
        // seq_cst: ordered after the announcement loads in S (Dekker); release
        // publishes the scan to every thread that reads epoch + 1.
        if (global_epoch_.compare_exchange_strong(expected, epoch + 1, std::memory_order_seq_cst,
                                                  std::memory_order_relaxed)) {
            note_epoch_advanced(tid, epoch + 1);
        }
    }

    alignas(core::false_sharing_range) std::atomic<std::uint64_t> global_epoch_{0};
};

}  // namespace smr
