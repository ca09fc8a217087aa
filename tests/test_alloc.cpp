// The domain's allocation hook (domain_config::memory): every node a structure
// allocates goes through the resource and comes back to it with the same size
// and alignment, whichever reclaimer frees it and whether it is freed while
// threads run, discarded after a failed insert, or freed by a destructor.
//
// The bounded pool (smr/alloc/pool_resource.hpp): its magazine layer (refill,
// flush, exhaustion, blocks freed by another thread), its size classes, its
// waiting policies and their stop, and the poisoning of free blocks.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory_resource>
#include <mutex>
#include <new>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "one_thread_scenarios.hpp"
#include "smr/alloc/pool_resource.hpp"
#include "smr/ds/abtree.hpp"
#include "smr/ds/dgt_bst.hpp"
#include "smr/ds/hm_list.hpp"
#include "smr/ds/ms_queue.hpp"
#include "smr/reclaim/all.hpp"
#include "smr/reclaim/guards.hpp"

namespace {

/// Forwards to new_delete_resource and checks each deallocate against the
/// allocate that returned the pointer. Not thread-safe by design: the tests
/// that use it run one thread (a mutex would hide nothing but add noise).
class checking_resource final : public std::pmr::memory_resource {
  public:
    ~checking_resource() override = default;

    std::size_t allocations = 0;
    std::size_t deallocations = 0;
    std::string mismatch;  ///< the first deallocate whose size or alignment differed
    std::size_t live() const { return live_.size(); }

  private:
    void* do_allocate(std::size_t bytes, std::size_t align) override {
        void* p = std::pmr::new_delete_resource()->allocate(bytes, align);
        live_.emplace(p, std::pair{bytes, align});
        ++allocations;
        return p;
    }
    void do_deallocate(void* p, std::size_t bytes, std::size_t align) override {
        const auto it = live_.find(p);
        if (it == live_.end()) {
            if (mismatch.empty()) mismatch = "deallocate of a pointer never allocated";
        } else {
            if (it->second != std::pair{bytes, align} && mismatch.empty()) {
                mismatch = "allocated " + std::to_string(it->second.first) + "/" +
                           std::to_string(it->second.second) + ", freed " + std::to_string(bytes) +
                           "/" + std::to_string(align);
            }
            live_.erase(it);
        }
        ++deallocations;
        std::pmr::new_delete_resource()->deallocate(p, bytes, align);
    }
    bool do_is_equal(const memory_resource& other) const noexcept override {
        return this == &other;
    }

