// nbr, nbrplus: Neutralization Based Reclamation (Singh, Brown, Mashtizadeh,
// PPoPP 2021), Algorithm 1 (NBR) and Algorithm 2 (NBR+).
//
// ---- How it works -------------------------------------------------------------
//
// Every operation is split into a read phase (traverse; no writes, no locks,
// no allocation, no system calls) and a write phase that touches only the
// nodes it *reserved* when the read phase ended (docs/design.md, "Restarts and
// the NBR checkpoint"; SMR_READ_PHASE_BEGIN in guards.hpp). A retired node goes
// into its retirer's limbo bag. When the bag reaches `bag_threshold` (NBR) or
// the high watermark (NBR+), the thread sends the neutralization signal to
// every other *registered* thread, then reads every thread's reservations and
// frees each node of its bag that nobody reserved.
//
// A thread receiving the signal runs `neutralize_handler`:
//   - in a read phase (restartable): it siglongjmps back to the checkpoint at
//     the top of the attempt (SMR_READ_PHASE_BEGIN), forgetting every pointer
//     it held, and traverses again from the root. The bag's nodes were
//     unlinked before the signal, so the new traversal cannot reach them;
//   - otherwise (preamble, write phase, between operations, inside the
//     reclaimer itself): the handler returns. A writer keeps running, but it
//     only touches the nodes it reserved, and it published its reservations
//     *before* it stopped being restartable (read_phase_end), so the
//     reclaimer's scan, which comes after the signal, sees them.
//
// ---- The handshake: why the reclaimer need not wait for the handlers ----------
//
// The paper's argument (Section 4.3.1) is that the reclaimer never waits: once
// the signal is sent, the target "will immediately execute a signal handler
// if it is currently running; otherwise the next time it is scheduled to run
// it will execute the signal handler before any other steps". So after
// signalAll every thread either has been neutralized or will be before its
// next step, and every non-restartable thread has its reservations visible.
//
// On Linux that is exactly true for a thread that is not running (descheduled
// or in the kernel): the kernel delivers pending signals on every return to
// user mode, before the next user instruction. It is *not* exactly true for a
// target running on another CPU: pthread_kill (tgkill) marks the signal
// pending and sends an inter-processor interrupt, and returns without waiting
// for it. Until that interrupt lands (microseconds; longer under a
// hypervisor) the target keeps executing its read phase, and could load a
// node the reclaimer has just freed. We close that window without waiting
// for any handler: after the kills the reclaimer calls
// membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), which returns only after
// every CPU currently running a thread of this process has taken an
// interrupt. A thread interrupted that way returns to user mode through the
// kernel's signal-delivery path, and our signal was already pending, so it
// runs the handler before any further instruction of its read phase. After
// membarrier the paper's assumption holds for every thread, running or not,
// and the scan may proceed. The cost is one system call per broadcast (the
// broadcast already costs n-1 system calls), and membarrier is also a full
// fence on every running target, which publishes writers' reservations.
//
// Where membarrier is unavailable (old kernel, seccomp) and under
// ThreadSanitizer (which defers asynchronous signal handlers to its own
// "safe points", so a handler may run long after delivery), the reclaimer
// instead waits for an acknowledgement from every thread that was in a read
// phase when the broadcast began: `phase` (below) is even outside read
// phases and odd inside, and the reclaimer waits until each odd value it saw
// has changed (the thread was neutralized, or finished its read phase and
// published its reservations). This mode does not depend on when handlers
// run at all (the signal only shortens the wait), but a reclaimer can then
// wait for a descheduled reader to be scheduled again, so it is blocking.
// `handshake()` says which mode the process uses.
//
// ---- Memory ordering ------------------------------------------------------------
//
// read_phase_begin: clear the previous write phase's reservations (release
// stores, only those it published), then make `phase` odd: the thread is
// restartable before any read of a shared node. The handler runs on the
// thread itself, so program order, kept by a compiler barrier, is what
// matters to it.
//
// read_phase_end: store the reservations, then make `phase` even.
// Reclaimer side: retire's unlink happens before pthread_kill (a system
// call) and the membarrier/acknowledgement; the scan's acquire loads come
// after. Either the target was restartable when it took the signal (it
// restarts and will never reach the bag's nodes, unlinked before), or it was
// not, in which case its reservations were stored before its `phase` became
// even, and that store precedes the scan:
//   - membarrier handshake (the default): the call cuts each running target
//     at one point, where its pending signal runs. Both `phase` updates are
//     plain stores (the paper's CASes, lines 8 and 12, are not needed, and
//     each was a locked instruction per read phase): a target whose even
//     store came before the cut has its reservations (stored before it in
//     program order) visible to the scan after the call; one whose even store
//     comes after the cut was restartable at the cut and restarts. No other
//     thread reads `phase` in this mode.
//   - acknowledgement handshake (no membarrier, TSan): the broadcaster reads
//     `phase` after its unlinks and the target reads shared nodes after
//     making `phase` odd, a Dekker pair, so both updates are seq_cst RMWs
//     (the paper's CASes), and the acknowledgement load synchronizes with the
//     one that ended the read phase.

