// Publish-on-Ping (reclaim/publish_on_ping.hpp; hp_pop.hpp, he.hpp's
// he_pop): the ping waits for every pinged thread's publication, a handler
// publishes every domain its thread is registered with, a leaving thread
// ends the waits for it, the signal is refused where another scheme or
// handler owns it, and hp_pop's low-watermark wait frees without a signal. The stress, stall and
// protection tests every reservation scheme gets are test_reservation's.
//
// The deterministic tests hold a reader's ping back by blocking the signal
// on its thread: a reclaim must then wait (and free nothing the reader holds)
// until the reader lets the handler run.
#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>

#include "smr/reclaim/epoch_pop.hpp"
#include "smr/reclaim/he.hpp"
#include "smr/reclaim/hp_pop.hpp"
#include "smr/reclaim/nbr.hpp"

namespace {

using namespace std::chrono_literals;

/// A node that reports its destruction.
template <class Domain>
struct tracked final : Domain::node_base {
    explicit tracked(std::atomic<int>* destroyed = nullptr) : destroyed_(destroyed) {}
    ~tracked() {
        if (destroyed_ != nullptr) destroyed_->fetch_add(1, std::memory_order_relaxed);
    }
    std::atomic<int>* destroyed_;
};

smr::domain_config one_node_threshold() {
    smr::domain_config config;
    config.max_threads = 8;
    config.bag_threshold = 1;  // every retire pings and reclaims
    return config;
}

/// A node of `domain` that counts its destruction in `destroyed`.
template <class Domain>
tracked<Domain>* allocate_tracked(Domain& domain, std::atomic<int>& destroyed) {
    smr::context owner(domain);
    return domain.template allocate<tracked<Domain>>(owner, &destroyed);
}

/// Frees everything retired before the call, from a context of its own.
template <class Domain>
void barrier_of(Domain& domain) {
    smr::context self(domain);
    domain.barrier(self);
}

/// Sleeps until `step` holds `value` (acquire: what was done before it was set is visible).
void wait_for(const std::atomic<int>& step, int value) {
    while (step.load(std::memory_order_acquire) != value) std::this_thread::sleep_for(1ms);
}

/// Sleeps until `step` reaches `value` or beyond (acquire, as wait_for).
void wait_at_least(const std::atomic<int>& step, int value) {
    while (step.load(std::memory_order_acquire) < value) std::this_thread::sleep_for(1ms);
}

/// Whether `holds()` becomes true within 10 s (checked every millisecond).
template <class Condition>
bool eventually(Condition&& holds) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!holds() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(1ms);
    }
    return holds();
}

/// The ping_all tests' subscribers hold no reservations of a scheme.
void publish_nothing(smr::detail::ping_subscriber& /*subscriber*/) noexcept {}

/// One ping round of slot `self` over slots 0 to `limit` - 1 (at most 3),
/// waiting for the answers, as a scheme's reclaim runs it.
template <class SubscriberOf>
void ping_round(int self, int limit, int signo, SubscriberOf&& subscriber_of) {
    std::uint64_t seen[3] = {};
    smr::detail::ping_all(
        self, limit, signo, seen, subscriber_of, [](int) {}, true);
}

/// The schemes that publish on ping; each test below runs on every one.
template <class Domain>
class ping_test : public ::testing::Test {};
using pinging = ::testing::Types<smr::hp_pop_domain, smr::he_pop_domain, smr::epoch_pop_domain>;
struct scheme_names {
    template <class D>
    static std::string GetName(int) {
        return std::string(D::traits.name);
    }
};
TYPED_TEST_SUITE(ping_test, pinging, scheme_names);

/// Blocks (or unblocks) `signo` on the calling thread.
void set_blocked(int signo, bool blocked) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signo);
    ASSERT_EQ(pthread_sigmask(blocked ? SIG_BLOCK : SIG_UNBLOCK, &set, nullptr), 0);
}

