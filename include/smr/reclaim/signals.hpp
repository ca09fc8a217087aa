// The signal machinery of the schemes that signal other threads: NBR and
// NBR+ (nbr.hpp), which neutralize readers, and Publish-on-Ping (Singh and
// Brown, PPoPP 2025), whose readers publish their reservations when pinged.
// What they share is written here once:
//
//   - which signal numbers a reclaimer may take (signal_problem);
//   - one handler per process and signal number, installed with sigaction by
//     the first domain that uses the number, and refused when anything else
//     (another program's handler, or another scheme's) owns the number;
//   - whether membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) can cut every
//     running thread of the process (probed once per process);
//   - a thread slot's signalling target: the thread's pthread_t and the
//     `live` flag and `signallers` count that keep pthread_kill from racing
//     with the thread's exit;
//   - sending the signal to every other registered thread.
//
// What a scheme's handler does, and how its reclaimer knows the handlers
// ran (NBR's membarrier cut or acknowledgement, a ping's acknowledgement),
// stay with the scheme.
#pragma once

#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "smr/core/compiler.hpp"
#include "smr/core/fence.hpp"
#include "smr/core/padded.hpp"

namespace smr {

/// Why `signo` cannot be a reclaimer's signal, or "" if it can. Only signals
/// nothing else in a process relies on are taken: SIGUSR1, SIGUSR2 and the
/// real-time signals SIGRTMIN..SIGRTMAX. Each of the others stops the
/// process (taken, SIGINT or SIGTERM could no longer interrupt a run),
/// reports a fault that crash handlers, sanitizers and debuggers catch,
/// drives job control, timers or child processes, belongs to the C library
/// (the numbers below SIGRTMIN), or cannot be caught.
inline std::string signal_problem(int signo) {
    if (signo == SIGUSR1 || signo == SIGUSR2 || (signo >= SIGRTMIN && signo <= SIGRTMAX)) {
        return "";
    }
    const char* why = "is not a signal";
    switch (signo) {
        case SIGINT:
        case SIGTERM:
        case SIGHUP:
        case SIGQUIT:
            why = "stops the process: taken, a run could no longer be interrupted";
            break;
        case SIGKILL:
        case SIGSTOP:
            why = "cannot be caught";
            break;
        case SIGSEGV:
        case SIGBUS:
        case SIGFPE:
        case SIGILL:
        case SIGABRT:
        case SIGTRAP:
        case SIGSYS:
            why = "reports a fault (crash handlers, sanitizers and debuggers catch it)";
            break;
        default:
            if (signo > 0 && signo < SIGRTMIN) {
                why =
                    "belongs to the system (job control, timers, child processes, pipes, "
                    "resource limits) or the C library";
            }
    }
    return "signal " + std::to_string(signo) + " " + why + "; a reclaimer's signal is SIGUSR1 (" +
           std::to_string(SIGUSR1) + "), SIGUSR2 (" + std::to_string(SIGUSR2) +
           ") or a real-time signal (" + std::to_string(SIGRTMIN) + "-" + std::to_string(SIGRTMAX) +
           ")";
}

namespace detail {

using signal_handler = void (*)(int);

/// The handlers this library installed, by signal number, for the process.
struct installed_signals {
    std::mutex lock;
    signal_handler handler[128] = {};  // signal numbers are below 128 on Linux
    bool membarrier_probed = false;
    bool membarrier_available = false;
};

inline installed_signals& process_signals() {
    static installed_signals state;
    return state;
}

/// Makes `handler` the process's handler for `signo` (sa_flags `flags`, no
/// signal blocked while it runs beyond what the flags say), once per process
/// and signal. `scheme` and `option` name the caller and the configuration
/// parameter that chose the number, for the messages. Throws
/// std::invalid_argument for a number signal_problem refuses, and
/// std::runtime_error when the number already has a handler: another
/// program part's, or another scheme's of this library.
inline void install_signal_handler(int signo, signal_handler handler, int flags, const char* scheme,
                                   const char* option) {
    const std::string who = scheme;
    if (const std::string problem = signal_problem(signo); !problem.empty()) {
        throw std::invalid_argument(who + ": " + problem);
    }
    installed_signals& p = process_signals();
    const std::lock_guard<std::mutex> guard(p.lock);
    signal_handler& ours = p.handler[signo];
    if (ours == handler) return;
    const std::string taken = who + ": signal " + std::to_string(signo);
    if (ours != nullptr) {
        throw std::runtime_error(taken + " is another reclaimer's; choose another with " + option);
    }
    struct sigaction old {};
    if (sigaction(signo, nullptr, &old) != 0) throw std::invalid_argument(taken + " is invalid");
    const bool free_to_take =
        (old.sa_flags & SA_SIGINFO) == 0 &&
        (old.sa_handler == SIG_DFL || old.sa_handler == SIG_IGN || old.sa_handler == handler);
    if (!free_to_take) {
        throw std::runtime_error(taken + " already has a handler; choose another with " + option);
    }
    struct sigaction action {};
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = flags;
    if (sigaction(signo, &action, nullptr) != 0) {
        throw std::runtime_error(who + ": cannot install a handler for signal " +
                                 std::to_string(signo));
    }
    ours = handler;
}

/// Whether membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) works in this
/// process: registered once, on the first call. Never under ThreadSanitizer,
/// which runs asynchronous signal handlers at its own safe points, so a cut
/// does not mean the handlers ran.
inline bool membarrier_cut_available() {
    installed_signals& p = process_signals();
    const std::lock_guard<std::mutex> guard(p.lock);
    if (!p.membarrier_probed) {
        p.membarrier_probed = true;
        p.membarrier_available =
            !SMR_TSAN &&
            syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    }
    return p.membarrier_available;
}

/// Returns once every CPU running a thread of this process has taken an
/// interrupt (so a signal pending for a running thread has run its handler
/// before the thread's next user instruction). Only where
/// membarrier_cut_available().
inline void membarrier_cut() noexcept {
    syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
}

/// Who a thread slot's thread is, and whether it may be signalled: part of a
/// scheme's per-thread state, on its own cache lines (written at
/// registration, read by every signaller).
///
/// `live` and `signallers` form a Dekker pair: a signaller counts itself in,
/// then reads `live`; an exiting thread clears `live`, then waits for the
/// count to drop to zero. Both sides seq_cst, so they cannot both miss the
/// other's write: no pthread_kill names a thread after its exit began.
struct signal_target {
    alignas(core::false_sharing_range) std::atomic<bool> live{false};
    std::atomic<int> signallers{0};
    pthread_t thread{};