// ---- Signals ---------------------------------------------------------------------
//
// One handler per process and signal number (default SIGUSR1,
// domain_config::nbr_signal), installed with sigaction by the first domain
// that uses that number (signals.hpp, shared with Publish-on-Ping); refused
// if some other handler owns the signal, and for every signal but SIGUSR1,
// SIGUSR2 and the real-time ones, which nothing else in a process relies on
// (signal_problem).
// Flags: SA_RESTART, so a system call interrupted outside a read phase
// (futex, nanosleep in the stall thread, write) resumes transparently;
// SA_NODEFER, so the signal is not blocked while the handler runs: the
// handler leaves through siglongjmp, and with SA_NODEFER there is no blocked
// mask to restore, so the checkpoint can be sigsetjmp(buf, 0) -- no
// sigprocmask system call per read phase (but under ThreadSanitizer, which
// blocks every signal around a deferred handler: SMR_READ_PHASE_SAVEMASK in
// reclaim/guards.hpp). A nested signal inside the handler
// finds the thread no longer restartable and returns. The handler is
// async-signal-safe: it reads a constinit thread_local pointer, lock-free
// atomics, and calls siglongjmp; it saves and restores errno.
//
// Only registered threads are signalled: each slot records pthread_self() at
// registration (detail::signal_target). Helper threads of smrbench (coordinator, sampler, timers)
// never register, so they never receive the signal; if one did, its
// thread_local pointer is null and the handler returns. A slot's `live` flag
// and `signallers` count keep pthread_kill from racing with the target's
// exit: unregister clears `live` and waits for in-flight kills to finish
// (Dekker with seq_cst on both sides), so no kill names a dead thread.
//
// ---- NBR+ (Algorithm 2) ---------------------------------------------------------
//
// Each slot has `announce`, counted up (seq_cst) before and after each of its
// broadcasts: odd while broadcasting. A thread whose bag passes the low
// watermark bookmarks the bag and watches the other threads' counters
// (detail::round_watcher in signals.hpp, shared with Publish-on-Ping); once
// one shows a broadcast that began and ended after the bookmark, a relaxed
// grace period has passed: every thread was neutralized (or published its
// reservations) after the bookmarked nodes were unlinked, and the thread
// frees the unreserved nodes up to the bookmark without sending a signal. At
// the high watermark it broadcasts itself, exactly like NBR.
//
// ---- Trade-offs, progress, bounded garbage -------------------------------------
//
// + No per-node or per-pointer cost in the read phase (per attempt: one
//   sigsetjmp, two stores to `phase` -- RMWs in acknowledgement mode -- and
//   the reservations' stores), so traversals run near epoch-scheme speed
//   (one thread, dgt_bst 100K keys: 791 instructions per operation, ebr 673,
//   none 600; docs/reproductions.md), and readers
//   may walk through unlinked nodes (lazylist, dgt_bst), which hazard pointers
//   cannot protect.
// + Bounded garbage: after a reclaim a thread's bag holds only reserved
//   nodes (at most max_reservations per thread), so garbage per thread stays
//   below bag_threshold + threads x max_reservations (plus, with amortized
//   free, the freeable list). A stalled thread cannot hold garbage: stalled
//   in a read phase it is neutralized (and restarts); stalled in a write phase
//   it pins only its reservations.
// - Needs the read/write-phase form, restarts from the root, and signals:
//   the read phase must be free of allocation, locks and system calls; each
//   broadcast costs n-1 signals (NBR: n(n-1) per "round" of reclaims; NBR+
//   lets threads piggyback). Signals interrupt system calls of registered
//   threads outside read phases (restarted by SA_RESTART).
// - Progress: retire, read_phase_* and protect are lock-free (wait-free apart
//   from the restart loop); a neutralized read phase restarts, and restarts
//   are caused only by other threads' completed retires, so the system as a
//   whole makes progress (the paper's argument). The reclaimer never waits
//   in membarrier mode (membarrier waits for interrupts, not for threads to
//   be scheduled); in acknowledgement mode it waits for readers.
#pragma once

