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

#include <atomic>
#include <csignal>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>

#include "smr/core/compiler.hpp"
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

}  // namespace detail
}  // namespace smr
