// nebr: Hart et al.'s "new epoch-based reclamation" (JPDC 2007, Section 6.2).
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
struct nebr_local {
    /// (local epoch << 1) | active. Active from thread_online to
    /// thread_offline, not per operation. Alone on its lines (read by scanners).
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> announce{0};
    alignas(core::false_sharing_range) std::uint64_t epoch = 0;  // owner's copy of the local epoch
    epoch_bags bags;
    std::uint32_t ops_since_attempt = 0;

    void drain_into(core::limbo_bag& out) noexcept { bags.drain_into(out); }
};
}  // namespace detail

/// NEBR: Fraser's EBR with the critical-region flag moved from every operation
/// to the application level. The flag is set (with a fence) when a thread
/// comes online (registration, thread_online) and cleared when it goes offline
/// (thread_offline, unregistration); between the two the whole thread is one
/// long critical region whose local epoch is refreshed at each operation.
/// begin_op only reads the global epoch and, if it moved, updates the local
/// epoch (a release store, no fence) and frees the bags three epochs old; every
/// `advance_every` operations it tries to advance the global epoch as ebr does.
///
/// Why no per-operation fence: EBR's entry fence keeps a scanner from seeing
/// the thread *outside* a region while it already reads shared nodes. An
/// online NEBR thread is never seen outside: a scanner that reads an older
/// announcement sees the thread active in an older epoch, which can only block
/// an advance, never allow one. That older epoch e' also bounds the global
/// epoch at e' + 1 <= e + 1 for the new local epoch e, so labelling new
/// retirements e is sound without EBR's re-read, and the operation's reads are
/// covered by the next announcement's release (its acquire by a scanner
/// orders them before the advance that could free what they read).
///
/// What the application must do: call thread_offline(tid) before any long
/// stretch without data-structure operations (waiting on a barrier or I/O,
/// sleeping, finishing its work early) and thread_online(tid) before the next
/// operation. An online thread that does no operations stalls every other
/// thread's reclamation exactly like a thread stalled inside an EBR critical
/// region. Registration puts a thread online; unregistration takes it offline.
///
/// Progress: begin_op, end_op and retire are wait-free apart from the O(threads)
/// advance attempt; thread_online is lock-free (retries only when the epoch
/// advances). Memory: bounded by about three epochs of retirements per thread
/// while every online thread keeps operating; unbounded if an online thread
/// stalls or idles.
class nebr_domain : public domain_base<nebr_domain, detail::nebr_local> {
  public:
    static constexpr reclaimer_traits traits{
        .name = "nebr",
        .family = reclaimer_family::epoch,
        .garbage_bounded = false,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = false,
        .threads_begin_epochs = true,
        .reads = {.advance_every = true, .min_epoch_us = true},
    };

    using domain_base::domain_base;

    void begin_op(int tid) noexcept {
        auto& me = local(tid);
        // acquire: pairs with the CAS that advanced the epoch, so the bags this
        // makes safe are freed after everything the advancer's scan covered.
        const std::uint64_t epoch = global_epoch_.load(std::memory_order_acquire);
        if (epoch != me.epoch) [[unlikely]] {
            announce_epoch(tid, epoch);
        }
        amortized_step(tid);
        if (++me.ops_since_attempt >= config().advance_every) {
            me.ops_since_attempt = 0;
            try_advance(tid);
        }
    }

    void end_op(int) noexcept {}

    /// Online, inside an operation or not; or offline (then it comes online
    /// for the retire, docs/design.md "Retire outside an operation").
    template <class T>
    void retire(int tid, T* node) noexcept {
        count_retired(tid, node);
        auto& me = local(tid);
        // relaxed: the thread's own flag, written only by itself.
        if ((me.announce.load(std::memory_order_relaxed) & 1) == 0) [[unlikely]] {
            return retire_while_offline(tid, core::entry_of(node));
        }
        me.bags.add(core::entry_of(node));
    }

    void on_thread_enter(int tid) noexcept { thread_online(tid); }
    void on_thread_exit(int tid) noexcept { thread_offline(tid); }
    void hand_over_garbage(int tid) noexcept { local(tid).bags.orphan_into(orphans()); }

