#include "trial_coordinator.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "allocator_stats.hpp"
#include "pinning.hpp"
#include "process_stats.hpp"
#include "recording.hpp"
#include "report.hpp"
#include "smr/core/clock.hpp"
#include "smr/core/mutant.hpp"
#include "thread_group.hpp"

namespace smrbench {

void trial_control::sleep_until_stop() const {
    while (!stop.load(std::memory_order_acquire)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

std::string prefill_pool_exhausted(std::uint64_t pool_nodes, std::int64_t prefilled,
                                   std::int64_t target) {
    return "the pool of --pool-nodes " + std::to_string(pool_nodes) +
           " ran out during the prefill, at " + std::to_string(prefilled) + " of " +
           std::to_string(target) + " keys: give it more nodes, or prefill fewer keys";
}

namespace {

/// Waits until every role is ready (the prefill done); a prefill that takes
/// longer than two seconds reports its progress on stderr every two seconds.
void await_prefill(const trial_control& control, int roles, std::int64_t target, bool report) {
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    auto next_report = start + std::chrono::seconds(2);
    // Polled, because an atomic wait cannot time out to report; every 1 ms
    // so that a short prefill does not delay the trial's start. acquire:
    // pairs with arrive_ready, so each role's prefill (and error) is seen.
    while (control.ready.load(std::memory_order_acquire) < roles) {
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

/// --ops with a pool: waits until every worker has finished (true), or until
/// the trial must be stopped (false): a worker failed and raised the stop
/// flag (it will never count itself finished, and others may be waiting in
/// the pool), or every unfinished worker has waited for pool memory for a
/// second with no wait served, which nothing can end any more (a stalled
/// thread is released only after the workers finish).
bool await_workers_or_pool_deadlock(const trial_control& control, int workers,
                                    const smr::alloc::pool_resource& pool) {
    using namespace std::chrono_literals;
    constexpr int polls_before_deadlock = 100;  // x 10 ms
    int stuck_polls = 0;
    std::uint64_t served = pool.waits_served();
    for (;;) {
        // acquire: pairs with count_finished (nothing is read after it but
        // the count; the joins publish the tallies).
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

/// The recorders asked for (--timeline, --garbage-series), else null: the
/// domain's event sites then cost one predictable branch each.
struct trial_recorders {
    double ns_per_tick = smr::core::ns_per_tick();
    std::unique_ptr<smr::trace::timeline> timeline;
    std::unique_ptr<smr::trace::garbage_series> series;

    explicit trial_recorders(const bench_config& config) {
        const std::size_t slots = trial_thread_slots(config.threads);
        if (!config.recording.timeline_path.empty()) {
            const auto min_ticks = static_cast<std::uint64_t>(
                static_cast<double>(config.recording.timeline_min_free_ns) / ns_per_tick);
            timeline = std::make_unique<smr::trace::timeline>(
                slots, config.recording.timeline_capacity, min_ticks);
        }
        if (!config.recording.garbage_series_path.empty()) {
            series = std::make_unique<smr::trace::garbage_series>(slots);
        }
    }

    void write(const bench_config& config, int trial_index, std::uint64_t start_ticks,
               std::uint64_t end_ticks) const {
        if (timeline) {
            write_timeline(
                per_trial_path(config.recording.timeline_path, trial_index, config.trials),
                recording_header(config, trial_index), *timeline, start_ticks, end_ticks,
                ns_per_tick);
        }
        if (series) {
            write_garbage_series(
                per_trial_path(config.recording.garbage_series_path, trial_index, config.trials),
                recording_header(config, trial_index), *series, start_ticks, ns_per_tick);
        }
    }
};

/// The sampler role: peak garbage every millisecond (the schemes do not
/// sample; with --garbage-series they also record every epoch change) and,
/// with --sample-ms, a memory time series for the JSON.
class memory_sampler {
  public:
    memory_sampler(const bench_config& config, const trial_control& control, trial_subject& subject,
                   std::uint64_t start_ns, std::vector<memory_sample>& samples)
        : config_(config),
          control_(control),
          subject_(subject),
          start_ns_(start_ns),
          samples_(samples) {}

    void run() {
        using clock = std::chrono::steady_clock;
        const auto period = std::chrono::milliseconds(
            config_.recording.sample_ms != 0 ? config_.recording.sample_ms : 1);
        auto next_sample = clock::now();
        while (!control_.stop.load(std::memory_order_relaxed)) {
            const std::uint64_t garbage = subject_.sample_garbage();
            if (config_.recording.sample_ms != 0 && clock::now() >= next_sample) {
                const auto bytes = allocator_bytes_in_use(config_.allocator.name);
                samples_.push_back(memory_sample{
                    static_cast<double>(smr::core::now_ns() - start_ns_) * 1e-6,
                    current_rss_bytes(), bytes ? static_cast<std::int64_t>(*bytes) : -1, garbage});
                next_sample += period;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }

  private:
    const bench_config& config_;
    const trial_control& control_;
    trial_subject& subject_;
    std::uint64_t start_ns_;
    std::vector<memory_sample>& samples_;
};

/// One trial's run: the members are what its steps share.
class coordinator {
  public:
    coordinator(const bench_config& config, int trial_index, trial_subject& subject,
                trial_control& control, smr::alloc::pool_resource* pool)
        : config_(config),
          trial_index_(trial_index),
          subject_(subject),
          control_(control),
          pool_(pool),
          recorders_(config),
          tallies_(static_cast<std::size_t>(config.threads)),
          cpus_(cpu_order(config.pin)) {}

    trial_result run();

  private:
    void prefill(thread_group& threads);
    void start_roles(thread_group& threads);
    std::uint64_t measure(thread_group& threads);
    void stop_all();
    trial_result result(std::uint64_t garbage_at_stop);
    trial_result fold() const;
    void check(trial_result& result);

    /// Runs a role's body on its thread; an exception ends the trial and
    /// counts the role ready, so that await_prefill returns.
    template <class Body>
    void guarded(Body&& body) noexcept {
        try {
            body();
        } catch (...) {
            control_.fail(std::current_exception());
            control_.arrive_ready();
        }
    }

    const bench_config& config_;
    const int trial_index_;
    trial_subject& subject_;
    trial_control& control_;
    smr::alloc::pool_resource* const pool_;
    trial_recorders recorders_;
    std::vector<smr::core::padded<worker_tally>> tallies_;
    const std::vector<int> cpus_;
    std::vector<memory_sample> samples_;  // written by the sampler: outlives it
    std::int64_t prefill_main_keys_ = 0;
    double prefill_seconds_ = 0;
    std::uint64_t start_ns_ = 0;
    std::uint64_t start_ticks_ = 0;
    std::optional<allocator_counters> allocator_before_, allocator_after_;
};

trial_result coordinator::run() {
    // Ended early (a thread that cannot be started, an exception below), the
    // trial stops and joins the threads it started: they leave the prefill
    // and pass `go` at once, and the error reaches the caller.
    thread_group threads([this] {
        control_.end_early();
        stop_all();
        control_.go.store(true, std::memory_order_release);
        control_.go.notify_all();
    });
    prefill(threads);
    const std::uint64_t garbage_at_stop = measure(threads);
    const std::uint64_t end_ticks = smr::core::now_ticks();
    threads.join(threads.size() - 1, threads.size());  // the sampler
    if (control_.error) std::rethrow_exception(control_.error);
    // After the joins: the counts include each worker's cache flushed as it
    // exited (a flush per size class it used; a trial flushes thousands of
    // times).
    allocator_after_ = allocator_counters_now(config_.allocator.name);
    recorders_.write(config_, trial_index_, start_ticks_, end_ticks);
    return result(garbage_at_stop);
}

/// Fills the structure (--prefill-by main, else every worker its share) and
/// returns when every role is ready.
void coordinator::prefill(thread_group& threads) {
    const auto start = std::chrono::steady_clock::now();
    if (config_.workload.prefill_by_main && !SMR_MUTANT("prefill_by_main_ignored")) {
        // The allocator/STM paper's setup: the main thread builds the
        // structure, so its nodes come from the main thread's heap (glibc's
        // main arena), not from the workers' arenas, and the workers find it
        // full. Worker 0 takes over the tally, after its start.
        prefill_main_keys_ = subject_.prefill_from_main(*tallies_[0]);
    }
    start_roles(threads);
    await_prefill(control_, static_cast<int>(threads.size()), config_.workload.prefill_target(),
                  !config_.output.quiet);
    // A prefill that failed (out of memory) ends the trial with its own
    // error, before the sampler thread (which would fail to start, for the
    // same reason) hides it. Every role has arrived: `error` is settled.
    if (control_.error) std::rethrow_exception(control_.error);
    prefill_seconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The trial's result once every thread has joined.
trial_result coordinator::result(std::uint64_t garbage_at_stop) {
    trial_result result = fold();
    check(result);
    subject_.report(result, garbage_at_stop);
    if (pool_ != nullptr) {
        result.has_pool = true;
        result.pool = pool_->stats();
        if (result.pool.gave_up != 0) result.status = "pool_exhausted";
    }
    if (allocator_before_ && allocator_after_) {
        result.allocator_counts = *allocator_after_ - *allocator_before_;
    }
    result.peak_rss_bytes = peak_rss_bytes();
    result.samples = std::move(samples_);
    return result;
}

/// The workers, then the stalled thread of --stall or --stall-hold.
void coordinator::start_roles(thread_group& threads) {
    for (int i = 0; i < config_.threads; ++i) {
        threads.start([this, i] {
            guarded([&] {
                if (!cpus_.empty() && config_.pin != pin_policy::none) {
                    pin_current_thread(cpu_for_worker(cpus_, static_cast<std::size_t>(i)));
                }
                subject_.run_worker(i, *tallies_[static_cast<std::size_t>(i)]);
            });
        });
    }
    if (config_.workload.stall_hold) {
        threads.start([this] { guarded([&] { subject_.run_holding_staller(); }); });
    } else if (config_.workload.stall) {
        threads.start([this] { guarded([&] { subject_.run_staller(); }); });
    }
}

/// The measured interval, from go until every role but the sampler has
/// joined; returns the garbage when the workers stopped. The sampler is the
/// last thread started, and the caller joins it.
std::uint64_t coordinator::measure(thread_group& threads) {
    // Recording covers the measured interval only (the prefill would fill
    // the buffers with epoch changes of an empty workload). Attached while
    // the workers wait for `go`, whose release store publishes it.
    subject_.begin_measuring(recorders_.timeline.get(), recorders_.series.get());
    if (pool_ != nullptr) pool_->set_when_empty(config_.on_empty);
    allocator_before_ = allocator_counters_now(config_.allocator.name);
    start_ns_ = smr::core::now_ns();
    start_ticks_ = smr::core::now_ticks();
    const std::size_t workers = static_cast<std::size_t>(config_.threads);
    const std::size_t sampler = threads.size();
    threads.start(
        [this] { memory_sampler(config_, control_, subject_, start_ns_, samples_).run(); });

    control_.go.store(true, std::memory_order_release);  // pairs with wait_for_go
    control_.go.notify_all();
    std::uint64_t garbage_at_stop = 0;
    if (config_.ops_per_thread == 0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(config_.duration_s));
        garbage_at_stop = subject_.sample_garbage();
        stop_all();
        threads.join(0, sampler);
    } else {
        // Each worker stops after --ops, unless all wait for pool memory
        // that nothing can free any more.
        if (pool_ != nullptr &&
            !await_workers_or_pool_deadlock(control_, config_.threads, *pool_)) {
            stop_all();
        }
        threads.join(0, workers);
        garbage_at_stop = subject_.sample_garbage();
        stop_all();  // releases the stalled thread
        threads.join(workers, sampler);
    }
    return garbage_at_stop;
}

/// The stop flag ends the workers' loops, the stalled thread, the sampler
/// and, through stop_waiting, every allocation still waiting for pool memory.
void coordinator::stop_all() {
    control_.stop.store(true, std::memory_order_release);  // pairs with sleep_until_stop
    if (pool_ != nullptr) pool_->stop_waiting();
}

/// The workers' tallies added up: what the structure must now hold, and the
/// measured interval's operations and time.
trial_result coordinator::fold() const {
    trial_result result;
    result.trial = trial_index_;
    result.prefill_size = control_.prefilled.load();
    result.prefill_seconds = prefill_seconds_;
    result.prefill_main_keys = prefill_main_keys_;
    std::uint64_t end_ns = start_ns_;
    for (const auto& t : tallies_) {
        result.ops_per_thread.push_back(t->measured_ops);
        result.operations += t->measured_ops;
        result.failed_operations += t->failed_ops;
        result.expected_key_sum += t->key_sum;
        result.expected_size += t->size;
        end_ns = std::max(end_ns, t->end_ns);
    }
    result.expected_key_sum += config_.injected_key_sum_error;  // 0 but in the test build
    result.measured_seconds = static_cast<double>(end_ns - start_ns_) * 1e-9;
    result.throughput_ops_per_s =
        result.measured_seconds > 0
            ? static_cast<double>(result.operations) / result.measured_seconds
            : 0;
    if (result.operations != 0) {
        result.exec_time_per_op_ns =
            result.measured_seconds * 1e9 / static_cast<double>(result.operations);
        result.cpu_time_per_op_ns = result.exec_time_per_op_ns * config_.threads;
    }
    return result;
}

/// The structure against the tallies; the first failure found is the one
/// reported.
void coordinator::check(trial_result& result) {
    const smr::ds::validation_result check = subject_.validate();
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
    for (const auto& t : tallies_) {  // a set's tallies have none
        if (result.validation_error.empty() && !t->fifo_error.empty()) {
            result.validation_error = "FIFO order violated: " + t->fifo_error;
        }
    }
    if (result.validation_error.empty()) result.validation_error = subject_.end_state_error();
    result.validated = result.validation_error.empty();
}

}  // namespace

trial_result coordinate_trial(const bench_config& config, int trial_index, trial_subject& subject,
                              trial_control& control, smr::alloc::pool_resource* pool) {
    return coordinator(config, trial_index, subject, control, pool).run();
}

}  // namespace smrbench
