// Crystalline-W's requests, step by step (reclaim/crystalline_w.hpp): one
// OS thread and three contexts, a requester, a helper and a writer, driven
// through the request's steps in the interleavings that need each
// mechanism. The stress, stall, barrier, thread-exit and linearizability
// runs every reclaimer gets are test_reservation's, test_barrier's,
// test_thread_exit's and test_lincheck_runs'.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>

#include "smr/reclaim/context.hpp"
#include "smr/reclaim/crystalline_w.hpp"
#include "smr/reclaim/guards.hpp"

namespace smr::testing {

/// The domain's request steps, for these tests only.
struct crystalline_access {
    using domain = crystalline_domain;
    using job = domain::help_job;
    using pair_value = core::word_pair_value;

    template <class T>
    static std::uint64_t publish(domain& d, int tid, int s, const std::atomic<T*>& source,
                                 const crystalline_header* parent) {
        return d.publish_request(tid, s, source, parent);
    }
    static bool answer_own(domain& d, int tid, int s, std::uint64_t tag) {
        return domain::answer_own(d.local(tid), s, tag, d.global_era());
    }
    static std::uint64_t take_answer(domain& d, int tid, int s, std::uint64_t tag) {
        return domain::take_answer(d.local(tid), s, tag);
    }
    static void end_request(domain& d, int tid, const crystalline_header* parent) {
        d.end_request(tid, parent);
    }
    static job begin_help(domain& d, int tid, int other, int s) {
        return d.begin_help(tid, other, s);
    }
    static pair_value help_read(domain& d, int tid, const job& j) {
        return d.help_read(tid, j, d.global_era());
    }
    static void answer(domain& d, int tid, int other, int s, const job& j, pair_value read) {
        d.answer(tid, other, s, j, read);
    }
    /// The helper's answer alone, without moving the requester's slot.
    static bool answer_only(domain& d, int other, int s, const job& j, pair_value read) {
        return core::dcas(d.local(other).requests[s].result, j.last, read);
    }
    static void finish(domain& d, int tid, int other, int s, const job& j, pair_value read) {
        d.finish(tid, d.local(other), s, j.last.second, read.first, read.second, j.batch_of);
    }
    static void end_help(domain& d, int tid, const job& j) { d.end_help(tid, j); }
    /// Seals the thread's open batch now, whatever its size.
    static void seal_open(domain& d, int tid) {
        d.seal(tid, d.local(tid).open);
        d.local(tid).open = nullptr;
    }
};

}  // namespace smr::testing

namespace {

using access = smr::testing::crystalline_access;
using domain_type = smr::crystalline_domain;

struct node final : domain_type::node_base {
    explicit node(bool* destroyed) : destroyed_(destroyed) {}
    ~node() { *destroyed_ = true; }
    std::atomic<node*> next{nullptr};
    bool* destroyed_;
};

/// attempts 0: every era change asks for help.
smr::domain_config config(std::uint32_t attempts) {
    smr::domain_config c;
    c.max_threads = 4;
    c.bag_threshold = 1;
    c.epoch_freq = 1;
    c.wfe_fast_attempts = attempts;
    return c;
}

struct scene {
    explicit scene(std::uint32_t attempts = 0) : domain(config(attempts)) {}

    domain_type domain;
    smr::context<domain_type> requester{domain};
    smr::context<domain_type> helper{domain};
    smr::context<domain_type> writer{domain};
    int r = smr::tid_of(requester.lent());
    int h = smr::tid_of(helper.lent());
    int w = smr::tid_of(writer.lent());

