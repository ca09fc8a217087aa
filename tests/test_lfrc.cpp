// lfrc: lock-free reference counting on type-stable memory
// (include/smr/reclaim/lfrc.hpp).
//
// The counts are checked where they show: the pool's blocks in use are the
// nodes alive, so a count leaked (a node never freed) or dropped once too
// often (a node freed while held: a use-after-poison under ASan, a dead
// canary in any build) fails a test.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory_resource>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "smr/alloc/pool_resource.hpp"
#include "smr/ds/hash_set.hpp"
#include "smr/ds/hm_list.hpp"
#include "smr/ds/ms_queue.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/reclaim/lfrc.hpp"

namespace {

using smr::lfrc_domain;
using smr::alloc::pool_options;
using smr::alloc::pool_resource;

struct link_node : smr::lfrc_node_header {
    static constexpr std::uint64_t alive = 0x5AFE5AFE5AFE5AFEull;
    explicit link_node(std::uint64_t v, link_node* successor = nullptr) noexcept
        : value(v), next(successor) {}
    ~link_node() { canary = 0; }

    std::uint64_t canary = alive;
    std::uint64_t value;
    std::atomic<link_node*> next;

    static constexpr auto counted_links() noexcept { return std::array{&link_node::next}; }
};

/// Nodes alive: blocks the pool has handed out and not taken back.
std::uint64_t in_use(lfrc_domain& domain) { return domain.pool().stats().in_use; }

/// Pushes a node holding `value` in front of root's node (which it links to).
void push(lfrc_domain& d, smr::context_ref<lfrc_domain> self, std::atomic<link_node*>& root,
          std::uint64_t value) {
    smr::op_guard guard(d, self);
    for (;;) {
        link_node* first = d.protect(self, 0, root);
        link_node* fresh = d.allocate<link_node>(self, value, first);
        if (d.compare_exchange_link(self, root, first, fresh)) return;
        d.discard(self, fresh);
    }
}

/// Unlinks root's node and retires it; false when root is empty.
bool pop(lfrc_domain& d, smr::context_ref<lfrc_domain> self, std::atomic<link_node*>& root) {
    smr::op_guard guard(d, self);
    for (;;) {
        link_node* first = d.protect(self, 0, root);
        if (first == nullptr) return false;
        EXPECT_EQ(first->canary, link_node::alive);
        link_node* second = d.protect(self, 1, first->next);
        link_node* expected = first;
        if (d.compare_exchange_link(self, root, expected, second)) {
            d.retire(self, first);
            return true;
        }
    }
}

TEST(lfrc, refuses_memory_that_is_not_type_stable) {
    smr::domain_config config;
    config.memory = std::pmr::new_delete_resource();
    EXPECT_THROW(lfrc_domain{config}, std::invalid_argument);

    pool_resource plain(pool_options{.capacity = 100});
    config.memory = &plain;
    EXPECT_THROW(lfrc_domain{config}, std::invalid_argument) << "a pool without the shared word";

    pool_resource stable(lfrc_domain::pool_options_for(pool_options{.capacity = 100}));
    config.memory = &stable;
    lfrc_domain domain(config);
    EXPECT_EQ(&domain.pool(), &stable);
    EXPECT_EQ(lfrc_domain::count_offset, 16u);
}

// lfrc frees a node when its last reference goes, so it cannot accept a
// retire from a thread that no longer holds the node (docs/design.md, "Retire
// outside an operation"): the operation that unlinked it freed it at its end.
TEST(lfrc, a_retire_after_the_operation_ended_fails_a_debug_assertion) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEBUG_DEATH(
        {
            lfrc_domain d{smr::domain_config{}};
            smr::context handle(d);
            const auto self = handle.lent();
            std::atomic<link_node*> root{nullptr};
            push(d, self, root, 1);
            push(d, self, root, 2);
            link_node* two = nullptr;
            {
                smr::op_guard guard(d, self);
                two = d.protect(self, 0, root);
                link_node* one = d.protect(self, 1, two->next);
                link_node* expected = two;
                if (!d.compare_exchange_link(self, root, expected, one)) std::abort();
            }
            d.retire(self, two);  // two was freed when the operation ended
        },
        "caller does not hold");
}

