#include "layout.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <ostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "faults.hpp"
#include "option_table.hpp"

namespace smrbench {
namespace {

using nlohmann::json;
using addresses = std::vector<std::uintptr_t>;

/// The shifts reported: the paper's two (16- and 32-byte stripes) and a
/// cache line.
constexpr unsigned shifts[] = {4, 5, 6};

void* allocate(std::size_t size) {
    void* block = std::malloc(size);
    if (block == nullptr) {
        throw std::runtime_error("malloc(" + std::to_string(size) + ") returned null");
    }
    return block;
}

/// The versioned locks of a block [address, address + size): the STM's
/// mapping (smr::stm::orec_table, TinySTM's) of every stripe it touches.
class lock_map {
  public:
    lock_map(unsigned bits, unsigned shift, std::size_t size)
        : bits_(bits), shift_(shift), size_(size) {}

    template <class Visit>
    void for_each_lock(std::uintptr_t address, Visit visit) const {
        const std::uint64_t first = address >> shift_;
        const std::uint64_t last = (address + size_ - 1) >> shift_;
        const std::uint64_t count = std::min<std::uint64_t>(last - first + 1, table_size());
        for (std::uint64_t i = 0; i < count; ++i) visit((first + i) & (table_size() - 1));
    }

    std::uint64_t locks_per_block(std::uintptr_t address) const {
        const std::uint64_t stripes = ((address + size_ - 1) >> shift_) - (address >> shift_) + 1;
        return std::min(stripes, table_size());
    }

    /// Whether two blocks' runs of locks (cyclic in the table) meet: one run
    /// starts inside the other, or together they cover the table. O(1), so a
    /// block of many stripes costs no more than a small one.
    bool share(std::uintptr_t a, std::uintptr_t b) const {
        const std::uint64_t na = locks_per_block(a);
        const std::uint64_t nb = locks_per_block(b);
        const std::uint64_t mask = table_size() - 1;
        const std::uint64_t d = ((b >> shift_) - (a >> shift_)) & mask;  // b's first, from a's
        return na + nb > table_size() || d < na || d > table_size() - nb;
    }

    std::uint64_t table_size() const { return std::uint64_t{1} << bits_; }
    unsigned shift() const { return shift_; }

