// One trial of one data structure x reclaimer: the typed half, whose
// measured loop is compiled for each pair (trial_subject.hpp).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "process_stats.hpp"
#include "run_spec.hpp"
#include "smr/alloc/pool_resource.hpp"
#include "smr/compatibility.hpp"
#include "smr/core/clock.hpp"
#include "smr/ds/options.hpp"
#include "smr/ds/validation.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/stm/transaction.hpp"
#include "trial.hpp"
#include "trial_control.hpp"
#include "trial_coordinator.hpp"
#include "trial_subject.hpp"
#include "workload.hpp"

namespace smrbench {

namespace detail {

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
void queue_operation(Queue& queue, smr::context_ref<typename Queue::domain_type> self, op_kind kind,
                     std::int64_t key, worker_tally& tally) {
    switch (kind) {
        case op_kind::insert:
            if (queue.insert(self, key, queue_tag(tally.producer, ++tally.enqueued))) {
                tally.key_sum += key;
                ++tally.size;
            }
            break;
        case op_kind::erase:
            if (const auto item = queue.dequeue(self)) {
                tally.key_sum -= item->key;
                --tally.size;
                check_fifo(item->value, tally);
            }
            break;
        case op_kind::contains:
            throw std::logic_error("a queue has no contains (smrbench refuses such workloads)");
    }
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

/// The domain's configuration in a trial: the command line's, with a slot
/// per thread role, every free timed (the Epochs paper's Figure 10 reads
/// free() latency from any trial) and `pool` (or null) as its memory.
inline smr::domain_config trial_domain_config(const bench_config& config,
                                              smr::alloc::pool_resource* pool) {
    smr::domain_config cfg = config.domain;
    cfg.max_threads = trial_thread_slots(config.threads);
    cfg.time_frees = true;
    cfg.memory = pool;
    return cfg;
}

}  // namespace detail

/// The typed half of a trial (trial_subject.hpp): one domain, one structure,
/// and the thread roles that run operations on them. The measured loop is
/// here, compiled for each pair; everything around it is the coordinator's.
template <class Domain, template <class> class Structure>
class pair_trial final : public trial_subject {
    using structure_type = Structure<Domain>;
    /// What the workers lend the structure's operations: their context.
    using context_ref = smr::context_ref<Domain>;
    /// What the structure declares: its operations (a queue's) and options.
    static constexpr smr::ds_traits structure_traits = smr::ds_traits_of<structure_type>();

  public:
    pair_trial(const bench_config& config, int trial_index, trial_control& control,
               smr::alloc::pool_resource* pool)
        : config_(config),
          trial_index_(trial_index),
          control_(control),
          pool_(pool),
          prefill_target_(config.workload.prefill_target()),
          domain_cfg_(detail::trial_domain_config(config, pool)),
          domain_(domain_cfg_),
          structure_(detail::make_structure<structure_type>(domain_, config)) {}

    std::int64_t prefill_from_main(worker_tally& tally) override {
        auto self = smr::attach(domain_);
        splitmix64 rng(stream_seed(config_.seed, trial_index_, config_.threads, 0));
        return prefill(self, rng, tally);
    }

    void run_worker(int index, worker_tally& tally) override {
        auto self = smr::attach(domain_);
        if constexpr (structure_traits.is_queue) {
            if (config_.threads > (1 << detail::producer_bits)) {
                throw std::runtime_error("queue items tag at most 4096 producers");
            }
            tally.producer = index;
            tally.last_seen.assign(static_cast<std::size_t>(config_.threads), 0);
        }
        // Grow to the steady-state size with every thread (--prefill-by workers).
        splitmix64 prefill_rng(stream_seed(config_.seed, trial_index_, index, 0));
        (void)prefill(self, prefill_rng, tally);
        control_.arrive_ready();
        control_.wait_for_go();

        splitmix64 rng(stream_seed(config_.seed, trial_index_, index, 1));
        const std::uint64_t ops = measured_operations(self, rng, tally);
        tally.end_ns = smr::core::now_ns();
        tally.measured_ops = ops - tally.failed_ops;
        // A transactional structure hands this thread's pending frees to the
        // domain before the thread detaches.
        if constexpr (detail::has_stm<structure_type>()) structure_.flush(self);
        control_.count_finished();
    }

