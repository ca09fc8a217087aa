// What every reclaimer reports (reclaimer_stats), and how it is counted: one
// set of counters per thread slot, each written by its owner alone and summed
// by whoever asks.
#pragma once

#include <cstdint>

#include "smr/core/counters.hpp"
#include "smr/trace/latency_histogram.hpp"

namespace smr {

/// The counters every reclaimer reports. Garbage = nodes retired but not yet
/// freed, including those in thread-local bags and freeable lists.
struct reclaimer_stats {
    std::uint64_t allocated = 0;
    std::uint64_t allocated_bytes = 0;
    std::uint64_t retired = 0;
    std::uint64_t freed = 0;
    std::uint64_t discarded = 0;  ///< allocated, never published, freed at once
    std::uint64_t garbage = 0;
    /// The most garbage any sample_garbage() call saw, or `garbage` if more.
    /// Schemes never sample on their own: summing every thread's counters at
    /// each epoch change or scan would add a cross-thread read per thread to
    /// the very path that is measured (and more with more threads). A
    /// program samples from a thread of its own (smrbench: every millisecond,
    /// and when the workers stop; with a garbage series, at every epoch change).
    std::uint64_t garbage_peak = 0;
    std::uint64_t epochs = 0;  ///< global epoch advances (or token rounds)
    std::uint64_t signals = 0;
    std::uint64_t restarts = 0;
    /// Asymmetric fences' heavy side (membarrier calls), one per scan.
    std::uint64_t heavy_barriers = 0;
    /// Of `freed`, the nodes another thread had allocated (with
    /// domain_config::count_remote_frees; zero otherwise). A thread is one
    /// registration: a node allocated before its thread unregistered and
    /// re-registered counts as another thread's.
    std::uint64_t remote_frees = 0;
    /// Time inside free() calls, summed over threads (domain_config::time_frees).
    double free_seconds = 0;
    trace::latency_histogram free_latency;  ///< per free() call (time_frees)
    /// Per ping round that signalled another thread (the Publish-on-Ping
    /// schemes; empty for the others): from the round's fence to the last
    /// publication it waited for, what a reclaim pays to read reservations
    /// that readers keep private.
    trace::latency_histogram publish_latency;
};

namespace detail {

/// One thread's counters. Written by the thread alone (core::owner_counter:
/// a relaxed load and store, no read-modify-write), read by any thread.
struct thread_counters {
    core::owner_counter allocated, allocated_bytes, retired, freed, discarded;
    core::owner_counter epochs, signals, restarts, heavy_barriers, remote_frees;

    /// Adds this thread's counts to `out` (relaxed reads: exact once the
    /// thread is done, a recent value while it runs).
    void add_to(reclaimer_stats& out) const noexcept {
        out.allocated += allocated.get();
        out.allocated_bytes += allocated_bytes.get();
        out.retired += retired.get();
        out.freed += freed.get();
        out.discarded += discarded.get();
        out.epochs += epochs.get();
        out.signals += signals.get();
        out.restarts += restarts.get();
        out.heavy_barriers += heavy_barriers.get();
        out.remote_frees += remote_frees.get();
    }
};

}  // namespace detail
}  // namespace smr
