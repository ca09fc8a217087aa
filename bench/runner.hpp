// One trial of one data structure x reclaimer: prefill, measure, validate.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "allocator_stats.hpp"
#include "options.hpp"
#include "pinning.hpp"
#include "process_stats.hpp"
#include "recording.hpp"
#include "report.hpp"
#include "smr/alloc/pool_resource.hpp"
#include "smr/core/clock.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/padded.hpp"
#include "smr/ds/options.hpp"
#include "smr/ds/validation.hpp"
#include "smr/reclaim/guards.hpp"
#include "thread_group.hpp"
#include "trial.hpp"
#include "workload.hpp"

namespace smrbench {

namespace detail {

/// What one worker adds up; compared with the structure at the end.
struct worker_tally {
    std::int64_t key_sum = 0;        // keys inserted minus keys erased (successful ops)
    std::int64_t size = 0;           // successful inserts minus successful erases
    std::uint64_t measured_ops = 0;  // completed operations in the measured interval
    std::uint64_t failed_ops = 0;    // operations whose allocation failed (--pool-nodes)
    std::uint64_t end_ns = 0;

    // Queues only (DS::is_queue): per-producer FIFO order, as this worker
    // dequeues it.
    int producer = 0;                      // this worker's index, in its items' values
    std::uint64_t enqueued = 0;            // sequence number of its last item (1, 2, ...)
    std::vector<std::uint64_t> last_seen;  // per producer: last sequence number dequeued
    std::string fifo_error;                // the first violation seen, empty if none
};

/// DS::is_queue, false when undeclared: a FIFO queue, where insert enqueues,
/// dequeue replaces erase and there is no contains.
template <class DS>
constexpr bool is_queue() {
    if constexpr (requires { DS::is_queue; }) {
        return DS::is_queue;
    } else {
        return false;
    }
}

/// DS::hold_first(tid, wait): the structure can hold its first node for a
/// stalled reader (--stall-hold).
template <class DS>
constexpr bool has_hold_first() {
    return requires(DS & ds, void (*wait)()) { ds.hold_first(0, wait); };
}

/// A queue item's value: its producer's sequence number above the producer's
/// index, so a dequeuer can check FIFO order per producer. --threads <= 4096.
inline constexpr int producer_bits = 12;

inline std::int64_t queue_tag(int producer, std::uint64_t sequence) noexcept {
    return static_cast<std::int64_t>((sequence << producer_bits) |
                                     static_cast<std::uint64_t>(producer));
}

/// In a linearizable FIFO queue, the items one thread dequeues from any one
/// producer come in that producer's enqueue order: an item enqueued earlier
/// is ahead in the queue, so if it had not been dequeued yet it would have
/// been dequeued instead. Records the first violation (or duplicate).
inline void check_fifo(std::int64_t value, worker_tally& tally) {
    const auto tag = static_cast<std::uint64_t>(value);
    const std::uint64_t producer = tag & ((std::uint64_t{1} << producer_bits) - 1);
    const std::uint64_t sequence = tag >> producer_bits;
    if (producer >= tally.last_seen.size()) {
        if (tally.fifo_error.empty()) {
            tally.fifo_error = "worker " + std::to_string(tally.producer) +
                               " dequeued an item of no producer (value " + std::to_string(value) +
                               ")";
        }
        return;
    }
    std::uint64_t& last = tally.last_seen[producer];
    if (sequence > last) {
        last = sequence;
    } else if (tally.fifo_error.empty()) {
        tally.fifo_error = "worker " + std::to_string(tally.producer) + " dequeued item " +
                           std::to_string(sequence) + " of producer " + std::to_string(producer) +
                           " after its item " + std::to_string(last);
    }
}

/// One queue operation of the workload: insert enqueues (the value tags the
/// item for check_fifo), erase dequeues. The tally counts the key each
/// dequeue really returned, not the one the generator drew; a dequeue from
/// an empty queue counts as an unsuccessful erase.
template <class Queue>
void queue_operation(Queue& queue, int tid, op_kind kind, std::int64_t key, worker_tally& tally) {
    switch (kind) {
        case op_kind::insert:
            if (queue.insert(tid, key, queue_tag(tally.producer, ++tally.enqueued))) {
                tally.key_sum += key;
                ++tally.size;
            }
            break;
        case op_kind::erase:
            if (const auto item = queue.dequeue(tid)) {
                tally.key_sum -= item->key;
                --tally.size;
                check_fifo(item->value, tally);
            }
            break;
        case op_kind::contains:
            throw std::logic_error("a queue has no contains (smrbench refuses such workloads)");
    }
}

/// Shared between the trial's threads; written by the coordinator, polled by
/// workers. Each flag is read on every operation, so each sits alone.
struct trial_control {
    alignas(smr::core::false_sharing_range) std::atomic<bool> go{false};
    alignas(smr::core::false_sharing_range) std::atomic<bool> stop{false};
    alignas(smr::core::false_sharing_range) std::atomic<std::int64_t> prefilled{0};
    alignas(smr::core::false_sharing_range) std::atomic<int> ready{0};
    alignas(smr::core::false_sharing_range) std::atomic<int> finished{0};  // workers done measuring
    std::mutex error_mutex;
    std::exception_ptr error;