    /// On the slot's thread, at registration: unblocks `signo` there and
    /// makes the thread a target.
    void arm(int signo) noexcept {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, signo);
        pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
        thread = pthread_self();
        // seq_cst: after this a signaller may signal us (see try_signal).
        live.store(true, std::memory_order_seq_cst);
    }

    /// On the slot's thread, at unregistration: after this no signal is sent
    /// to it, and none is in flight, so the thread may exit.
    void disarm() noexcept {
        live.store(false, std::memory_order_seq_cst);
        while (signallers.load(std::memory_order_seq_cst) != 0) sched_yield();
    }

    /// Sends `signo` if the slot's thread is registered. True if sent.
    bool try_signal(int signo) noexcept {
        signallers.fetch_add(1, std::memory_order_seq_cst);
        bool sent = false;
        if (live.load(std::memory_order_seq_cst)) sent = pthread_kill(thread, signo) == 0;
        // release: the kill is done before an exiting thread's acquire of 0.
        signallers.fetch_sub(1, std::memory_order_release);
        return sent;
    }

    /// A slot whose thread is leaving (or left): nobody to wait for.
    bool leaving() const noexcept { return !live.load(std::memory_order_acquire); }
};

/// Signals every registered thread of slots 0 to limit - 1 but `self`:
/// target_of(i) gives slot i's signal_target, sent(i) runs for each signal
/// sent (statistics, traces).
template <class TargetOf, class Sent>
void signal_others(int self, int limit, int signo, TargetOf&& target_of, Sent&& sent) noexcept {
    for (int i = 0; i < limit; ++i) {
        if (i == self) continue;
        if (target_of(i).try_signal(signo)) sent(i);
    }
}

/// A signalling round: the thread signalling every other thread counts its
/// `rounds` counter up before the signals and again after the handshake
/// that ends them, so the counter is odd during a round. Both RMWs seq_cst:
/// a watcher's snapshot loads and later loads (round_watcher) are ordered
/// against them in S.
inline void begin_round(std::atomic<std::uint64_t>& rounds) noexcept {
    rounds.fetch_add(1, std::memory_order_seq_cst);
}
inline void end_round(std::atomic<std::uint64_t>& rounds) noexcept {
    rounds.fetch_add(1, std::memory_order_seq_cst);
}

/// NBR+'s low-watermark wait (Singh et al., PPoPP 2021, Algorithm 2, lines
/// 12-24), which the Publish-on-Ping schemes reuse: a thread whose bag has
/// passed the low watermark bookmarks it (its size: the bag is FIFO, so the
/// first `bookmark` nodes were retired before) and snapshots every thread's
/// rounds counter; on each later retire it looks at one other thread (round
/// robin: the paper's amortized scan). Once some thread's counter shows a
/// round that *began and ended* after the snapshot -- counter >= s + 2 for
/// an even snapshot s, >= s + 3 for an odd one (the paper's "s + 2" would
/// accept, for an odd s, a round that has only begun) -- every thread was
/// signalled, and answered, after the bookmarked nodes were unlinked, and
/// the watcher may judge them as if it had signalled itself. The owner's
/// alone.
class round_watcher {
  public:
    /// Room for `threads` snapshot entries (at registration: watching never
    /// allocates).
    void reserve(std::size_t threads) {
        if (capacity_ >= threads) return;
        seen_ = std::make_unique<std::uint64_t[]>(threads);
        capacity_ = threads;
    }
    bool watching() const noexcept { return watching_; }
    std::size_t bookmark() const noexcept { return bookmark_; }
    void stop() noexcept { watching_ = false; }