// A reader protects a node and cannot take the ping yet: the reclaim that
// retires the node waits for it instead of reading a stale publication, and
// once the handler ran the node survives, published, until the reader's
// operation ends; the round's wait is its publication latency. Kills each
// scheme's mutants *_ping_skips_wait and *_reclaims_without_ping.
TYPED_TEST(ping_test, a_reclaim_waits_for_the_pinged_reader_and_keeps_its_node) {
    using tracked = tracked<TypeParam>;
    TypeParam domain(one_node_threshold());
    std::atomic<int> destroyed{0};
    std::atomic<tracked*> cell{allocate_tracked(domain, destroyed)};
    std::atomic<int> step{0};  // 1: the reader holds the node; 2: it may take the ping
    std::atomic<bool> reclaimed{false};
    std::thread reader([&] {
        smr::context self(domain);
        set_blocked(domain.signal(), true);
        domain.begin_op(self);
        tracked* held = domain.protect(self, 0, cell);
        step.store(1, std::memory_order_release);
        wait_for(step, 2);
        set_blocked(domain.signal(), false);  // the pending ping runs the handler here
        while (!reclaimed.load(std::memory_order_acquire)) std::this_thread::sleep_for(1ms);
        EXPECT_EQ(destroyed.load(), 0) << "the published hazard did not keep the node";
        EXPECT_EQ(held->destroyed_, &destroyed);
        domain.end_op(self);
    });
    wait_for(step, 1);
    std::thread writer([&] {
        smr::context self(domain);
        domain.begin_op(self);
        domain.retire(self, cell.exchange(nullptr));  // the high watermark: ping and reclaim
        domain.end_op(self);
        reclaimed.store(true, std::memory_order_release);
    });
    std::this_thread::sleep_for(100ms);
    EXPECT_FALSE(reclaimed.load(std::memory_order_acquire)) << "the reclaim did not wait";
    EXPECT_EQ(destroyed.load(), 0) << "freed under a reader whose handler had not run";
    step.store(2, std::memory_order_release);
    writer.join();
    reader.join();
    barrier_of(domain);
    EXPECT_EQ(destroyed.load(), 1);
    const smr::reclaimer_stats stats = domain.stats();
    EXPECT_GE(stats.signals, 1u);
    // The round that waited is the longest: at least most of the 100 ms the
    // reader held its ping back (less the writer's start). Kills
    // publish_latency_not_recorded.
    EXPECT_GE(stats.publish_latency.count(), 1u);
    EXPECT_GE(stats.publish_latency.max_ns(), std::uint64_t{50'000'000});
}

// A thread registered with two domains: a ping from either publishes both
// (the handler walks the thread's subscriptions), so a reclaim of the first
// domain neither waits forever nor misses the reader's reservation. The
// second domain is of the other scheme: one handler serves both.
TYPED_TEST(ping_test, a_ping_publishes_every_domain_of_the_thread) {
    using tracked = tracked<TypeParam>;
    using other = std::conditional_t<std::is_same_v<TypeParam, smr::hp_pop_domain>,
                                     smr::he_pop_domain, smr::hp_pop_domain>;
    TypeParam first(one_node_threshold());
    other second(one_node_threshold());
    std::atomic<int> destroyed{0};
    std::atomic<tracked*> cell{allocate_tracked(first, destroyed)};
    std::atomic<int> step{0};
    std::thread reader([&] {
        smr::context in_first(first);
        smr::context in_second(second);  // subscribed last: the head of the list
        first.begin_op(in_first);
        (void)first.protect(in_first, 3, cell);
        step.store(1, std::memory_order_release);
        wait_for(step, 2);
        first.end_op(in_first);
    });
    wait_for(step, 1);
    {
        smr::context self(first);
        first.begin_op(self);
        first.retire(self, cell.exchange(nullptr));
        first.end_op(self);
    }
    EXPECT_EQ(destroyed.load(), 0);
    step.store(2, std::memory_order_release);
    reader.join();
    barrier_of(first);
    EXPECT_EQ(destroyed.load(), 1);
}