    std::map<void*, std::pair<std::size_t, std::size_t>> live_;
};

smr::domain_config config_with(std::pmr::memory_resource* memory) {
    smr::domain_config config;
    config.max_threads = 4;
    config.memory = memory;
    config.bag_threshold = 64;  // scan-based schemes free while the test runs
    return config;
}

/// Inserts and erases over a small key range, so that nodes are retired,
/// freed while the thread runs, and discarded by inserts that fail.
template <class Structure>
void churn(Structure& set, typename Structure::context_type& self) {
    for (int round = 0; round < 20; ++round) {
        for (std::int64_t key = 0; key < 64; ++key) (void)set.insert(self, key, key);
        for (std::int64_t key = 0; key < 64; key += 2) (void)set.erase(self, key);
    }
}

template <class Domain, template <class> class Structure>
void expect_every_node_through(checking_resource& memory) {
    {
        Domain domain(config_with(&memory));
        {
            Structure<Domain> set(domain);
            smr::context handle(domain);
            churn(set, handle);
            ASSERT_TRUE(set.validate().ok);
            EXPECT_GT(memory.deallocations, 0u) << "nothing was freed while the thread ran";
        }
    }
    EXPECT_GT(memory.allocations, 0u);
    EXPECT_EQ(memory.live(), 0u) << "nodes leaked past the domain";
    EXPECT_EQ(memory.allocations, memory.deallocations);
    EXPECT_EQ(memory.mismatch, "");
}

TEST(allocation_hook, dgt_bst_with_debra_allocates_and_frees_through_the_resource) {
    checking_resource memory;
    expect_every_node_through<smr::debra_domain, smr::ds::dgt_bst>(memory);
}

TEST(allocation_hook, abtree_with_nbr_allocates_and_frees_through_the_resource) {
    checking_resource memory;
    expect_every_node_through<smr::nbr_domain, smr::ds::abtree>(memory);
}

TEST(allocation_hook, hm_list_with_hazard_eras_allocates_and_frees_through_the_resource) {
    checking_resource memory;
    expect_every_node_through<smr::he_domain, smr::ds::hm_list>(memory);
}

TEST(allocation_hook, dgt_bst_with_leak_frees_everything_at_the_end) {
    checking_resource memory;
    {
        smr::leak_domain domain(config_with(&memory));
        smr::ds::dgt_bst<smr::leak_domain> set(domain);
        smr::context handle(domain);
        churn(set, handle);
    }
    EXPECT_EQ(memory.live(), 0u);
    EXPECT_EQ(memory.mismatch, "");
}

TEST(allocation_hook, queue_nodes_go_back_through_the_resource) {
    checking_resource memory;
    {
        smr::qsbr_domain domain(config_with(&memory));
        smr::ds::ms_queue<smr::qsbr_domain> queue(domain);
        smr::context handle(domain);
        for (int round = 0; round < 50; ++round) {
            for (std::int64_t i = 0; i < 32; ++i) queue.enqueue(handle, i, i);
            for (std::int64_t i = 0; i < 32; ++i) (void)queue.dequeue(handle);
            domain.quiescent(handle);
        }
        EXPECT_GT(memory.deallocations, 0u);
    }
    EXPECT_EQ(memory.live(), 0u);
    EXPECT_EQ(memory.allocations, memory.deallocations);
    EXPECT_EQ(memory.mismatch, "");
}

struct alignas(64) over_aligned_node final : smr::debra_domain::node_base {
    std::int64_t value = 0;
};

/// Throws from its constructor when asked; has a counted link, so that lfrc
/// (which counts the links a constructor set) takes it too.
template <class Domain>
struct throwing_node final : Domain::node_base {
    explicit throwing_node(bool fail) {
        if (fail) throw std::runtime_error("constructor failed");
    }
    std::atomic<throwing_node*> next{nullptr};
    static constexpr auto counted_links() noexcept { return std::array{&throwing_node::next}; }
};

template <class Domain>
class allocate_test : public ::testing::Test {};
TYPED_TEST_SUITE(allocate_test, smr::test::gtest_types_of<smr::all_domains>::type,
                 smr::test::domain_names);

TEST(allocation_hook, over_aligned_nodes_keep_their_alignment_both_ways) {
    checking_resource memory;
    {
        smr::debra_domain domain(config_with(&memory));
        smr::context handle(domain);
        auto* node = domain.allocate<over_aligned_node>(handle);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(node) % 64, 0u);
        domain.free_unshared(node);
    }
    EXPECT_EQ(memory.live(), 0u);
    EXPECT_EQ(memory.mismatch, "");
}

// Every scheme, lfrc's own allocate and the schemes' allocation stamps
// included: the memory of a node whose constructor threw goes back, the
// node is not counted, and the next allocation works.
TYPED_TEST(allocate_test, a_throwing_constructor_gives_the_memory_back) {
    using Domain = TypeParam;
    using node = throwing_node<Domain>;
    constexpr bool own_pool = Domain::traits.family == smr::reclaimer_family::reference_count;
    checking_resource memory;
    {
        // lfrc allocates from a type-stable pool of its own: its blocks in use.
        Domain domain(config_with(own_pool ? nullptr : &memory));
        const auto in_use = [&] {
            if constexpr (own_pool) return domain.pool().stats().in_use;
            return memory.live();
        };
        smr::context handle(domain);
        {
            smr::op_guard op(domain, handle);
            EXPECT_THROW((void)domain.template allocate<node>(handle, true), std::runtime_error);
        }
        EXPECT_EQ(domain.stats().allocated, 0u) << "a node that never existed was counted";
        EXPECT_EQ(in_use(), 0u) << "the memory of a node that never existed was kept";
        {
            smr::op_guard op(domain, handle);
            node* made = domain.template allocate<node>(handle, false);
            domain.discard(handle, made);
        }
        EXPECT_EQ(domain.stats().allocated, 1u);
    }
    EXPECT_EQ(memory.live(), 0u);
    EXPECT_EQ(memory.mismatch, "");
}

struct user_object : smr::obj_base<user_object, smr::debra_domain> {
    std::int64_t value = 0;
};

