// Hyaline-1S (reclaim/hyaline.hpp): a sealed batch waits for every thread
// that was inside an operation with an era no older than the batch's nodes,
// and skips the others, a stalled one included. Deterministic: one OS
// thread, several slots. The stress, stall, barrier, thread-exit and
// linearizability tests every reclaimer gets are test_reservation's,
// test_barrier's, test_thread_exit's and test_lincheck_runs'.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "smr/reclaim/hyaline.hpp"

namespace {

using domain_type = smr::hyaline_domain;

struct node final : domain_type::node_base {
    explicit node(std::atomic<int>* destroyed) : destroyed_(destroyed) {}
    ~node() { destroyed_->fetch_add(1, std::memory_order_relaxed); }
    std::atomic<int>* destroyed_;
};

/// Batches of the smallest size: T + 1 nodes, T the slots in use.
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

// A reader inside an operation, its era announced after the batch's nodes
// were born, holds the batch until it leaves; the retirer's own slot,
// outside any operation, takes nothing. Kills hyaline_skips_active_slots.
TEST(hyaline, a_batch_waits_for_a_reader_inside_an_operation) {
    domain_type domain(small_batches());
    std::atomic<int> destroyed{0};
    smr::context writer(domain);
    smr::context reader(domain);
    std::atomic<node*> source{domain.allocate<node>(writer, &destroyed)};
    const auto batch = allocate_batch(domain, writer, destroyed);
    {
        smr::op_guard guard(domain, reader);
        EXPECT_NE(domain.protect(reader, 0, source), nullptr);  // announces the current era
        retire_all(domain, writer, batch);
        EXPECT_EQ(domain.garbage(), batch.size()) << "sealed while the reader was inside";
        EXPECT_EQ(destroyed.load(), 0);
    }
    EXPECT_EQ(domain.garbage(), 0u) << "the reader's leave dropped the last reference";
    EXPECT_EQ(destroyed.load(), static_cast<int>(domain.batch_size()));
    domain.free_unshared(source.load());
}

// A reader stalled inside an operation whose era is older than every node of
// a batch cannot hold one of them: the batch skips it and is freed at once.
// One born before the stall is held back, with its batch. Kills
// hyaline_pushes_to_older_eras.
TEST(hyaline, a_stalled_reader_is_skipped_by_batches_born_after_its_era) {
    domain_type domain(small_batches());
    std::atomic<int> destroyed{0};
    smr::context writer(domain);
    smr::context staller(domain);
    node* old = domain.allocate<node>(writer, &destroyed);
    std::atomic<node*> source{old};
    domain.begin_op(staller);
    EXPECT_EQ(domain.protect(staller, 0, source), old);
    const std::uint64_t stalled_era = domain.global_era();
    // Move the era past the staller's.
    std::vector<node*> young;
    while (domain.global_era() == stalled_era)
        young.push_back(domain.allocate<node>(writer, &destroyed));
    for (node* n : young) domain.discard(writer, n);
    destroyed.store(0);

    for (int round = 0; round < 50; ++round) {
        retire_all(domain, writer, allocate_batch(domain, writer, destroyed));
        ASSERT_EQ(domain.garbage(), 0u) << "round " << round << ": pushed to the stalled reader";
    }
    // A batch with one node born before the stall is the stalled reader's to
    // release.
    source.store(nullptr);
    auto batch = allocate_batch(domain, writer, destroyed);
    domain.discard(writer, batch.back());
    batch.back() = old;
    retire_all(domain, writer, batch);
    EXPECT_EQ(domain.garbage(), domain.batch_size()) << "one batch, held by the stalled reader";
    domain.end_op(staller);
    EXPECT_EQ(domain.garbage(), 0u);
}

}  // namespace
