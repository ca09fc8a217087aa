// Crystalline-L (reclaim/crystalline.hpp): a sealed batch waits for every
// held slot whose era is not older than its nodes, and a slot that moves to
// a new era releases at once what was pushed to it under the old one, while
// the operation goes on. Deterministic: one OS thread, several slots. The
// stress, stall, barrier, thread-exit and linearizability tests every
// reclaimer gets are test_reservation's, test_barrier's, test_thread_exit's
// and test_lincheck_runs'.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "smr/reclaim/crystalline.hpp"

namespace {

using domain_type = smr::crystalline_l_domain;

struct node final : domain_type::node_base {
    explicit node(std::atomic<int>* destroyed) : destroyed_(destroyed) {}
    ~node() { destroyed_->fetch_add(1, std::memory_order_relaxed); }
    std::atomic<int>* destroyed_;
};

/// Batches of the smallest size: 8T + 1 nodes.
smr::domain_config small_batches() {
    smr::domain_config config;
    config.max_threads = 4;
    config.bag_threshold = 1;
    config.epoch_freq = 1;  // the era moves every T allocations of a thread
    return config;
}

/// One full batch of nodes born now.
std::vector<node*> allocate_batch(domain_type& domain, smr::context<domain_type>& self,
                                  std::atomic<int>& destroyed) {
    std::vector<node*> nodes;
    const std::size_t size = domain.batch_size();
    for (std::size_t i = 0; i < size; ++i) nodes.push_back(domain.allocate<node>(self, &destroyed));
    return nodes;
}

void retire_all(domain_type& domain, smr::context<domain_type>& self,
                const std::vector<node*>& nodes) {
    for (node* n : nodes) domain.retire(self, n);
}

/// Moves the global era on (the allocations are discarded).
void move_era(domain_type& domain, smr::context<domain_type>& self, std::atomic<int>& destroyed) {
    const std::uint64_t era = domain.global_era();
    while (domain.global_era() == era)
        domain.discard(self, domain.allocate<node>(self, &destroyed));
}

// A slot held with an era no older than the batch's nodes keeps the batch
// until the operation ends; the writer, holding no slot, keeps nothing.
// Kills batch_counting_skips_held_slots.
TEST(crystalline, a_batch_waits_for_a_held_slot) {
    domain_type domain(small_batches());
    std::atomic<int> destroyed{0};
    smr::context writer(domain);
    smr::context reader(domain);
    std::atomic<node*> source{domain.allocate<node>(writer, &destroyed)};
    const auto batch = allocate_batch(domain, writer, destroyed);
    {
        smr::op_guard guard(domain, reader);
        EXPECT_NE(domain.protect(reader, 3, source), nullptr);  // holds slot 3
        retire_all(domain, writer, batch);
        EXPECT_EQ(domain.garbage(), batch.size()) << "sealed while slot 3 was held";
        EXPECT_EQ(destroyed.load(), 0);
    }
    EXPECT_EQ(domain.garbage(), 0u) << "the end of the operation released slot 3";
    EXPECT_EQ(destroyed.load(), static_cast<int>(batch.size()));
    domain.free_unshared(source.load());
}

// The reader's slot moves to a new era inside one operation (the structure
// protects another node in it): the batch pushed under the old era is freed
// then, not at the operation's end. Kills crystalline_keeps_list_on_era_change.
TEST(crystalline, a_slot_that_changes_era_releases_its_batches) {
    domain_type domain(small_batches());
    std::atomic<int> destroyed{0};
    smr::context writer(domain);
    smr::context reader(domain);
    std::atomic<node*> source{domain.allocate<node>(writer, &destroyed)};
    const auto batch = allocate_batch(domain, writer, destroyed);
    smr::op_guard guard(domain, reader);
    EXPECT_NE(domain.protect(reader, 0, source), nullptr);
    retire_all(domain, writer, batch);
    EXPECT_EQ(domain.garbage(), batch.size());
    move_era(domain, writer, destroyed);
    destroyed.store(0);
    EXPECT_NE(domain.protect(reader, 0, source), nullptr);  // slot 0 moves to the new era
    EXPECT_EQ(domain.garbage(), 0u) << "slot 0 kept what it held under its old era";
    EXPECT_EQ(destroyed.load(), static_cast<int>(batch.size()));
    domain.free_unshared(source.load());
}

// Another slot of the same operation keeps its own era and its batches: a
// batch old enough for slot 1 but not for slot 0 waits for slot 1 alone.
TEST(crystalline, each_slot_keeps_its_own_era) {
    domain_type domain(small_batches());
    std::atomic<int> destroyed{0};
    smr::context writer(domain);
    smr::context reader(domain);
    std::atomic<node*> source{domain.allocate<node>(writer, &destroyed)};
    const auto batch = allocate_batch(domain, writer, destroyed);
    smr::op_guard guard(domain, reader);
    EXPECT_NE(domain.protect(reader, 1, source), nullptr);  // slot 1: the batch's era
    retire_all(domain, writer, batch);
    move_era(domain, writer, destroyed);
    EXPECT_NE(domain.protect(reader, 0, source), nullptr);  // slot 0: a later era
    EXPECT_EQ(domain.garbage(), batch.size()) << "slot 1 still holds the batch";
    move_era(domain, writer, destroyed);
    EXPECT_NE(domain.protect(reader, 1, source), nullptr);  // slot 1 moves on
    EXPECT_EQ(domain.garbage(), 0u);
    domain.free_unshared(source.load());
}

}  // namespace
