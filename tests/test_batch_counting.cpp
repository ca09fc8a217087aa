// The schemes that count references to batches (reclaim/batch_counting.hpp):
// a sealed batch waits for every held slot whose era is not older than its
// nodes and skips the others, a stalled reader's included (hyaline, one slot
// per thread), and a slot that moves to a new era releases at once what was
// pushed to it under the old one (crystalline_l, one slot per protect
// index). Deterministic: one OS thread, several slots. The stress, stall,
// barrier, thread-exit and linearizability tests every reclaimer gets are
// test_reservation's, test_barrier's, test_thread_exit's and
// test_lincheck_runs'.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "smr/reclaim/crystalline.hpp"
#include "smr/reclaim/hyaline.hpp"

namespace {

/// Both schemes' nodes carry a birth era alone (smr::birth_era_header).
struct node final : smr::birth_era_header {
    explicit node(std::atomic<int>* destroyed) : destroyed_(destroyed) {}
    ~node() { destroyed_->fetch_add(1, std::memory_order_relaxed); }
    std::atomic<int>* destroyed_;
};

/// Batches of the smallest size: the slots of the threads in use, plus one.
smr::domain_config small_batches() {
    smr::domain_config config;
    config.max_threads = 4;
    config.bag_threshold = 1;
    config.epoch_freq = 1;  // the era moves every T allocations of a thread
    return config;
}

/// One full batch of nodes born now.
template <class Domain>
std::vector<node*> allocate_batch(Domain& domain, smr::context<Domain>& self,
                                  std::atomic<int>& destroyed) {
    std::vector<node*> nodes;
    const std::size_t size = domain.batch_size();
    for (std::size_t i = 0; i < size; ++i)
        nodes.push_back(domain.template allocate<node>(self, &destroyed));
    return nodes;
}

template <class Domain>
void retire_all(Domain& domain, smr::context<Domain>& self, const std::vector<node*>& nodes) {
    for (node* n : nodes) domain.retire(self, n);
}

/// Moves the global era on (the allocations are discarded).
template <class Domain>
void move_era(Domain& domain, smr::context<Domain>& self, std::atomic<int>& destroyed) {
    const std::uint64_t era = domain.global_era();
    while (domain.global_era() == era)
        domain.discard(self, domain.template allocate<node>(self, &destroyed));
}

/// What most tests start from: a domain, a writer and a reader, a source
/// node, and one full batch of nodes born before the reader's first protect.
template <class Domain>
struct scene {
    Domain domain{small_batches()};
    std::atomic<int> destroyed{0};
    smr::context<Domain> writer{domain};
    smr::context<Domain> reader{domain};
    std::atomic<node*> source{domain.template allocate<node>(writer, &destroyed)};
    std::vector<node*> batch = allocate_batch(domain, writer, destroyed);

    ~scene() { domain.free_unshared(source.load()); }
};

// ---- hyaline: one slot per thread, held for the whole operation -------------

// A reader inside an operation, its era announced after the batch's nodes
// were born, holds the batch until it leaves; the retirer's own slot,
// outside any operation, takes nothing. Kills batch_counting_skips_held_slots.
TEST(hyaline, a_batch_waits_for_a_reader_inside_an_operation) {
    scene<smr::hyaline_domain> s;
    auto& [domain, destroyed, writer, reader, source, batch] = s;
    {
        smr::op_guard guard(domain, reader);
        EXPECT_NE(domain.protect(reader, 0, source), nullptr);  // announces the current era
        retire_all(domain, writer, batch);
        EXPECT_EQ(domain.garbage(), batch.size()) << "sealed while the reader was inside";
        EXPECT_EQ(destroyed.load(), 0);
    }
    EXPECT_EQ(domain.garbage(), 0u) << "the reader's leave dropped the last reference";
    EXPECT_EQ(destroyed.load(), static_cast<int>(domain.batch_size()));
}

// A reader stalled inside an operation whose era is older than every node of
// a batch cannot hold one of them: the batch skips it and is freed at once.
// One born before the stall is held back, with its batch. Kills
// batch_counting_pushes_to_older_eras.
TEST(hyaline, a_stalled_reader_is_skipped_by_batches_born_after_its_era) {
    smr::hyaline_domain domain(small_batches());
    std::atomic<int> destroyed{0};
    smr::context writer(domain);
    smr::context staller(domain);
    node* old = domain.allocate<node>(writer, &destroyed);
    std::atomic<node*> source{old};
    domain.begin_op(staller);
    EXPECT_EQ(domain.protect(staller, 0, source), old);
    move_era(domain, writer, destroyed);  // past the staller's
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

// ---- crystalline_l: one slot per protect index, each with its own era ---------

// A slot held with an era no older than the batch's nodes keeps the batch
// until the operation ends; the writer, holding no slot, keeps nothing.
// Kills batch_counting_skips_held_slots.
TEST(crystalline, a_batch_waits_for_a_held_slot) {
    scene<smr::crystalline_l_domain> s;
    auto& [domain, destroyed, writer, reader, source, batch] = s;
    {
        smr::op_guard guard(domain, reader);
        EXPECT_NE(domain.protect(reader, 3, source), nullptr);  // holds slot 3
        retire_all(domain, writer, batch);
        EXPECT_EQ(domain.garbage(), batch.size()) << "sealed while slot 3 was held";
        EXPECT_EQ(destroyed.load(), 0);
    }
    EXPECT_EQ(domain.garbage(), 0u) << "the end of the operation released slot 3";
    EXPECT_EQ(destroyed.load(), static_cast<int>(batch.size()));
}

// The reader's slot moves to a new era inside one operation (the structure
// protects another node in it): the batch pushed under the old era is freed
// then, not at the operation's end. Kills crystalline_keeps_list_on_era_change.
TEST(crystalline, a_slot_that_changes_era_releases_its_batches) {
    scene<smr::crystalline_l_domain> s;
    auto& [domain, destroyed, writer, reader, source, batch] = s;
    smr::op_guard guard(domain, reader);
    EXPECT_NE(domain.protect(reader, 0, source), nullptr);
    retire_all(domain, writer, batch);
    EXPECT_EQ(domain.garbage(), batch.size());
    move_era(domain, writer, destroyed);
    destroyed.store(0);
    EXPECT_NE(domain.protect(reader, 0, source), nullptr);  // slot 0 moves to the new era
    EXPECT_EQ(domain.garbage(), 0u) << "slot 0 kept what it held under its old era";
    EXPECT_EQ(destroyed.load(), static_cast<int>(batch.size()));
}

// Another slot of the same operation keeps its own era and its batches: a
// batch old enough for slot 1 but not for slot 0 waits for slot 1 alone.
TEST(crystalline, each_slot_keeps_its_own_era) {
    scene<smr::crystalline_l_domain> s;
    auto& [domain, destroyed, writer, reader, source, batch] = s;
    smr::op_guard guard(domain, reader);
    EXPECT_NE(domain.protect(reader, 1, source), nullptr);  // slot 1: the batch's era
    retire_all(domain, writer, batch);
    move_era(domain, writer, destroyed);
    EXPECT_NE(domain.protect(reader, 0, source), nullptr);  // slot 0: a later era
    EXPECT_EQ(domain.garbage(), batch.size()) << "slot 1 still holds the batch";
    move_era(domain, writer, destroyed);
    EXPECT_NE(domain.protect(reader, 1, source), nullptr);  // slot 1 moves on
    EXPECT_EQ(domain.garbage(), 0u);
}

}  // namespace