#include <sched.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <csetjmp>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "smr/core/compiler.hpp"
#include "smr/core/fence.hpp"
#include "smr/core/limbo_bag.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/padded.hpp"
#include "smr/core/retired_node.hpp"
#include "smr/core/scan_buffer.hpp"
#include "smr/core/unrolled.hpp"
#include "smr/reclaim/domain_base.hpp"
#include "smr/reclaim/reservation_common.hpp"
#include "smr/reclaim/signals.hpp"
#include "smr/reclaim/traits.hpp"

#define SMR_NBR_UNDER_TSAN SMR_TSAN

namespace smr {

/// How a broadcast makes sure every thread took its signal before the scan
/// (see the top of nbr.hpp).
enum class nbr_handshake : std::uint8_t {
    membarrier,       ///< kills, then membarrier(PRIVATE_EXPEDITED): never waits for a thread
    acknowledgement,  ///< kills, then wait until each reader left its read phase
};

namespace detail {

/// Most nodes one write phase may reserve (dgt_bst's erase needs 3).
inline constexpr std::size_t nbr_max_reservations = 4;

struct nbr_local {
    // ---- read by the signal handler (own thread) and by acknowledging
    // reclaimers: even = not in a read phase, odd = restartable.
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> phase{0};
    sigjmp_buf checkpoint{};
    /// Owner only: false when every reservation is null, so the read phases
    /// and end_op that follow none (or a clear) store nothing.
    bool published = false;

    // ---- read by every reclaimer's scan.
    alignas(core::false_sharing_range)
        std::array<std::atomic<const void*>, nbr_max_reservations> reserved{};

    // ---- signalling: who the slot's thread is, and whether it may be killed.
    signal_target target;

    // ---- NBR+: odd while this slot's thread broadcasts (begin_round).
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> announce{0};

    // ---- owner only.
    alignas(core::false_sharing_range) core::limbo_bag bag;
    core::scan_buffer<const void*> scratch;     // reservations collected by a scan
    std::unique_ptr<std::uint64_t[]> snapshot;  // the phases a broadcast saw (ack mode)
    round_watcher watch;                        // NBR+: the low-watermark wait

    void drain_into(core::limbo_bag& out) noexcept { out.splice_back(bag); }
    /// Thread i's entry of the snapshot (i: a registered thread id).
    std::uint64_t& seen(int i) noexcept { return snapshot[static_cast<std::size_t>(i)]; }
};

/// The thread's slot in the NBR domain it last entered a read phase of (or
/// registered with); null for threads that never registered. constinit: no
/// TLS wrapper or lazy initialization, so the handler may read it.
constinit inline thread_local nbr_local* nbr_current = nullptr;

inline void nbr_neutralize_handler(int) {
    const int saved_errno = errno;
    nbr_local* me = nbr_current;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (me != nullptr) {
        const std::uint64_t phase = me->phase.load(std::memory_order_relaxed);
        if ((phase & 1) != 0) {
            // Leave the read phase (acknowledges the broadcast), then drop
            // every pointer by returning to the checkpoint.
            me->phase.store(phase + 1, std::memory_order_seq_cst);
            errno = saved_errno;
            siglongjmp(me->checkpoint, 1);
        }
    }
    errno = saved_errno;
}

/// Installs the handler once per process and signal (signals.hpp) and
/// says which handshake the process's broadcasts use.
inline nbr_handshake nbr_install(int signo) {
    install_signal_handler(signo, &nbr_neutralize_handler, SA_RESTART | SA_NODEFER, "nbr",
                           "nbr_signal");
    return membarrier_cut_available() ? nbr_handshake::membarrier : nbr_handshake::acknowledgement;
}

}  // namespace detail

/// NBR (`nbr`, Algorithm 1) and NBR+ (`nbrplus`, Algorithm 2); see the top of
/// this file. Parameters: bag_threshold (NBR; NBR+'s default high watermark),
/// nbr_low_watermark, nbr_high_watermark, nbr_signal.
template <bool Plus>
class basic_nbr_domain : public domain_base<basic_nbr_domain<Plus>, detail::nbr_local> {
    using base = domain_base<basic_nbr_domain<Plus>, detail::nbr_local>;
    using base::config;
    using base::local;
    using base::threads;