  private:
    unsigned bits_;
    unsigned shift_;
    std::size_t size_;
};

/// Distances between consecutive allocations (signed: later minus earlier).
json distance_json(const addresses& order) {
    std::vector<std::int64_t> distances;
    for (std::size_t i = 1; i < order.size(); ++i) {
        distances.push_back(static_cast<std::int64_t>(order[i] - order[i - 1]));
    }
    std::map<std::int64_t, std::uint64_t> counts;
    for (std::int64_t d : distances) ++counts[d];
    const auto mode = std::max_element(counts.begin(), counts.end(),
                                       [](auto& a, auto& b) { return a.second < b.second; });
    std::vector<std::int64_t> sorted = distances;
    std::nth_element(sorted.begin(),
                     sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
    return {{"pairs", distances.size()},
            {"median_bytes", sorted[sorted.size() / 2]},
            {"mode_bytes", mode->first},
            {"mode_pct",
             100.0 * static_cast<double>(mode->second) / static_cast<double>(distances.size())}};
}

/// Consecutive allocations that share a versioned lock, per shift.
json shared_lock_json(const addresses& order, const bench_config& config) {
    json out = json::array();
    for (unsigned shift : shifts) {
        const lock_map map(config.ort_bits, shift, config.block_size);
        std::uint64_t sharing = 0;
        for (std::size_t i = 1; i < order.size(); ++i) sharing += map.share(order[i - 1], order[i]);
        out.push_back({{"shift", shift},
                       {"pairs", order.size() - 1},
                       {"sharing", sharing},
                       {"sharing_pct", 100.0 * static_cast<double>(sharing) /
                                           static_cast<double>(order.size() - 1)}});
    }
    return out;
}

/// B's blocks that share a lock with any of A's: the arena mechanism. A
/// random placement of B's blocks would hit A's locks with probability
/// 1 - (1 - f)^L per block of L locks, f the fraction of the table A holds.
json cross_thread_json(const addresses& a, const addresses& b, const bench_config& config) {
    json out = json::array();
    for (unsigned shift : shifts) {
        const lock_map map(config.ort_bits, shift, config.block_size);
        std::vector<bool> held(map.table_size());
        std::uint64_t held_count = 0;
        for (std::uintptr_t address : a) {
            map.for_each_lock(address, [&](std::uint64_t lock) {
                held_count += !held[lock];
                held[lock] = true;
            });
        }
        const double fraction =
            static_cast<double>(held_count) / static_cast<double>(map.table_size());
        std::uint64_t collisions = 0;
        double expected = 0;
        for (std::uintptr_t address : b) {
            bool hit = false;
            map.for_each_lock(address, [&](std::uint64_t lock) { hit = hit || held[lock]; });
            collisions += hit;
            expected +=
                1 - std::pow(1 - fraction, static_cast<double>(map.locks_per_block(address)));
        }
        out.push_back({{"shift", shift},
                       {"blocks", b.size()},
                       {"collisions", collisions},
                       {"collisions_pct",
                        100.0 * static_cast<double>(collisions) / static_cast<double>(b.size())},
                       {"random_expectation", expected}});
    }
    return out;
}

/// Waits until the two sides of take_turns are done (or one gave up); every
/// turn is a handoff between two threads, so a large --blocks takes seconds
/// (16 s for a million), and with `report` the wait says how far it got every
/// two seconds, as a long prefill does.
void await_turns(const std::atomic<std::uint64_t>& turn, std::uint64_t blocks, bool report) {
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    auto next_report = start + std::chrono::seconds(2);
    const std::uint64_t total = 2 * blocks;
    // relaxed: only a progress count; the joins that follow publish the blocks.
    for (std::uint64_t done; (done = turn.load(std::memory_order_relaxed)) < total;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        if (!report || clock::now() < next_report) continue;
        next_report += std::chrono::seconds(2);
        std::fprintf(stderr,
                     "smrbench: layout: %llu of %llu blocks allocated in turns (%.0f%%), %.0f s\n",
                     static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
                     100.0 * static_cast<double>(done) / static_cast<double>(total),
                     std::chrono::duration<double>(clock::now() - start).count());
    }
}

/// Two new threads allocate in turns, A first; each keeps its blocks.
void take_turns(std::size_t size, std::uint64_t blocks, addresses& a, addresses& b, bool report) {
    constexpr std::uint64_t abandoned = UINT64_MAX;  // one side failed: the other stops
    std::atomic<std::uint64_t> turn{0};
    auto side = [&](std::uint64_t mine, addresses& out) {
        for (std::uint64_t k = 0; k < blocks; ++k) {
            const std::uint64_t my_turn = 2 * k + mine;
            // acquire/release: each allocation happens after the other
            // thread's previous one, so the order is the one recorded.
            for (std::uint64_t seen = turn.load(std::memory_order_acquire); seen != my_turn;
                 seen = turn.load(std::memory_order_acquire)) {
                if (seen == abandoned) return;
                turn.wait(seen, std::memory_order_acquire);
            }
            if (injected_turn_delay_us != 0) {  // the test build's slow layout
                std::this_thread::sleep_for(std::chrono::microseconds(injected_turn_delay_us));
            }
            out.push_back(reinterpret_cast<std::uintptr_t>(allocate(size)));
            turn.store(my_turn + 1, std::memory_order_release);
            turn.notify_all();
        }
    };
    std::mutex error_mutex;
    std::exception_ptr error;
    auto guarded = [&](std::uint64_t mine, addresses& out) {
        try {
            side(mine, out);
        } catch (...) {
            {
                std::lock_guard lock(error_mutex);
                if (!error) error = std::current_exception();
            }
            turn.store(abandoned, std::memory_order_release);
            turn.notify_all();
        }
    };
    std::thread first(guarded, 0, std::ref(a));
    std::thread second;
    try {
        second = std::thread(guarded, 1, std::ref(b));
    } catch (...) {
        guarded(1, b);  // this thread takes B's turns, so A can finish
        first.join();
        for (std::uintptr_t p : a) std::free(reinterpret_cast<void*>(p));
        for (std::uintptr_t p : b) std::free(reinterpret_cast<void*>(p));
        throw;
    }
    await_turns(turn, blocks, report);
    first.join();
    second.join();
    if (error) std::rethrow_exception(error);
}

/// Every block distinct and none overlapping another: the allocator's part
/// of the bargain, checked on all of them.
std::string overlap_error(addresses all, std::size_t size) {
    std::sort(all.begin(), all.end());
    for (std::size_t i = 1; i < all.size(); ++i) {
        if (all[i] - all[i - 1] < size) {
            return "two live blocks of " + std::to_string(size) + " bytes overlap";
        }
    }
    return {};
}

}  // namespace

json measure_layout(const bench_config& config, const allocator_identity& allocator) {
    const std::size_t size = config.block_size;
    addresses a;
    addresses b;
    addresses alone;
    a.reserve(config.blocks);
    b.reserve(config.blocks);
    alone.reserve(config.blocks);
    take_turns(size, config.blocks, a, b, !config.output.quiet);
    std::exception_ptr error_alone;
    std::thread([&] {
        try {
            for (std::uint64_t i = 0; i < config.blocks; ++i) {
                alone.push_back(reinterpret_cast<std::uintptr_t>(allocate(size)));
            }
        } catch (...) {
            error_alone = std::current_exception();
        }
    }).join();
    if (error_alone) std::rethrow_exception(error_alone);

    addresses turns;
    for (std::size_t k = 0; k < a.size(); ++k) {
        turns.push_back(a[k]);
        turns.push_back(b[k]);
    }
    addresses all = turns;
    all.insert(all.end(), alone.begin(), alone.end());
    const std::string error = overlap_error(all, size);
    for (std::uintptr_t p : all) std::free(reinterpret_cast<void*>(p));

    json out = subcommand_json(config, allocator);
    out.update(json{
        {"one_thread",
         {{"blocks", alone.size()},
          {"distance", distance_json(alone)},
          {"shared_lock", shared_lock_json(alone, config)}}},
        {"two_threads",
         {{"blocks_per_thread", a.size()},
          {"distance", distance_json(turns)},
          {"distance_within_thread", distance_json(a)},
          {"shared_lock", shared_lock_json(turns, config)},
          {"cross_thread", cross_thread_json(a, b, config)}}},
        {"validated", error.empty()},
        {"validation", {{"error", error}}},
    });
    return out;
}

void print_layout_human(std::ostream& out, const json& layout) {
    const json& config = layout["config"];
    out << "layout  " << layout["allocator"]["name"].get<std::string>() << ' '
        << layout["allocator"]["version"].get<std::string>() << ", "
        << config["block_size"].get<std::uint64_t>() << "-byte blocks, 2^"
        << config["ort_bits"].get<unsigned>() << " versioned locks\n";
    auto print_part = [&](const char* title, const json& part) {
        const json& d = part["distance"];
        out << title << ": consecutive blocks " << d["median_bytes"].get<std::int64_t>()
            << " bytes apart (median; " << d["mode_bytes"].get<std::int64_t>() << " bytes in "
            << d["mode_pct"].get<double>() << "%)\n";
        for (const json& s : part["shared_lock"]) {
            out << "  shift " << s["shift"].get<unsigned>() << ": "
                << s["sharing_pct"].get<double>() << "% of consecutive pairs share a lock\n";
        }
    };
    print_part("one thread", layout["one_thread"]);
    print_part("two threads taking turns", layout["two_threads"]);
    for (const json& c : layout["two_threads"]["cross_thread"]) {
        out << "  shift " << c["shift"].get<unsigned>() << ": "
            << c["collisions"].get<std::uint64_t>() << " of " << c["blocks"].get<std::uint64_t>()
            << " blocks of the second thread share a lock with the first's (random placement: "
            << c["random_expectation"].get<double>() << ")\n";
    }
    if (!layout["validated"].get<bool>()) {
        out << "VALIDATION FAILED: " << layout["validation"]["error"].get<std::string>() << '\n';
    }
}

}  // namespace smrbench
