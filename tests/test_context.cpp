// Contexts and guarded pointers (reclaim/context.hpp, reclaim/guards.hpp):
// a thread attaches once and passes its context; an op_guard made from it
// hands out protect slots to guarded pointers and takes them back when the
// pointers die.
//
// Deterministic, on one OS thread with two attached contexts (a reader and
// a writer), as in test_nested_operations: the writer replaces and retires
// what the reader holds and keeps running operations, which lets every
// scheme reclaim as far as the reader allows.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "one_thread_scenarios.hpp"
#include "smr/reclaim/all.hpp"
#include "smr/reclaim/context.hpp"
#include "smr/reclaim/guards.hpp"

namespace {

using smr::test::domain_names;
using smr::test::eager_config;
using smr::test::flagged_node;
using smr::test::replace;

// ---- what the types promise ---------------------------------------------------

using debra_node = flagged_node<smr::debra_domain>;
using hp_node = flagged_node<smr::hp_domain>;
static_assert(sizeof(smr::guarded<debra_node, smr::debra_domain>) == sizeof(debra_node*),
              "without slots a guarded pointer is the pointer");
static_assert(std::is_trivially_destructible_v<smr::guarded<debra_node, smr::debra_domain>>);
static_assert(
    std::is_trivially_destructible_v<smr::guarded<flagged_node<smr::nbr_domain>, smr::nbr_domain>>,
    "a read phase left by siglongjmp runs no destructor");
static_assert(!std::is_trivially_destructible_v<smr::guarded<hp_node, smr::hp_domain>>);
static_assert(!std::is_copy_constructible_v<smr::guarded<hp_node, smr::hp_domain>>);
// A block of slots lives in an NBR read phase, which siglongjmp leaves
// without destructors, and owns its slots elsewhere.
static_assert(std::is_trivially_destructible_v<smr::slot_block<smr::nbr_domain, 3>>);
static_assert(!std::is_trivially_destructible_v<smr::slot_block<smr::hp_domain, 3>>);
static_assert(!std::is_copy_constructible_v<smr::slot_block<smr::hp_domain, 3>>);
static_assert(!std::is_move_constructible_v<smr::slot_block<smr::hp_domain, 3>>);
static_assert(std::is_enum_v<smr::slot_block<smr::hp_domain, 3>::view>);
static_assert(sizeof(smr::slot_block<smr::nbr_domain, 3>::view) == sizeof(int));
static_assert(std::is_nothrow_move_constructible_v<smr::guarded<hp_node, smr::hp_domain>>);
static_assert(!std::is_copy_constructible_v<smr::context<smr::hp_domain>>);
static_assert(std::is_nothrow_move_constructible_v<smr::context<smr::hp_domain>>);
static_assert(
    std::is_convertible_v<smr::context<smr::hp_domain>&, smr::context_ref<smr::hp_domain>>,
    "a caller passes its context to an operation");
static_assert(
    !std::is_convertible_v<int, smr::context_ref<smr::hp_domain>>,
    "an operation cannot be handed a slot number (compile_fail/operation_given_a_slot_number)");
static_assert(
    !std::is_convertible_v<smr::context<smr::hp_domain>&, smr::context_ref<smr::ebr_domain>>,
    "nor another domain's context");
static_assert(sizeof(smr::context_ref<smr::hp_domain>) == sizeof(int), "lent in a register");
template <class E>
concept has_a_slot_number = requires(E e) {
    smr::tid_of(e);
};
static_assert(has_a_slot_number<smr::context_ref<smr::hp_domain>>);
static_assert(!has_a_slot_number<std::memory_order> && !has_a_slot_number<int>,
              "tid_of takes a lent context, no other enumeration");

// ---- attaching ------------------------------------------------------------------

TEST(context, attaches_once_and_detaches_when_it_dies_or_moves_on) {
    smr::domain_config config;
    config.max_threads = 2;
    smr::debra_domain domain(config);
    auto first = smr::attach(domain);
    {
        auto second = smr::attach(domain);
        EXPECT_NE(first.tid(), second.tid());
        EXPECT_THROW((void)smr::attach(domain), std::length_error) << "two slots, both taken";
    }
    // `second` detached at its end: its slot is free again.
    auto third = smr::attach(domain);
    EXPECT_TRUE(third.attached());

    // A move hands the attachment over; the moved-from context holds none.
    smr::context<smr::debra_domain> moved = std::move(first);
    EXPECT_TRUE(moved.attached());
    EXPECT_FALSE(first.attached());  // NOLINT(bugprone-use-after-move): the point of the test
    EXPECT_EQ(&moved.domain(), &domain);

    // Assigning over an attached context detaches it first.
    moved = std::move(third);
    auto again = smr::attach(domain);  // the slot `moved` held before is free
    EXPECT_TRUE(again.attached());
    again.detach();
    EXPECT_FALSE(again.attached());
    again.detach();  // nothing left to detach
}

TEST(context, lends_its_slot_number_to_an_operation) {
    smr::debra_domain domain(smr::domain_config{});
    auto self = smr::attach(domain);
    auto other = smr::attach(domain);
    const auto slot_of = [](smr::context_ref<smr::debra_domain> lent) { return smr::tid_of(lent); };
    EXPECT_EQ(slot_of(self), self.tid());
    EXPECT_EQ(slot_of(other), other.tid());
    EXPECT_NE(slot_of(self), slot_of(other));
}

// A class derived from a scheme (a test's instrumented domain) lends contexts
// of its scheme's type, which the scheme's calls take; a context of another
// scheme converts to none of them.
struct derived_from_hp : smr::hp_domain {
    using smr::hp_domain::hp_domain;
};
static_assert(std::is_same_v<smr::context_ref<derived_from_hp>, smr::context_ref<smr::hp_domain>>);
static_assert(
    std::is_convertible_v<smr::context<derived_from_hp>, smr::context_ref<smr::hp_domain>>);
static_assert(
    !std::is_convertible_v<smr::context<smr::debra_domain>, smr::context_ref<smr::hp_domain>>);
static_assert(!std::is_convertible_v<int, smr::context_ref<smr::hp_domain>>);

TEST(context, the_domains_calls_take_it) {
    smr::debra_domain domain(eager_config());
    auto self = smr::attach(domain);
    bool kept = false;
    bool dropped = false;
    {
        smr::op_guard guard(domain, self);
        debra_node* const fresh = domain.allocate<debra_node>(self, &dropped);
        domain.discard(self, fresh);
        domain.retire(self, domain.allocate<debra_node>(self, &kept));
    }
    EXPECT_TRUE(dropped);
    domain.thread_offline(self);
    domain.thread_online(self);
    domain.barrier(self);
    EXPECT_TRUE(kept);
    const auto stats = domain.stats();
    EXPECT_EQ(stats.allocated, 2u);
    EXPECT_EQ(stats.discarded, 1u);
    EXPECT_EQ(stats.retired, 1u);
    EXPECT_EQ(stats.freed, 1u);
}

// A function a traversal runs in gets the operation's context back from the
// block's view, with slots (hp) and without (debra).
template <class Domain>
void expect_view_lends_the_guards_context() {
    Domain domain(eager_config());
    auto self = smr::attach(domain);
    auto other = smr::attach(domain);  // so that self's slot is not 0 by chance alone
    smr::op_guard guard(domain, other);
    const auto block = smr::lend_slots<2>(guard);
    EXPECT_EQ(smr::tid_of(smr::context_of(block.lent())), other.tid());
    EXPECT_NE(other.tid(), self.tid());
}
TEST(context, a_slot_blocks_view_gives_back_the_guards_context) {
    expect_view_lends_the_guards_context<smr::hp_domain>();
    expect_view_lends_the_guards_context<smr::debra_domain>();
}

// ---- guarded pointers under every scheme that protects without signals -------------
// (the token schemes are left out: with one OS thread the token waits for the
// reader, which runs no operation while the writer reclaims)

using guarding_domains =
    ::testing::Types<smr::hp_domain, smr::he_domain, smr::wfe_domain, smr::ibr_domain,
                     smr::debra_domain, smr::ebr_domain, smr::rcu_epoch_domain>;

template <class Domain>
class guarded_test : public ::testing::Test {};
TYPED_TEST_SUITE(guarded_test, guarding_domains, domain_names);

// Nodes a and b, protected inside one operation by `hold` (which runs in
// it, given the guard and both sources, and checks what it read), survive a
// writer that replaces and retires them many times over while the
// operation lasts, and are freed once it is over.
template <class Domain, class Hold>
void expect_kept_until_the_operation_ends(Hold hold) {
    using node = flagged_node<Domain>;
    Domain domain(eager_config());
    auto reader = smr::attach(domain);
    auto writer = smr::attach(domain);
    const auto w = writer.lent();
    bool a_destroyed = false;
    bool b_destroyed = false;
    std::atomic<node*> a{domain.template allocate_outside_op<node>(w, &a_destroyed)};
    std::atomic<node*> b{domain.template allocate_outside_op<node>(w, &b_destroyed)};
    constexpr int rounds = 100;
    const auto replace_both = [&] {
        for (int round = 0; round < rounds; ++round) {
            replace(domain, w, a);
            replace(domain, w, b);
        }
    };
    {
        smr::op_guard op(domain, reader);
        hold(domain, op, a, b, [&] {
            replace_both();
            EXPECT_FALSE(a_destroyed) << "freed while held";
            EXPECT_FALSE(b_destroyed) << "freed while held";
        });
    }
    replace_both();
    EXPECT_TRUE(a_destroyed) << "never freed after the operation";
    EXPECT_TRUE(b_destroyed) << "never freed after the operation";
    domain.free_unshared(a.load());
    domain.free_unshared(b.load());
}

// Two guarded pointers alive at once keep both their nodes. Were the two
// given one slot (the mutant guarded_pointers_share_a_slot), hp's second
// protect would overwrite the first's hazard and the first node would be
// freed under its reader.
TYPED_TEST(guarded_test, keeps_each_node_until_it_and_its_operation_end) {
    expect_kept_until_the_operation_ends<TypeParam>(
        [](auto& /*domain*/, auto& op, auto& a, auto& b, auto while_held) {
            const auto held_a = op.protect(a);
            const auto held_b = op.protect(b);
            ASSERT_EQ(held_a.get(), a.load());
            ASSERT_EQ(held_b.get(), b.load());
            while_held();
        });
}

// The same for a block's slot and a guarded pointer taken while the block
// lives, under the era schemes too, whose slots are indexes (the block
// shifts the index). Were the block's slots not taken from the guard (the
// mutant slot_blocks_take_no_slots), the guarded pointer would take the
// block's first slot and overwrite its reservation.
TYPED_TEST(guarded_test, a_block_and_a_guarded_pointer_keep_their_nodes) {
    expect_kept_until_the_operation_ends<TypeParam>(
        [](auto& domain, auto& op, auto& a, auto& b, auto while_held) {
            const auto block = smr::lend_slots<2>(op);
            const auto slots = block.reader(domain);
            auto* const held_a = slots.protect(slots.slot(0), a);
            const auto held_b = op.protect(b);
            ASSERT_EQ(held_a, a.load());
            ASSERT_EQ(held_b.get(), b.load());
            while_held();
        });
}

// ---- hp: which slot each pointer takes --------------------------------------------

struct hp_slots : ::testing::Test {
    smr::hp_domain domain{eager_config()};
    smr::context<smr::hp_domain> self{domain};
    std::atomic<hp_node*> cells[smr::max_protect_slots + 1] = {};

