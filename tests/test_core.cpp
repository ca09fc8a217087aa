// Unit tests of the building blocks: limbo bags, the latency histogram, the
// thread registry, and the free policy as every reclaimer uses it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <deque>
#include <random>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

#include "smr/alloc/pool_resource.hpp"
#include "smr/core/limbo_bag.hpp"
#include "smr/core/orphanage.hpp"
#include "smr/core/owner_tag.hpp"
#include "smr/core/retired_node.hpp"
#include "smr/core/scan_buffer.hpp"
#include "smr/core/thread_registry.hpp"
#include "smr/free_policy.hpp"
#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/trace/latency_histogram.hpp"

namespace {

using smr::core::limbo_bag;
using smr::core::retired_node;

/// A node of no particular structure: final, so a bag destroys it as itself.
struct bag_node final : retired_node {};
using smr::trace::latency_histogram;

// ---- limbo_bag ----------------------------------------------------------------

std::vector<retired_node*> contents(const limbo_bag& bag) {
    std::vector<retired_node*> out;
    bag.for_each([&](smr::core::retired_entry e) { out.push_back(e.node); });
    return out;
}

std::vector<retired_node*> addresses(std::vector<bag_node>& nodes, std::size_t from,
                                     std::size_t to) {
    std::vector<retired_node*> out;
    for (std::size_t i = from; i < to; ++i) out.push_back(&nodes[i]);
    return out;
}

// Both lookups of a sealed scan buffer, on each side of the linear limit:
// every value collected is found (the first and the last included), and no
// value between or around them is.
TEST(scan_buffer, contains_exactly_what_was_collected_below_and_above_the_linear_limit) {
    using buffer = smr::core::scan_buffer<std::uintptr_t>;
    for (const std::size_t n :
         {std::size_t{0}, std::size_t{1}, std::size_t{3}, buffer::linear_scan_limit,
          buffer::linear_scan_limit + 1, std::size_t{200}}) {
        buffer b;
        b.reserve(n);
        // Even values, collected out of order as a scan collects them.
        for (std::size_t i = 0; i < n; ++i) b.push_back(2 * ((i * 7919) % n) + 2);
        b.seal();
        for (std::uintptr_t v = 0; v <= 2 * n + 3; ++v) {
            const bool collected = v % 2 == 0 && v >= 2 && v <= 2 * n;
            EXPECT_EQ(b.contains(v), collected) << "n=" << n << " value " << v;
        }
        b.clear();
        b.seal();
        EXPECT_FALSE(b.contains(2)) << "n=" << n << ": a cleared buffer holds nothing";
    }
}

TEST(limbo_bag, push_and_pop_are_fifo) {
    std::vector<bag_node> nodes(5);
    limbo_bag bag;
    EXPECT_TRUE(bag.empty());
    EXPECT_FALSE(bag.pop_front());
    for (auto& n : nodes) bag.push_back(&n);
    EXPECT_EQ(bag.size(), 5u);
    EXPECT_EQ(contents(bag), addresses(nodes, 0, 5));
    EXPECT_EQ(bag.pop_front().node, &nodes[0]);
    EXPECT_EQ(bag.pop_front().node, &nodes[1]);
    EXPECT_EQ(bag.size(), 3u);
    while (bag.pop_front()) {
    }
    EXPECT_TRUE(bag.empty());
    EXPECT_EQ(bag.size(), 0u);
    bag.push_back(&nodes[4]);  // the tail was reset when the bag emptied
    EXPECT_EQ(contents(bag), addresses(nodes, 4, 5));
}

TEST(limbo_bag, splice_appends_in_order_and_empties_the_source) {
    std::vector<bag_node> nodes(6);
    limbo_bag a;
    limbo_bag b;
    for (std::size_t i = 0; i < 3; ++i) a.push_back(&nodes[i]);
    for (std::size_t i = 3; i < 5; ++i) b.push_back(&nodes[i]);
    a.splice_back(b);
    EXPECT_EQ(a.size(), 5u);
    EXPECT_TRUE(b.empty());
    EXPECT_EQ(b.size(), 0u);
    EXPECT_EQ(b.front(), nullptr);
    EXPECT_EQ(contents(a), addresses(nodes, 0, 5));
    a.push_back(&nodes[5]);  // the tail moved to the spliced bag's tail
    EXPECT_EQ(contents(a), addresses(nodes, 0, 6));

    limbo_bag empty;
    a.splice_back(empty);  // no-op
    EXPECT_EQ(a.size(), 6u);
    empty.splice_back(a);  // into an empty bag
    EXPECT_TRUE(a.empty());
    EXPECT_EQ(contents(empty), addresses(nodes, 0, 6));
    b.push_back(&nodes[0]);  // a fresh push to a bag that was spliced away works
    EXPECT_EQ(b.size(), 1u);
}

TEST(limbo_bag, splice_is_constant_time) {
    // 20,000 splices of a 200,000-node bag back and forth: microseconds if
    // splice is O(1), billions of steps (many seconds) if it walks the list.
    std::vector<bag_node> nodes(200'000);
    limbo_bag a;
    limbo_bag b;
    for (auto& n : nodes) a.push_back(&n);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 10'000; ++i) {
        b.splice_back(a);
        a.splice_back(b);
    }
    const auto elapsed = std::chrono::steady_clock::now() - start;
    EXPECT_LT(elapsed, std::chrono::seconds(1));
    EXPECT_EQ(a.size(), nodes.size());
    EXPECT_EQ(a.front(), &nodes.front());
}

TEST(limbo_bag, move_and_swap_transfer_ownership) {
    std::vector<bag_node> nodes(4);
    limbo_bag a;
    for (std::size_t i = 0; i < 2; ++i) a.push_back(&nodes[i]);
    limbo_bag b(std::move(a));
    EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is specified empty
    EXPECT_EQ(contents(b), addresses(nodes, 0, 2));
    limbo_bag c;
    c.push_back(&nodes[2]);
    c.push_back(&nodes[3]);
    swap(b, c);
    EXPECT_EQ(contents(b), addresses(nodes, 2, 4));
    EXPECT_EQ(contents(c), addresses(nodes, 0, 2));
    b = std::move(c);
    EXPECT_EQ(contents(b), addresses(nodes, 0, 2));
    EXPECT_TRUE(c.empty());  // NOLINT(bugprone-use-after-move)
}

TEST(limbo_bag, extract_unless_keeps_order_in_both_bags) {
    std::vector<bag_node> nodes(10);
    limbo_bag bag;
    for (auto& n : nodes) bag.push_back(&n);
    auto index = [&](const retired_node* n) {
        return static_cast<std::size_t>(static_cast<const bag_node*>(n) - nodes.data());
    };
    limbo_bag odd = bag.extract_unless([&](retired_node* n) { return index(n) % 2 == 0; });
    std::vector<retired_node*> even_expected;
    std::vector<retired_node*> odd_expected;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        (i % 2 == 0 ? even_expected : odd_expected).push_back(&nodes[i]);
    }
    EXPECT_EQ(contents(bag), even_expected);
    EXPECT_EQ(contents(odd), odd_expected);
    EXPECT_EQ(bag.size(), 5u);
    EXPECT_EQ(odd.size(), 5u);
    bag.push_back(odd.pop_front());  // both bags' tails are sound
    odd.push_back(bag.pop_front());
    EXPECT_EQ(bag.size(), 5u);
    EXPECT_EQ(contents(bag).back(), &nodes[1]);
    EXPECT_EQ(contents(odd).back(), &nodes[0]);

