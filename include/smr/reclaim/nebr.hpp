// nebr: Hart et al.'s "new epoch-based reclamation" (JPDC 2007, Section 6.2).
#pragma once

#include <atomic>
#include <cstdint>

#include "smr/core/limbo_bag.hpp"
#include "smr/reclaim/epoch_bags.hpp"
#include "smr/reclaim/epoch_domain.hpp"
#include "smr/reclaim/traits.hpp"

namespace smr {

namespace detail {
/// The announcement is quiescent while the thread is offline: active from
/// thread_online to thread_offline, not per operation.
struct nebr_local : epoch_thread_state {
    std::uint32_t ops_since_attempt = 0;
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
class nebr_domain : public epoch_domain<nebr_domain, detail::nebr_local> {
    using base = epoch_domain<nebr_domain, detail::nebr_local>;
    friend base;
    friend domain_base<nebr_domain, detail::nebr_local>;

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

    using base::base;

    void on_begin_op(int tid) noexcept {
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

    void on_end_op(int) noexcept {}

    void on_thread_enter(int tid) noexcept { thread_online(lent{tid}); }
    void on_thread_exit(int tid) noexcept { thread_offline(lent{tid}); }

  private:
    /// Sets the flag (Hart: "before entering any code that might contain
    /// NEBR critical regions"), with EBR's fence and re-read.
    void come_online(int tid) noexcept { announce_online(tid); }
    /// Clears the flag (thread_offline, after which the garbage is handed over).
    void go_offline(int tid) noexcept { announce_offline(tid); }

    /// A retire while offline comes online for it.
    void open_for_retire(int tid) noexcept { come_online(tid); }
    void close_after_retire(int tid) noexcept { go_offline(tid); }

    void try_advance(int tid) noexcept {
        // seq_cst, not begin_op's acquire: the Dekker argument with
        // thread_online needs the epoch we saw to be in S before our scan.
        const std::uint64_t epoch = global_epoch_.load(std::memory_order_seq_cst);
        if (epoch != local(tid).epoch) return;  // we lag ourselves: next time
        if (!all_announced(epoch)) return;      // the other half of thread_online's Dekker pair
        if (!epoch_due()) return;  // domain_config::min_epoch_us (after the scan, as ebr's)
        advance_from(tid, epoch);
    }
};

}  // namespace smr
