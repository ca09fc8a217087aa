// The domain's allocation hook (domain_config::memory): every node a structure
// allocates goes through the resource and comes back to it with the same size
// and alignment, whichever reclaimer frees it and whether it is freed while
// threads run, discarded after a failed insert, or freed by a destructor.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory_resource>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

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
void churn(Structure& set, int tid) {
    for (int round = 0; round < 20; ++round) {
        for (std::int64_t key = 0; key < 64; ++key) (void)set.insert(tid, key, key);
        for (std::int64_t key = 0; key < 64; key += 2) (void)set.erase(tid, key);
    }
}

template <class Domain, template <class> class Structure>
void expect_every_node_through(checking_resource& memory) {
    {
        Domain domain(config_with(&memory));
        {
            Structure<Domain> set(domain);
            smr::thread_handle handle(domain);
            churn(set, handle.tid());
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
        smr::thread_handle handle(domain);
        churn(set, handle.tid());
    }
    EXPECT_EQ(memory.live(), 0u);
    EXPECT_EQ(memory.mismatch, "");
}

TEST(allocation_hook, queue_nodes_go_back_through_the_resource) {
    checking_resource memory;
    {
        smr::qsbr_domain domain(config_with(&memory));
        smr::ds::ms_queue<smr::qsbr_domain> queue(domain);
        smr::thread_handle handle(domain);
        for (int round = 0; round < 50; ++round) {
            for (std::int64_t i = 0; i < 32; ++i) queue.enqueue(handle.tid(), i, i);
            for (std::int64_t i = 0; i < 32; ++i) (void)queue.dequeue(handle.tid());
            domain.quiescent(handle.tid());
        }
        EXPECT_GT(memory.deallocations, 0u);
    }
    EXPECT_EQ(memory.live(), 0u);
    EXPECT_EQ(memory.allocations, memory.deallocations);
    EXPECT_EQ(memory.mismatch, "");
}

struct alignas(64) over_aligned_node : smr::debra_domain::node_base {
    std::int64_t value = 0;
};

struct throwing_node : smr::debra_domain::node_base {
    explicit throwing_node(bool fail) {
        if (fail) throw std::runtime_error("constructor failed");
    }
};

TEST(allocation_hook, over_aligned_nodes_keep_their_alignment_both_ways) {
    checking_resource memory;
    {
        smr::debra_domain domain(config_with(&memory));
        smr::thread_handle handle(domain);
        auto* node = domain.allocate<over_aligned_node>(handle.tid());
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(node) % 64, 0u);
        domain.free_unshared(node);
    }
    EXPECT_EQ(memory.live(), 0u);
    EXPECT_EQ(memory.mismatch, "");
}

TEST(allocation_hook, a_throwing_constructor_gives_the_memory_back) {
    checking_resource memory;
    {
        smr::debra_domain domain(config_with(&memory));
        smr::thread_handle handle(domain);
        EXPECT_THROW((void)domain.allocate<throwing_node>(handle.tid(), true), std::runtime_error);
        EXPECT_EQ(memory.live(), 0u);
        EXPECT_EQ(domain.stats().allocated, 0u) << "a node that never existed was counted";
    }
    EXPECT_EQ(memory.allocations, 1u);
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
    smr::thread_handle handle(domain);
    EXPECT_THROW((void)domain.allocate<over_aligned_node>(handle.tid()), std::bad_alloc);
    EXPECT_EQ(domain.stats().allocated, 0u);
}

}  // namespace
