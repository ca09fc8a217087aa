// Publish-on-Ping: the mechanism hp_pop, he_pop and epoch_pop share (Singh
// and Brown, "Publish on Ping: A Better Way to Publish Reservations in Memory
// Reclamation for Concurrent Data Structures", PPoPP 2025,
// arXiv:2501.04250).
//
// ---- The idea -------------------------------------------------------------------
//
// A reservation scheme's reader must make its reservation visible to every
// reclaimer before it uses the node: a store and a full fence per protected
// pointer (Michael), or a store to a shared cache line that the scans read
// and a membarrier per scan (the asymmetric fence). Publish-on-Ping keeps
// the reservation in thread-private memory -- a store no other thread reads,
// so it never leaves the core's cache -- and publishes it only when asked: a
// reclaimer sends every other registered thread a POSIX signal (a "ping"),
// whose handler, on the pinged thread, copies its private reservations to
// shared cells and counts a publication. The reclaimer waits until every
// pinged thread has counted one, then reads the shared cells. Readers pay
// nothing per reservation beyond the store; reclaimers pay n-1 signals and a
// wait per reclaim, which is why POP reclaims rarely (large watermarks).
//
// ---- Why a reservation the handler missed is not needed --------------------------
//
// Reader T protects node X from a source: stores X in its private cell, then
// re-reads the source (seq_cst) and uses X only if it still holds X.
// Reclaimer A unlinked X, then (ping_all) fences, loads T's publication count
// c (seq_cst), signals T and waits until the count is above c. The
// publication A sees comes from a handler run H on T whose count increment
// (a seq_cst RMW) follows A's load of c in S, the single total order. H ran
// at one point of T's program:
//   - after T's private store of X: H copied X (or a value T stored later,
//     when T had given X up) to T's shared cell before its increment
//     (release), and A's load of the new count (acquire) makes the shared
//     cell visible to A's scan, which keeps X;
//   - before it: T's re-read follows H's increment in program order, so in
//     S, and A's fence precedes A's load, which precedes H's increment:
//     the re-read follows A's fence in S and sees the unlink (or a later
//     value), so T does not use X.
// Nothing here needs the signal to carry ordering from A to T (the kernel's
// delivery does, but the argument does not rely on it), which matters when
// signals coalesce: a run H triggered by another reclaimer's ping may answer
// A's. What the argument needs on T's side is that the private store, H and
// the re-read stay in program order: T's store and the handler's load are
// on one thread, so the CPU keeps them ordered, and the compiler barrier
// between store and re-read keeps the compiler from sinking the store.
//
// ---- The handler ------------------------------------------------------------------
//
// One handler per process (signals.hpp installs it; the signal is
// domain_config::pop_signal, SIGUSR2 by default, so it never meets NBR's
// SIGUSR1). A thread can be registered with several POP domains, of one
// scheme or several: its subscriptions form a thread_local list and the
// handler publishes each (a ping from one domain publishes the others too:
// extra publications are harmless copies). The handler is async-signal-safe
// (a constinit thread_local, lock-free atomics, a call through the
// subscriber's function pointer; errno saved) and returns: SA_RESTART, so a
// system call it interrupts resumes.
//
// ---- Waiting, and who is waited for --------------------------------------------
//
// The artifact's reclaimer does not wait for the handlers (its loop over the
// publication counters only asserts, compiled out in its builds); with a
// pinged thread that is descheduled, or whose interrupt is still in flight,
// its scan can miss a private reservation. Ours waits, which makes every
// POP reclaim blocking: a reclaimer waits for each pinged thread to be
// scheduled and run its handler (a blocked system call is interrupted to run
// it; SIGSTOP is the one way to hold a reclaimer forever). Only threads a
// signal was sent to are waited for (a slot's signal_target sends to
// registered threads only), and a thread that starts to leave counts a
// publication of its cleared reservations, so a wait never outlives the
// thread it waits for.
//
// Two more ways out of a wait, both for threads that cannot run their
// handler soon. A pinged thread seen offline during the wait is not waited
// for: the argument at go_offline holds for any load of `offline` after the
// pinger's fence. A thread blocked on a barrier's mutex is offline (the
// barrier takes it offline to wait), so the barrier that holds the mutex
// does not wait for its handler. And a waiting pinger answers pings itself:
// each time around its wait loop it publishes its own subscriptions, as its
// handler would; a publication the thread runs in its own program order
// copies the private cells as they stand at one point of that order, like a
// handler run, so the argument above holds for it. Two threads that ping
// each other at once then never wait on each other's handler. In a process
// the kernel runs a handler even on a thread blocked in a futex, but
// ThreadSanitizer runs it only when the thread enters a function it
// intercepts, which neither a lock's wait nor sched_yield is: CI saw a
// barrier wait forever for a thread queued behind it on the mutex.

