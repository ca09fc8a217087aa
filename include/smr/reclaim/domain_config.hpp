// The run-time parameters of every reclaimer, in one struct: each scheme
// reads the members it documents (reclaimer_traits::reads names them) and
// ignores the rest, so one configuration serves any scheme.
#pragma once

#include <csignal>
#include <cstddef>
#include <cstdint>
#include <memory_resource>

#include "smr/core/asymmetric_fence.hpp"
#include "smr/free_policy.hpp"

namespace smr {

/// Run-time parameters of every reclaimer. Each scheme reads the ones it
/// documents and ignores the rest, so one struct configures any of them.
struct domain_config {
    /// Most threads registered at once (not in total: slots are reused).
    std::size_t max_threads = 256;
    /// Where nodes are allocated and freed. Null (the default) calls
    /// std::malloc and std::free directly, the path every measurement of the
    /// reclaimers' own cost uses; any std::pmr::memory_resource may be given
    /// instead (smr::alloc::pool_resource bounds memory for Hart et al.'s
    /// exhaustion experiments). It must outlive the domain, and its allocate
    /// reports exhaustion by throwing, as std::pmr requires.
    std::pmr::memory_resource* memory = nullptr;
    free_policy free{};
    /// Scan-based schemes (rcu, hp, he, ibr, wfe, nbr) reclaim when a
    /// thread's retire list reaches this many nodes. A library's default: a
    /// thread holds at most about this many unreclaimed nodes, and a scan's
    /// cost is spread over as many retires (folly's hazard pointers use
    /// 1000). smrbench sets 32K, the Epochs paper's uniform batch size
    /// (Section 5) and NBR's default, which suits throughput runs of
    /// millions of operations but keeps a program that retires a few
    /// thousand nodes from freeing any.
    std::size_t bag_threshold = 1024;
    /// ebr, nebr: critical-region entries between epoch-advance attempts
    /// (Hart et al. use 100).
    std::uint32_t advance_every = 100;
    /// debra: operations between looks at the next thread's announcement.
    /// 10 is MIN_OPS_BEFORE_READ of the DEBRA in the Epochs paper's artifact
    /// (Brown's original used 20): checking more often advances the epoch
    /// sooner but, with few threads, spends more of each operation on epoch
    /// changes (alone, a thread advances the epoch every check_every operations).
    std::uint32_t check_every = 10;
    /// rcu, he, ibr, wfe: a thread increments the global epoch / era every
    /// `epoch_freq` x T of its allocations, T the thread slots in use (the
    /// IBR benchmark's and the Epochs artifact's epochFreq x task_num), so
    /// the era moves every `epoch_freq` allocations per thread whatever the
    /// thread count.
    std::uint32_t epoch_freq = 150;
    /// hp: a thread scans its retire list when it reaches
    /// max(bag_threshold, hp_scan_factor x H + hp_scan_offset), H the hazard
    /// slots of registered threads. Michael's R = H + Omega(H); 2 keeps his
    /// amortized O(1) scan cost when bag_threshold is set below it. Hart et
    /// al.'s R = 2H + 100 is factor 2, offset 100 and bag_threshold 1.
    std::uint32_t hp_scan_factor = 2;
    std::uint32_t hp_scan_offset = 0;
    /// wfe: fast-path attempts of protect before it asks for help (the WFE
    /// paper's and its artifact's 16).
    std::uint32_t wfe_fast_attempts = 16;
    /// token_periodic: frees between checks for the token while freeing.
    std::uint32_t token_check_every = 100;
    /// nbr, nbrplus: the neutralization signal (sent with pthread_kill to
    /// registered threads only). Must not be SIGKILL or SIGSTOP, and must
    /// not already have a handler other than NBR's.
    int nbr_signal = SIGUSR1;
    /// hp_pop (the Publish-on-Ping schemes): the ping signal (sent with
    /// pthread_kill to registered threads only). SIGUSR2, SIGUSR1 or a
    /// real-time signal (smr::signal_problem), and not the one NBR uses in
    /// the same process: the two handlers differ.
    int pop_signal = SIGUSR2;
    /// nbrplus, hp_pop: bag size at which a thread bookmarks its bag and
    /// starts watching for another thread's signal round (0 = half the high
    /// watermark, NBR+'s "one half full").
    std::size_t nbr_low_watermark = 0;
    /// nbrplus, hp_pop: bag size at which a thread signals every other
    /// thread itself, like nbr at bag_threshold (0 = bag_threshold).
    std::size_t nbr_high_watermark = 0;
    /// hp, he, ibr, wfe (and the C++26 hazard_pointer): how a reader's
    /// announcement is ordered before its re-read of the source. asymmetric
    /// (the default, folly's and the Rust crates' choice) makes the reader's
    /// side a compiler barrier and has every scan call membarrier once;
    /// symmetric is Michael's full fence per protected pointer. asymmetric
    /// falls back to symmetric where the process cannot use membarrier
    /// (core/asymmetric_fence.hpp; reclaimer_stats::heavy_barriers counts
    /// the calls).
    fence_mode fence = fence_mode::asymmetric;
    /// Time every free() call into reclaimer_stats::free_latency (a
    /// per-thread histogram of 2.7 KB) and free_seconds, which stay zero
    /// otherwise. Costs two timestamp reads per free and, for the first
    /// domain of the process that asks, a 20 ms calibration of the
    /// timestamp counter. A benchmark's setting (smrbench turns it on; a
    /// timeline needs it).
    bool time_frees = false;
    /// With time_frees: time one free in this many, on average (1, the
    /// default: every free; 0 counts as 1). Two timestamp reads cost more
    /// than many a free() (36 ns on our machines), so timing every call
    /// slows the very batches it measures. The timed frees are drawn at
    /// random gaps, uniform in [1, 2n - 1], which no periodic pattern of the
    /// allocator (a cache flush every k frees) can alias with; free_latency
    /// holds the timed calls, and free_seconds is their sum scaled by
    /// frees / timed frees. A timeline records every call: attaching one
    /// times them all.
    std::uint32_t time_frees_every = 1;
    /// Count the retired nodes each thread frees that another thread
    /// allocated (reclaimer_stats::remote_frees): the frees of the Epochs
    /// paper's remote batch free. Every node the domain allocates then
    /// carries its allocating thread's 4-byte tag after it (core/owner_tag.hpp),
    /// in a block rounded up to the node's alignment, which may move a node to
    /// the next size class of the allocator (not the 40-byte DGT node: 48 bytes
    /// is its class anyway). Reading the tag, outside the timed part of a
    /// free, loads a line of the freed node that an untimed free need not.
    /// Off by default: a domain that does not count allocates and frees
    /// exactly as before, through the same one branch.
    bool count_remote_frees = false;
    /// ebr, nebr, debra, qsbr: the global epoch advances at most once per
    /// this many microseconds (0: as soon as the scheme allows). Epochs as
    /// long as a large machine's, on a small one: with 192 threads an epoch
    /// lasts while every thread's announcement is scanned and the slowest
    /// catches up, and each limbo bag grows to tens of thousands of nodes,
    /// which the Epochs paper's remote batch free is made of; on 2 cores an
    /// epoch ends in microseconds and bags hold hundreds. Attempts in the
    /// meantime return at once, so the scheme's check costs a timestamp read.
    /// Safety is unchanged: an epoch ends later, never sooner.
    std::uint32_t min_epoch_us = 0;
};

}  // namespace smr