// The owned array has four places: a fifth allocation in one operation would
// write past it, so it stops the program in every build, release included.
TEST(lfrc, a_fifth_allocation_in_one_operation_stops_the_program_in_every_build) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            lfrc_domain d{smr::domain_config{}};
            smr::context handle(d);
            const auto self = handle.lent();
            smr::op_guard guard(d, self);
            for (std::uint64_t i = 0; i < 5; ++i) d.allocate<link_node>(self, i);
        },
        "smr: lfrc: more than 4 allocations in one operation");
}

TEST(lfrc, links_hold_counts_and_the_last_release_frees) {
    lfrc_domain d{smr::domain_config{}};
    smr::context handle(d);
    const auto self = handle.lent();
    std::atomic<link_node*> root{nullptr};

    push(d, self, root, 1);
    push(d, self, root, 2);  // root -> 2 -> 1
    EXPECT_EQ(in_use(d), 2u);
    EXPECT_EQ(d.stats().freed, 0u);
    {
        // Unlink 2 while holding it: freed only when this operation ends.
        smr::op_guard guard(d, self);
        link_node* two = d.protect(self, 0, root);
        link_node* one = d.protect(self, 1, two->next);
        link_node* expected = two;
        ASSERT_TRUE(d.compare_exchange_link(self, root, expected, one));
        d.retire(self, two);
        EXPECT_EQ(in_use(d), 2u) << "held by this thread's protect slot";
        EXPECT_EQ(d.garbage(), 1u);
    }
    EXPECT_EQ(in_use(d), 1u);
    EXPECT_EQ(d.stats().freed, 1u);
    EXPECT_EQ(d.garbage(), 0u);
    EXPECT_EQ(root.load()->value, 1u) << "1 kept its count from root when 2's link to it went";

    ASSERT_TRUE(pop(d, self, root));
    EXPECT_FALSE(pop(d, self, root));
    EXPECT_EQ(in_use(d), 0u);
    const smr::reclaimer_stats s = d.stats();
    EXPECT_EQ(s.allocated, 2u);
    EXPECT_EQ(s.retired, 2u);
    EXPECT_EQ(s.freed, 2u);
    EXPECT_EQ(s.discarded, 0u);
}

TEST(lfrc, a_discarded_node_is_freed_at_once_and_returns_its_links_counts) {
    lfrc_domain d{smr::domain_config{}};
    smr::context handle(d);
    const auto self = handle.lent();
    std::atomic<link_node*> root{nullptr};
    push(d, self, root, 1);
    {
        smr::op_guard guard(d, self);
        link_node* one = d.protect(self, 0, root);
        link_node* fresh = d.allocate<link_node>(self, 2, one);  // counts a link to 1
        EXPECT_EQ(in_use(d), 2u);
        d.discard(self, fresh);
        EXPECT_EQ(in_use(d), 1u) << "no grace period: it was never shared";
    }
    EXPECT_EQ(d.stats().discarded, 1u);
    // 1's count is back to its root link alone: unlinking frees it.
    ASSERT_TRUE(pop(d, self, root));
    EXPECT_EQ(in_use(d), 0u);
    EXPECT_EQ(d.stats().freed, 1u);
}

/// Valois's weakness (Hart, Section 2.4): a held node keeps alive every node
/// its links reach, even those unlinked after it. Freeing such a chain must
/// not recurse: 200K nodes would need 200K stack frames.
TEST(lfrc, a_held_node_keeps_its_unlinked_successors_and_frees_them_iteratively) {
    constexpr std::uint64_t n = 200'000;
    lfrc_domain d{smr::domain_config{}};
    smr::context writer(d);
    smr::context reader(d);
    std::atomic<link_node*> root{nullptr};
    for (std::uint64_t i = 1; i <= n; ++i) push(d, writer, root, i);

    d.begin_op(reader);
    link_node* held = d.protect(reader, 0, root);
    ASSERT_EQ(held->value, n);
    while (pop(d, writer, root)) {
    }
    EXPECT_EQ(d.garbage(), n) << "every unlinked node is reachable from the held one";
    EXPECT_EQ(in_use(d), n);
    EXPECT_EQ(held->canary, link_node::alive);
    d.end_op(reader);

    EXPECT_EQ(d.garbage(), 0u);
    EXPECT_EQ(d.stats().freed, n);
    EXPECT_EQ(in_use(d), 0u);
}