  public:
    static constexpr reclaimer_traits traits{
        .name = Plus ? "nbrplus" : "nbr",
        .family = reclaimer_family::neutralization,
        .garbage_bounded = true,
        .needs_restart_from_root = true,
        .uses_signals = true,
        .needs_quiescent_states = false,
        .nests = false,
        .reads = {.bag_threshold = true,
                  .nbr_signal = true,
                  .nbr_low_watermark = Plus,
                  .nbr_high_watermark = true},
    };
    static constexpr std::size_t max_reservations = detail::nbr_max_reservations;

    explicit basic_nbr_domain(const domain_config& cfg)
        : base(cfg),
          signal_(cfg.nbr_signal),
          handshake_(detail::nbr_install(cfg.nbr_signal)),
          high_(cfg.nbr_high_watermark != 0 ? cfg.nbr_high_watermark
                                            : std::max<std::size_t>(cfg.bag_threshold, 1)),
          low_(Plus ? detail::make_watermarks(cfg.nbr_low_watermark, high_, 0, "nbrplus").low
                    : high_) {}

    // ---- registration ---------------------------------------------------------

    void on_thread_enter(int tid) {
        auto& me = local(tid);
        const std::size_t n = config().max_threads;
        if (me.scratch.capacity() < n * max_reservations) {
            me.snapshot = std::make_unique<std::uint64_t[]>(n);
            me.scratch.reserve(n * max_reservations);
        }
        me.watch.reserve(n);
        me.watch.stop();  // a new owner re-bookmarks
        me.phase.store(me.phase.load(std::memory_order_relaxed) & ~std::uint64_t{1},
                       std::memory_order_seq_cst);
        detail::nbr_current = &me;
        me.target.arm(signal_);
    }

    void on_thread_exit(int tid) noexcept {
        auto& me = local(tid);
        on_end_op(tid);
        me.target.disarm();  // no kill names this thread after it, which may now exit
        if (detail::nbr_current == &me) detail::nbr_current = nullptr;
    }

    /// Every node of the bag was retired before this point, so before any
    /// later broadcast: an adopter treats it as its own older nodes.
    void hand_over_garbage(int tid) noexcept {
        auto& me = local(tid);
        this->orphans().give(me.bag, 0);
        me.watch.stop();
    }

    /// A barrier's round: adopt every orphan, then a broadcast and a reclaim
    /// of the whole bag (Algorithm 1, lines 15-17; for NBR+ between the
    /// announcements of Algorithm 2, lines 6-11).
    void flush_step(int tid) noexcept {
        auto& me = local(tid);
        this->adopt_orphans(tid, me.bag);
        if (me.bag.empty()) return;
        if constexpr (Plus) detail::begin_round(me.announce);
        broadcast(tid);
        if constexpr (Plus) detail::end_round(me.announce);
        reclaim(tid, me.bag.size());
        me.watch.stop();
    }

    // ---- operations -------------------------------------------------------------

    void on_end_op(int tid) noexcept {
        auto& me = local(tid);
        leave_read_phase(me);
        clear_reservations(me);
    }

    /// The checkpoint SMR_READ_PHASE_BEGIN sigsetjmps into.
    sigjmp_buf* read_phase_checkpoint(int tid) noexcept { return &local(tid).checkpoint; }