    // --stall: a registered thread that enters an operation and stays in it
    // for the whole measured interval (Hart's and NBR's stalled thread). It
    // stalls inside a read phase: for every scheme but NBR that is the same
    // as inside the operation (read_phase_begin is empty); an NBR/NBR+
    // broadcast neutralizes it (its sleep is interrupted and it siglongjmps
    // back to the checkpoint, counted as a restart), so it pins no garbage --
    // the bounded-garbage behaviour of the NBR paper's Figure 4c. Below the
    // checkpoint it only reads and sleeps, as a read phase must.
    void run_staller() override {
        auto self = smr::attach(domain_);
        smr::op_guard guard(domain_, self);
        control_.arrive_ready();
        SMR_READ_PHASE_BEGIN(domain_, self);
        control_.sleep_until_stop();
        domain_.read_phase_end(self);
    }

    // --stall-hold: the same, holding the structure's first node (what a held
    // reference keeps alive: under lfrc, the node's unlinked successors).
    void run_holding_staller() override {
        auto self = smr::attach(domain_);
        bool holding = false;
        // After the prefill, so that there is a first node to hold.
        while (control_.prefilled.load(std::memory_order_relaxed) < prefill_target_ &&
               !control_.stop.load(std::memory_order_acquire)) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        if constexpr (structure_traits.holds_first) {
            structure_.hold_first(self, [&] {
                if (!std::exchange(holding, true)) control_.arrive_ready();
                control_.sleep_until_stop();
            });
        }
        if (!holding) control_.arrive_ready();  // not reached: smrbench refuses the pair
    }

    void begin_measuring(smr::trace::timeline* timeline,
                         smr::trace::garbage_series* series) override {
        domain_.attach_recorders(timeline, series);
        allocated_before_ = domain_.allocated();  // exact: every worker waits for go
        if constexpr (detail::has_stm<structure_type>()) stm_before_ = structure_.stm_stats();
    }

    std::uint64_t sample_garbage() override { return domain_.sample_garbage(); }

    smr::ds::validation_result validate() override { return structure_.validate(); }

    std::string end_state_error() override {
        if constexpr (Domain::traits.family == smr::reclaimer_family::reference_count) {
            // Every thread has ended its operations: a node whose count a
            // thread or a link still held would have been freed (or, in
            // amortized mode, queued on a freeable list) by now.
            std::uint64_t left = domain_.garbage();
            for (int i = 0; i < domain_.registry().scan_limit(); ++i) {
                left -= domain_.freeable_size(i);
            }
            if (left != 0) {
                return std::to_string(left) +
                       " unlinked nodes never freed after every thread finished "
                       "(a reference count was leaked)";
            }
        }
        return {};
    }

    void report(trial_result& result, std::uint64_t garbage_at_stop) override {
        // The recorders end with the coordinator, before the domain.
        domain_.attach_recorders(nullptr, nullptr);
        if constexpr (detail::has_stm<structure_type>()) {
            result.has_stm = true;
            result.stm = structure_.stm_stats() - stm_before_;  // every worker has joined: exact
        }
        const smr::reclaimer_stats stats = domain_.stats();
        reclaimer_report& r = result.reclaimer;
        r.totals = stats;
        r.measured_allocated = stats.allocated - allocated_before_.nodes;
        r.measured_allocated_bytes = stats.allocated_bytes - allocated_before_.bytes;
        r.garbage_end = std::max(stats.garbage, garbage_at_stop);
        r.remote_frees_counted = domain_cfg_.count_remote_frees;
    }

  private:
    /// One operation of the workload by the thread `self`, its outcome added
    /// to the tally.
    void operation(context_ref self, op_kind kind, std::int64_t key, worker_tally& tally) {
        if constexpr (structure_traits.is_queue) {
            detail::queue_operation(structure_, self, kind, key, tally);
        } else {
            switch (kind) {
                case op_kind::insert:
                    if (structure_.insert(self, key, key)) {
                        tally.key_sum += key;
                        ++tally.size;
                    }
                    break;
                case op_kind::erase:
                    if (structure_.erase(self, key)) {
                        tally.key_sum -= key;
                        --tally.size;
                    }
                    break;
                case op_kind::contains:
                    (void)structure_.contains(self, key);
                    break;
            }
        }
    }