    node* make(bool* destroyed) { return make_by(writer, destroyed); }
    node* make_by(smr::context<domain_type>& self, bool* destroyed) {
        return domain.template allocate<node>(self, destroyed);
    }
    /// Retires `n` as if unlinked after the requester's and helper's reads
    /// began, and seals the writer's batch at once.
    void retire_and_seal(node* n) {
        domain.retire(writer.lent(), n);
        access::seal_open(domain, w);
    }
};

// The helper reads n, the writer retires and seals n's batch while only the
// helper's read slot holds it, and the helper answers: the reference it puts
// in the requester's slot keeps n after the helper leaves, until the
// requester releases the slot. Without it (the mutant
// crystalline_answer_holds_no_reference) n dies with the helper's read slot.
TEST(crystalline_w, an_answer_retired_before_it_is_installed_is_held_by_a_reference) {
    scene s;
    bool destroyed = false;
    std::atomic<node*> source{s.make(&destroyed)};
    {
        smr::op_guard op(s.domain, s.requester);
        const std::uint64_t tag = access::publish(s.domain, s.r, 0, source, nullptr);
        const auto job = access::begin_help(s.domain, s.h, s.r, 0);
        ASSERT_TRUE(job.pending);
        const auto read = access::help_read(s.domain, s.h, job);
        ASSERT_EQ(read.first, reinterpret_cast<std::uintptr_t>(source.load()));
        s.retire_and_seal(source.load());
        access::answer(s.domain, s.h, s.r, 0, job, read);
        access::end_help(s.domain, s.h, job);
        EXPECT_FALSE(destroyed) << "freed while the requester holds the answer";
        EXPECT_EQ(access::take_answer(s.domain, s.r, 0, tag), read.first);
        access::end_request(s.domain, s.r, nullptr);
        EXPECT_FALSE(destroyed);
        EXPECT_EQ(s.domain.helped(), 1u);
    }
    EXPECT_TRUE(destroyed) << "never freed after the requester let go";
}

// An answer not retired when installed: the requester's slot, its tags even
// and its era the answer's, takes the batch when the writer seals it later.
TEST(crystalline_w, an_answer_retired_after_it_is_installed_reaches_the_slot) {
    scene s;
    bool destroyed = false;
    std::atomic<node*> source{s.make(&destroyed)};
    {
        smr::op_guard op(s.domain, s.requester);
        const std::uint64_t tag = access::publish(s.domain, s.r, 0, source, nullptr);
        const auto job = access::begin_help(s.domain, s.h, s.r, 0);
        const auto read = access::help_read(s.domain, s.h, job);
        access::answer(s.domain, s.h, s.r, 0, job, read);
        access::end_help(s.domain, s.h, job);
        access::take_answer(s.domain, s.r, 0, tag);
        access::end_request(s.domain, s.r, nullptr);
        s.retire_and_seal(source.load());
        EXPECT_FALSE(destroyed) << "the sealed batch skipped the requester's slot";
    }
    EXPECT_TRUE(destroyed);
}

// The requester holds parent p in slot 1 and asks for p->next in slot 0; p
// is retired and sealed (reaching only the requester's slot 1) before a
// helper holds it, the requester answers itself, hands off and ends its
// operation while the helper is still inside its help: the helper's handed
// reference keeps p until it ends. Without the hand-off (the mutant
// crystalline_no_parent_hand_off) p dies while the helper may read in it.
TEST(crystalline_w, a_helper_inside_a_retired_parent_gets_a_reference) {
    scene s;
    bool parent_destroyed = false;
    bool child_destroyed = false;
    node* parent = s.make(&parent_destroyed);
    node* child = s.make(&child_destroyed);
    parent->next.store(child);
    std::atomic<node*> root{parent};
    access::job job;
    {
        smr::op_guard op(s.domain, s.requester);
        auto reader = s.domain.reader(s.requester.lent());
        ASSERT_EQ(reader.protect(1, root), parent);
        s.retire_and_seal(parent);
        const std::uint64_t tag = access::publish(s.domain, s.r, 0, parent->next, parent);
        job = access::begin_help(s.domain, s.h, s.r, 0);
        ASSERT_TRUE(job.pending);
        ASSERT_TRUE(access::answer_own(s.domain, s.r, 0, tag));
        access::end_request(s.domain, s.r, parent);
    }
    EXPECT_FALSE(parent_destroyed) << "freed under a helper reading in it";
    access::end_help(s.domain, s.h, job);
    EXPECT_TRUE(parent_destroyed) << "the helper's reference was never dropped";
    s.domain.free_unshared(child);
}

// A helper that answered, but moves the requester's slot only after the
// requester took the answer and protected another node m with the slot
// (on the fast path: wfe_fast_attempts > 0): that protect closed the
// request, so the late move does nothing, and m's batch stays in the slot.
// Were the tags left as they were (the mutant crystalline_close_leaves_tags),
// the late move would drop m's batch from the slot while the requester
// holds m.
TEST(crystalline_w, a_late_helper_cannot_move_a_closed_slot) {
    scene s(16);
    bool first_destroyed = false;
    bool second_destroyed = false;
    std::atomic<node*> source{s.make(&first_destroyed)};
    node* second = s.make(&second_destroyed);
    {
        smr::op_guard op(s.domain, s.requester);
        const std::uint64_t tag = access::publish(s.domain, s.r, 0, source, nullptr);
        const auto job = access::begin_help(s.domain, s.h, s.r, 0);
        const auto read = access::help_read(s.domain, s.h, job);
        ASSERT_TRUE(access::answer_only(s.domain, s.r, 0, job, read));
        access::take_answer(s.domain, s.r, 0, tag);
        access::end_request(s.domain, s.r, nullptr);
        // The requester moves slot 0 on to `second` at a new era.
        std::atomic<node*> other{second};
        auto reader = s.domain.reader(s.requester.lent());
        ASSERT_EQ(reader.protect(0, other), second);
        EXPECT_EQ(s.domain.slow_paths(), 1u) << "the fast path";
        s.retire_and_seal(second);
        access::finish(s.domain, s.h, s.r, 0, job, read);
        access::end_help(s.domain, s.h, job);
        EXPECT_FALSE(second_destroyed) << "a late helper dropped the slot's batches";
    }
    EXPECT_TRUE(second_destroyed);
    s.domain.free_unshared(source.load());
}

// A thread about to move the era answers the pending request first: what
// bounds a requester's wait. Were the era moved without helping (the mutant
// crystalline_era_moves_without_helping), the request would stay pending.
TEST(crystalline_w, moving_the_era_answers_pending_requests_first) {
    scene s;
    bool destroyed = false;
    bool discarded = false;
    std::atomic<node*> source{s.make(&destroyed)};
    {
        smr::op_guard op(s.domain, s.requester);
        const std::uint64_t tag = access::publish(s.domain, s.r, 0, source, nullptr);
        const std::uint64_t era = s.domain.global_era();
        while (s.domain.global_era() == era)
            s.domain.discard(s.helper, s.make_by(s.helper, &discarded));
        EXPECT_EQ(s.domain.helped(), 1u);
        EXPECT_EQ(access::take_answer(s.domain, s.r, 0, tag),
                  reinterpret_cast<std::uintptr_t>(source.load()));
        access::end_request(s.domain, s.r, nullptr);
    }
    s.domain.free_unshared(source.load());
}

// wfe_fast_attempts = 0: a protect at a new era goes straight to the slow
// path, where the requester's own read answers (no helper runs here), and
// the slot then holds what the protect returned like any other.
TEST(crystalline_w, a_request_nobody_helps_answers_itself) {
    scene s;
    bool destroyed = false;
    std::atomic<node*> source{s.make(&destroyed)};
    {
        smr::op_guard op(s.domain, s.requester);
        auto reader = s.domain.reader(s.requester.lent());
        ASSERT_EQ(reader.protect(0, source), source.load());
        EXPECT_EQ(s.domain.slow_paths(), 1u);
        EXPECT_EQ(s.domain.helped(), 0u);
        s.retire_and_seal(source.load());
        EXPECT_FALSE(destroyed);
    }
    EXPECT_TRUE(destroyed);
}

}  // namespace