    hp_slots() {
        for (auto& cell : cells) {
            cell.store(domain.allocate_outside_op<hp_node>(self, nullptr));
        }
    }
    ~hp_slots() override {
        for (auto& cell : cells) domain.free_unshared(cell.load());
    }
    /// What hazard pointer `index` of the thread announces.
    const void* announced(int index) {
        return domain.hazard(self.tid(), index).cell().load(std::memory_order_relaxed);
    }
    static const void* header(hp_node* node) {
        return static_cast<const smr::core::retired_node*>(node);
    }
};

// begin_op, protect, reader and end_op take the context and reach hp's own
// hooks: what protect(self, ...) and a reader announce stays announced
// until end_op(self); a guard passes its context on to them.
TEST_F(hp_slots, the_bracket_protect_and_reader_take_the_context) {
    domain.begin_op(self);
    hp_node* const direct = domain.protect(self, 2, cells[0]);
    hp_node* const through_reader = domain.reader(self).protect(5, cells[1]);
    EXPECT_EQ(announced(2), header(direct));
    EXPECT_EQ(announced(5), header(through_reader));
    domain.end_op(self);
    EXPECT_EQ(announced(2), nullptr);
    EXPECT_EQ(announced(5), nullptr);
    smr::op_guard op(domain, self);
    EXPECT_EQ(smr::tid_of(op.context()), self.tid());
}

TEST_F(hp_slots, the_lowest_free_slot_is_taken_and_given_back_at_death_or_reset) {
    smr::op_guard op(domain, self);
    auto g0 = op.protect(cells[0]);
    auto g1 = op.protect(cells[1]);
    EXPECT_EQ(announced(0), header(g0.get()));
    EXPECT_EQ(announced(1), header(g1.get()));
    g0.reset();
    EXPECT_EQ(g0.get(), nullptr);
    auto g2 = op.protect(cells[2]);  // slot 0 again
    EXPECT_EQ(announced(0), header(g2.get()));
    {
        auto moved = std::move(g1);    // keeps slot 1; g1 holds nothing now
        EXPECT_EQ(g1.get(), nullptr);  // NOLINT(bugprone-use-after-move)
        EXPECT_EQ(announced(1), header(moved.get()));
    }
    auto g3 = op.protect(cells[3]);  // slot 1, given back by `moved`
    EXPECT_EQ(announced(1), header(g3.get()));
}

// A block takes the lowest run of adjacent free slots; its reader numbers
// them from 0; a guarded pointer taken meanwhile gets the next free slot,
// not one of the block's; the block's end gives its slots back.
TEST_F(hp_slots, a_block_takes_adjacent_free_slots_and_numbers_them_from_zero) {
    smr::op_guard op(domain, self);
    auto g0 = op.protect(cells[0]);  // slot 0
    {
        const auto block = smr::lend_slots<3>(op);  // slots 1 to 3
        const auto reader = block.reader(domain);
        hp_node* const first = reader.protect(reader.slot(0), cells[1]);
        hp_node* const last = reader.protect(reader.slot(2), cells[2]);
        EXPECT_EQ(announced(1), header(first));
        EXPECT_EQ(announced(3), header(last));
        EXPECT_EQ(reader.index(reader.slot(2)), 2);
        // A function the traversal runs in gets the same reader, and the
        // thread's slot number, from the view.
        const auto again = smr::reader_of(domain, block.lent());
        EXPECT_EQ(again.slot(1), reader.slot(1));
        EXPECT_EQ(smr::tid_of(block.lent()), self.tid());
        auto g4 = op.protect(cells[3]);  // slot 4: the block's are taken
        EXPECT_EQ(announced(4), header(g4.get()));
        EXPECT_EQ(announced(1), header(first)) << "the guarded pointer took a slot of the block";
    }
    auto g1 = op.protect(cells[4]);  // slot 1, given back by the block
    EXPECT_EQ(announced(1), header(g1.get()));
    EXPECT_EQ(announced(0), header(g0.get()));
}

TEST_F(hp_slots, a_slot_outside_the_block_stops_the_program) {
    auto name_a_fourth = [&] {
        smr::op_guard op(domain, self);
        const auto block = smr::lend_slots<3>(op);
        const auto reader = block.reader(domain);
        volatile int position = 3;  // not a constant: the check is the run-time one
        (void)reader.slot(position);
    };
    EXPECT_DEATH(name_a_fourth(), "slot position outside the block its guard lent");
}

TEST_F(hp_slots, a_block_larger_than_the_free_run_stops_the_program) {
    auto lend_too_many = [&] {
        smr::op_guard op(domain, self);
        const auto block = smr::lend_slots<smr::max_protect_slots - 1>(op);  // slots 0 to 6
        auto held = op.protect(cells[0]);                                    // slot 7
        held.reset();                                                        // 7 free again
        const auto second = smr::lend_slots<2>(op);  // needs two adjacent: none
    };
    EXPECT_DEATH(lend_too_many(), "fewer adjacent free protect slots than the block asks for");
}

TEST_F(hp_slots, more_pointers_than_slots_stop_the_program) {
    using held_type = smr::guarded<hp_node, smr::hp_domain>;
    auto hold_one_too_many = [&] {
        smr::op_guard op(domain, self);
        held_type held[smr::max_protect_slots + 1];
        for (int i = 0; i <= smr::max_protect_slots; ++i) held[i] = op.protect(cells[i]);
    };
    EXPECT_DEATH(hold_one_too_many(), "more guarded pointers alive than a thread's protect slots");
}

// ---- parents: smr::protect_in --------------------------------------------------

/// A scheme whose protect takes parents and records the last one, with the
/// slot it came through: what crystalline's helpers are handed.
struct parent_local {
    smr::core::limbo_bag retired;
    const void* parent = nullptr;
    int index = -1;
};

class parent_recording_domain : public smr::domain_base<parent_recording_domain, parent_local> {
  public:
    static constexpr smr::reclaimer_traits traits{
        .name = "parent_recording",
        .family = smr::reclaimer_family::reservation,
        .garbage_bounded = true,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = false,
        .protect_uses_slots = true,
        .nests = false,
        .protect_takes_parents = true,
    };