// A reclaim waiting for a thread that leaves stops waiting: the leaving
// thread publishes its cleared reservations, and its node is freed.
TYPED_TEST(ping_test, a_leaving_thread_ends_the_wait_for_it) {
    using tracked = tracked<TypeParam>;
    TypeParam domain(one_node_threshold());
    std::atomic<int> destroyed{0};
    std::atomic<tracked*> cell{allocate_tracked(domain, destroyed)};
    std::atomic<int> step{0};
    std::thread reader([&] {
        smr::context self(domain);           // registering unblocks the signal: block it after
        set_blocked(domain.signal(), true);  // never takes the ping
        domain.begin_op(self);
        (void)domain.protect(self, 0, cell);
        step.store(1, std::memory_order_release);
        wait_for(step, 2);
        domain.end_op(self);
    });  // leaves with the signal blocked (a pending one dies with the thread)
    wait_for(step, 1);
    std::thread writer([&] {
        smr::context self(domain);
        domain.begin_op(self);
        domain.retire(self, cell.exchange(nullptr));
        domain.end_op(self);
    });
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(destroyed.load(), 0);
    step.store(2, std::memory_order_release);
    reader.join();
    writer.join();  // would hang if the wait outlived the reader
    barrier_of(domain);
    EXPECT_EQ(destroyed.load(), 1);
}

// A pinger answers pings while it waits (publish_on_ping.hpp, "Waiting"):
// thread b, its signal blocked, waits in its round for thread c, which
// publishes only when told; meanwhile b's publication count moves, and a
// round of the main thread that pings b returns although b's handler never
// runs. Without it, two threads that ping each other while their signals
// are deferred (ThreadSanitizer defers a signal while the thread spins)
// wait for each other forever. Kills ping_wait_answers_no_ping.
TEST(ping_all, a_waiting_pinger_answers_pings_itself) {
    using smr::detail::ping_subscriber;
    const smr::hp_pop_domain domain(one_node_threshold());  // installs the handler
    const int signo = domain.signal();
    ping_subscriber main_slot, b, c;  // slots 0, 1 and 2
    const auto slot = [&](int i) -> ping_subscriber& {
        return i == 0 ? main_slot : (i == 1 ? b : c);
    };
    smr::detail::subscribe(main_slot, signo, publish_nothing);
    smr::detail::go_offline(main_slot);  // b's round pings c alone
    std::atomic<int> step{0};  // 1: c subscribed; 2: b pings; 3: c may answer; 4: b's round ended
    std::thread c_thread([&] {
        smr::detail::subscribe(c, signo, publish_nothing);
        set_blocked(signo, true);
        step.store(1, std::memory_order_release);
        wait_at_least(step, 3);
        smr::detail::publish_reservations(c);  // the owner answers b's ping
        wait_at_least(step, 4);
        smr::detail::unsubscribe(c);  // a pending signal dies with the thread
    });
    wait_at_least(step, 1);
    std::thread b_thread([&] {
        smr::detail::subscribe(b, signo, publish_nothing);
        set_blocked(signo, true);
        step.store(2, std::memory_order_release);
        ping_round(1, 3, signo, slot);
        step.store(4, std::memory_order_release);
        smr::detail::unsubscribe(b);
    });
    wait_at_least(step, 2);
    if (!eventually([&b] { return b.publications.load() != 0; })) {
        ADD_FAILURE() << "a thread waiting in its round did not publish its own reservations";
    } else {
        ping_round(0, 2, signo, slot);  // waits for b
        EXPECT_EQ(step.load(), 2) << "b's round ended before c answered";
    }
    step.store(3, std::memory_order_release);
    b_thread.join();
    c_thread.join();
    smr::detail::unsubscribe(main_slot);
}