    limbo_bag none = bag.extract_unless([](retired_node*) { return true; });
    EXPECT_TRUE(none.empty());
    EXPECT_EQ(bag.size(), 5u);
}

TEST(limbo_bag, entries_carry_the_destroy_function_of_the_nodes_type) {
    // A batch free calls the entry's destroy: the node need not be read, and
    // the node has no room for it.
    static int destroyed = 0;
    struct own_destroy final : retired_node {
        static smr::core::node_memory smr_destroy(retired_node*) noexcept {
            ++destroyed;
            return {};
        }
    };
    static_assert(sizeof(bag_node) == 1 && std::is_empty_v<retired_node>);
    own_destroy node;
    bag_node plain;
    limbo_bag bag;
    bag.push_back(&node);
    bag.push_back(&plain);
    EXPECT_EQ(bag.pop_front().destroy, &own_destroy::smr_destroy);
    EXPECT_EQ(bag.pop_front().destroy, &smr::core::destroy_as<bag_node>);
    bag.push_back(&node);
    bag.consume([](smr::core::retired_entry e) { e.release(); });
    EXPECT_EQ(destroyed, 1);
    EXPECT_TRUE(bag.empty());
}

TEST(limbo_bag, splicing_many_small_bags_fills_blocks_instead_of_chaining_them) {
    // Epoch bags of a few nodes spliced into the freeable list one after
    // another: copied into the tail block, so the list stays dense.
    constexpr std::size_t per_bag = 3;
    constexpr std::size_t bags = 1000;
    std::vector<bag_node> nodes(per_bag * bags);
    limbo_bag all;
    for (std::size_t b = 0; b < bags; ++b) {
        limbo_bag small;
        for (std::size_t i = 0; i < per_bag; ++i) small.push_back(&nodes[b * per_bag + i]);
        all.splice_back(small);
        EXPECT_EQ(small.block_count(), 0u);
    }
    EXPECT_EQ(contents(all), addresses(nodes, 0, nodes.size()));
    const std::size_t capacity = smr::core::bag_block::capacity;
    EXPECT_LE(all.block_count(), (nodes.size() + capacity - 1) / capacity + 1);
}