// Objects their user allocated (smr::obj_base) are freed by their deleter:
// the domain's resource sees none of them (it used to be asked to free a
// null pointer for each).
TEST(allocation_hook, user_objects_never_reach_the_resource) {
    checking_resource memory;
    {
        smr::debra_domain domain(config_with(&memory));
        smr::context handle(domain);
        for (int i = 0; i < 500; ++i) {
            smr::op_guard op(domain, handle);
            (new user_object)->retire(domain, handle);
        }
        domain.barrier(handle);
        EXPECT_EQ(domain.garbage(), 0u);
    }
    EXPECT_EQ(memory.allocations, 0u);
    EXPECT_EQ(memory.deallocations, 0u);
    EXPECT_EQ(memory.mismatch, "");
}

/// A resource that is always out of memory, as std::pmr reports it.
class empty_resource final : public std::pmr::memory_resource {
    void* do_allocate(std::size_t, std::size_t) override { throw std::bad_alloc(); }
    void do_deallocate(void*, std::size_t, std::size_t) override {}
    bool do_is_equal(const memory_resource& other) const noexcept override {
        return this == &other;
    }
};

TEST(allocation_hook, exhaustion_reaches_the_caller_as_bad_alloc) {
    empty_resource memory;
    smr::debra_domain domain(config_with(&memory));
    smr::context handle(domain);
    EXPECT_THROW((void)domain.allocate<over_aligned_node>(handle), std::bad_alloc);
    EXPECT_EQ(domain.stats().allocated, 0u);
}

// ---- the pool ---------------------------------------------------------------

using smr::alloc::on_empty;
using smr::alloc::pool_options;
using smr::alloc::pool_resource;

pool_options pool_of(std::size_t capacity, on_empty when_empty = on_empty::fail,
                     std::size_t magazine = 100) {
    pool_options options;
    options.capacity = capacity;
    options.when_empty = when_empty;
    options.magazine_size = magazine;
    return options;
}

std::vector<void*> take_all(pool_resource& pool, std::size_t bytes, std::size_t limit = SIZE_MAX) {
    std::vector<void*> blocks;
    try {
        while (blocks.size() < limit) blocks.push_back(pool.allocate(bytes, 8));
    } catch (const std::bad_alloc&) {
    }
    return blocks;
}

void give_all(pool_resource& pool, std::vector<void*>& blocks, std::size_t bytes) {
    for (void* p : blocks) pool.deallocate(p, bytes, 8);
    blocks.clear();
}

TEST(pool, hands_out_exactly_capacity_distinct_blocks_then_fails) {
    pool_resource pool(pool_of(1000));
    std::vector<void*> blocks = take_all(pool, 48);
    EXPECT_EQ(blocks.size(), 1000u);
    EXPECT_EQ(std::set<void*>(blocks.begin(), blocks.end()).size(), blocks.size());
    for (void* p : blocks) std::memset(p, 0xab, 48);  // every block is writable
    const auto stats = pool.stats();
    EXPECT_EQ(stats.carved, 1000u);
    EXPECT_EQ(stats.in_use_peak, 1000u);
    EXPECT_EQ(stats.failures, 1u);
    EXPECT_EQ(stats.gave_up, 1u);
    EXPECT_EQ(stats.in_use, 1000u);
    give_all(pool, blocks, 48);
    EXPECT_EQ(pool.stats().in_use, 0u);
    EXPECT_EQ(pool.stats().allocations, 1000u);
}

TEST(pool, freed_blocks_are_reused_without_drawing_more) {
    pool_resource pool(pool_of(1000));
    std::vector<void*> first = take_all(pool, 32, 500);
    const std::set<void*> seen(first.begin(), first.end());
    // Carved a magazine at a time: the first round leaves a partial one.
    const std::uint64_t carved = pool.stats().carved;
    EXPECT_LT(carved, 500u + pool.magazine_size());
    give_all(pool, first, 32);
    std::vector<void*> second = take_all(pool, 32, 500);
    EXPECT_EQ(pool.stats().carved, carved) << "the second round drew new blocks";
    std::size_t reused = 0;
    for (void* p : second) reused += seen.contains(p);
    EXPECT_GE(reused, 500u - pool.magazine_size());
    give_all(pool, second, 32);
}

