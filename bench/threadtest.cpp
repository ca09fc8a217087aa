#include "threadtest.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <numeric>
#include <ostream>
#include <string>
#include <thread>
#include <utility>

#include "median.hpp"
#include "option_table.hpp"
#include "pinning.hpp"
#include "process_stats.hpp"
#include "smr/core/padded.hpp"
#include "thread_group.hpp"

namespace smrbench {
namespace {

/// The tag a thread writes at both ends of its i-th block: distinct per
/// thread and per block, so a block handed to two owners is seen.
std::uint64_t tag_for(int thread, std::uint64_t i) {
    return (static_cast<std::uint64_t>(thread) << 48) ^ (i * 0x9E3779B97F4A7C15ULL) ^ 1;
}

/// Writes and checks a block's tags and alignment.
class block_checker {
  public:
    explicit block_checker(std::size_t size)
        : size_(size),
          head_(std::min<std::size_t>(size, sizeof(std::uint64_t))),
          tail_(std::min<std::size_t>(size - head_, sizeof(std::uint64_t))),
          alignment_(std::min(alignof(std::max_align_t), std::bit_floor(size))) {}

    void stamp(void* block, std::uint64_t tag) const {
        auto* bytes = static_cast<unsigned char*>(block);
        std::memcpy(bytes, &tag, head_);
        std::memcpy(bytes + size_ - tail_, &tag, tail_);
    }

    /// Empty when the block is aligned for any object of its size (C17 7.22.3).
    std::string check_alignment(const void* block) const {
        if (reinterpret_cast<std::uintptr_t>(block) % alignment_ == 0) return {};
        return "malloc(" + std::to_string(size_) + ") returned a block aligned below " +
               std::to_string(alignment_) + " bytes";
    }

    /// Empty when the block is aligned and both tags are intact.
    std::string check(const void* block, std::uint64_t tag) const {
        if (std::string misaligned = check_alignment(block); !misaligned.empty()) {
            return misaligned;
        }
        const auto* bytes = static_cast<const unsigned char*>(block);
        if (std::memcmp(bytes, &tag, head_) != 0 ||
            std::memcmp(bytes + size_ - tail_, &tag, tail_) != 0) {
            return "a live block of " + std::to_string(size_) +
                   " bytes was overwritten (the allocator handed it out twice, or blocks overlap)";
        }
        return {};
    }

  private:
    std::size_t size_;
    std::size_t head_;  ///< tag bytes at the start: 8, or the whole of a smaller block
    std::size_t tail_;  ///< tag bytes at the end, after the head's (none below 9 bytes)
    std::size_t alignment_;
};

/// Makes `block` escape, so that the compiler keeps every malloc and free
/// (GCC removes a malloc/free pair whose block nothing observes) and
/// re-reads the block's bytes after it.
inline void escape(void* block) { asm volatile("" : : "r"(block) : "memory"); }

/// One thread's result, alone on its cache lines: written at the end of the
/// thread's loop only, so that the benchmark itself shares nothing.
struct alignas(smr::core::false_sharing_range) worker_result {
    std::uint64_t pairs = 0;
    std::string error;
};

struct shared_control {
    std::atomic<bool> go{false};
    std::atomic<bool> stop{false};
};

/// The paper's form: allocate, free; until stopped or --ops. Nothing is written to the block
/// (the allocator/STM paper's loop writes nothing); its address is checked, which costs a
/// register test. Tagged (--check-blocks): a tag at both ends, checked before the free.
template <bool Tagged>
void single_blocks(const bench_config& config, [[maybe_unused]] int thread,
                   const shared_control& control, worker_result& out) {
    const std::size_t size = config.block_size;
    const block_checker checker(size);
    const std::uint64_t limit = config.ops_per_thread != 0 ? config.ops_per_thread : UINT64_MAX;
    std::uint64_t i = 0;
    // relaxed: `stop` only ends the loop; the join publishes the results.
    for (; i != limit && !control.stop.load(std::memory_order_relaxed); ++i) {
        void* block = std::malloc(size);
        if (block == nullptr) {
            out.error = "malloc(" + std::to_string(size) + ") returned null";
            break;
        }
        std::string error;
        if constexpr (Tagged) {
            const std::uint64_t tag = tag_for(thread, i);
            checker.stamp(block, tag);
            escape(block);
            error = checker.check(block, tag);
        } else {
            escape(block);
            error = checker.check_alignment(block);
        }
        std::free(block);
        if (!error.empty()) [[unlikely]] {
            out.error = std::move(error);
            break;
        }
    }
    out.pairs = i;
}

/// Hoard's form: rounds of --objects blocks, all live before any is freed.
void rounds_of_blocks(const bench_config& config, int thread, const shared_control& control,
                      worker_result& out) {
    const std::size_t size = config.block_size;
    const block_checker checker(size);
    std::vector<void*> live(config.objects);
    const std::uint64_t limit = config.ops_per_thread != 0 ? config.ops_per_thread : UINT64_MAX;
    std::uint64_t next_tag = 0;
    std::uint64_t pairs = 0;
    for (std::uint64_t round = 0; round != limit && !control.stop.load(std::memory_order_relaxed);
         ++round) {
        const std::uint64_t first_tag = next_tag;
        for (void*& block : live) {
            block = std::malloc(size);
            if (block == nullptr) {
                out.error = "malloc(" + std::to_string(size) + ") returned null";
                break;
            }
            if (config.check_blocks) checker.stamp(block, tag_for(thread, next_tag));
            ++next_tag;
        }
        escape(live.data());
        std::uint64_t tag = first_tag;
        for (void* block : live) {
            if (block == nullptr) break;
            if (out.error.empty()) {
                out.error = config.check_blocks ? checker.check(block, tag_for(thread, tag))
                                                : checker.check_alignment(block);
            }
            ++tag;
            std::free(block);
        }
        if (!out.error.empty()) break;
        pairs += live.size();
    }
    out.pairs = pairs;
}

void work(const bench_config& config, int thread, const std::vector<int>& cpus,
          shared_control& control, worker_result& out) {
    if (config.pin != pin_policy::none) {
        pin_current_thread(cpu_for_worker(cpus, static_cast<std::size_t>(thread)));
    }
    // acquire: pairs with the coordinator's release store of `go`.
    while (!control.go.load(std::memory_order_acquire)) {
        control.go.wait(false, std::memory_order_acquire);
    }
    try {  // an exception must not leave a thread: it would terminate smrbench
        if (config.objects == 0 && config.check_blocks) {
            single_blocks<true>(config, thread, control, out);
        } else if (config.objects == 0) {
            single_blocks<false>(config, thread, control, out);
        } else {
            rounds_of_blocks(config, thread, control, out);
        }
    } catch (const std::exception& e) {
        out.error = "thread " + std::to_string(thread) + ": " + e.what();
    }
}

std::size_t median_trial(const std::vector<threadtest_trial>& trials) {
    return median_index(trials, [](const threadtest_trial& t) { return t.pairs_per_s; });
}

}  // namespace

threadtest_trial run_threadtest(const bench_config& config, int trial) {
    reset_peak_rss();
    const std::vector<int> cpus = cpu_order(config.pin);
    shared_control control;
    std::vector<worker_result> results(static_cast<std::size_t>(config.threads));
    thread_group threads([&] {  // a thread that cannot be created: stop the others
        control.stop.store(true, std::memory_order_relaxed);
        control.go.store(true, std::memory_order_release);
        control.go.notify_all();
    });
    for (int i = 0; i < config.threads; ++i) {
        threads.start(
            [&, i] { work(config, i, cpus, control, results[static_cast<std::size_t>(i)]); });
    }

    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    control.go.store(true, std::memory_order_release);  // pairs with the workers' acquire
    control.go.notify_all();
    if (config.ops_per_thread == 0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(config.duration_s));
        control.stop.store(true, std::memory_order_relaxed);
    }
    threads.join_all();
    const double seconds = std::chrono::duration<double>(clock::now() - start).count();