/// Sentinels (nodes constructed outside allocate) are pinned, and a domain
/// left by a structure hands the same pool to the next one: nothing leaks
/// and no count word is left "live" for the next allocation.
TEST(lfrc, lists_one_after_another_on_one_pool_leave_nothing) {
    pool_resource pool(lfrc_domain::pool_options_for(pool_options{.capacity = 1000}));
    smr::domain_config config;
    config.memory = &pool;
    for (int round = 0; round < 3; ++round) {
        lfrc_domain d(config);
        {
            smr::ds::hm_list<lfrc_domain> list(d);
            smr::context handle(d);
            for (std::int64_t k = 0; k < 100; ++k) ASSERT_TRUE(list.insert(handle, k, k));
            for (std::int64_t k = 0; k < 100; k += 2) ASSERT_TRUE(list.erase(handle, k));
            EXPECT_EQ(pool.stats().in_use, 50u);
            EXPECT_EQ(d.garbage(), 0u);
            ASSERT_TRUE(list.validate().ok);
        }
        EXPECT_EQ(pool.stats().in_use, 0u) << "round " << round;
    }
}

/// The count of a node touched after its free: readers protect the root
/// while writers replace its node, and the pool hands the freed block
/// straight back, so increments land on freed and reused nodes all the time.
/// A node freed while held is a use-after-poison (ASan), a race (TSan) or a
/// dead canary.
TEST(lfrc, stray_increments_on_reused_nodes_never_free_a_held_node) {
    constexpr int threads = 4;  // more than the machine's cores
    constexpr int rounds = 20'000;
    lfrc_domain d{smr::domain_config{}};
    std::atomic<link_node*> root{nullptr};
    {
        smr::context handle(d);
        push(d, handle, root, 0);
    }
    std::atomic<std::uint64_t> bad{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            smr::context handle(d);
            const auto self = handle.lent();
            for (int i = 0; i < rounds; ++i) {
                smr::op_guard guard(d, self);
                link_node* seen = d.protect(self, 0, root);
                if (seen->canary != link_node::alive) bad.fetch_add(1);
                if (t % 2 == 0) {
                    // Writer: replace the root's node with a fresh one.
                    link_node* fresh = d.allocate<link_node>(self, seen->value + 1);
                    link_node* expected = seen;
                    if (d.compare_exchange_link(self, root, expected, fresh)) {
                        d.retire(self, seen);
                    } else {
                        d.discard(self, fresh);
                    }
                }
                if (seen->canary != link_node::alive) bad.fetch_add(1);
            }
        });
    }
    for (auto& w : workers) w.join();
    EXPECT_EQ(bad.load(), 0u);
    EXPECT_EQ(d.garbage(), 0u);
    EXPECT_EQ(in_use(d), 1u) << "only the root's node is alive";
    smr::context handle(d);
    ASSERT_TRUE(pop(d, handle, root));
    EXPECT_EQ(in_use(d), 0u);
}

/// Four threads (more than the machine's cores) insert, erase and look up
/// keys of a tiny range in `set`, so every node is unlinked and freed again
/// and again; then the set must hold exactly the net insertions, every
/// unlinked node must be freed, and every node alive must be linked.
template <class Set>
void stress_set(lfrc_domain& d, Set& set, std::int64_t keys) {
    constexpr int threads = 4;
    constexpr int ops = 20'000;
    std::atomic<std::int64_t> net_sum{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            smr::context handle(d);
            std::mt19937_64 rng(static_cast<std::uint64_t>(t) + 1);
            std::int64_t sum = 0;
            for (int i = 0; i < ops; ++i) {
                const auto key =
                    static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(keys));
                switch (rng() % 3) {
                    case 0:
                        if (set.insert(handle, key, key)) sum += key;
                        break;
                    case 1:
                        if (set.erase(handle, key)) sum -= key;
                        break;
                    default:
                        (void)set.contains(handle, key);
                }
            }
            net_sum.fetch_add(sum);
        });
    }
    for (auto& w : workers) w.join();
    const auto check = set.validate();
    ASSERT_TRUE(check.ok) << check.error;
    EXPECT_EQ(check.key_sum, net_sum.load());
    EXPECT_EQ(d.garbage(), 0u) << "a retired node outlived every reference";
    EXPECT_EQ(in_use(d), check.size) << "nodes alive = nodes linked";
    const auto s = d.stats();
    EXPECT_EQ(s.allocated, s.freed + s.discarded + check.size);
}

