// The linearizability checker (tests/lincheck) on hand-written histories,
// linearizable and not, and the recorder on a set that is correct and on
// ones that answer wrongly while staying consistent.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "lincheck/check.hpp"
#include "lincheck/recorder.hpp"

namespace {

using smr::lincheck::check_queue;
using smr::lincheck::check_set;
using smr::lincheck::empty_queue;
using smr::lincheck::history;
using smr::lincheck::op_kind;
using smr::lincheck::operation;
using smr::lincheck::verdict;

constexpr std::uint64_t never = operation::pending;

operation op(std::uint32_t thread, op_kind kind, std::uint64_t arg, std::uint64_t result,
             std::uint64_t call, std::uint64_t ret) {
    operation o;
    o.thread = thread;
    o.kind = kind;
    o.arg = arg;
    o.result = result;
    o.call = call;
    o.ret = ret;
    return o;
}
operation insert(std::uint32_t t, std::uint64_t key, bool ok, std::uint64_t c, std::uint64_t r) {
    return op(t, op_kind::insert, key, ok, c, r);
}
operation remove(std::uint32_t t, std::uint64_t key, bool ok, std::uint64_t c, std::uint64_t r) {
    return op(t, op_kind::remove, key, ok, c, r);
}
operation contains(std::uint32_t t, std::uint64_t key, bool ok, std::uint64_t c, std::uint64_t r) {
    return op(t, op_kind::contains, key, ok, c, r);
}
operation enqueue(std::uint32_t t, std::uint64_t value, std::uint64_t c, std::uint64_t r) {
    return op(t, op_kind::enqueue, value, 0, c, r);
}
operation dequeue(std::uint32_t t, std::uint64_t value, std::uint64_t c, std::uint64_t r) {
    return op(t, op_kind::dequeue, 0, value, c, r);
}

TEST(lincheck_set, a_sequential_history_that_follows_the_specification_is_linearizable) {
    const history h = {insert(0, 1, true, 1, 2),     insert(0, 1, false, 3, 4),
                       contains(0, 1, true, 5, 6),   remove(0, 1, true, 7, 8),
                       contains(0, 1, false, 9, 10), remove(0, 1, false, 11, 12)};
    EXPECT_TRUE(check_set(h).ok()) << check_set(h).text();
}

TEST(lincheck_set, overlapping_operations_may_take_effect_in_either_order) {
    // contains overlaps the insert: it may answer either way.
    for (bool seen : {false, true}) {
        const history h = {insert(0, 7, true, 1, 10), contains(1, 7, seen, 2, 3)};
        EXPECT_TRUE(check_set(h).ok()) << check_set(h).text();
    }
    // Two inserts overlap: exactly one succeeds, whichever.
    const history h = {insert(0, 7, false, 1, 10), insert(1, 7, true, 2, 5)};
    EXPECT_TRUE(check_set(h).ok());
}

TEST(lincheck_set, a_read_of_a_value_removed_before_it_began_is_caught) {
    // The classic stale read: 5 is removed (and the remove returned) before
    // contains(5) is invoked, nothing inserts it again, and contains says yes.
    const history h = {insert(1, 9, true, 1, 2), remove(0, 5, true, 3, 4),
                       contains(1, 5, true, 5, 6)};
    const auto r = check_set(h, {5});
    ASSERT_EQ(r.answer, verdict::not_linearizable);
    // The window starts after the remove, from the state it left: one operation.
    ASSERT_EQ(r.window.size(), 1u) << r.text();
    EXPECT_EQ(r.window[0].kind, op_kind::contains);
    EXPECT_NE(r.where.find("key 5 (absent"), std::string::npos) << r.where;
}

TEST(lincheck_set, a_remove_that_reports_failure_but_removed_is_caught) {
    const history h = {remove(0, 3, false, 1, 2), contains(1, 3, false, 3, 4)};
    EXPECT_TRUE(check_set(h, {}).ok());  // absent at the start: consistent
    EXPECT_EQ(check_set(h, {3}).answer, verdict::not_linearizable);
}

TEST(lincheck_set, two_successful_inserts_need_a_remove_between_them) {
    const history bad = {insert(0, 2, true, 1, 4), insert(1, 2, true, 2, 3)};
    EXPECT_EQ(check_set(bad).answer, verdict::not_linearizable);
    const history good = {insert(0, 2, true, 1, 4), remove(2, 2, true, 1, 5),
                          insert(1, 2, true, 2, 3)};
    EXPECT_TRUE(check_set(good).ok()) << check_set(good).text();
}

TEST(lincheck_set, keys_are_checked_separately_and_the_failing_one_is_named) {
    history h;
    for (std::uint64_t k = 0; k < 4; ++k) h.push_back(insert(0, k, true, 10 * k + 1, 10 * k + 2));
    h.push_back(contains(1, 2, false, 50, 51));  // 2 was inserted at [21, 22]
    const auto r = check_set(h);
    ASSERT_EQ(r.answer, verdict::not_linearizable);
    EXPECT_NE(r.where.find("key 2 "), std::string::npos) << r.where;
    EXPECT_EQ(r.window.size(), 1u) << r.text();
}

TEST(lincheck_set, a_pending_operation_may_have_taken_effect_or_not) {
    const history h = {insert(0, 4, false, 1, never), contains(1, 4, true, 2, 3),
                       contains(1, 4, false, 4, 5)};
    // Took effect between the two contains? No: an insert cannot undo itself.
    EXPECT_EQ(check_set(h).answer, verdict::not_linearizable);
    const history g = {insert(0, 4, false, 1, never), contains(1, 4, false, 2, 3),
                       contains(1, 4, true, 4, 5)};
    EXPECT_TRUE(check_set(g).ok()) << check_set(g).text();
    const history n = {insert(0, 4, false, 1, never), contains(1, 4, false, 2, 3)};
    EXPECT_TRUE(check_set(n).ok()) << "a pending operation need not take effect";
}

TEST(lincheck_set, a_late_error_in_a_long_history_is_reported_as_a_short_window) {
    // Eight threads' worth of overlapping, correct operations on key 1 (pairs
    // of an insert and a remove that overlap their neighbours), then a
    // contains that misses a key inserted before it began.
    history h;
    std::uint64_t t = 1;
    for (int round = 0; round < 400; ++round) {
        h.push_back(insert(0, 1, true, t, t + 3));
        h.push_back(contains(1, 1, true, t + 2, t + 5));  // overlaps the insert's end
        h.push_back(remove(2, 1, true, t + 4, t + 7));
        h.push_back(contains(3, 1, false, t + 6, t + 9));
        t += 10;
    }
    ASSERT_TRUE(check_set(h).ok()) << check_set(h).text();
    h.push_back(insert(0, 1, true, t, t + 1));
    h.push_back(contains(1, 1, false, t + 2, t + 3));
    h.push_back(remove(2, 1, true, t + 4, t + 5));
    const auto r = check_set(h);
    ASSERT_EQ(r.answer, verdict::not_linearizable);
    EXPECT_EQ(r.window.size(), 1u) << r.text();
    EXPECT_NE(r.where.find("present at the window's start"), std::string::npos) << r.where;
    // Checked up to the failing segment: all but the remove after it.
    EXPECT_EQ(r.checked, h.size() - 1);
}

TEST(lincheck_set, a_long_history_is_checked_a_segment_at_a_time) {
    // 200,000 operations on one key in overlapping pairs: the memo of one
    // search over all of them would hold a bit per operation per
    // configuration; between pairs nothing is in flight, so each pair is
    // checked alone from the state the one before left.
    history h;
    std::uint64_t t = 1;
    for (int pair = 0; pair < 100'000; ++pair, t += 10) {
        h.push_back(insert(0, 1, true, t, t + 3));
        h.push_back(remove(1, 1, true, t + 1, t + 4));
    }
    const auto r = check_set(h, {}, 1'000'000);
    EXPECT_TRUE(r.ok()) << r.text().substr(0, 300);
    EXPECT_EQ(r.checked, h.size());
    EXPECT_LT(r.configurations, 1'000'000u);
}

TEST(lincheck_set, a_search_that_exceeds_its_budget_says_it_gave_up) {
    // Many mutually overlapping contains answering both ways around one
    // overlapping insert/remove pair: many configurations, all valid.
    history h = {insert(0, 1, true, 1, 1000), remove(1, 1, true, 2, 1001)};
    for (std::uint32_t i = 0; i < 12; ++i) h.push_back(contains(2 + i, 1, i % 2, 3 + i, 900 + i));
    EXPECT_TRUE(check_set(h).ok());
    const auto r = check_set(h, {}, 10);
    EXPECT_EQ(r.answer, verdict::too_hard);
    EXPECT_NE(r.text().find("gave up"), std::string::npos);
}

TEST(lincheck_queue, concurrent_enqueues_may_be_dequeued_in_either_order) {
    const history h = {enqueue(0, 1, 1, 4), enqueue(1, 2, 2, 3), dequeue(2, 2, 5, 6),
                       dequeue(2, 1, 7, 8), dequeue(2, empty_queue, 9, 10)};
    EXPECT_TRUE(check_queue(h).ok()) << check_queue(h).text();
}

TEST(lincheck_queue, a_queue_that_reorders_is_caught) {
    const history h = {enqueue(0, 1, 1, 2), enqueue(0, 2, 3, 4), dequeue(1, 2, 5, 6),
                       dequeue(1, 1, 7, 8)};
    const auto r = check_queue(h);
    ASSERT_EQ(r.answer, verdict::not_linearizable);
    // The prefix ending at the first dequeue already fails.
    EXPECT_EQ(r.window.size(), 3u) << r.text();
}

TEST(lincheck_queue, one_item_handed_to_two_consumers_is_caught) {
    const history h = {enqueue(0, 7, 1, 2), dequeue(1, 7, 3, 6), dequeue(2, 7, 4, 5)};
    EXPECT_EQ(check_queue(h).answer, verdict::not_linearizable);
}

TEST(lincheck_queue, an_empty_answer_while_an_item_was_surely_queued_is_caught) {
    const history h = {enqueue(0, 7, 1, 2), dequeue(1, empty_queue, 3, 4), dequeue(1, 7, 5, 6)};
    EXPECT_EQ(check_queue(h).answer, verdict::not_linearizable);
    const history g = {enqueue(0, 7, 1, 4), dequeue(1, empty_queue, 2, 3), dequeue(1, 7, 5, 6)};
    EXPECT_TRUE(check_queue(g).ok()) << "the enqueue had not returned: empty is allowed";
}

TEST(lincheck_queue, the_initial_contents_count) {
    const history h = {dequeue(0, 5, 1, 2), dequeue(0, 6, 3, 4)};
    EXPECT_TRUE(check_queue(h, {5, 6}).ok());
    EXPECT_EQ(check_queue(h, {6, 5}).answer, verdict::not_linearizable);
}

TEST(lincheck_queue, an_enqueue_preempted_across_a_long_history_does_not_blow_up_the_search) {
    // One enqueue spans 1000 rounds of another thread's enqueue-dequeue
    // pairs and its value is dequeued at the end. Every position in between
    // is a candidate; looking ahead at the dequeues refutes each at once.
    history h = {enqueue(0, 1'000'000, 1, 5'000)};
    std::uint64_t t = 2;
    for (std::uint64_t v = 1; v <= 1'000; ++v, t += 4) {
        h.push_back(enqueue(1, v, t, t + 1));
        h.push_back(dequeue(1, v, t + 2, t + 3));
    }
    h.push_back(dequeue(1, 1'000'000, 5'001, 5'002));
    const auto r = check_queue(h, {}, 50'000);
    EXPECT_TRUE(r.ok()) << r.text().substr(0, 200);
    // And the same history with the late value dequeued too early.
    h[1 + 2 * 500 + 1].result = 1'000'000;  // a dequeue in the middle takes it...
    EXPECT_EQ(check_queue(h, {}, 50'000).answer, verdict::not_linearizable);
}

/// A set under one mutex: linearizable by construction. `lie` makes remove
/// report failure on every 50th success while removing anyway, and say so.
class locked_set {
  public:
    explicit locked_set(bool lie = false) : lie_(lie) {}
    bool insert(std::uint64_t k) {
        std::lock_guard lock(mutex_);
        return keys_.insert(k).second;
    }
    bool remove(std::uint64_t k, bool& lied) {
        std::lock_guard lock(mutex_);
        const bool removed = keys_.erase(k) != 0;
        lied = removed && lie_ && ++removals_ % 50 == 0;
        return removed && !lied;
    }
    bool contains(std::uint64_t k) {
        std::lock_guard lock(mutex_);
        return keys_.count(k) != 0;
    }

  private:
    std::mutex mutex_;
    std::set<std::uint64_t> keys_;
    bool lie_;
    std::uint64_t removals_ = 0;
};

struct recorded {
    history h;
    std::vector<std::size_t> lies;  // indexes in h of the removes that lied
};

recorded record_threads(locked_set& set, int threads, std::size_t per_thread) {
    smr::lincheck::recorder rec(threads, per_thread);
    std::vector<std::vector<std::size_t>> lies(static_cast<std::size_t>(threads));
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            std::uint64_t x = 0x9e3779b97f4a7c15u * static_cast<std::uint64_t>(t + 1);
            // merged() concatenates the logs in thread order, each full.
            for (std::size_t index = static_cast<std::size_t>(t) * per_thread;; ++index) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                const std::uint64_t key = x % 4;
                const bool more = [&] {
                    switch ((x >> 8) % 3) {
                        case 0:
                            return rec.record(t, op_kind::insert, key,
                                              [&] { return set.insert(key); });
                        case 1:
                            return rec.record(t, op_kind::remove, key, [&] {
                                bool lied = false;
                                const bool answer = set.remove(key, lied);
                                if (lied) lies[static_cast<std::size_t>(t)].push_back(index);
                                return answer;
                            });
                        default:
                            return rec.record(t, op_kind::contains, key,
                                              [&] { return set.contains(key); });
                    }
                }();
                if (!more) return;
            }
        });
    }
    for (auto& w : workers) w.join();
    EXPECT_EQ(rec.size(), static_cast<std::size_t>(threads) * per_thread) << "bounded logs";
    recorded out{rec.merged(), {}};
    for (const auto& mine : lies) out.lies.insert(out.lies.end(), mine.begin(), mine.end());
    return out;
}

TEST(lincheck_recorder, a_locked_set_driven_by_more_threads_than_cores_is_linearizable) {
    locked_set set;
    const history h = record_threads(set, 4, 5'000).h;
    const auto r = check_set(h);
    EXPECT_TRUE(r.ok()) << r.text();
    EXPECT_EQ(r.checked, h.size());
}

TEST(lincheck_recorder, a_set_that_lies_about_a_remove_is_caught_and_only_the_lies_are_blamed) {
    locked_set set(/*lie=*/true);
    recorded run = record_threads(set, 4, 5'000);
    ASSERT_FALSE(run.lies.empty());
    const auto r = check_set(run.h);
    ASSERT_EQ(r.answer, verdict::not_linearizable);
    // The window is evidence, not necessarily the lie itself: the operations
    // before its start are linearizable and leave its start state whatever
    // their order, so the lie may be before it. Ends where the history first
    // fails, starts at the latest point with no update in flight from which
    // it still fails: short unless a thread was preempted inside an update.
    EXPECT_LT(r.window.size(), run.h.size() / 4) << r.text();
    // With the lies' answers corrected the history is linearizable.
    for (std::size_t i : run.lies) {
        ASSERT_EQ(run.h[i].kind, op_kind::remove);
        ASSERT_EQ(run.h[i].result, 0u);
        run.h[i].result = 1;
    }
    const auto fixed = check_set(run.h);
    EXPECT_TRUE(fixed.ok()) << fixed.text();
}

TEST(lincheck_recorder, ticks_bracket_each_operation_and_are_unique) {
    locked_set set;
    const history h = record_threads(set, 3, 1'000).h;
    std::set<std::uint64_t> ticks;
    for (const operation& o : h) {
        EXPECT_LT(o.call, o.ret);
        ticks.insert(o.call);
        ticks.insert(o.ret);
    }
    EXPECT_EQ(ticks.size(), 2 * h.size());
}

}  // namespace