TEST(limbo_bag, matches_a_deque_under_random_operations) {
    // Every operation against a model, across block boundaries, partially
    // popped heads, linked and copied splices, and in-place extraction.
    std::vector<bag_node> nodes(20'000);
    std::size_t next = 0;
    auto fresh = [&] { return &nodes[next++ % nodes.size()]; };
    std::mt19937 rng(53);
    limbo_bag bag;
    limbo_bag other;
    std::deque<retired_node*> model;
    std::deque<retired_node*> other_model;
    for (int step = 0; step < 4'000; ++step) {
        switch (rng() % 6) {
            case 0:
            case 1:
                for (unsigned k = rng() % 100; k != 0; --k) {
                    bag_node* n = fresh();
                    bag.push_back(n);
                    model.push_back(n);
                }
                break;
            case 2:
                for (unsigned k = rng() % 80; k != 0 && !model.empty(); --k) {
                    ASSERT_EQ(bag.pop_front().node, model.front());
                    model.pop_front();
                }
                break;
            case 3:
                for (unsigned k = rng() % 150; k != 0; --k) {
                    bag_node* n = fresh();
                    other.push_back(n);
                    other_model.push_back(n);
                }
                if (rng() % 2 == 0 && !other_model.empty()) {  // a partially popped head
                    other.pop_front();
                    other_model.pop_front();
                }
                break;
            case 4:
                bag.splice_back(other);
                model.insert(model.end(), other_model.begin(), other_model.end());
                other_model.clear();
                ASSERT_TRUE(other.empty());
                break;
            case 5: {
                const unsigned modulus = 2 + rng() % 5;
                auto keep = [&](const retired_node* n) {
                    const auto index = static_cast<const bag_node*>(n) - nodes.data();
                    return static_cast<std::size_t>(index) % modulus != 0;
                };
                limbo_bag out = bag.extract_unless(keep);
                std::vector<retired_node*> expected_out;
                std::deque<retired_node*> kept;
                for (retired_node* n : model) {
                    if (keep(n)) {
                        kept.push_back(n);
                    } else {
                        expected_out.push_back(n);
                    }
                }
                model = kept;
                ASSERT_EQ(contents(out), expected_out);
                break;
            }
        }
        ASSERT_EQ(bag.size(), model.size());
        ASSERT_EQ(bag.front(), model.empty() ? nullptr : model.front());
        ASSERT_EQ(contents(bag), std::vector<retired_node*>(model.begin(), model.end()));
        const std::size_t capacity = smr::core::bag_block::capacity;
        // No block is left empty, and a bag never holds more than two
        // blocks per block's worth of entries (plus one).
        ASSERT_LE(bag.block_count(), 2 * (bag.size() + capacity - 1) / capacity + 1);
    }
}

TEST(limbo_bag, a_thread_that_exits_frees_the_blocks_it_cached) {
    // The blocks of every bag this thread emptied stay in its cache; LeakSanitizer
    // (the asan preset) reports them if the thread's exit does not free them.
    std::vector<bag_node> nodes(5'000);
    std::uint32_t cached = 0;
    std::thread([&] {
        limbo_bag bag;
        for (auto& n : nodes) bag.push_back(&n);
        bag.consume([](smr::core::retired_entry) {});
        cached = smr::core::detail::thread_block_cache.count;
    }).join();
    // 80 blocks were emptied: the cache kept its limit and freed the rest.
    EXPECT_EQ(cached, smr::core::detail::block_cache::limit);
}

// ---- orphanage ----------------------------------------------------------------

/// A bag of nodes[from, to).
limbo_bag bag_of(std::vector<bag_node>& nodes, std::size_t from, std::size_t to) {
    limbo_bag bag;
    for (std::size_t i = from; i < to; ++i) bag.push_back(&nodes[i]);
    return bag;
}

TEST(orphanage, adopts_the_bags_whose_label_is_safe_and_keeps_the_others) {
    std::vector<bag_node> nodes(6);
    smr::core::orphanage orphans;
    EXPECT_TRUE(orphans.empty());
    limbo_bag early = bag_of(nodes, 0, 2);
    limbo_bag late = bag_of(nodes, 2, 5);
    limbo_bag done = bag_of(nodes, 5, 6);
    ASSERT_TRUE(orphans.give(early, 3));
    ASSERT_TRUE(orphans.give(late, 7));
    ASSERT_TRUE(orphans.give_safe(done));
    EXPECT_TRUE(early.empty() && late.empty() && done.empty());
    EXPECT_FALSE(orphans.empty());

    limbo_bag safe;
    orphans.take_safe(
        safe, [](std::uint64_t label) { return label + 3 <= 6; }, smr::core::orphanage::any_taker);
    std::vector<retired_node*> got = contents(safe);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, (std::vector<retired_node*>{&nodes[0], &nodes[1], &nodes[5]}))
        << "label 3 is safe at 6, label 7 is not, a safe bag always is";
    EXPECT_FALSE(orphans.empty());

    limbo_bag rest;
    orphans.take_all(rest, smr::core::orphanage::any_taker);
    EXPECT_EQ(contents(rest), addresses(nodes, 2, 5));
    EXPECT_TRUE(orphans.empty());
}

// While a barrier holds the reservation, only its thread adopts: it must know
// when the last bag is gone.
TEST(orphanage, a_reservation_keeps_other_takers_out) {
    std::vector<bag_node> nodes(2);
    smr::core::orphanage orphans;
    limbo_bag bag = bag_of(nodes, 0, 2);
    ASSERT_TRUE(orphans.give(bag, 0));
    EXPECT_FALSE(orphans.settled());
    orphans.reserve_for(1);
    limbo_bag got;
    orphans.take_all(got, 2);
    EXPECT_TRUE(got.empty()) << "taker 2 adopted during taker 1's reservation";
    orphans.take_all(got, 1);
    EXPECT_EQ(got.size(), 2u);
    EXPECT_TRUE(orphans.settled());
    orphans.end_reservation();
}

TEST(orphanage, concurrent_gives_and_takes_lose_and_duplicate_nothing) {
    constexpr int threads = 4;
    constexpr int bags_per_thread = 2000;
    std::vector<std::vector<bag_node>> nodes(threads, std::vector<bag_node>(bags_per_thread));
    smr::core::orphanage orphans;
    std::atomic<std::size_t> taken{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            for (int i = 0; i < bags_per_thread; ++i) {
                limbo_bag one;
                one.push_back(&nodes[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)]);
                ASSERT_TRUE(orphans.give(one, static_cast<std::uint64_t>(i % 2)));
                limbo_bag safe;
                orphans.take_safe(
                    safe, [](std::uint64_t label) { return label == 0; }, t);
                taken.fetch_add(safe.size());
            }
        });
    }
    for (auto& thread : pool) thread.join();
    limbo_bag rest;
    orphans.take_all(rest, smr::core::orphanage::any_taker);
    EXPECT_EQ(taken.load() + rest.size(), std::size_t{threads} * bags_per_thread);
}