    /// Called (outside the handler) after a siglongjmp back to the checkpoint.
    void on_neutralized(int tid) noexcept {
        this->count_restart(tid);
        this->record_event(tid, trace::event_kind::neutralized_restart, 0);
    }

    void on_read_phase_begin(int tid) noexcept {
        auto& me = local(tid);
        clear_reservations(me);
        detail::nbr_current = &me;
        std::atomic_signal_fence(std::memory_order_seq_cst);
        const std::uint64_t phase = me.phase.load(std::memory_order_relaxed);
        if ((phase & 1) != 0) return;
        if (handshake_ == nbr_handshake::membarrier) {
            // Restartable before any read below, for this thread's own
            // handler (program order, kept by the compiler barrier): no other
            // thread reads `phase` in this mode (the cut argument at the top
            // of the file).
            me.phase.store(phase + 1, std::memory_order_relaxed);
            std::atomic_signal_fence(std::memory_order_seq_cst);
        } else {
            // seq_cst RMW (the paper's CAS): restartable before any read
            // below, and ordered before them against the acknowledgement
            // loads of a broadcast (a Dekker pair: the broadcaster unlinked,
            // then reads `phase`).
            me.phase.fetch_add(1, std::memory_order_seq_cst);
        }
    }

    template <class... Reserved>
    void on_read_phase_end(int tid, Reserved*... reserved) noexcept {
        static_assert(sizeof...(Reserved) <= max_reservations,
                      "nbr: too many reservations; raise detail::nbr_max_reservations");
        auto& me = local(tid);
        // Set before the stores: a neutralization between two of them
        // returns to read_phase_begin, which must clear what was stored.
        me.published = true;
        std::atomic_signal_fence(std::memory_order_seq_cst);
        std::size_t i = 0;
        ((me.reserved[i++].store(as_header(reserved), std::memory_order_release)), ...);
        (void)i;
        // seq_cst RMW (the paper's CAS): the reservations are visible before
        // the thread stops being restartable, i.e. before it may ignore a
        // signal and touch the reserved nodes.
        leave_read_phase(me);
    }

    template <class T>
    void on_retire(int tid, T* node) noexcept {
        this->count_retired(tid, node);
        auto& me = local(tid);
        // Orphans were retired before any broadcast still to come, which is
        // all that reclaim's rule asks of a node (a reader that holds one is
        // restarted or has it reserved); appended, so NBR+'s bookmarked
        // prefix stays what it was.
        this->adopt_orphans(tid, me.bag);
        const std::size_t size = me.bag.size();
        if constexpr (!Plus) {
            if (size >= high_) {  // Algorithm 1, lines 15-17
                broadcast(tid);
                reclaim(tid, me.bag.size());
            }
        } else {
            detail::watermark_step(
                {.low = low_, .high = high_}, size, tid, [this] { return threads().scan_limit(); },
                me.announce, me.watch, announce_of(), [this, tid] { broadcast(tid); },
                [this, tid](std::size_t count) { reclaim(tid, count); });
        }
        me.bag.push_back(node);
        this->hand_over_if_offline(tid);
    }

    // ---- introspection (tests, smrbench) --------------------------------------

    nbr_handshake handshake() const noexcept { return handshake_; }
    std::size_t bag_size(int tid) const noexcept { return local(tid).bag.size(); }
    std::size_t low_watermark() const noexcept { return low_; }
    std::size_t high_watermark() const noexcept { return high_; }
    bool in_read_phase(int tid) const noexcept {
        return (local(tid).phase.load(std::memory_order_relaxed) & 1) != 0;
    }

  private:
    /// Reservations are compared with the bag's retired_node pointers, so a
    /// node is recorded by the address of its header subobject.
    template <class T>
    static const void* as_header(T* node) noexcept {
        if constexpr (std::is_base_of_v<core::retired_node, T>) {
            return static_cast<const core::retired_node*>(node);
        } else {
            return static_cast<const void*>(node);
        }
    }

