// What one free() costs under each allocator, in the situations remote batch
// free is made of (Epochs paper, Section 3): a block this thread allocated, a
// block another thread allocated freed in a long batch, the same freed one at a
// time between allocations (amortized free), and a batch freed while a second
// thread frees into the same owner's heap. scripts/measure/rbf_model.py runs it
// for each allocator and turns the costs into a model of the paper's 192-thread
// machine (docs/reproductions.md, "A model of the 192-thread machine").
//
//   g++ -std=c++20 -O2 -DNDEBUG -Ibench -pthread -o /tmp/free_costs
//       scripts/measure/free_costs.cpp bench/allocator.cpp bench/allocator_stats.cpp -ldl
//   /tmp/free_costs --alloc jemalloc --mode batch --owners 64 --freers 1
//
// Prints one JSON object: ns per free (each freer's own, and their mean), and
// jemalloc's slow-path counters over the frees (null for the others).
//
// --owners K   K threads allocate the blocks (each its own arena where the
//              allocator gives one per thread; jemalloc needs narenas >= K + P,
//              e.g. MALLOC_CONF=narenas:256) and stay alive, idle, while the
//              freers run, as the other threads of a benchmark do; the blocks
//              are shuffled, as a limbo bag holds them. K = 0: each freer
//              allocates its own blocks (local frees).
// --freers P   P threads free B blocks each, started together.
// --mode batch       each freer frees its B blocks one after another.
// --mode amortized   each freer frees one block, then allocates one of the same
//                    size, as a thread under amortized free does between
//                    operations.
// Both loops are timed as a whole (see free_amortized for the allocations'
// share).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "allocator.hpp"
#include "allocator_stats.hpp"

namespace {

struct options {
    smrbench::allocator_kind alloc = smrbench::allocator_kind::glibc;
    bool amortized = false;
    int owners = 1;
    int freers = 1;
    std::size_t blocks = 262144;
    std::size_t size = 48;  // the DGT BST's node and the ABtree's smallest class
    std::uint64_t seed = 1;
};

[[noreturn]] void usage_error(const std::string& message) {
    std::fprintf(stderr, "free_costs: %s\n", message.c_str());
    std::exit(2);
}

long parse_number(std::string_view flag, const char* text, long low, long high) {
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || value < low || value > high)
        usage_error(std::string(flag) + " wants an integer in [" + std::to_string(low) + ", " +
                    std::to_string(high) + "], got '" + text + "'");
    return value;
}

options parse(int argc, char** argv) {
    options out;
    for (int i = 1; i < argc; i += 2) {
        const std::string_view flag = argv[i];
        if (i + 1 >= argc) usage_error(std::string(flag) + " wants a value");
        const char* value = argv[i + 1];
        if (flag == "--alloc") {
            const auto kind = smrbench::parse_allocator(value);
            if (!kind) usage_error(std::string("unknown allocator '") + value + "'");
            out.alloc = *kind;
        } else if (flag == "--mode") {
            const std::string_view mode = value;
            if (mode != "batch" && mode != "amortized")
                usage_error("--mode is batch or amortized, got '" + std::string(mode) + "'");
            out.amortized = mode == "amortized";
        } else if (flag == "--owners") {
            out.owners = static_cast<int>(parse_number(flag, value, 0, 1024));
        } else if (flag == "--freers") {
            out.freers = static_cast<int>(parse_number(flag, value, 1, 64));
        } else if (flag == "--blocks") {
            out.blocks = static_cast<std::size_t>(parse_number(flag, value, 1, 1L << 26));
        } else if (flag == "--size") {
            out.size = static_cast<std::size_t>(parse_number(flag, value, 8, 4096));
        } else if (flag == "--seed") {
            out.seed = static_cast<std::uint64_t>(parse_number(flag, value, 0, 1L << 62));
        } else {
            usage_error("unknown option '" + std::string(flag) + "'");
        }
    }
    return out;
}