    std::uint64_t global_epoch() const noexcept {
        return global_epoch_.load(std::memory_order_relaxed);
    }

  private:
    friend class domain_base<nebr_domain, detail::nebr_local>;

    /// Sets the flag (Hart: "before entering any code that might contain
    /// NEBR critical regions"), with EBR's fence and re-read.
    void come_online(int tid) noexcept {
        auto& me = local(tid);
        // acquire: as in begin_op.
        std::uint64_t epoch = global_epoch_.load(std::memory_order_acquire);
        core::limbo_bag safe;
        if (epoch != me.epoch) enter_epoch(tid, epoch, safe);
        for (;;) {
            // seq_cst store + seq_cst re-read: a Dekker pair with the
            // advancer's seq_cst announcement loads and CAS (either it sees us
            // active or we see its epoch), and proof that the epoch did not
            // move on while we were offline (else our retirements would be
            // labelled two epochs stale). The store is the amortized fence.
            me.announce.store((epoch << 1) | 1, std::memory_order_seq_cst);
            const std::uint64_t now = global_epoch_.load(std::memory_order_seq_cst);
            if (now == epoch) break;
            epoch = now;
            enter_epoch(tid, epoch, safe);
        }
        dispose_safe(tid, safe);  // after the announcement, as in announce_epoch
    }

    /// Clears the flag (thread_offline, after which the garbage is handed over).
    void go_offline(int tid) noexcept {
        auto& me = local(tid);
        // release: every read of shared nodes while online happens before an
        // advancer that sees the flag clear moves the epoch on.
        me.announce.store(me.epoch << 1, std::memory_order_release);
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

    /// An operation that found a new epoch: enter it, announce it, and only
    /// then free what became safe. While this thread frees, the others may
    /// already advance; freeing first would hold the epoch for as long as
    /// the batch takes, the very cost the batch-against-amortized
    /// comparison measures.
    SMR_SLOW_PATH void announce_epoch(int tid, std::uint64_t epoch) noexcept {
        auto& me = local(tid);
        core::limbo_bag safe;
        enter_epoch(tid, epoch, safe);
        // release: the reads of this thread's earlier operations happen
        // before any advance by a scanner that reads this announcement. No
        // fence: see the class comment.
        me.announce.store((epoch << 1) | 1, std::memory_order_release);
        dispose_safe(tid, safe);
    }

    /// Takes `epoch` as the local epoch; adds what it makes safe to `safe`.
    void enter_epoch(int tid, std::uint64_t epoch, core::limbo_bag& safe) noexcept {
        auto& me = local(tid);
        me.epoch = epoch;
        note_epoch_begun(tid, epoch, me.bags.size());
        me.bags.advance(epoch, safe, orphans(), adopter(tid));
    }

    void try_advance(int tid) noexcept {
        // seq_cst, not begin_op's acquire: the Dekker argument with
        // thread_online needs the epoch we saw to be in S before our scan.
        const std::uint64_t epoch = global_epoch_.load(std::memory_order_seq_cst);
        if (epoch != local(tid).epoch) return;  // we lag ourselves: next time
        const int limit = threads().scan_limit();
        for (int i = 0; i < limit; ++i) {
            // seq_cst: the other half of thread_online's Dekker pair; its
            // acquire half pairs with the release of later announcements and
            // of thread_offline.
            const std::uint64_t seen = local(i).announce.load(std::memory_order_seq_cst);
            if ((seen & 1) != 0 && (seen >> 1) != epoch) return;  // i lags: try again later
        }
        if (!epoch_due()) return;  // domain_config::min_epoch_us (after the scan, as ebr's)
        std::uint64_t expected = epoch;
        // seq_cst: ordered after the scan in S (Dekker); release publishes the
        // scan to every thread that reads epoch + 1.
        if (global_epoch_.compare_exchange_strong(expected, epoch + 1, std::memory_order_seq_cst,
                                                  std::memory_order_relaxed)) {
            note_epoch_advanced(tid, epoch + 1);
        }
    }

    alignas(core::false_sharing_range) std::atomic<std::uint64_t> global_epoch_{0};
};

}  // namespace smr