    using domain_base::domain_base;

    template <class T>
    T* on_protect(int tid, int index, const std::atomic<T*>& source) noexcept {
        return on_protect_in(tid, index, source, static_cast<const void*>(nullptr));
    }
    template <class T, class Parent>
    T* on_protect_in(int tid, int index, const std::atomic<T*>& source,
                     const Parent* parent) noexcept {
        local(tid).parent = parent;
        local(tid).index = index;
        return source.load(std::memory_order_acquire);
    }
    void on_end_op(int) noexcept {}
    template <class T>
    void on_retire(int tid, T* node) noexcept {
        count_retired(tid, node);
        local(tid).retired.push_back(node);
    }
    void hand_over_garbage(int tid) noexcept { orphans().give(local(tid).retired, 0); }
    void on_thread_exit(int) noexcept {}

    const parent_local& last(int tid) noexcept { return local(tid); }
};

// The parent reaches the scheme's protect from a guard, from a block's
// reader (its slot shifted to the block's) and from the thread's reader;
// a scheme without parents reads the same pointer through protect.
TEST(protect_in, hands_the_parent_to_a_scheme_that_takes_parents) {
    parent_recording_domain domain{smr::domain_config{}};
    auto self = smr::attach(domain);
    const int tid = smr::tid_of(self.lent());
    struct node : parent_recording_domain::node_base {
        std::atomic<node*> next{nullptr};
    } parent, child;
    parent.next.store(&child);
    {
        smr::op_guard op(domain, self);
        const auto held = op.protect_in(parent.next, &parent);
        EXPECT_EQ(held.get(), &child);
        EXPECT_EQ(domain.last(tid).parent, &parent);
        const auto block = smr::lend_slots<2>(op);
        const auto reader = block.reader(domain);
        EXPECT_EQ(smr::protect_in(reader, reader.slot(1), child.next, &child), nullptr);
        EXPECT_EQ(domain.last(tid).parent, &child);
        EXPECT_EQ(domain.last(tid).index, 2) << "the block starts after the guarded pointer's slot";
        EXPECT_EQ(smr::protect_in(domain.reader(self.lent()), 0, parent.next, &parent), &child);
        EXPECT_EQ(domain.last(tid).parent, &parent);
    }
    smr::debra_domain plain{smr::domain_config{}};
    auto plain_self = smr::attach(plain);
    smr::op_guard op(plain, plain_self);
    EXPECT_EQ(op.protect_in(parent.next, &parent).get(), &child);
}

}  // namespace