    /// Inserts random keys until the structure holds the prefill target;
    /// returns how many this thread inserted.
    std::int64_t prefill(context_ref self, splitmix64& rng, worker_tally& tally) {
        const auto key_range = static_cast<std::uint64_t>(config_.workload.key_range);
        std::int64_t inserted = 0;
        while (control_.prefilled.load(std::memory_order_relaxed) < prefill_target_) {
            const auto key = static_cast<std::int64_t>(rng.below(key_range));
            const std::int64_t before = tally.size;
            try {
                operation(self, op_kind::insert, key, tally);
            } catch (const std::bad_alloc&) {
                if (pool_ == nullptr) throw;
                throw std::runtime_error(prefill_pool_exhausted(
                    config_.pool_nodes, control_.prefilled.load(), prefill_target_));
            }
            domain_.quiescent(self);
            if (tally.size == before) continue;
            control_.prefilled.fetch_add(1, std::memory_order_relaxed);
            ++inserted;
        }
        return inserted;
    }

    /// The measured interval's operations, until the stop flag or --ops;
    /// returns how many ran (failed ones included).
    std::uint64_t measured_operations(context_ref self, splitmix64& rng, worker_tally& tally) {
        const op_mix mix{config_.workload.insert_pct, config_.workload.erase_pct};
        const auto key_range = static_cast<std::uint64_t>(config_.workload.key_range);
        const bool alternate = config_.workload.alternate;
        const std::uint32_t quiescent_every = config_.workload.quiescent_every;
        // --ops: a fixed count; otherwise "unlimited" (stopped by the flag).
        const std::uint64_t op_limit =
            config_.ops_per_thread != 0 ? config_.ops_per_thread : UINT64_MAX;
        std::uint64_t ops = 0;
        std::uint32_t since_quiescent = 0;
        alternating_updates alternation;  // --alternate
        // relaxed: `stop` only ends the loop; the join publishes the tallies.
        while (ops != op_limit && !control_.stop.load(std::memory_order_relaxed)) {
            op_kind kind = mix.pick(rng);
            auto key = static_cast<std::int64_t>(rng.below(key_range));
            if (alternate) kind = alternation.next(kind, key);
            const std::int64_t size_before = tally.size;
            // Only a pool throws here (--on-empty fail, or a wait ended by
            // the stop): the structure gave the operation up cleanly.
            try {
                operation(self, kind, key, tally);
                alternation.done(kind, key, tally.size != size_before);
            } catch (const std::bad_alloc&) {
                if (pool_ == nullptr) throw;
                ++tally.failed_ops;
            }
            // An application quiescent state (QSBR), every --quiescent-every
            // operations; the hook is empty for the other schemes.
            if constexpr (Domain::traits.needs_quiescent_states) {
                if (++since_quiescent == quiescent_every) {
                    since_quiescent = 0;
                    domain_.quiescent(self);
                }
            }
            ++ops;
        }
        return ops;
    }

    const bench_config& config_;
    const int trial_index_;
    trial_control& control_;
    smr::alloc::pool_resource* const pool_;
    const std::int64_t prefill_target_;
    const smr::domain_config domain_cfg_;
    Domain domain_;
    structure_type structure_;
    decltype(std::declval<Domain&>().allocated()) allocated_before_{};
    smr::stm::stm_stats stm_before_{};
};

/// One trial of Structure<Domain>: the typed half above, run by the
/// coordinator (trial_coordinator.cpp).
template <class Domain, template <class> class Structure>
trial_result run_trial(const bench_config& config, int trial_index) {
    reset_peak_rss();
    // Before the domain, which frees its last nodes into it.
    const std::unique_ptr<smr::alloc::pool_resource> pool = detail::make_pool<Domain>(config);
    trial_control control;
    pair_trial<Domain, Structure> subject(config, trial_index, control, pool.get());
    return coordinate_trial(config, trial_index, subject, control, pool.get());
}

}  // namespace smrbench