    /// Bookmarks `bookmark` nodes and snapshots the counters of slots 0 to
    /// limit - 1 (`rounds_of(i)`).
    template <class RoundsOf>
    void start(std::size_t bookmark, int limit, RoundsOf&& rounds_of) noexcept {
        watching_ = true;
        bookmark_ = bookmark;
        // seq_cst fence: the bookmarked nodes' unlinks (the structure's
        // release or acq_rel CASes, outside S) come before the snapshot's
        // loads. Without it an unlink still in our store buffer could become
        // visible after thread j's round began; the snapshot counts that
        // round as covering the node, j's signals reach a reader that then
        // finds the node still linked, and we free it under the reader. With
        // it, the fence precedes in S j's RMW that begins any round the
        // snapshot counts. (TSan need not see it: the free's happens-before
        // edge is the later seq_cst load of j's counter, which TSan checks.)
        core::fence();
        for (int i = 0; i < limit; ++i) {
            seen_[static_cast<std::size_t>(i)] = rounds_of(i).load(std::memory_order_seq_cst);
        }
        limit_ = limit;
        next_ = 0;
    }

    /// Looks at one other thread's counter: true if it shows a whole round
    /// since the snapshot. The seq_cst load synchronizes with that round's
    /// end_round, so what its handshake made visible to the signaller is
    /// visible here.
    template <class RoundsOf>
    bool round_since(int self, RoundsOf&& rounds_of) noexcept {
        // Only slots the snapshot covers: a slot claimed later has no
        // snapshot value (a stale one could make an old round look new);
        // ignoring it is conservative.
        if (limit_ <= 1) return false;
        int j = next_;
        if (j >= limit_) j = 0;
        if (j == self) j = j + 1 < limit_ ? j + 1 : 0;
        next_ = j + 1;
        const std::uint64_t seen = seen_[static_cast<std::size_t>(j)];
        const std::uint64_t needed = seen + ((seen & 1) != 0 ? 3 : 2);
        return rounds_of(j).load(std::memory_order_seq_cst) >= needed;
    }

  private:
    std::unique_ptr<std::uint64_t[]> seen_;
    std::size_t capacity_ = 0;
    std::size_t bookmark_ = 0;
    bool watching_ = false;
    int next_ = 0;   // round robin: the slot to look at next
    int limit_ = 0;  // slots the snapshot covers
};

/// NBR+'s two watermarks (a thread's bag size): past `low` it watches for
/// another thread's round, at `high` it runs one itself.
struct watermarks {
    std::size_t low;
    std::size_t high;
};

/// The watermarks a domain's configuration gives: `high` (0: bag_threshold,
/// at least 1) and `low` (0: half the high one, the paper's "one half
/// full"; with a high watermark of 1, the same, so that no retire waits).
/// Throws std::invalid_argument, naming `scheme`, when a low watermark given
/// is not below high.
inline watermarks make_watermarks(std::size_t low, std::size_t high, std::size_t bag_threshold,
                                  const char* scheme) {
    const std::size_t h = high != 0 ? high : std::max<std::size_t>(bag_threshold, 1);
    if (low == 0) return {.low = std::max<std::size_t>(h / 2, 1), .high = h};
    const std::size_t l = low;
    if (l >= h) {
        throw std::invalid_argument(std::string(scheme) + ": the low watermark (" +
                                    std::to_string(l) + ") must be below the high watermark (" +
                                    std::to_string(h) + ")");
    }
    return {.low = l, .high = h};
}

/// NBR+'s retire (Algorithm 2, lines 6-24), shared with Publish-on-Ping:
/// what a retire does with `size` nodes in its thread's bag (NBR appends
/// the retired node after this step, as its Algorithm 1 does; the POP
/// artifact before). At the high watermark a round of its own (`signal_all`: the signals and the
/// scheme's handshake, between begin_round and end_round on `mine`), then
/// `reclaim(size)`; past the low watermark, the round_watcher's wait, and
/// `reclaim(bookmark)` once another thread's round covers the bookmark.
/// `reclaim(count)` judges the bag's first `count` nodes; `limit()` gives
/// the slots in use (read only when the wait starts).
template <class Limit, class RoundsOf, class SignalAll, class Reclaim>
void watermark_step(watermarks marks, std::size_t size, int self, Limit&& limit,
                    std::atomic<std::uint64_t>& mine, round_watcher& watch, RoundsOf&& rounds_of,
                    SignalAll&& signal_all, Reclaim&& reclaim) noexcept {
    if (size >= marks.high) {  // lines 6-11
        begin_round(mine);
        signal_all();
        end_round(mine);
        reclaim(size);
        watch.stop();
    } else if (size >= marks.low) {  // lines 12-24
        if (!watch.watching()) {
            watch.start(size, limit(), rounds_of);
        } else if (watch.round_since(self, rounds_of)) {
            reclaim(watch.bookmark());
            watch.stop();
        }
    }
}

}  // namespace detail
}  // namespace smr