    void fail(std::exception_ptr e) {
        {
            std::lock_guard lock(error_mutex);
            if (!error) error = e;
        }
        end_early();
    }
    /// Ends any prefill and every thread's loop.
    void end_early() {
        prefilled.store(INT64_MAX / 2, std::memory_order_relaxed);
        stop.store(true, std::memory_order_relaxed);
    }
};

/// Waits (futex-based, no spinning) until every participant has arrived.
inline void wait_for_count(std::atomic<int>& counter, int expected) {
    for (int seen = counter.load(std::memory_order_acquire); seen < expected;
         seen = counter.load(std::memory_order_acquire)) {
        counter.wait(seen, std::memory_order_acquire);
    }
}

/// Waits until every thread is ready (the prefill done); a prefill that takes
/// longer than two seconds reports its progress on stderr every two seconds.
inline void await_prefill(const trial_control& control, int threads, std::int64_t target,
                          bool report) {
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    auto next_report = start + std::chrono::seconds(2);
    // Polled, because an atomic wait cannot time out to report; every 1 ms
    // so that a short prefill does not delay the trial's start (the wait it
    // replaced was woken at once by the last arrive).
    while (control.ready.load(std::memory_order_acquire) < threads) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        if (!report || clock::now() < next_report) continue;
        next_report += std::chrono::seconds(2);
        const std::int64_t done =
            std::min(control.prefilled.load(std::memory_order_relaxed), target);
        std::fprintf(
            stderr, "smrbench: prefill %lld of %lld keys (%.0f%%), %.0f s\n",
            static_cast<long long>(done), static_cast<long long>(target),
            target > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(target) : 100.0,
            std::chrono::duration<double>(clock::now() - start).count());
    }
}

inline void arrive(std::atomic<int>& counter) {
    counter.fetch_add(1, std::memory_order_release);  // pairs with wait_for_count's acquire
    counter.notify_all();
}

inline void wait_for_flag(std::atomic<bool>& flag) {
    while (!flag.load(std::memory_order_acquire)) flag.wait(false, std::memory_order_acquire);
}

/// --pool-nodes: a bounded pool on top of the process's malloc (the --alloc
/// allocator), or null. It fills the structure with on_empty::fail, so that a
/// pool too small for the prefill is reported rather than waited on; the
/// trial switches it to --on-empty when the measured interval starts.
/// Reference counting always runs on a pool (type-stable memory, lfrc.hpp):
/// without --pool-nodes an unbounded one, so that its counts are reported
/// and a node never returned is seen.
template <class Domain>
std::unique_ptr<smr::alloc::pool_resource> make_pool(const bench_config& config) {
    constexpr bool type_stable = Domain::traits.family == smr::reclaimer_family::reference_count;
    if (config.pool_nodes == 0 && !type_stable) return nullptr;
    smr::alloc::pool_options options;
    options.capacity = config.pool_nodes != 0 ? static_cast<std::size_t>(config.pool_nodes)
                                              : static_cast<std::size_t>(unbounded_pool_capacity);
    options.when_empty = smr::alloc::on_empty::fail;
    if constexpr (type_stable) options = Domain::pool_options_for(options);
    return std::make_unique<smr::alloc::pool_resource>(options);
}

/// --ops with a pool: waits until every worker has finished (true), or until
/// the trial must be stopped (false): a worker failed and raised the stop
/// flag (it will never count itself finished, and others may be waiting in
/// the pool), or every unfinished worker has waited for pool memory for a
/// second with no wait served, which nothing can end any more (a stalled
/// thread is released only after the workers finish).
inline bool await_workers_or_pool_deadlock(const trial_control& control, int workers,
                                           const smr::alloc::pool_resource& pool) {
    using namespace std::chrono_literals;
    constexpr int polls_before_deadlock = 100;  // x 10 ms
    int stuck_polls = 0;
    std::uint64_t served = pool.waits_served();
    for (;;) {
        const int unfinished = workers - control.finished.load(std::memory_order_acquire);
        if (unfinished <= 0) return true;
        if (control.stop.load(std::memory_order_relaxed)) return false;
        std::this_thread::sleep_for(10ms);
        const std::uint64_t served_now = pool.waits_served();
        const bool all_waiting = pool.waiting() >= unfinished;
        stuck_polls = all_waiting && served_now == served ? stuck_polls + 1 : 0;
        served = served_now;
        if (stuck_polls == polls_before_deadlock) return false;
    }
}

/// DS::stm_stats(): the structure runs on an STM whose counts the trial
/// reports.
template <class DS>
constexpr bool has_stm() {
    return requires(const DS& ds) { ds.stm_stats(); };
}

/// The structure, given the ds_options of the command line if it takes any.
/// Returned as a prvalue: structures are neither copyable nor movable.
template <class Structure, class Domain>
Structure make_structure(Domain& domain, const bench_config& config) {
    if constexpr (std::is_constructible_v<Structure, Domain&, smr::ds::ds_options>) {
        smr::ds::ds_options options;
        options.restart_from_head = config.restart_from_head;
        options.buckets = config.bucket_count();
        options.ort_bits = config.ort_bits;
        options.ort_shift = config.ort_shift;
        return Structure(domain, options);
    } else {
        return Structure(domain);
    }
}

}  // namespace detail