// ---- latency_histogram ----------------------------------------------------------

TEST(latency_histogram, buckets_are_monotone_and_contiguous) {
    using H = latency_histogram;
    EXPECT_EQ(H::bucket_of(0), 0u);
    for (unsigned i = 0; i + 1 < H::bucket_count; ++i) {
        const std::uint64_t upper = H::bucket_upper_bound(i);
        ASSERT_LT(upper, H::bucket_upper_bound(i + 1)) << "bucket " << i;
        ASSERT_EQ(H::bucket_of(upper), i) << "bucket " << i;
        ASSERT_EQ(H::bucket_of(upper + 1), i + 1) << "bucket " << i;  // no gap, no overlap
    }
    for (std::uint64_t v = 0; v < H::exact_limit; ++v)
        EXPECT_EQ(H::bucket_upper_bound(H::bucket_of(v)), v);
    EXPECT_EQ(H::bucket_of(~std::uint64_t{0}),
              H::bucket_count - 1);  // overflow goes to the last bucket

    std::mt19937_64 rng(7);
    for (int i = 0; i < 100'000; ++i) {
        const std::uint64_t v = rng() >> (rng() % 64);
        const unsigned b = H::bucket_of(v);
        if (b == H::bucket_count - 1) continue;
        const std::uint64_t lower = b == 0 ? 0 : H::bucket_upper_bound(b - 1) + 1;
        ASSERT_LE(lower, v);
        ASSERT_LE(v, H::bucket_upper_bound(b));
        ASSERT_LE(static_cast<double>(H::bucket_upper_bound(b) - lower),
                  0.125 * static_cast<double>(lower) + 1e-9)
            << "bucket " << b << " wider than 12.5% of its lower bound";
    }
}