    /// Clears the last write phase's reservations. Release (a plain store on
    /// x86): the write phase's accesses happen before a scan that sees the
    /// reservation gone (acquire) and frees the node; with relaxed stores a
    /// scan could read a later reservation without a happens-before edge to
    /// the earlier phase's accesses (TSan).
    ///
    /// Every cell, unrolled (core/unrolled.hpp; cells past those the last
    /// phase stored are null already): a loop bounded by the number stored
    /// also reloaded its bound after each store (a byte may alias the cells).
    static void clear_reservations(detail::nbr_local& me) noexcept {
        if (!me.published) return;
        core::for_each_unrolled(me.reserved, [](std::atomic<const void*>& reservation) {
            reservation.store(nullptr, std::memory_order_release);
        });
        me.published = false;
    }

    void leave_read_phase(detail::nbr_local& me) const noexcept {
        const std::uint64_t phase = me.phase.load(std::memory_order_relaxed);
        if ((phase & 1) == 0) return;
        if (handshake_ == nbr_handshake::membarrier) {
            // release (a plain store on x86): the reservations stored before
            // stay before it, for the compiler and the CPU. A broadcast's
            // membarrier cuts this thread either after this store (the
            // reservations are visible to the scan) or before it (the thread
            // was restartable when the pending signal ran its handler).
            me.phase.store(phase + 1, std::memory_order_release);
        } else {
            // seq_cst RMW (the paper's CAS): the reservations are visible
            // before a broadcaster's acknowledgement load sees the phase end.
            me.phase.fetch_add(1, std::memory_order_seq_cst);
        }
    }

    /// NBR+: thread i's rounds counter, for round_watcher.
    auto announce_of() noexcept {
        return [this](int i) -> std::atomic<std::uint64_t>& { return local(i).announce; };
    }

    /// signalAll, plus the handshake that makes the paper's delivery
    /// assumption true (top of file).
    void broadcast(int tid) noexcept {
        if (SMR_MUTANT("nbr_skips_neutralization")) return;
        auto& me = local(tid);
        const int limit = threads().scan_limit();
        const bool ack = handshake_ == nbr_handshake::acknowledgement;
        if (ack) {
            for (int i = 0; i < limit; ++i) {
                me.seen(i) = local(i).phase.load(std::memory_order_seq_cst);
            }
        }
        detail::signal_others(
            tid, limit, signal_, [this](int i) -> auto& { return local(i).target; },
            [this, tid](int i) {
                this->count_signal(tid);
                this->record_event(tid, trace::event_kind::signal_sent,
                                   static_cast<std::uint64_t>(i));
            });
        if (!ack) {
            detail::membarrier_cut();
            return;
        }
        for (int i = 0; i < limit; ++i) {
            if (i == tid || (me.seen(i) & 1) == 0) continue;
            auto& other = local(i);
            // acquire (seq_cst): synchronizes with the RMW that left the read
            // phase, so the reservations stored before it are visible.
            while (other.phase.load(std::memory_order_seq_cst) == me.seen(i)) {
                if (other.target.leaving()) break;  // exiting: end_op ran
                sched_yield();
            }
        }
    }

    /// Algorithm 1's reclaimFreeable: frees every node among the first
    /// `count` of the bag that no thread reserved; reserved ones stay. Once
    /// per bag of high_ retires, out of line: inlined, it and the free path
    /// made retire too large to inline into the structures' erase.
    SMR_SLOW_PATH void reclaim(int tid, std::size_t count) noexcept {
        auto& me = local(tid);
        // Acquire loads: they pair with end_op's release clear (and, with
        // the handshake, with read_phase_end's RMW).
        detail::collect_reserved(
            me.scratch,
            threads().scan_limit(), [this](int i) -> const auto& { return local(i).reserved; },
            !SMR_MUTANT("nbr_ignores_reservations"));
        const auto& reservations = me.scratch;
        core::limbo_bag safe =
            detail::take_unreserved(me.bag, count, [&reservations](const core::retired_node* node) {
                return !reservations.contains(static_cast<const void*>(node));
            });
        this->dispose_safe(tid, safe);
    }

    int signal_;
    nbr_handshake handshake_;
    std::size_t high_;
    std::size_t low_;
};

using nbr_domain = basic_nbr_domain<false>;
using nbrplus_domain = basic_nbr_domain<true>;

}  // namespace smr
