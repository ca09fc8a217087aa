// HP++ (reclaim/hp_pp.hpp, reclaim/unlink.hpp): a step out of an
// invalidated node fails, an unlink's frontier outlives the successor's own
// retirement until the unlink's batch is invalidated, a failed unlink gives
// its cell back, and every other scheme's protect_from and begin_unlink are
// its protect and retire. The stress, stall and protection tests every
// reservation scheme gets are test_reservation's; Harris's list under hp_pp
// is in test_ds_concurrent and test_lincheck_runs.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <type_traits>

#include "smr/compatibility.hpp"
#include "smr/ds/abtree.hpp"
#include "smr/ds/dgt_bst.hpp"
#include "smr/ds/harris_list.hpp"
#include "smr/ds/hm_list.hpp"
#include "smr/ds/lazylist.hpp"
#include "smr/ds/marked_ptr.hpp"
#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/hp.hpp"
#include "smr/reclaim/hp_pp.hpp"
#include "smr/reclaim/unlink.hpp"

namespace {

/// A node of a chain, that reports its destruction.
struct link_node final : smr::hp_pp_domain::node_base {
    explicit link_node(std::atomic<int>* destroyed, link_node* successor = nullptr)
        : next(successor), destroyed_(destroyed) {}
    ~link_node() { destroyed_->fetch_add(1, std::memory_order_relaxed); }
    std::atomic<link_node*> next;
    std::atomic<int>* destroyed_;
};

/// A scan at every `threshold` retires and unlinks, whatever the hazards.
smr::domain_config scanning_every(std::size_t threshold) {
    smr::domain_config config;
    config.max_threads = 4;
    config.bag_threshold = threshold;
    config.hp_scan_factor = 0;
    config.hp_scan_offset = 0;
    return config;
}

// The reader stands on A, which an unlink removes and whose batch (one
// unlink: a scan at once) invalidates while the reader still holds A: its
// step out of A fails. A survives, protected, until the reader's operation
// ends. Kills hp_pp_ignores_invalidation.
TEST(hp_pp, a_step_out_of_an_invalidated_node_fails) {
    smr::hp_pp_domain domain(scanning_every(1));
    std::atomic<int> destroyed{0};
    smr::context self(domain);
    auto* b = domain.allocate<link_node>(self, &destroyed);
    auto* a = domain.allocate<link_node>(self, &destroyed, b);
    std::atomic<link_node*> root{a};
    {
        smr::op_guard guard(domain, self);
        const auto reader = domain.reader(self);
        link_node* held = reader.protect(0, root);
        ASSERT_EQ(held, a);
        const smr::link_read<link_node> before = smr::protect_from(reader, 1, a->next, *a);
        ASSERT_TRUE(before.valid);
        EXPECT_EQ(before.ptr, b);
        {
            auto unlink = smr::begin_unlink(domain, self, b);
            link_node* expected = a;
            ASSERT_TRUE(root.compare_exchange_strong(expected, b));
            unlink.retire(a);
        }  // the batch's scan: A invalidated, kept by slot 0
        EXPECT_TRUE(a->invalidated.load());
        EXPECT_EQ(destroyed.load(), 0);
        const smr::link_read<link_node> after = smr::protect_from(reader, 1, a->next, *a);
        EXPECT_FALSE(after.valid) << "stepped out of an invalidated node";
    }
    root.store(nullptr);
    {
        smr::op_guard guard(domain, self);
        auto unlink = smr::begin_unlink(domain, self, b);
        unlink.retire(b);
    }
    domain.barrier(self);
    EXPECT_EQ(destroyed.load(), 2);
}

// A link out of a marked node carries the mark: the reader's hazard names
// the node, so another thread's scan keeps it. Kills
// hp_pp_announces_tagged_link.
TEST(hp_pp, a_step_along_a_marked_link_protects_the_node) {
    smr::hp_pp_domain domain(scanning_every(1));
    std::atomic<int> destroyed{0};
    smr::context self(domain);
    auto* b = domain.allocate<link_node>(self, &destroyed);
    auto* a = domain.allocate<link_node>(self, &destroyed, smr::ds::detail::with_mark(b));
    {
        smr::op_guard guard(domain, self);
        const auto reader = domain.reader(self);
        const smr::link_read<link_node> step = smr::protect_from(reader, 0, a->next, *a);
        ASSERT_TRUE(step.valid);
        EXPECT_EQ(step.ptr, smr::ds::detail::with_mark(b)) << "the link comes back as read";
        std::thread other([&] {
            smr::context v(domain);
            domain.retire(v, b);  // a scan at once
        });
        other.join();
        EXPECT_EQ(destroyed.load(), 0) << "freed under a hazard on a marked link";
    }
    domain.barrier(self);
    EXPECT_EQ(destroyed.load(), 1);
    domain.free_unshared(a);
}

// U unlinks A (frontier B) and its batch waits; V unlinks B, retires it and
// scans: B stays, held by U's frontier cell, although no hazard names it (a
// reader still on A, not yet invalidated, may step to B). Once U's batch is
// invalidated, B goes. Kills hp_pp_frontier_unprotected.
TEST(hp_pp, the_frontier_outlives_its_own_retirement_until_the_batch_is_invalidated) {
    smr::hp_pp_domain domain(scanning_every(2));
    std::atomic<int> destroyed{0};
    smr::context self(domain);
    auto* b = domain.allocate<link_node>(self, &destroyed);
    auto* a = domain.allocate<link_node>(self, &destroyed, b);
    std::atomic<link_node*> root{a};
    {
        smr::op_guard guard(domain, self);
        auto unlink = smr::begin_unlink(domain, self, b);
        link_node* expected = a;
        ASSERT_TRUE(root.compare_exchange_strong(expected, b));
        unlink.retire(a);
    }  // one of two: no scan, A waits in the batch, B in the frontier cell
    EXPECT_FALSE(a->invalidated.load());
    std::thread other([&] {
        smr::context v(domain);
        smr::op_guard guard(domain, v);
        link_node* expected = b;
        ASSERT_TRUE(root.compare_exchange_strong(expected, nullptr));
        domain.retire(v, b);
        domain.retire(v, domain.allocate<link_node>(v, &destroyed));  // the second: a scan
    });
    other.join();
    EXPECT_EQ(destroyed.load(), 1) << "the scan freed the frontier of an unlink not invalidated";
    domain.barrier(self);  // our batch: A invalidated, the cell released, then all freed
    EXPECT_EQ(destroyed.load(), 3);
}

// An unlink whose write failed retires nothing: its cell is given back, and
// the next unlink takes the same one.
TEST(hp_pp, a_failed_unlink_gives_its_frontier_cell_back) {
    smr::hp_pp_domain domain(scanning_every(1000));
    std::atomic<int> destroyed{0};
    smr::context self(domain);
    auto* b = domain.allocate<link_node>(self, &destroyed);
    for (int i = 0; i < 3 * smr::hp_pp_frontier_cells; ++i) {
        smr::op_guard guard(domain, self);
        auto unlink = smr::begin_unlink(domain, self, b);
    }
    EXPECT_EQ(domain.stats().retired, 0u);
    EXPECT_EQ(domain.stats().heavy_barriers, 0u) << "a failed unlink ran a batch";
    domain.free_unshared(b);
    EXPECT_EQ(destroyed.load(), 1);
}

// Every other scheme: protect_from is protect (always valid) and an unlink's
// retire is retire.
TEST(hp_pp, other_schemes_protect_and_retire_as_they_always_do) {
    struct node final : smr::debra_domain::node_base {};
    smr::debra_domain domain(smr::domain_config{});
    smr::context self(domain);
    std::atomic<node*> cell{domain.allocate<node>(self)};
    {
        smr::op_guard guard(domain, self);
        const auto reader = domain.reader(self);
        node* first = cell.load();
        const auto step = smr::protect_from(reader, 0, cell, *first);
        EXPECT_TRUE(step.valid);
        EXPECT_EQ(step.ptr, first);
        auto unlink = smr::begin_unlink(domain, self, first);
        static_assert(std::is_same_v<decltype(unlink), smr::plain_unlink<smr::debra_domain>>);
        unlink.retire(cell.exchange(nullptr));
    }
    EXPECT_EQ(domain.stats().retired, 1u);
    domain.barrier(self);
    EXPECT_EQ(domain.stats().freed, 1u);
}

// The compatibility table: hp_pp where the structure names its frontiers
// (harris_list, lazylist, dgt_bst),
// hp where nothing is traversed through unlinked nodes, neither elsewhere.
TEST(hp_pp, is_safe_where_the_structure_names_its_frontiers) {
    using smr::check;
    EXPECT_TRUE((check<smr::ds::harris_list<smr::hp_pp_domain>>().safe));
    EXPECT_FALSE((check<smr::ds::harris_list<smr::hp_domain>>().safe));
    EXPECT_TRUE((check<smr::ds::hm_list<smr::hp_pp_domain>>().safe));
    EXPECT_TRUE((check<smr::ds::lazylist<smr::hp_pp_domain>>().safe));
    EXPECT_TRUE((check<smr::ds::dgt_bst<smr::hp_pp_domain>>().safe));
    const auto tree = check<smr::ds::abtree<smr::hp_pp_domain>>();
    EXPECT_FALSE(tree.safe);
    EXPECT_NE(tree.reason.find("names_frontiers"), std::string_view::npos) << tree.reason;
}

}  // namespace