/// Threads that must start a phase together: each arrives, the last releases.
class start_line {
  public:
    explicit start_line(int parties) : parties_(parties) {}
    void arrive_and_wait() {
        arrived_.fetch_add(1, std::memory_order_acq_rel);  // pairs with the loads below
        while (arrived_.load(std::memory_order_acquire) < parties_) std::this_thread::yield();
    }

  private:
    const int parties_;
    std::atomic<int> arrived_{0};
};

using nanoseconds = std::chrono::duration<double, std::nano>;

void* allocate(std::size_t size, std::size_t stamp) {
    void* block = std::malloc(size);
    if (block == nullptr) throw std::bad_alloc();
    *static_cast<std::size_t*>(block) = stamp;  // a node is written when made
    return block;
}

/// Frees the blocks one after another; ns per free.
double free_batch(const std::vector<void*>& blocks) {
    const auto start = std::chrono::steady_clock::now();
    for (void* block : blocks) std::free(block);
    const nanoseconds took = std::chrono::steady_clock::now() - start;
    return took.count() / static_cast<double>(blocks.size());
}

/// ns per free() when each free is followed by an allocation of the same size
/// (into `allocated`, freed by the caller once the counters are read). The
/// loop is timed as a whole, as batch free's is (timing each call would hide
/// the overlap of consecutive frees' cache misses); the allocations' share is
/// removed by timing the same loop over a block that stays in the thread's
/// cache, a free and a malloc of a few ns each, and counting half of it as the
/// free's.
double free_amortized(const std::vector<void*>& blocks, std::size_t size,
                      std::vector<void*>& allocated) {
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        std::free(blocks[i]);
        allocated.push_back(allocate(size, i));
    }
    const nanoseconds took = std::chrono::steady_clock::now() - start;

    std::vector<void*> cached(1, allocate(size, 0));
    cached.reserve(blocks.size() + 1);
    const auto pair_start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        std::free(cached.back());
        cached.back() = allocate(size, i);
    }
    const nanoseconds pair = std::chrono::steady_clock::now() - pair_start;
    std::free(cached.back());
    return (took.count() - pair.count() / 2) / static_cast<double>(blocks.size());
}

struct measurement {
    std::vector<double> ns_per_free;  // one per freer
    std::optional<smrbench::allocator_counters> counters;
};