    threadtest_trial out;
    out.trial = trial;
    out.seconds = seconds;
    for (const worker_result& r : results) {
        out.pairs += r.pairs;
        if (!r.error.empty() && out.validated) {
            out.validated = false;
            out.validation_error = r.error;
        }
    }
    out.pairs_per_s = seconds > 0 ? static_cast<double>(out.pairs) / seconds : 0;
    out.peak_rss_bytes = peak_rss_bytes();
    return out;
}

nlohmann::json threadtest_to_json(const bench_config& config, const allocator_identity& allocator,
                                  const std::vector<threadtest_trial>& trials) {
    using nlohmann::json;
    const auto summary = summarize(trials, [](const threadtest_trial& t) { return t.pairs_per_s; });
    const threadtest_trial& median = *summary.median;
    json trial_list = json::array();
    for (const threadtest_trial& t : trials) {
        trial_list.push_back({{"trial", t.trial},
                              {"pairs", t.pairs},
                              {"measured_seconds", t.seconds},
                              {"pairs_per_s", t.pairs_per_s},
                              {"peak_rss_bytes", t.peak_rss_bytes},
                              {"validated", t.validated},
                              {"validation", {{"error", t.validation_error}}}});
    }
    const int cpus = static_cast<int>(allowed_cpus().size());
    // A thread's time per pair: the interval shared by all threads, over its share.
    const double ns_per_pair = median.pairs != 0 ? median.seconds * 1e9 * config.threads /
                                                       static_cast<double>(median.pairs)
                                                 : 0.0;
    json out = subcommand_json(config, allocator);
    out.update(json{
        {"pairs_per_s", median.pairs_per_s},
        {"pairs_per_s_min", summary.low},
        {"pairs_per_s_max", summary.high},
        // The set benchmark's name for the same figure: an operation is a pair.
        {"throughput_ops_per_s", median.pairs_per_s},
        {"ns_per_pair", ns_per_pair},
        {"cpus_used", std::min(config.threads, cpus)},
    });
    out.update(subcommand_trials_json(summary.validated, summary.peak_rss_bytes, median.trial,
                                      std::move(trial_list)));
    return out;
}

void print_threadtest_human(std::ostream& out, const bench_config& config,
                            const allocator_identity& allocator,
                            const std::vector<threadtest_trial>& trials) {
    const threadtest_trial& median = trials[median_trial(trials)];
    out << "threadtest  " << allocator.name << ' ' << allocator.version << ", " << config.block_size
        << "-byte blocks, " << config.threads << " threads, "
        << (config.objects == 0 ? std::string("one block at a time")
                                : "rounds of " + std::to_string(config.objects) + " blocks")
        << '\n'
        << "median      " << median.pairs_per_s / 1e6 << " M malloc/free pairs per second ("
        << trials.size() << (trials.size() == 1 ? " trial" : " trials") << ")\n";
    for (const threadtest_trial& t : trials) {
        out << "trial " << t.trial + 1 << "     " << t.pairs_per_s / 1e6 << " M pairs/s, "
            << t.pairs << " pairs in " << t.seconds << " s, "
            << (t.validated ? "validated" : "VALIDATION FAILED: " + t.validation_error) << '\n';
    }
}

}  // namespace smrbench
