// debra: Brown's distributed epoch-based reclamation (PODC 2015).
#pragma once

#include <atomic>
#include <cstdint>

#include "smr/core/fence.hpp"
#include "smr/core/limbo_bag.hpp"
#include "smr/reclaim/epoch_bags.hpp"
#include "smr/reclaim/epoch_domain.hpp"
#include "smr/reclaim/traits.hpp"

namespace smr {

namespace detail {
/// The announcement is quiescent between operations.
struct debra_local : epoch_thread_state {
    /// Epoch changes observed: the bags' labels (epoch_bags::rotate_to).
    std::uint64_t rotations = 0;
    /// Operations (quiescent states) left before the next look at another
    /// thread; counts down so the common path reads no configuration.
    std::uint32_t until_check = 0;
    int next_to_check = 0;
};
}  // namespace detail

/// DEBRA as Brown defines it (PODC 2015, Figure 2). Each operation reads the
/// global epoch and announces it in the thread's own slot (a single-writer,
/// multi-reader array); when the epoch differs from the one it last
/// announced, it first rotates its three limbo bags, freeing the oldest: a
/// node is freed at the third epoch change its retirer observes after
/// retiring it, however far each change moved the epoch. Every `check_every`
/// operations it looks at *one* other thread's announcement, round robin; the
/// thread that finds every thread either quiescent or in the current epoch
/// advances the global epoch. Scanning cost is spread over many operations,
/// which keeps per-operation overhead near QSBR's while, unlike QSBR, needing
/// no application-placed quiescent states. Between operations a thread is
/// quiescent and holds up nobody.
///
/// Brown's proof assumes sequential consistency. Two fences carry it to the
/// C++ model (the argument is at each): one after every announcement, and one
/// before the epoch load that a rotation counts. The announcement is not
/// re-read: a thread that read epoch e while quiescent may announce e after
/// the epoch moved on, which the rotation count tolerates.
///
/// Progress: begin_op, end_op and retire are wait-free. Memory: unbounded if
/// a thread stalls inside an operation (the epoch cannot advance).
class debra_domain : public epoch_domain<debra_domain, detail::debra_local> {
    using base = epoch_domain<debra_domain, detail::debra_local>;
    friend base;

  public:
    static constexpr reclaimer_traits traits{
        .name = "debra",
        .family = reclaimer_family::epoch,
        .garbage_bounded = false,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = false,
        .threads_begin_epochs = true,
        .reads = {.check_every = true, .min_epoch_us = true},
    };

    using base::base;

    // leaveQstate. The common path (no epoch change, no check due) is a
    // dozen instructions and is inlined into every operation; the rest is
    // out of line (SMR_SLOW_PATH).
    void on_begin_op(int tid) noexcept {
        slot& s = slot_of(tid);
        auto& me = s.local;
        // acquire: pairs with the release of the CAS that advanced the epoch,
        // which happened after every thread's announcement was checked.
        std::uint64_t epoch = global_epoch_.load(std::memory_order_acquire);
        if (epoch != me.epoch) [[unlikely]] {
            epoch = rotate(tid);  // frees while still quiescent
        }
        amortized_step(tid, s);
        // Brown's plain store of the announcement, in C++. Release: a checker
        // that reads it knows our earlier operations' reads are done (end_op's
        // release store does not carry over to a later plain store). Then a
        // seq_cst fence before this operation reads shared nodes, the Dekker
        // pair with the checker's seq_cst load (check_next_thread): a checker
        // that read our stale quiescent announcement precedes the fence in S,
        // and so did the epoch it advanced from, which the next rotation of
        // any thread that unlinks a node we reach will see (rotate). (The
        // Epochs artifact stores relaxed, with no fence: on x86 the store
        // drains long before three epoch changes, which C++ does not promise.)
        me.announce.store(announcing(epoch), std::memory_order_release);
        core::fence();
        if (me.until_check-- == 0) [[unlikely]] {
            check_next_thread(tid, epoch);
        }
    }

    // enterQstate
    void on_end_op(int tid) noexcept {
        auto& me = local(tid);
        // release: the operation's reads of shared nodes happen before a
        // scanner that sees us quiescent lets the epoch (and frees) move on.
        me.announce.store(quiescent_in(me.epoch), std::memory_order_release);
    }

    void on_thread_exit(int tid) noexcept { on_end_op(tid); }
    /// Orphans carry global epochs. Every node here was unlinked before the
    /// fence, so the epoch read after it is at least the epoch any reader of
    /// them announced, as in rotate; an adopter frees them three epochs on.
    void hand_over_garbage(int tid) noexcept {
        core::fence();
        // acquire: as in begin_op.
        local(tid).bags.orphan_into(orphans(), global_epoch_.load(std::memory_order_acquire));
    }

  private:
    /// A retire between operations runs in an operation of its own.
    void open_for_retire(int tid) noexcept { on_begin_op(tid); }
    void close_after_retire(int tid) noexcept { on_end_op(tid); }

    /// The epoch moved since our last announcement: one rotation, however
    /// far it moved (Brown's rotateAndReclaim). Returns the epoch to announce.
    ///
    /// The fence orders this thread's earlier unlinks before the epoch load
    /// that the rotation counts. Without it (store-load reordering: ARM,
    /// POWER, and x86 for an unlink that is a plain store under a lock) the
    /// load may return an epoch older than the one a reader of the unlinked
    /// node announced, and the two rotations left would free the node once
    /// the epoch passed the reader's by one, which the reader's announcement
    /// allows. With it: a reader whose fence follows ours in S sees the
    /// unlink; otherwise every epoch the reader let pass was written before
    /// its fence, hence before ours, and this load returns it or later, so
    /// the third rotation needs an advance the reader blocks.
    SMR_SLOW_PATH std::uint64_t rotate(int tid) noexcept {
        auto& me = local(tid);
        core::fence();
        // acquire: as in begin_op. At least the epoch begin_op saw (coherence).
        const std::uint64_t epoch = global_epoch_.load(std::memory_order_acquire);
        me.epoch = epoch;
        me.next_to_check = 0;
        note_epoch_begun(tid, epoch, me.bags.size());
        core::limbo_bag safe;
        me.bags.rotate_to(++me.rotations, epoch, safe, orphans(), adopter(tid));
        dispose_safe(tid, safe);
        return epoch;
    }

    SMR_SLOW_PATH void check_next_thread(int tid, std::uint64_t epoch) noexcept {
        auto& me = local(tid);
        me.until_check = config().check_every > 0 ? config().check_every - 1 : 0;
        if (!epoch_due()) return;  // domain_config::min_epoch_us
        const int limit = threads().scan_limit();
        if (me.next_to_check == tid) ++me.next_to_check;
        if (me.next_to_check < limit) {
            // seq_cst: the other half of begin_op's Dekker pair (announce,
            // fence); our own announcement's fence precedes it, so the epoch
            // we check against was written before this load in S. With an
            // acquire load, two checkers could each read a reader's stale
            // quiescent announcement and advance twice past the epoch it
            // announced while it holds a node retired one epoch earlier. Its
            // acquire half pairs with end_op's and begin_op's release stores.
            const std::uint64_t seen =
                local(me.next_to_check).announce.load(std::memory_order_seq_cst);
            if (holds_back(seen, epoch)) return;  // it still lags: look again later
            ++me.next_to_check;
            if (me.next_to_check == tid) ++me.next_to_check;
            if (me.next_to_check < limit) return;
        }
        advance_from(tid, epoch);  // every thread was seen quiescent or in `epoch`
        me.next_to_check = 0;
    }
};

}  // namespace smr