measurement run(const options& opt, const std::string& allocator_name) {
    const std::size_t total = opt.blocks * static_cast<std::size_t>(opt.freers);
    std::vector<void*> blocks(total);
    const auto shuffle = [&](std::vector<void*>::iterator first, std::vector<void*>::iterator last,
                             std::uint64_t salt) {
        std::mt19937_64 random(opt.seed * 1000003 + salt);
        std::shuffle(first, last, random);
    };

    // Owners allocate, then idle until the frees are done: their arenas stay
    // attached to live threads, as a benchmark's other threads' do.
    std::atomic<int> owners_ready{0};
    std::atomic<bool> frees_done{false};
    std::vector<std::thread> owners;
    for (int k = 0; k < opt.owners; ++k) {
        owners.emplace_back([&, k] {
            for (std::size_t i = static_cast<std::size_t>(k); i < total;
                 i += static_cast<std::size_t>(opt.owners))
                blocks[i] = allocate(opt.size, i);
            owners_ready.fetch_add(1, std::memory_order_release);  // publishes blocks[]
            while (!frees_done.load(std::memory_order_relaxed)) std::this_thread::yield();
        });
    }
    while (owners_ready.load(std::memory_order_acquire) < opt.owners) std::this_thread::yield();
    if (opt.owners > 0) shuffle(blocks.begin(), blocks.end(), 0);

    measurement out;
    out.ns_per_free.resize(static_cast<std::size_t>(opt.freers));
    start_line ready(opt.freers + 1), go(opt.freers + 1), finished(opt.freers + 1);
    std::atomic<bool> may_exit{false};
    std::vector<std::thread> freers;
    for (int f = 0; f < opt.freers; ++f) {
        freers.emplace_back([&, f] {
            std::free(allocate(opt.size, 0));  // the thread's cache exists before the clock starts
            const auto first = blocks.begin() + static_cast<std::ptrdiff_t>(opt.blocks) * f;
            const auto last = first + static_cast<std::ptrdiff_t>(opt.blocks);
            if (opt.owners == 0) {
                for (auto it = first; it != last; ++it)
                    *it = allocate(opt.size, static_cast<std::size_t>(it - blocks.begin()));
                shuffle(first, last, static_cast<std::uint64_t>(f) + 1);
            }
            const std::vector<void*> mine(first, last);
            std::vector<void*> allocated;
            allocated.reserve(opt.amortized ? mine.size() : 0);
            ready.arrive_and_wait();
            go.arrive_and_wait();
            out.ns_per_free[static_cast<std::size_t>(f)] =
                opt.amortized ? free_amortized(mine, opt.size, allocated) : free_batch(mine);
            finished.arrive_and_wait();
            // Alive until the counters are read: a thread's exit flushes its cache.
            while (!may_exit.load(std::memory_order_relaxed)) std::this_thread::yield();
            for (void* block : allocated) std::free(block);
        });
    }
    ready.arrive_and_wait();
    const auto before = smrbench::allocator_counters_now(allocator_name);
    go.arrive_and_wait();
    finished.arrive_and_wait();
    const auto after = smrbench::allocator_counters_now(allocator_name);
    if (before && after) out.counters = *after - *before;
    may_exit.store(true, std::memory_order_relaxed);  // a signal; nothing is handed over
    for (auto& t : freers) t.join();
    frees_done.store(true, std::memory_order_relaxed);  // only a signal: join() orders the rest
    for (auto& t : owners) t.join();
    return out;
}

void print_json(const options& opt, const smrbench::allocator_identity& identity,
                const measurement& m) {
    double sum = 0;
    for (double ns : m.ns_per_free) sum += ns;
    std::printf(
        "{\"alloc\": \"%s\", \"version\": \"%s\", \"mode\": \"%s\", \"owners\": %d, "
        "\"freers\": %d, \"blocks\": %zu, \"size\": %zu, \"seed\": %llu, "
        "\"ns_per_free\": %.3f, \"ns_per_free_by_freer\": [",
        identity.name.c_str(), identity.version.c_str(), opt.amortized ? "amortized" : "batch",
        opt.owners, opt.freers, opt.blocks, opt.size, static_cast<unsigned long long>(opt.seed),
        sum / static_cast<double>(m.ns_per_free.size()));
    for (std::size_t i = 0; i < m.ns_per_free.size(); ++i)
        std::printf("%s%.3f", i == 0 ? "" : ", ", m.ns_per_free[i]);
    std::printf("], \"frees\": %zu, \"counters\": ", opt.blocks * m.ns_per_free.size());
    if (m.counters)
        std::printf(
            "{\"tcache_flushes\": %llu, \"bin_lock_acquisitions\": %llu, "
            "\"bin_lock_waits\": %llu, \"bin_lock_wait_ns\": %llu}}\n",
            static_cast<unsigned long long>(m.counters->tcache_flushes),
            static_cast<unsigned long long>(m.counters->bin_lock_acquisitions),
            static_cast<unsigned long long>(m.counters->bin_lock_waits),
            static_cast<unsigned long long>(m.counters->bin_lock_wait_ns));
    else
        std::printf("null}\n");
}

}  // namespace

int main(int argc, char** argv) {
    const options opt = parse(argc, argv);
    try {
        smrbench::reexec_with_allocator_if_needed(opt.alloc, argc, argv);
        const auto identity = smrbench::identify_malloc();
        smrbench::verify_allocator(opt.alloc, identity);
        print_json(opt, identity, run(opt, identity.name));
    } catch (const std::exception& error) {
        std::fprintf(stderr, "free_costs: %s\n", error.what());
        return 1;
    }
    return 0;
}