TEST(lfrc, hm_list_stress_frees_every_unlinked_node) {
    lfrc_domain d{smr::domain_config{}};
    {
        smr::ds::hm_list<lfrc_domain> list(d);
        stress_set(d, list, 16);
    }
    EXPECT_EQ(in_use(d), 0u);
}

/// The hash set's buckets are Harris-Michael lists with packed sentinels;
/// four buckets keep every bucket contended.
TEST(lfrc, hash_set_stress_frees_every_unlinked_node) {
    lfrc_domain d{smr::domain_config{}};
    smr::ds::ds_options options;
    options.buckets = 4;
    {
        smr::ds::hash_set<lfrc_domain> set(d, options);
        stress_set(d, set, 32);
    }
    EXPECT_EQ(in_use(d), 0u);
}

/// The queue's first dummy lives in the queue object and is never freed: if
/// it kept its link once head left it, that link would keep every node ever
/// enqueued alive through the chain of next links.
TEST(lfrc, a_drained_queue_keeps_only_its_current_dummy) {
    lfrc_domain d{smr::domain_config{}};
    {
        smr::ds::ms_queue<lfrc_domain> queue(d);
        smr::context handle(d);
        for (std::int64_t k = 0; k < 1000; ++k) queue.enqueue(handle, k, k);
        EXPECT_EQ(in_use(d), 1000u);
        for (std::int64_t k = 0; k < 1000; ++k) ASSERT_EQ(queue.dequeue(handle)->key, k);
        EXPECT_FALSE(queue.dequeue(handle).has_value());
        EXPECT_EQ(in_use(d), 1u) << "only the last dequeued node, now head's dummy";
        EXPECT_EQ(d.garbage(), 0u);
        ASSERT_TRUE(queue.validate().ok);
    }
    EXPECT_EQ(in_use(d), 0u);
}

/// Producers and consumers (more threads than cores) on the Michael-Scott
/// queue: every dequeued dummy is freed once no thread holds it.
TEST(lfrc, ms_queue_stress_frees_every_dequeued_node) {
    constexpr int pairs = 2;
    constexpr int items = 20'000;
    lfrc_domain d{smr::domain_config{}};
    {
        smr::ds::ms_queue<lfrc_domain> queue(d);
        std::atomic<std::int64_t> dequeued_sum{0};
        std::atomic<int> dequeued{0};
        std::vector<std::thread> threads;
        for (int p = 0; p < pairs; ++p) {
            threads.emplace_back([&, p] {
                smr::context handle(d);
                for (int i = 0; i < items; ++i) queue.enqueue(handle, p * items + i, i);
            });
            threads.emplace_back([&] {
                smr::context handle(d);
                std::int64_t sum = 0;
                int got = 0;
                for (int i = 0; i < items; ++i) {
                    if (auto item = queue.dequeue(handle)) {
                        sum += item->key;
                        ++got;
                    }
                }
                dequeued_sum.fetch_add(sum);
                dequeued.fetch_add(got);
            });
        }
        for (auto& t : threads) t.join();
        const auto check = queue.validate();
        ASSERT_TRUE(check.ok) << check.error;
        constexpr std::int64_t n = std::int64_t{pairs} * items;
        EXPECT_EQ(check.key_sum + dequeued_sum.load(), n * (n - 1) / 2);
        EXPECT_EQ(check.size + static_cast<std::size_t>(dequeued.load()),
                  static_cast<std::size_t>(n));
        EXPECT_EQ(d.garbage(), 0u);
        // The items, plus head's dummy once it is an allocated node.
        EXPECT_EQ(in_use(d), check.size + (dequeued.load() > 0 ? 1u : 0u));
    }
    EXPECT_EQ(in_use(d), 0u);
}

}  // namespace