template <class Domain, template <class> class Structure>
trial_result run_trial(const bench_config& config, int trial_index) {
    using structure_type = Structure<Domain>;
    reset_peak_rss();

    smr::domain_config domain_cfg = config.domain_config();
    domain_cfg.max_threads = static_cast<std::size_t>(config.threads) + 2;  // workers, stall, spare
    domain_cfg.time_frees =
        true;  // every trial reports free() latency (the Epochs paper's Fig. 10)
    // Before the domain: the domain frees its last nodes into it.
    const std::unique_ptr<smr::alloc::pool_resource> pool = detail::make_pool<Domain>(config);
    domain_cfg.memory = pool.get();
    Domain domain(domain_cfg);

    // Recorders exist only when asked for; the domain's event sites then
    // cost one predictable branch each.
    const double ns_per_tick = smr::core::ns_per_tick();
    std::unique_ptr<smr::trace::timeline> timeline;
    std::unique_ptr<smr::trace::garbage_series> series;
    if (!config.timeline_path.empty()) {
        const auto min_ticks = static_cast<std::uint64_t>(
            static_cast<double>(config.timeline_min_free_ns) / ns_per_tick);
        timeline = std::make_unique<smr::trace::timeline>(domain_cfg.max_threads,
                                                          config.timeline_capacity, min_ticks);
    }
    if (!config.garbage_series_path.empty()) {
        series = std::make_unique<smr::trace::garbage_series>(domain_cfg.max_threads);
    }
    structure_type structure = detail::make_structure<structure_type>(domain, config);

    detail::trial_control control;
    std::vector<smr::core::padded<detail::worker_tally>> tallies(
        static_cast<std::size_t>(config.threads));
    const std::vector<int> cpus = cpu_order(config.pin);
    const std::int64_t prefill_target = config.prefill_target();
    const op_mix mix{config.insert_pct, config.erase_pct};
    const auto key_range = static_cast<std::uint64_t>(config.key_range);

    auto do_operation = [&](int tid, op_kind kind, std::int64_t key, detail::worker_tally& tally) {
        if constexpr (detail::is_queue<structure_type>()) {
            detail::queue_operation(structure, tid, kind, key, tally);
        } else {
            switch (kind) {
                case op_kind::insert:
                    if (structure.insert(tid, key, key)) {
                        tally.key_sum += key;
                        ++tally.size;
                    }
                    break;
                case op_kind::erase:
                    if (structure.erase(tid, key)) {
                        tally.key_sum -= key;
                        --tally.size;
                    }
                    break;
                case op_kind::contains:
                    (void)structure.contains(tid, key);
                    break;
            }
        }
    };

    // Inserts random keys until the structure holds the prefill target, with `tid`'s thread;
    // returns how many this thread inserted.
    auto prefill = [&](int tid, splitmix64& rng, detail::worker_tally& tally) {
        std::int64_t inserted = 0;
        while (control.prefilled.load(std::memory_order_relaxed) < prefill_target) {
            const auto key = static_cast<std::int64_t>(rng.below(key_range));
            const std::int64_t before = tally.size;
            try {
                do_operation(tid, op_kind::insert, key, tally);
            } catch (const std::bad_alloc&) {
                if (!pool) throw;
                throw std::runtime_error(
                    "the pool of --pool-nodes " + std::to_string(config.pool_nodes) +
                    " ran out during the prefill, at " + std::to_string(control.prefilled.load()) +
                    " of " + std::to_string(prefill_target) +
                    " keys: give it more nodes, or prefill fewer keys");
            }
            domain.quiescent(tid);
            if (tally.size == before) continue;
            control.prefilled.fetch_add(1, std::memory_order_relaxed);
            ++inserted;
        }
        return inserted;
    };

    auto worker = [&](int index) {
        try {
            if (!cpus.empty() && config.pin != pin_policy::none) {
                pin_current_thread(cpu_for_worker(cpus, static_cast<std::size_t>(index)));
            }
            smr::thread_handle handle(domain);
            const int tid = handle.tid();
            detail::worker_tally& tally = *tallies[static_cast<std::size_t>(index)];
            if constexpr (detail::is_queue<structure_type>()) {
                if (config.threads > (1 << detail::producer_bits)) {
                    throw std::runtime_error("queue items tag at most 4096 producers");
                }
                tally.producer = index;
                tally.last_seen.assign(static_cast<std::size_t>(config.threads), 0);
            }

            // Prefill: grow to the steady-state size with every thread (--prefill-by workers).
            splitmix64 prefill_rng(stream_seed(config.seed, trial_index, index, 0));
            (void)prefill(tid, prefill_rng, tally);

            detail::arrive(control.ready);
            detail::wait_for_flag(control.go);

            splitmix64 rng(stream_seed(config.seed, trial_index, index, 1));
            std::uint64_t ops = 0;
            std::uint32_t since_quiescent = 0;
            alternating_updates alternation;  // --alternate
            // --ops: a fixed count; otherwise "unlimited" (stopped by the flag).
            const std::uint64_t op_limit =
                config.ops_per_thread != 0 ? config.ops_per_thread : UINT64_MAX;
            // relaxed: `stop` only ends the loop; the join publishes the tallies.
            while (ops != op_limit && !control.stop.load(std::memory_order_relaxed)) {
                op_kind kind = mix.pick(rng);
                auto key = static_cast<std::int64_t>(rng.below(key_range));
                if (config.alternate) kind = alternation.next(kind, key);
                const std::int64_t size_before = tally.size;
                // Only a pool throws here (--on-empty fail, or a wait ended
                // by the stop): the structure gave the operation up cleanly.
                try {
                    do_operation(tid, kind, key, tally);
                    alternation.done(kind, key, tally.size != size_before);
                } catch (const std::bad_alloc&) {
                    if (!pool) throw;
                    ++tally.failed_ops;
                }
                // An application quiescent state (QSBR), every --quiescent-every
                // operations; the hook is empty for the other schemes.
                if constexpr (Domain::traits.needs_quiescent_states) {
                    if (++since_quiescent == config.quiescent_every) {
                        since_quiescent = 0;
                        domain.quiescent(tid);
                    }
                }
                ++ops;
            }
            tally.end_ns = smr::core::now_ns();
            tally.measured_ops = ops - tally.failed_ops;
            // A transactional structure hands this thread's pending frees to
            // the domain before the handle goes.
            if constexpr (requires { structure.flush(tid); }) structure.flush(tid);
            control.finished.fetch_add(1, std::memory_order_release);  // read by the deadlock watch
        } catch (...) {
            control.fail(std::current_exception());
            detail::arrive(control.ready);
        }
    };

    // --stall: a registered thread that enters an operation and stays in it
    // for the whole measured interval (Hart's and NBR's stalled thread). It
    // stalls inside a read phase: for every scheme but NBR that is the same
    // as inside the operation (read_phase_begin is empty); an NBR/NBR+
    // broadcast neutralizes it (its sleep is interrupted and it siglongjmps
    // back to the checkpoint, counted as a restart), so it pins no garbage --
    // the bounded-garbage behaviour of the NBR paper's Figure 4c. The loop
    // below the checkpoint only reads and sleeps, as a read phase must.
    auto wait_for_stop = [&] {
        while (!control.stop.load(std::memory_order_acquire)) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    };
    // --stall-hold: the same, holding the structure's first node (what a held
    // reference keeps alive: under lfrc, the node's unlinked successors).
    auto holding_staller = [&] {
        try {
            smr::thread_handle handle(domain);
            bool holding_arrived = false;
            // After the prefill, so that there is a first node to hold.
            while (control.prefilled.load(std::memory_order_relaxed) < prefill_target &&
                   !control.stop.load(std::memory_order_acquire)) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            if constexpr (detail::has_hold_first<structure_type>()) {
                structure.hold_first(handle.tid(), [&] {
                    if (!std::exchange(holding_arrived, true)) detail::arrive(control.ready);
                    wait_for_stop();
                });
            }
            if (!holding_arrived) detail::arrive(control.ready);  // not reached: refused
        } catch (...) {
            control.fail(std::current_exception());
            detail::arrive(control.ready);
        }
    };
    auto staller = [&] {
        try {
            smr::thread_handle handle(domain);
            const int tid = handle.tid();
            smr::op_guard guard(domain, tid);
            detail::arrive(control.ready);
            for (;;) {
                SMR_READ_PHASE_BEGIN(domain, tid);
                while (!control.stop.load(std::memory_order_acquire)) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                }
                domain.read_phase_end(tid);
                break;
            }
        } catch (...) {
            control.fail(std::current_exception());
            detail::arrive(control.ready);
        }
    };

    // The stop flag ends the workers' loops, the stalled thread and, through
    // stop_waiting, every allocation still waiting for pool memory.
    auto stop_all = [&] {
        control.stop.store(true, std::memory_order_release);
        if (pool) pool->stop_waiting();
    };
    const auto prefill_start = std::chrono::steady_clock::now();
    std::int64_t prefill_main_keys = 0;
    if (config.prefill_by_main && !SMR_MUTANT("prefill_by_main_ignored")) {
        // The allocator/STM paper's setup: the main thread builds the structure, so its nodes
        // come from the main thread's heap (glibc's main arena), not from the workers' arenas,
        // and the workers find it full. Worker 0 takes over the tally, after its start.
        smr::thread_handle handle(domain);
        splitmix64 prefill_rng(stream_seed(config.seed, trial_index, config.threads, 0));
        prefill_main_keys = prefill(handle.tid(), prefill_rng, *tallies[0]);
    }
    // Ended early (a thread that cannot be started, an exception below), the
    // trial stops and joins the threads it started: they leave the prefill
    // and pass `go` at once, and the error reaches the caller.
    std::vector<memory_sample> samples;  // written by the sampler: outlives it
    thread_group threads([&] {
        control.end_early();
        stop_all();
        control.go.store(true, std::memory_order_release);
        control.go.notify_all();
    });
    for (int i = 0; i < config.threads; ++i) threads.start([&worker, i] { worker(i); });
    if (config.stall_hold) {
        threads.start(holding_staller);
    } else if (config.stall) {
        threads.start(staller);
    }
    detail::await_prefill(control, static_cast<int>(threads.size()), prefill_target, !config.quiet);
    // A prefill that failed (out of memory) ends the trial with its own error,
    // before the sampler thread (which would fail to start, for the same
    // reason) hides it. Every thread has arrived (acquire): `error` is settled.
    if (control.error) std::rethrow_exception(control.error);
    const double prefill_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - prefill_start).count();

    // Recording covers the measured interval only (the prefill would fill
    // the buffers with epoch changes of an empty workload). Attached while
    // the workers wait for `go`: its release store publishes the pointers.
    domain.attach_recorders(timeline.get(), series.get());
    if (pool) pool->set_when_empty(config.on_empty);  // published to the workers by `go`
    // Exact: every worker has finished its prefill and waits for `go`.
    const auto allocated_before = domain.allocated();
    const auto allocator_before = allocator_counters_now(config.allocator.name);
    smr::stm::stm_stats stm_before;
    if constexpr (detail::has_stm<structure_type>()) stm_before = structure.stm_stats();
    const std::uint64_t start_ns = smr::core::now_ns();
    const std::uint64_t start_ticks = smr::core::now_ticks();

    // Peak garbage: sampled here every millisecond and once when the workers
    // stop (the schemes do not sample; with --garbage-series, also at every
    // epoch change); with --sample-ms, also a memory time series for the JSON.
    threads.start([&, start_ns] {  // the sampler, joined last; start_ns dies before it
        using clock = std::chrono::steady_clock;
        const auto period = std::chrono::milliseconds(config.sample_ms != 0 ? config.sample_ms : 1);
        auto next_sample = clock::now();
        while (!control.stop.load(std::memory_order_relaxed)) {
            const std::uint64_t garbage = domain.sample_garbage();
            if (config.sample_ms != 0 && clock::now() >= next_sample) {
                const auto bytes = allocator_bytes_in_use(config.allocator.name);
                samples.push_back(memory_sample{
                    static_cast<double>(smr::core::now_ns() - start_ns) * 1e-6, current_rss_bytes(),
                    bytes ? static_cast<std::int64_t>(*bytes) : -1, garbage});
                next_sample += period;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    });

    control.go.store(true, std::memory_order_release);  // pairs with wait_for_flag
    control.go.notify_all();
    std::uint64_t garbage_at_stop = 0;
    const std::size_t workers = static_cast<std::size_t>(config.threads);
    const std::size_t sampler = threads.size() - 1;
    if (config.ops_per_thread == 0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(config.duration_s));
        garbage_at_stop = domain.sample_garbage();
        stop_all();
        threads.join(0, sampler);
    } else {
        // Each worker stops after --ops, unless all wait for pool memory that
        // nothing can free any more.
        if (pool && !detail::await_workers_or_pool_deadlock(control, config.threads, *pool)) {
            stop_all();
        }
        threads.join(0, workers);
        garbage_at_stop = domain.sample_garbage();
        stop_all();  // releases the stalled thread
        threads.join(workers, sampler);
    }
    const std::uint64_t end_ticks = smr::core::now_ticks();
    threads.join(sampler, sampler + 1);
    if (control.error) std::rethrow_exception(control.error);
    // After the joins: the counts include each worker's cache flushed as it
    // exited (a flush per size class it used; a trial's batches flush
    // thousands of times).
    const auto allocator_after = allocator_counters_now(config.allocator.name);

    if (timeline) {
        write_timeline(per_trial_path(config.timeline_path, trial_index, config.trials),
                       recording_header(config, trial_index), *timeline, start_ticks, end_ticks,
                       ns_per_tick);
    }
    if (series) {
        write_garbage_series(per_trial_path(config.garbage_series_path, trial_index, config.trials),
                             recording_header(config, trial_index), *series, start_ticks,
                             ns_per_tick);
    }

    trial_result result;
    result.trial = trial_index;
    result.prefill_size = control.prefilled.load();
    result.prefill_seconds = prefill_seconds;
    result.prefill_main_keys = prefill_main_keys;
    std::uint64_t end_ns = start_ns;
    for (const auto& t : tallies) {
        result.ops_per_thread.push_back(t->measured_ops);
        result.operations += t->measured_ops;
        result.failed_operations += t->failed_ops;
        result.expected_key_sum += t->key_sum;
        result.expected_size += t->size;
        end_ns = std::max(end_ns, t->end_ns);
    }
    result.expected_key_sum += config.injected_key_sum_error;  // 0 but in the test build
    result.measured_seconds = static_cast<double>(end_ns - start_ns) * 1e-9;
    result.throughput_ops_per_s =
        result.measured_seconds > 0
            ? static_cast<double>(result.operations) / result.measured_seconds
            : 0;
    if (result.operations != 0) {
        result.exec_time_per_op_ns =
            result.measured_seconds * 1e9 / static_cast<double>(result.operations);
        result.cpu_time_per_op_ns = result.exec_time_per_op_ns * config.threads;
    }

    const smr::ds::validation_result check = structure.validate();
    result.key_sum = check.key_sum;
    result.size = static_cast<std::int64_t>(check.size);
    if (!check.ok) {
        result.validation_error = "invariant violated: " + check.error;
    } else if (check.key_sum != (SMR_MUTANT("smrbench_key_sum_self_compare")
                                     ? check.key_sum
                                     : result.expected_key_sum)) {
        result.validation_error = "key sum " + std::to_string(check.key_sum) + " != expected " +
                                  std::to_string(result.expected_key_sum);
    } else if (result.size != result.expected_size) {
        result.validation_error = "size " + std::to_string(result.size) + " != expected " +
                                  std::to_string(result.expected_size);
    }
    if constexpr (detail::is_queue<structure_type>()) {
        for (const auto& t : tallies) {
            if (result.validation_error.empty() && !t->fifo_error.empty()) {
                result.validation_error = "FIFO order violated: " + t->fifo_error;
            }
        }
    }
    if constexpr (Domain::traits.family == smr::reclaimer_family::reference_count) {
        // Every thread has ended its operations: a node whose count a thread
        // or a link still held would have been freed (or, in amortized mode,
        // queued on a freeable list) by now.
        std::uint64_t left = domain.garbage();
        for (int i = 0; i < domain.registry().scan_limit(); ++i) left -= domain.freeable_size(i);
        if (result.validation_error.empty() && left != 0) {
            result.validation_error = std::to_string(left) +
                                      " unlinked nodes never freed after every thread finished "
                                      "(a reference count was leaked)";
        }
    }
    result.validated = result.validation_error.empty();
    if (pool) {
        result.has_pool = true;
        result.pool = pool->stats();
        if (result.pool.gave_up != 0) result.status = "pool_exhausted";
    }
    if constexpr (detail::has_stm<structure_type>()) {
        result.has_stm = true;
        result.stm = structure.stm_stats() - stm_before;  // every worker has joined: exact
    }
    result.peak_rss_bytes = peak_rss_bytes();

    const smr::reclaimer_stats stats = domain.stats();
    reclaimer_report& r = result.reclaimer;
    r.totals = stats;
    r.measured_allocated = stats.allocated - allocated_before.nodes;
    r.measured_allocated_bytes = stats.allocated_bytes - allocated_before.bytes;
    r.garbage_end = std::max(stats.garbage, garbage_at_stop);
    r.remote_frees_counted = domain_cfg.count_remote_frees;
    if (allocator_before && allocator_after) {
        result.allocator_counts = *allocator_after - *allocator_before;
    }
    result.samples = std::move(samples);
    return result;
}

}  // namespace smrbench