#pragma once

#include <sched.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>

#include "smr/core/asymmetric_fence.hpp"
#include "smr/core/fence.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/padded.hpp"
#include "smr/reclaim/signals.hpp"
#include "smr/trace/latency_histogram.hpp"

namespace smr::detail {

/// The reader's side of a reservation only its own thread (and that
/// thread's handler) reads: a compiler barrier keeps the announcement before
/// the re-read, and the re-read is seq_cst (the argument above).
struct ping_announcement {
    static constexpr std::memory_order reread = std::memory_order_seq_cst;
    template <class A, class B>
    void reader(A& announced, const B& validated) const noexcept {
        core::light_fence(announced, validated);
    }
    void reader() const noexcept { core::light_fence(); }
};

/// A thread's registration with one POP domain, as the ping handler and the
/// pingers see it: the base of each POP scheme's per-thread state.
struct ping_subscriber {
    /// Copies the thread's private reservations to its shared ones; set by
    /// the scheme at subscription. Runs in the handler: async-signal-safe.
    using publish_fn = void (*)(ping_subscriber&) noexcept;
    publish_fn publish = nullptr;
    /// The thread's next subscription (its handler's list).
    std::atomic<ping_subscriber*> next{nullptr};

    /// Publications so far: read by every pinger; written by the owner's
    /// handler and by the owner as it goes offline or leaves.
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> publications{0};
    /// Offline (domain_base::thread_offline): nothing reserved, nothing to
    /// ping or wait for.
    std::atomic<bool> offline{false};
    /// Who the thread is, and whether it may be signalled.
    signal_target target;
    /// The owner's pinging rounds: odd while it pings (round_watcher).
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> rounds{0};
    /// How long the owner's ping rounds took, those that signalled someone
    /// (reclaimer_stats::publish_latency). The owner's alone; merged by
    /// domain_base::stats once the threads are done.
    trace::latency_histogram publish_latency;
};

/// The calling thread's subscriptions. constinit: no TLS wrapper or lazy
/// initialization, so the handler may read it.
constinit inline thread_local std::atomic<ping_subscriber*> ping_subscriptions{nullptr};

/// Publishes one subscription now (the handler, and the owner as it leaves).
inline void publish_reservations(ping_subscriber& s) noexcept {
    s.publish(s);
    // seq_cst RMW: release for the publication's stores (a pinger's load of
    // the new count acquires them), and in S after a pinger's load of the
    // old count, which puts the owner's later re-reads after the pinger's
    // fence (the argument at the top of this file).
    s.publications.fetch_add(1, std::memory_order_seq_cst);
}

/// Publishes every subscription of the calling thread: what its handler
/// does, and what a pinger does itself while it waits (ping_all).
inline void publish_own_subscriptions() noexcept {
    // Whether a handler or the thread's own code runs this, it runs on the
    // thread, between two of its instructions: relaxed loads see the
    // thread's own list as it stands.
    std::atomic_signal_fence(std::memory_order_seq_cst);
    for (ping_subscriber* s = ping_subscriptions.load(std::memory_order_relaxed); s != nullptr;
         s = s->next.load(std::memory_order_relaxed)) {
        publish_reservations(*s);
    }
}

inline void ping_handler(int) {
    const int saved_errno = errno;
    publish_own_subscriptions();
    errno = saved_errno;
}

/// Installs the handler once per process and signal (signals.hpp): refused
/// for a signal another scheme or another part of the program owns.
inline void install_ping_handler(int signo, const char* scheme) {
    install_signal_handler(signo, &ping_handler, SA_RESTART, scheme, "pop_signal");
}

/// On the subscribing thread, at registration: the handler publishes `s`
/// from now on, and pingers may signal the thread.
inline void subscribe(ping_subscriber& s, int signo, ping_subscriber::publish_fn publish) noexcept {
    s.publish = publish;
    // Linked in before the head points at it: a handler between the two
    // stores sees the list without `s`, one after sees it whole.
    s.next.store(ping_subscriptions.load(std::memory_order_relaxed), std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    ping_subscriptions.store(&s, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    s.target.arm(signo);
}

/// On the subscribed thread, as it leaves, after it cleared its private
/// reservations: publishes them (a pinger waiting for this thread sees the
/// count move), stops the signals, and unlinks `s` from the handler's list.
inline void unsubscribe(ping_subscriber& s) noexcept {
    publish_reservations(s);
    s.target.disarm();
    // One store takes `s` out: a handler before it publishes `s` (cleared),
    // one after does not see it.
    for (std::atomic<ping_subscriber*>* link = &ping_subscriptions;;) {
        ping_subscriber* const at = link->load(std::memory_order_relaxed);
        if (at == nullptr) return;
        if (at == &s) {
            link->store(s.next.load(std::memory_order_relaxed), std::memory_order_relaxed);
            std::atomic_signal_fence(std::memory_order_seq_cst);
            return;
        }
        link = &at->next;
    }
}

/// On the subscribed thread, going offline between operations: publishes
/// its (cleared) reservations, then stops being pinged. seq_cst: a pinger
/// that reads `offline` true (seq_cst, after its fence) neither signals nor
/// waits (or stops waiting, if it signalled before), and the thread's later coming online
/// (go_online) follows that load in S, so the thread's next re-reads follow the pinger's fence and
/// see its unlinks.
inline void go_offline(ping_subscriber& s) noexcept {
    publish_reservations(s);
    s.offline.store(true, std::memory_order_seq_cst);
}
inline void go_online(ping_subscriber& s) noexcept {
    s.offline.store(false, std::memory_order_seq_cst);
}

/// A ping's bookkeeping for one pinged slot: the publication count seen
/// before the signal, with the top bit set once the signal was sent.
inline constexpr std::uint64_t pinged_bit = std::uint64_t{1} << 63;

/// Pings every registered, online thread of slots 0 to limit - 1 but `self`
/// and returns once each one pinged has published since (or is leaving),
/// so that the shared reservations the caller reads next cover every
/// private one that could still reach a node unlinked before the call.
/// `subscriber_of(i)` is slot i's ping_subscriber; `seen` has room for
/// `limit` counts; `sent(i)` runs for each signal sent. `wait` false (a
/// mutant of the calling scheme) returns without waiting. A round that
/// signalled records its duration, fence to last answer, in the caller's
/// publish_latency.
template <class SubscriberOf, class Sent>
void ping_all(int self, int limit, int signo, std::uint64_t* seen, SubscriberOf&& subscriber_of,
              Sent&& sent, bool wait) noexcept {
    // seq_cst fence: the unlinks of the nodes about to be judged (the
    // structure's release or acq_rel CASes, outside S) precede in S the
    // count loads below, so a re-read ordered after a handler run that
    // answers us sees them (top of this file).
    // A round is rare (one per watermark's worth of retires): a clock read
    // at each end costs nothing an operation sees.
    const auto start = std::chrono::steady_clock::now();
    core::fence();
    for (int i = 0; i < limit; ++i) {
        seen[i] = subscriber_of(i).publications.load(std::memory_order_seq_cst);
    }
    bool signalled = false;
    for (int i = 0; i < limit; ++i) {
        if (i == self) continue;
        ping_subscriber& other = subscriber_of(i);
        // seq_cst: after the fence above (go_offline).
        if (other.offline.load(std::memory_order_seq_cst)) continue;
        if (other.target.try_signal(signo)) {
            seen[i] |= pinged_bit;
            signalled = true;
            sent(i);
        }
    }
    if (!wait) return;
    for (int i = 0; i < limit; ++i) {
        if ((seen[i] & pinged_bit) == 0) continue;
        const std::uint64_t before = seen[i] & ~pinged_bit;
        ping_subscriber& other = subscriber_of(i);
        // acquire (seq_cst): synchronizes with the handler's increment, so
        // what it published is visible to the scan that follows.
        while (other.publications.load(std::memory_order_seq_cst) == before) {
            // Leaving: its last publication (unsubscribe) counted already,
            // or its slot is being handed over; nothing left to wait for.
            if (other.target.leaving()) break;
            // Offline since (seq_cst, after the fence): as if it had been
            // offline when we looked (go_offline; "Waiting" above).
            if (other.offline.load(std::memory_order_seq_cst) &&
                !SMR_MUTANT("ping_waits_for_offline_threads")) {
                break;
            }
            // Answers whoever pings us meanwhile (the top of this file:
            // "Waiting"), then lets the waited-for thread run.
            if (!SMR_MUTANT("ping_wait_answers_no_ping")) publish_own_subscriptions();
            sched_yield();
        }
    }
    if (signalled && !SMR_MUTANT("publish_latency_not_recorded")) {
        const auto took = std::chrono::steady_clock::now() - start;
        subscriber_of(self).publish_latency.record(static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(took).count()));
    }
}

}  // namespace smr::detail