/// The q-quantile as latency_histogram::percentile defines it: the
/// (floor(q (n - 1)) + 1)-th smallest sample.
std::uint64_t exact_percentile(std::vector<std::uint64_t> values, double q) {
    std::sort(values.begin(), values.end());
    const auto rank = static_cast<std::size_t>(q * static_cast<double>(values.size() - 1));
    return values[rank];
}

std::vector<std::uint64_t> log_uniform_samples(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> exponent(0.0, 30.0);  // 1 ns .. ~1 s
    std::vector<std::uint64_t> out;
    for (std::size_t i = 0; i < n; ++i) {
        out.push_back(static_cast<std::uint64_t>(std::exp2(exponent(rng))));
    }
    return out;
}

TEST(latency_histogram, percentiles_within_an_eighth) {
    const std::vector<std::uint64_t> values = log_uniform_samples(100'000, 11);
    latency_histogram h;
    EXPECT_EQ(h.percentile(0.5), 0u);  // empty
    for (std::uint64_t v : values) h.record(v);
    EXPECT_EQ(h.count(), values.size());
    for (double q : {0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999}) {
        const double exact = static_cast<double>(exact_percentile(values, q));
        const double got = static_cast<double>(h.percentile(q));
        EXPECT_GE(got, exact) << "q=" << q;  // a bucket's upper bound, never below
        EXPECT_LE(got, exact * 1.125) << "q=" << q;
    }
    EXPECT_EQ(h.percentile(1.0), *std::max_element(values.begin(), values.end()));
    EXPECT_EQ(h.max_ns(), *std::max_element(values.begin(), values.end()));
}

TEST(latency_histogram, merge_equals_recording_everything_in_one) {
    const std::vector<std::uint64_t> a_values = log_uniform_samples(20'000, 1);
    const std::vector<std::uint64_t> b_values = log_uniform_samples(30'000, 2);
    latency_histogram a;
    latency_histogram b;
    latency_histogram all;
    for (std::uint64_t v : a_values) {
        a.record(v);
        all.record(v);
    }
    for (std::uint64_t v : b_values) {
        b.record(v);
        all.record(v);
    }
    a.merge(b);
    EXPECT_EQ(a.count(), all.count());
    EXPECT_EQ(a.sum_ns(), all.sum_ns());
    EXPECT_EQ(a.max_ns(), all.max_ns());
    for (double q : {0.0, 0.1, 0.5, 0.9, 0.99, 1.0}) EXPECT_EQ(a.percentile(q), all.percentile(q));
    a.reset();
    EXPECT_EQ(a.count(), 0u);
    EXPECT_EQ(a.percentile(0.5), 0u);
}

// ---- thread_registry -----------------------------------------------------------

TEST(thread_registry, hands_out_lowest_free_slot_and_reuses_released_ones) {
    EXPECT_THROW(smr::core::thread_registry(0), std::invalid_argument);
    smr::core::thread_registry registry(3);
    EXPECT_EQ(registry.capacity(), 3u);
    EXPECT_EQ(registry.scan_limit(), 0);
    EXPECT_EQ(registry.acquire(), 0);
    EXPECT_EQ(registry.acquire(), 1);
    EXPECT_EQ(registry.scan_limit(), 2);
    registry.release(0);
    EXPECT_FALSE(registry.in_use(0));
    EXPECT_TRUE(registry.in_use(1));
    EXPECT_EQ(registry.acquire(), 0);  // reused
    EXPECT_EQ(registry.scan_limit(), 2);
    EXPECT_EQ(registry.acquire(), 2);
    EXPECT_EQ(registry.scan_limit(), 3);
    EXPECT_THROW(registry.acquire(), std::length_error);  // full
    registry.release(1);
    EXPECT_EQ(registry.acquire(), 1);
    EXPECT_EQ(registry.scan_limit(), 3);  // never shrinks
}

TEST(thread_registry, concurrent_claims_are_exclusive) {
    constexpr int slots = 4;
    constexpr int threads = 8;  // more threads than slots: some acquires fail
    smr::core::thread_registry registry(slots);
    std::vector<std::atomic<int>> holders(slots);
    std::atomic<int> violations{0};
    std::atomic<int> claims{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&] {
            for (int i = 0; i < 2'000; ++i) {
                int slot = -1;
                try {
                    slot = registry.acquire();
                } catch (const std::length_error&) {
                    continue;
                }
                if (holders[slot].fetch_add(1) != 0) violations.fetch_add(1);
                claims.fetch_add(1);
                holders[slot].fetch_sub(1);
                registry.release(slot);
            }
        });
    }
    for (auto& t : pool) t.join();
    EXPECT_EQ(violations.load(), 0);
    EXPECT_GT(claims.load(), 0);
    EXPECT_LE(registry.scan_limit(), slots);
}

// ---- the free policy, through a real domain --------------------------------------

struct node final : smr::debra_domain::node_base {
    std::uint64_t payload = 0;
};

smr::domain_config one_thread_config(smr::free_mode mode) {
    smr::domain_config config;
    config.max_threads = 2;
    config.check_every = 1;  // alone, a debra thread advances the epoch at every operation
    config.free.mode = mode;
    config.free.k = 2;
    config.free.catchup_divisor = 1024;
    config.time_frees = true;  // the tests below count timed frees
    return config;
}

void retire_in_one_op(smr::debra_domain& domain, smr::context_ref<smr::debra_domain> self, int n) {
    smr::op_guard guard(domain, self);
    for (int i = 0; i < n; ++i) domain.retire(self, domain.allocate<node>(self));
}

TEST(free_policy, batch_frees_a_safe_bag_at_once) {
    smr::debra_domain domain(one_thread_config(smr::free_mode::batch));
    smr::context handle(domain);
    const auto self = handle.lent();
    constexpr int n = 5'000;
    retire_in_one_op(domain, self, n);
    int ops = 0;
    while (domain.stats().freed == 0 && ops < 10) {
        smr::op_guard guard(domain, self);
        ++ops;
    }
    // All of it in the operation that found the bag safe (three epochs on).
    EXPECT_EQ(domain.stats().freed, static_cast<std::uint64_t>(n));
    EXPECT_EQ(domain.freeable_size(smr::tid_of(self)), 0u);
    EXPECT_EQ(domain.garbage(), 0u);
    EXPECT_EQ(domain.stats().free_latency.count(), static_cast<std::uint64_t>(n));
}

TEST(free_policy, amortized_frees_k_plus_catch_up_per_operation) {
    const smr::domain_config config = one_thread_config(smr::free_mode::amortized);
    smr::debra_domain domain(config);
    smr::context handle(domain);
    const auto self = handle.lent();
    constexpr int n = 5'000;
    retire_in_one_op(domain, self, n);

    int short_ops = 0;  // list shorter than catchup_divisor: exactly k
    int long_ops = 0;   // longer: k + len / catchup_divisor
    bool spliced = false;
    for (int op = 0; op < 10'000 && domain.garbage() != 0; ++op) {
        const std::size_t list_before = domain.freeable_size(smr::tid_of(self));
        const std::uint64_t freed_before = domain.stats().freed;
        domain.begin_op(self);
        const std::uint64_t freed_now = domain.stats().freed - freed_before;
        const std::size_t list_after = domain.freeable_size(smr::tid_of(self));
        domain.end_op(self);
        // The bag found safe in this begin_op is queued before the step frees.
        const std::size_t queued = list_after + freed_now - list_before;
        if (queued != 0) {
            EXPECT_FALSE(spliced) << "one bag, queued once";
            EXPECT_EQ(queued, static_cast<std::size_t>(n));
            spliced = true;
        }
        const std::size_t len = list_before + queued;  // the list the step sees
        const std::size_t quota = config.free.k + len / config.free.catchup_divisor;
        EXPECT_EQ(freed_now, std::min(len, quota)) << "operation " << op << ", list " << len;
        if (len != 0 && len < config.free.catchup_divisor) ++short_ops;
        if (len >= config.free.catchup_divisor) ++long_ops;
    }
    EXPECT_TRUE(spliced);
    EXPECT_GT(short_ops, 0);
    EXPECT_GT(long_ops, 0);
    EXPECT_EQ(domain.garbage(), 0u);
    EXPECT_EQ(domain.stats().freed, static_cast<std::uint64_t>(n));
    EXPECT_EQ(domain.stats().free_latency.count(), static_cast<std::uint64_t>(n));
}

TEST(free_policy, every_free_of_garbage_is_counted_and_timed) {
    for (smr::free_mode mode : {smr::free_mode::batch, smr::free_mode::amortized}) {
        smr::debra_domain domain(one_thread_config(mode));
        smr::context handle(domain);
        const auto self = handle.lent();
        domain.discard(self, domain.allocate<node>(self));  // never published: freed at once
        for (int round = 0; round < 20; ++round) retire_in_one_op(domain, self, 50);
        for (int op = 0; op < 2'000 && domain.garbage() != 0; ++op) {
            smr::op_guard guard(domain, self);
        }
        const smr::reclaimer_stats stats = domain.stats();
        EXPECT_EQ(stats.retired, 1'000u) << smr::to_string(mode);
        EXPECT_EQ(stats.freed, 1'000u) << smr::to_string(mode);
        EXPECT_EQ(stats.discarded, 1u) << smr::to_string(mode);
        EXPECT_EQ(stats.allocated, 1'001u) << smr::to_string(mode);
        EXPECT_EQ(stats.free_latency.count(), stats.freed)
            << smr::to_string(mode) << ": a discard is not timed";
        EXPECT_GE(stats.epochs, 3u) << smr::to_string(mode);
    }
}

// A batch counts its frees as it goes, so a sample taken while it runs (by a
// sampler thread, or here between its frees) sees garbage shrink.
struct disposing_domain : smr::debra_domain {
    using smr::debra_domain::debra_domain;
    using smr::debra_domain::dispose_safe;  // what a reclaimer calls on a safe bag
};

TEST(free_policy, a_batch_counts_each_free_as_it_happens) {
    disposing_domain domain(one_thread_config(smr::free_mode::batch));
    smr::context handle(domain);
    const auto self = handle.lent();
    smr::core::limbo_bag bag;
    for (int i = 0; i < 50; ++i) bag.push_back(domain.allocate<node>(self));
    std::vector<std::uint64_t> seen;
    domain.dispose_safe(smr::tid_of(self), bag, 10, [&] { seen.push_back(domain.stats().freed); });
    EXPECT_EQ(seen, (std::vector<std::uint64_t>{10, 20, 30, 40, 50}));
    EXPECT_TRUE(bag.empty());
}

TEST(free_policy, one_free_in_n_is_timed_and_the_time_is_scaled_to_all) {
    for (smr::free_mode mode : {smr::free_mode::batch, smr::free_mode::amortized}) {
        smr::domain_config config = one_thread_config(mode);
        config.time_frees_every = 16;
        smr::debra_domain domain(config);
        smr::context handle(domain);
        const auto self = handle.lent();
        constexpr int n = 16'000;
        retire_in_one_op(domain, self, n);
        for (int op = 0; op < 20'000 && domain.garbage() != 0; ++op) {
            smr::op_guard guard(domain, self);
        }
        const smr::reclaimer_stats stats = domain.stats();
        ASSERT_EQ(stats.freed, static_cast<std::uint64_t>(n)) << smr::to_string(mode);
        // Gaps uniform in [1, 31]: about 1,000 timed, with a standard
        // deviation of 18; the draws are deterministic (seeded by slot).
        const std::uint64_t timed = stats.free_latency.count();
        EXPECT_GT(timed, 900u) << smr::to_string(mode);
        EXPECT_LT(timed, 1'100u) << smr::to_string(mode);
        EXPECT_DOUBLE_EQ(stats.free_seconds, static_cast<double>(stats.free_latency.sum_ns()) *
                                                 1e-9 * n / static_cast<double>(timed))
            << smr::to_string(mode);
    }
}

TEST(free_policy, frees_are_timed_only_when_asked) {
    smr::domain_config config = one_thread_config(smr::free_mode::batch);
    config.time_frees = false;  // the library's default
    smr::debra_domain domain(config);
    smr::context handle(domain);
    const auto self = handle.lent();
    retire_in_one_op(domain, self, 100);
    for (int op = 0; op < 10 && domain.garbage() != 0; ++op) {
        smr::op_guard guard(domain, self);
    }
    const smr::reclaimer_stats stats = domain.stats();
    EXPECT_EQ(stats.freed, 100u);
    EXPECT_EQ(stats.free_latency.count(), 0u);
    EXPECT_EQ(stats.free_seconds, 0.0);
}

// ---- remote frees, counted ---------------------------------------------------

TEST(owner_tag, follows_the_object_and_keeps_the_block_a_multiple_of_its_alignment) {
    EXPECT_EQ(smr::core::tagged_block_bytes(40, 8), 48u);  // the DGT node: its size class
    EXPECT_EQ(smr::core::tagged_block_bytes(44, 4), 48u);
    EXPECT_EQ(smr::core::tagged_block_bytes(41, 1), 48u);  // the tag is 4-byte aligned
    EXPECT_EQ(smr::core::tagged_block_bytes(48, 16), 64u);
    EXPECT_EQ(smr::core::tagged_block_bytes(64, 64), 128u);
    alignas(8) unsigned char block[48] = {};
    smr::core::stamp_owner(block, 41, 0xC0FFEEu);
    EXPECT_EQ(smr::core::owner_of(block, 41), 0xC0FFEEu);
    EXPECT_EQ(block[40], 0) << "the tag lies past the object";
}

smr::domain_config counting_config(smr::free_mode mode) {
    smr::domain_config config = one_thread_config(mode);
    config.count_remote_frees = true;
    return config;
}

/// Retires `nodes` in one operation of `self` and runs operations until the
/// domain has freed them.
template <class Node>
void retire_and_free(smr::debra_domain& domain, smr::context_ref<smr::debra_domain> self,
                     const std::vector<Node*>& nodes) {
    {
        smr::op_guard guard(domain, self);
        for (Node* n : nodes) domain.retire(self, n);
    }
    for (int op = 0; op < 10'000 && domain.garbage() != 0; ++op) smr::op_guard guard(domain, self);
    ASSERT_EQ(domain.garbage(), 0u);
}

// A thread is one registration: what a thread allocated before it left and
// came back (here into the same slot) is another thread's.
TEST(remote_frees, a_node_of_an_earlier_registration_is_remote) {
    for (smr::free_mode mode : {smr::free_mode::batch, smr::free_mode::amortized}) {
        smr::debra_domain domain(counting_config(mode));
        std::vector<node*> earlier;
        {
            smr::context handle(domain);
            for (int i = 0; i < 70; ++i) earlier.push_back(domain.allocate<node>(handle));
        }
        smr::context handle(domain);
        const auto self = handle.lent();
        std::vector<node*> nodes = earlier;
        for (int i = 0; i < 30; ++i) nodes.push_back(domain.allocate<node>(self));
        retire_and_free(domain, self, nodes);
        const smr::reclaimer_stats stats = domain.stats();
        EXPECT_EQ(stats.freed, 100u) << smr::to_string(mode);
        EXPECT_EQ(stats.remote_frees, 70u) << smr::to_string(mode);
    }
}

TEST(remote_frees, are_not_counted_unless_asked) {
    smr::debra_domain domain(one_thread_config(smr::free_mode::batch));
    std::vector<node*> earlier;
    {
        smr::context handle(domain);
        for (int i = 0; i < 50; ++i) earlier.push_back(domain.allocate<node>(handle));
    }
    smr::context handle(domain);
    retire_and_free(domain, handle, earlier);
    EXPECT_EQ(domain.stats().freed, 50u);
    EXPECT_EQ(domain.stats().remote_frees, 0u);
}

// The tag goes through a memory resource too (a pool's size classes see the
// tagged block, allocated and freed with the same size), and an over-aligned
// node keeps its alignment.
struct alignas(64) wide_node final : smr::debra_domain::node_base {
    std::uint64_t payload[3] = {};
};

TEST(remote_frees, are_counted_through_a_pool_and_for_over_aligned_nodes) {
    smr::alloc::pool_options options;
    options.capacity = 1'000;
    smr::alloc::pool_resource pool(options);
    for (std::pmr::memory_resource* memory : {static_cast<std::pmr::memory_resource*>(nullptr),
                                              static_cast<std::pmr::memory_resource*>(&pool)}) {
        smr::domain_config config = counting_config(smr::free_mode::batch);
        config.memory = memory;
        smr::debra_domain domain(config);
        std::vector<node*> small;
        std::vector<wide_node*> wide;
        {
            smr::context other(domain);
            for (int i = 0; i < 40; ++i) {
                small.push_back(domain.allocate<node>(other));
                wide.push_back(domain.allocate<wide_node>(other));
                EXPECT_EQ(reinterpret_cast<std::uintptr_t>(wide.back()) % 64, 0u);
            }
        }
        smr::context handle(domain);
        const auto self = handle.lent();
        for (int i = 0; i < 10; ++i) small.push_back(domain.allocate<node>(self));
        retire_and_free(domain, self, small);
        retire_and_free(domain, self, wide);
        EXPECT_EQ(domain.stats().freed, 90u) << (memory ? "pool" : "malloc");
        EXPECT_EQ(domain.stats().remote_frees, 80u) << (memory ? "pool" : "malloc");
    }
}

}  // namespace