TEST(pool, small_pools_clamp_the_magazine_so_threads_cannot_hoard_them) {
    EXPECT_EQ(pool_resource(pool_of(64)).magazine_size(), 1u);
    EXPECT_EQ(pool_resource(pool_of(640)).magazine_size(), 10u);
    EXPECT_EQ(pool_resource(pool_of(1'000'000)).magazine_size(), 100u);
    EXPECT_EQ(pool_resource(pool_of(1'000'000, on_empty::fail, 7)).magazine_size(), 7u);
    EXPECT_THROW(pool_resource(pool_of(0)), std::invalid_argument);
}

TEST(pool, every_size_up_to_4k_gets_its_alignment_and_larger_is_refused) {
    pool_resource pool(pool_of(100'000));
    std::vector<std::pair<void*, std::pair<std::size_t, std::size_t>>> held;
    for (std::size_t bytes = 1; bytes <= pool_resource::max_block; bytes += 7) {
        for (std::size_t align : {1, 8, 16, 32, 64, 256}) {
            if (bytes % align != 0 && align > 16 && bytes > pool_resource::max_block - align)
                continue;
            void* p = pool.allocate(bytes, align);
            EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % align, 0u) << bytes << "/" << align;
            std::memset(p, 0x5a, bytes);
            held.push_back({p, {bytes, align}});
        }
    }
    for (auto& [p, shape] : held) pool.deallocate(p, shape.first, shape.second);
    EXPECT_THROW((void)pool.allocate(pool_resource::max_block + 1, 8), std::length_error);
    EXPECT_THROW((void)pool.allocate(16, 8192), std::length_error);
}

TEST(pool, blocks_freed_by_another_thread_serve_the_first_after_it_exits) {
    pool_resource pool(pool_of(640));  // magazines of 10
    std::vector<void*> blocks = take_all(pool, 24);
    ASSERT_EQ(blocks.size(), 640u);
    std::thread([&] { give_all(pool, blocks, 24); }).join();  // its exit flushes its magazines
    std::vector<void*> again = take_all(pool, 24);
    EXPECT_EQ(again.size(), 640u) << "blocks stayed in the exited thread's magazines";
    EXPECT_EQ(pool.stats().carved, 640u);
    give_all(pool, again, 24);
}

TEST(pool, flush_thread_cache_hands_a_live_threads_blocks_to_others) {
    pool_resource pool(pool_of(640));
    std::vector<void*> blocks = take_all(pool, 24);
    give_all(pool, blocks, 24);  // now all in this thread's magazines or the depot
    std::size_t other_got = 0;
    std::thread([&] {
        std::vector<void*> mine = take_all(pool, 24);
        other_got = mine.size();
        give_all(pool, mine, 24);
    }).join();
    EXPECT_LT(other_got, 640u) << "this thread's magazines should have held some blocks back";
    pool.flush_thread_cache();
    std::thread([&] {
        std::vector<void*> mine = take_all(pool, 24);
        other_got = mine.size();
        give_all(pool, mine, 24);
    }).join();
    EXPECT_EQ(other_got, 640u);
}

TEST(pool, a_spinning_allocation_gives_up_when_told_to_stop_waiting) {
    pool_resource pool(pool_of(64, on_empty::spin));
    std::vector<void*> blocks = take_all(pool, 16, 64);
    std::atomic<bool> threw{false};
    std::thread waiter([&] {
        try {
            (void)pool.allocate(16, 8);
        } catch (const std::bad_alloc&) {
            threw = true;
        }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    pool.stop_waiting();
    waiter.join();
    EXPECT_TRUE(threw);
    const auto stats = pool.stats();
    EXPECT_EQ(stats.failures, 1u);
    EXPECT_EQ(stats.gave_up, 1u);
    EXPECT_GT(stats.retries, 0u);
    EXPECT_GT(stats.wait_seconds, 0.01);
    give_all(pool, blocks, 16);
}

TEST(pool, a_yielding_allocation_gets_the_block_another_thread_frees) {
    pool_resource pool(pool_of(64, on_empty::yield));
    std::vector<void*> blocks = take_all(pool, 16, 64);
    void* got = nullptr;
    std::thread waiter([&] { got = pool.allocate(16, 8); });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    give_all(pool, blocks, 16);
    pool.flush_thread_cache();
    waiter.join();
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(pool.stats().gave_up, 0u);
    EXPECT_GE(pool.stats().failures, 1u);
    pool.deallocate(got, 16, 8);
}

TEST(pool, free_blocks_are_poisoned_and_reused_ones_are_not) {
    if (!smr::alloc::detail::poisons_free_blocks) GTEST_SKIP() << "not an AddressSanitizer build";
#ifdef SMR_POOL_ASAN
    pool_resource pool(pool_of(1000));
    auto* p = static_cast<unsigned char*>(pool.allocate(40, 8));
    EXPECT_EQ(__asan_address_is_poisoned(p), 0);
    EXPECT_EQ(__asan_address_is_poisoned(p + 39), 0);
    pool.deallocate(p, 40, 8);
    EXPECT_NE(__asan_address_is_poisoned(p), 0);
    EXPECT_NE(__asan_address_is_poisoned(p + 39), 0);
    EXPECT_DEATH((void)*static_cast<volatile unsigned char*>(p), "use-after-poison");
    void* again = pool.allocate(40, 8);
    EXPECT_EQ(again, p) << "the last block freed is the first reused";
    EXPECT_EQ(__asan_address_is_poisoned(p), 0);
    pool.deallocate(again, 40, 8);
#endif
}

/// lfrc's count word: zero when carved, kept across free and reuse, and
/// never poisoned (a stray increment may land on it while the block is free).
TEST(pool, the_shared_word_is_zeroed_once_kept_across_reuse_and_never_poisoned) {
    smr::alloc::pool_options options = pool_of(1000);
    options.shared_word_offset = 16;
    pool_resource pool(options);
    auto* p = static_cast<unsigned char*>(pool.allocate(40, 8));
    std::uint64_t word;
    std::memcpy(&word, p + 16, sizeof word);
    EXPECT_EQ(word, 0u) << "zeroed when carved";
    word = 0x1234;
    std::memcpy(p + 16, &word, sizeof word);
    pool.deallocate(p, 40, 8);
#ifdef SMR_POOL_ASAN
    EXPECT_NE(__asan_address_is_poisoned(p + 15), 0);
    EXPECT_EQ(__asan_address_is_poisoned(p + 16), 0);
    EXPECT_EQ(__asan_address_is_poisoned(p + 23), 0);
    EXPECT_NE(__asan_address_is_poisoned(p + 24), 0);
#endif
    std::memcpy(&word, p + 16, sizeof word);  // a straggler's read of a free block
    EXPECT_EQ(word, 0x1234u);
    void* again = pool.allocate(40, 8);
    ASSERT_EQ(again, p);
    std::memcpy(&word, p + 16, sizeof word);
    EXPECT_EQ(word, 0x1234u) << "the pool does not write the shared word after carving";
    pool.deallocate(again, 40, 8);

    options.shared_word_offset = 8;
    EXPECT_THROW(pool_resource{options}, std::invalid_argument) << "over the pool's own words";
    options.shared_word_offset = 20;
    EXPECT_THROW(pool_resource{options}, std::invalid_argument) << "not a multiple of 8";
}

/// A producer enqueues into a 64-block pool under QSBR until the pool runs dry
/// and it waits; a consumer dequeues, retires and declares quiescent states.
/// The blocks the producer waits for come back only after a grace period
/// that its wait spans. Returns whether the producer's enqueues all went
/// through; `consumer_states` bounds the consumer's quiescent states in a row
/// that find the queue empty (0: until the producer is done, or 20 s).
bool producer_waiting_under_qsbr_finishes(on_empty when_empty, int consumer_states) {
    pool_resource pool(pool_of(64, when_empty));
    smr::qsbr_domain domain(config_with(&pool));
    smr::ds::ms_queue<smr::qsbr_domain> queue(domain);
    constexpr int items = 500;
    std::atomic<int> enqueued{0};
    std::atomic<bool> gave_up{false};
    std::thread producer([&] {
        smr::context handle(domain);
        try {
            for (int i = 0; i < items; ++i) {
                queue.enqueue(handle, i, i);
                enqueued.fetch_add(1, std::memory_order_release);
                domain.quiescent(handle);
            }
        } catch (const std::bad_alloc&) {
            gave_up = true;
        }
    });
    {
        smr::context handle(domain);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        // Only once the producer waits: the first block it gets must then come
        // from a node retired here and freed after a grace period its wait spans.
        while (pool.waiting() == 0 && !gave_up) std::this_thread::yield();
        int idle_states = 0;
        while (enqueued.load(std::memory_order_acquire) < items && !gave_up) {
            idle_states = queue.dequeue(handle) ? 0 : idle_states + 1;
            domain.quiescent(handle);
            if (std::chrono::steady_clock::now() > deadline ||
                (consumer_states > 0 && idle_states >= consumer_states)) {
                pool.stop_waiting();
            }
        }
        while (queue.dequeue(handle)) {
        }
    }
    producer.join();
    EXPECT_GT(pool.stats().failures, 0u) << "the pool never ran out: the test proved nothing";
    return !gave_up && enqueued.load() == items;
}

/// Hart's Figure 13 needs this: a thread that yields while it waits for pool
/// memory between operations (ms_queue's enqueue allocates before it starts)
/// must let QSBR's grace periods end, or the memory it waits for, retired by
/// another thread, is never freed. Without allocate_outside_op the producer
/// would wait until the deadline and give up. spin_idle spins the same way.
TEST(allocation_hook, a_thread_waiting_between_operations_holds_up_no_grace_period) {
    EXPECT_TRUE(producer_waiting_under_qsbr_finishes(on_empty::yield, 0))
        << "the producer waited for memory that its own wait kept from being freed";
    EXPECT_TRUE(producer_waiting_under_qsbr_finishes(on_empty::spin_idle, 0));
}

/// Hart's Figure 14: a thread that busy-waits for memory holds up the grace
/// periods it held when it began to wait, so under QSBR the memory it waits
/// for never comes back: 100000 quiescent states of the consumer in a row
/// free nothing (with the spinner idle, a few free its nodes).
TEST(allocation_hook, a_spinning_thread_holds_up_grace_periods) {
    EXPECT_FALSE(producer_waiting_under_qsbr_finishes(on_empty::spin, 100000));
}

/// Threads allocate and free blocks of several sizes at random from a pool
/// small enough to run out; each fills its blocks with its own byte and checks
/// it on free, so a block handed to two threads at once is caught. Each holds
/// at most `most_held` blocks: with waiting policies, threads that together
/// held the whole pool and all waited for more would wait forever (the
/// application's deadlock, not the pool's).
void stress(on_empty when_empty, std::size_t most_held) {
    constexpr int threads = 4;
    pool_resource pool(pool_of(640, when_empty));
    std::atomic<std::uint64_t> corrupted{0}, allocations{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            std::mt19937 rng(static_cast<unsigned>(t));
            std::vector<std::pair<unsigned char*, std::size_t>> held;
            const auto mark = static_cast<unsigned char>(t + 1);
            auto release_one = [&] {
                const std::size_t i = rng() % held.size();
                auto [p, bytes] = held[i];
                for (std::size_t b = 0; b < bytes; ++b) corrupted += p[b] != mark;
                pool.deallocate(p, bytes, 8);
                held[i] = held.back();
                held.pop_back();
            };
            for (int op = 0; op < 20000; ++op) {
                if (held.size() < most_held && rng() % 2 == 0) {
                    const std::size_t bytes = 16 + 16 * (rng() % 3);
                    try {
                        auto* p = static_cast<unsigned char*>(pool.allocate(bytes, 8));
                        std::memset(p, mark, bytes);
                        held.push_back({p, bytes});
                        ++allocations;
                    } catch (const std::bad_alloc&) {
                        if (!held.empty()) release_one();
                    }
                } else if (!held.empty()) {
                    release_one();
                }
            }
            while (!held.empty()) release_one();
        });
    }
    for (auto& w : workers) w.join();
    EXPECT_EQ(corrupted.load(), 0u) << "a block was handed to two threads at once";
    EXPECT_GT(allocations.load(), 10000u);
    const auto stats = pool.stats();
    EXPECT_LE(stats.carved, 640u);
    EXPECT_LE(stats.in_use_peak, 640u);
}

TEST(pool, concurrent_threads_never_share_a_block_when_it_fails) { stress(on_empty::fail, 200); }

// 4 threads x 80 blocks + 4 threads x 3 classes x 2 magazines x 10 = 560 < 640.
TEST(pool, concurrent_threads_never_share_a_block_when_they_yield) { stress(on_empty::yield, 80); }

}  // namespace