// A pinged thread that goes offline ends the wait for it, although its
// handler has not run (publish_on_ping.hpp, "Waiting"): a barrier waiting
// for a thread queued behind it on its mutex (offline there) would wait
// forever where the handler cannot run on a thread blocked in a lock (under
// ThreadSanitizer). The subscriber only sets `offline`, without go_offline's
// publication, so that nothing but the flag ends the wait. Kills
// ping_waits_for_offline_threads.
TEST(ping_all, a_pinged_thread_that_goes_offline_ends_the_wait) {
    using smr::detail::ping_subscriber;
    const smr::hp_pop_domain domain(one_node_threshold());  // installs the handler
    const int signo = domain.signal();
    ping_subscriber pinger, pinged;  // slots 0 and 1
    const auto slot = [&](int i) -> ping_subscriber& { return i == 0 ? pinger : pinged; };
    std::atomic<int> step{0};  // 1: pinged subscribed; 2: the round ended; 3: pinged may leave
    std::thread pinged_thread([&] {
        smr::detail::subscribe(pinged, signo, publish_nothing);
        set_blocked(signo, true);
        step.store(1, std::memory_order_release);
        wait_at_least(step, 3);
        smr::detail::unsubscribe(pinged);  // a pending signal dies with the thread
    });
    wait_at_least(step, 1);
    std::thread pinger_thread([&] {
        smr::detail::subscribe(pinger, signo, publish_nothing);
        ping_round(0, 2, signo, slot);
        step.store(2, std::memory_order_release);
        smr::detail::unsubscribe(pinger);
    });
    std::this_thread::sleep_for(20ms);
    EXPECT_EQ(step.load(), 1) << "the round did not wait for the pinged thread";
    pinged.offline.store(true, std::memory_order_seq_cst);
    EXPECT_TRUE(eventually([&step] { return step.load() >= 2; }))
        << "the round waited for a thread that went offline";
    step.store(3, std::memory_order_release);  // its unsubscribe publishes: the round ends anyway
    pinger_thread.join();
    pinged_thread.join();
}

// The signal: refused where it would stop the process, and where NBR's
// handler owns it in this process.
TYPED_TEST(ping_test, its_signal_is_refused_where_another_owns_it) {
    smr::domain_config config;
    config.pop_signal = SIGQUIT;
    EXPECT_THROW(TypeParam{config}, std::invalid_argument);
    config.pop_signal = SIGRTMIN + 9;
    config.nbr_signal = SIGRTMIN + 9;
    const smr::nbr_domain nbr(config);  // takes the number first
    try {
        TypeParam pop(config);
        ADD_FAILURE() << TypeParam::traits.name << " took NBR's signal";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("another reclaimer's; choose another with pop_signal"),
                  std::string::npos)
            << e.what();
    }
}

// NBR+'s low-watermark wait: a thread past the low watermark frees its
// bookmarked nodes once another thread's round covers them, sending no
// signal itself. One OS thread, two contexts: a ping to the other context
// runs the handler on this very thread.
TEST(hp_pop, past_the_low_watermark_a_thread_frees_after_another_threads_round) {
    smr::domain_config config;
    config.max_threads = 4;
    config.bag_threshold = 8;  // high 8, low 4
    smr::hp_pop_domain domain(config);
    smr::context watcher(domain);
    smr::context signaller(domain);
    auto retire_one = [&](smr::context<smr::hp_pop_domain>& self) {
        domain.begin_op(self);
        domain.retire(self, domain.allocate<tracked<smr::hp_pop_domain>>(self));
        domain.end_op(self);
    };
    for (int i = 0; i < 6; ++i) retire_one(watcher);  // past the low watermark: bookmarks
    const std::uint64_t signals_before = domain.stats().signals;
    for (int i = 0; i < 9; ++i) retire_one(signaller);  // reaches the high one: a round
    EXPECT_EQ(domain.stats().signals, signals_before + 1) << "one round, one other thread";
    EXPECT_EQ(domain.retired_count(watcher.tid()), 6u);
    retire_one(watcher);  // sees the round: frees its bookmark
    EXPECT_EQ(domain.stats().signals, signals_before + 1) << "the watcher sent none";
    EXPECT_LT(domain.retired_count(watcher.tid()), 6u);
}

}  // namespace
