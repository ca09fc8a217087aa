// debra: Brown's distributed epoch-based reclamation (PODC 2015).
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
struct debra_local {
    /// (epoch << 1) | quiescent. Read by other threads; alone on its lines so
    /// the owner's bag updates do not evict it from their caches.
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> announce{1};
    alignas(core::false_sharing_range) std::uint64_t epoch = 0;  // local epoch
    epoch_bags bags;
    /// Operations (quiescent states) left before the next look at another
    /// thread; counts down so the common path reads no configuration.
    std::uint32_t until_check = 0;
    int next_to_check = 0;

    void drain_into(core::limbo_bag& out) noexcept { bags.drain_into(out); }
};
}  // namespace detail

/// DEBRA. Each operation announces the global epoch in the thread's own slot
/// (a single-writer, multi-reader array), and every `check_every` operations
/// looks at *one* other thread's announcement, round robin. The thread that
/// finds every thread either quiescent or in the current epoch advances the
/// global epoch. Scanning cost is spread over many operations, which keeps
/// per-operation overhead near QSBR's while, unlike QSBR, needing no
/// application-placed quiescent states. Between operations a thread is
/// quiescent and holds up nobody.
///
/// Progress: begin_op/end_op/retire are lock-free (begin_op retries only if
/// the epoch advances while it announces). Memory: unbounded if a thread
/// stalls inside an operation (the epoch cannot advance).
class debra_domain : public domain_base<debra_domain, detail::debra_local> {
  public:
    static constexpr reclaimer_traits traits{
        .name = "debra",
        .family = reclaimer_family::epoch,
        .garbage_bounded = false,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = false,
    };

    using domain_base::domain_base;

    // leaveQstate. The common path (no epoch change, no check due) is a
    // dozen instructions and is inlined into every operation; the rest is
    // out of line (SMR_SLOW_PATH).
    void begin_op(int tid) noexcept {
        slot& s = slot_of(tid);
        auto& me = s.local;
        // acquire: pairs with the release of the CAS that advanced the epoch,
        // which happened after every thread's announcement was checked.
        std::uint64_t epoch = global_epoch_.load(std::memory_order_acquire);
        if (epoch != me.epoch) [[unlikely]] {
            enter_epoch(tid, epoch);  // frees while still quiescent
        }
        amortized_step(tid, s);
        // seq_cst store + seq_cst load: the announcement is visible before
        // this operation reads any shared node (store-load order), and the
        // re-read proves the epoch did not move past us while we were
        // quiescent; otherwise our bags would be labelled two epochs stale
        // and freed one epoch early.
        me.announce.store(epoch << 1, std::memory_order_seq_cst);
        if (global_epoch_.load(std::memory_order_seq_cst) != epoch) [[unlikely]] {
            epoch = announce_again(tid);
        }
        if (me.until_check-- == 0) [[unlikely]] {
            check_next_thread(tid, epoch);
        }
    }

    // enterQstate
    void end_op(int tid) noexcept {
        auto& me = local(tid);
        // release: the operation's reads of shared nodes happen before a
        // scanner that sees us quiescent lets the epoch (and frees) move on.
        me.announce.store((me.epoch << 1) | 1, std::memory_order_release);
    }

    /// Inside an operation, or outside one (then it runs an operation of its
    /// own, docs/design.md "Retire outside an operation").
    template <class T>
    void retire(int tid, T* node) noexcept {
        slot& s = slot_of(tid);
        count_retired(s, node);
        // relaxed: the thread's own announcement, written only by itself.
        if ((s.local.announce.load(std::memory_order_relaxed) & 1) != 0) [[unlikely]] {
            return retire_while_quiescent(tid, node);
        }
        s.local.bags.add(node);
    }

    void on_thread_exit(int tid) noexcept { end_op(tid); }
    void hand_over_garbage(int tid) noexcept { local(tid).bags.orphan_into(orphans()); }

    std::uint64_t global_epoch() const noexcept {
        return global_epoch_.load(std::memory_order_relaxed);
    }

  private:
    /// A quiescent thread's local epoch may be any number of epochs behind:
    /// labelled with it, the node would be freed while readers that entered
    /// later epochs still hold it. Inside an operation of its own the thread
    /// has caught up with the global epoch and announced it.
    SMR_SLOW_PATH void retire_while_quiescent(int tid, core::retired_node* node) noexcept {
        begin_op(tid);
        local(tid).bags.add(node);
        end_op(tid);
        hand_over_if_offline(tid);
    }

    /// begin_op's announcement raced with an epoch change: enter the new
    /// epoch and announce again until the re-read agrees. Returns the epoch.
    SMR_SLOW_PATH std::uint64_t announce_again(int tid) noexcept {
        auto& me = local(tid);
        for (;;) {
            const std::uint64_t epoch = global_epoch_.load(std::memory_order_seq_cst);
            enter_epoch(tid, epoch);
            // seq_cst: as in begin_op.
            me.announce.store(epoch << 1, std::memory_order_seq_cst);
            if (global_epoch_.load(std::memory_order_seq_cst) == epoch) return epoch;
        }
    }

    SMR_SLOW_PATH void enter_epoch(int tid, std::uint64_t epoch) noexcept {
        auto& me = local(tid);
        me.epoch = epoch;
        me.next_to_check = 0;
        core::limbo_bag safe;
        me.bags.advance(epoch, safe, orphans(), adopter(tid));
        dispose_safe(tid, safe);
    }

    SMR_SLOW_PATH void check_next_thread(int tid, std::uint64_t epoch) noexcept {
        auto& me = local(tid);
        me.until_check = config().check_every > 0 ? config().check_every - 1 : 0;
        const int limit = threads().scan_limit();
        if (me.next_to_check == tid) ++me.next_to_check;
        if (me.next_to_check < limit) {
            // seq_cst: the other half of begin_op's Dekker pair (announce,
            // then re-read the epoch). With an acquire load, two checkers
            // could each read a reader's stale quiescent announcement after
            // it had announced e and read e, and advance to e + 2 while it
            // still holds a node retired in e - 1. In S, the reader's store
            // precedes its load of e, which precedes the CAS to e + 1, which
            // precedes the second checker's load: that load sees the store.
            // Its acquire half pairs with end_op's release.
            const std::uint64_t seen =
                local(me.next_to_check).announce.load(std::memory_order_seq_cst);
            const bool quiescent = (seen & 1) != 0;
            if (!quiescent && (seen >> 1) != epoch) return;  // it still lags: look again later
            ++me.next_to_check;
            if (me.next_to_check == tid) ++me.next_to_check;
            if (me.next_to_check < limit) return;
        }
        // Every thread was seen quiescent or in `epoch`.
        std::uint64_t expected = epoch;
        // seq_cst: in S after the announcement loads above (the Dekker
        // argument there needs it); release publishes what the checks saw to
        // every thread that reads epoch + 1.
        if (global_epoch_.compare_exchange_strong(expected, epoch + 1, std::memory_order_seq_cst,
                                                  std::memory_order_relaxed)) {
            note_epoch_advanced(tid, epoch + 1);
        }
        me.next_to_check = 0;
    }

    alignas(core::false_sharing_range) std::atomic<std::uint64_t> global_epoch_{0};
};

}  // namespace smr
