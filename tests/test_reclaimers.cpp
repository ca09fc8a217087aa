// Stress and behaviour tests over every reclaimer in smr::measured_domains.
//
// The workers share a small array of cells, each holding a published node.
// Every operation reads a cell, dereferences the node, replaces it with a fresh
// node, retires the old one and reads the first node again before it ends, so
// a node freed too early is a heap-use-after-free under AddressSanitizer and a
// data race under ThreadSanitizer, and its canary is checked in any build.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "one_thread_scenarios.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/reclaim/measured.hpp"

namespace {

using namespace std::chrono_literals;

// ---- test parameters: domain x free mode ----------------------------------

template <class Domain, smr::free_mode Mode>
struct setup {
    using domain = Domain;
    static constexpr smr::free_mode mode = Mode;
};

template <class Tuple, smr::free_mode Mode>
struct with_mode;
template <class... Ds, smr::free_mode Mode>
struct with_mode<std::tuple<Ds...>, Mode> {
    using type = std::tuple<setup<Ds, Mode>...>;
};

template <class Tuple>
struct as_gtest_types;
template <class... Ts>
struct as_gtest_types<std::tuple<Ts...>> {
    using type = ::testing::Types<Ts...>;
};

/// The domains of `Tuple` except the reservation family (hp, he, ibr, wfe),
/// reference counting (lfrc: its nodes must count their links; see
/// tests/test_lfrc.cpp) and the liburcu adapters (family external): these
/// tests assume epoch
/// semantics with synchronous reclamation (stalled_thread_pins_garbage
/// expects a stall to pin all garbage, the churn test exact counts when
/// threads leave, while liburcu frees after call_rcu's thread has run);
/// tests/test_reservation.cpp and tests/test_urcu.cpp cover them.
template <class Tuple>
struct without_reservation;
template <class... Ds>
struct without_reservation<std::tuple<Ds...>> {
    using type = decltype(std::tuple_cat(
        std::declval<
            std::conditional_t<Ds::traits.family == smr::reclaimer_family::reservation ||
                                   Ds::traits.family == smr::reclaimer_family::external ||
                                   Ds::traits.family == smr::reclaimer_family::reference_count,
                               std::tuple<>, std::tuple<Ds>>>()...));
};
using tested_domains = without_reservation<smr::measured_domains>::type;

/// Every domain of `Tuple` under both free modes.
template <class Tuple>
using setups_of = as_gtest_types<decltype(std::tuple_cat(
    std::declval<typename with_mode<Tuple, smr::free_mode::batch>::type>(),
    std::declval<typename with_mode<Tuple, smr::free_mode::amortized>::type>()))>::type;

using all_setups = setups_of<tested_domains>;
/// The schemes that free while threads run (not none): the tests of
/// reclamation itself.
using freeing_setups =
    setups_of<smr::test::domains_where<tested_domains, [](smr::reclaimer_traits t) {
        return t.family != smr::reclaimer_family::leak;
    }>::type>;
/// Those whose garbage a thread stalled inside an operation pins (not the
/// neutralization schemes, which restart it: test_nbr.cpp).
using pinning_setups =
    setups_of<smr::test::domains_where<tested_domains, [](smr::reclaimer_traits t) {
        return t.family != smr::reclaimer_family::leak &&
               t.family != smr::reclaimer_family::neutralization;
    }>::type>;

struct setup_names {
    template <class S>
    static std::string GetName(int) {
        return std::string(S::domain::traits.name) + "_" + std::string(smr::to_string(S::mode));
    }
};

// ---- the shared cells -------------------------------------------------------

template <class Domain>
struct test_node final : Domain::node_base {
    static constexpr std::uint64_t alive = 0x5AFE5AFE5AFE5AFEull;
    std::uint64_t canary = alive;
    std::uint64_t payload;
    explicit test_node(std::uint64_t p) : payload(p) {}
    ~test_node() { canary = 0; }
};

std::uint64_t splitmix(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

template <class Domain>
class cells {
  public:
    using node = test_node<Domain>;

    cells(Domain& domain, std::size_t count) : domain_(domain), cells_(count) {
        smr::context handle(domain);
        for (auto& cell : cells_) {
            cell.store(domain.template allocate<node>(handle, 0), std::memory_order_release);
        }
    }
    ~cells() {
        for (auto& cell : cells_) domain_.free_unshared(cell.load(std::memory_order_relaxed));
    }
    cells(const cells&) = delete;
    cells& operator=(const cells&) = delete;

    /// One operation: read, replace and retire, re-read. Then a quiescent state.
    void operate(smr::context_ref<Domain> self, std::uint64_t& rng) {
        {
            smr::op_guard guard(domain_, self);
            // The NBR shape (guards.hpp): read phase, then reserve `first`.
            // For every other scheme the checkpoint and read_phase_end are
            // empty and protect is an acquire load (or a hazard pointer).
            node* first = nullptr;
            for (;;) {
                SMR_READ_PHASE_BEGIN(domain_, self);
                const std::size_t index = splitmix(rng) % cells_.size();
                first = domain_.protect(self, 0, cells_[index]);
                check(first);
                domain_.read_phase_end(self, first);
                break;
            }
            auto& cell = cells_[splitmix(rng) % cells_.size()];
            node* fresh = domain_.template allocate<node>(self, rng);
            node* old = cell.exchange(fresh, std::memory_order_acq_rel);
            check(old);
            domain_.retire(self, old);
            check(first);  // still protected: this operation began before its unlink
        }
        domain_.quiescent(self);
        retired_.fetch_add(1, std::memory_order_relaxed);
    }

    std::size_t size() const noexcept { return cells_.size(); }
    std::uint64_t retired() const noexcept { return retired_.load(std::memory_order_relaxed); }
    std::uint64_t bad_reads() const noexcept { return bad_.load(std::memory_order_relaxed); }

  private:
    void check(const node* n) {
        if (n->canary != node::alive) bad_.fetch_add(1, std::memory_order_relaxed);
    }

    Domain& domain_;
    std::vector<std::atomic<node*>> cells_;
    std::atomic<std::uint64_t> retired_{0};
    std::atomic<std::uint64_t> bad_{0};
};

// ---- workers ---------------------------------------------------------------

/// Threads that register and operate until stopped (or for `ops` operations).
template <class Domain>
class workers {
  public:
    workers(Domain& domain, cells<Domain>& shared, int count, std::uint64_t ops = 0)
        : domain_(domain), shared_(shared) {
        for (int i = 0; i < count; ++i) {
            threads_.emplace_back([this, i, ops] {
                smr::context handle(domain_);
                std::uint64_t rng = 0x1234 + static_cast<std::uint64_t>(i) * 7919;
                for (std::uint64_t n = 0; ops == 0 || n < ops; ++n) {
                    if (ops == 0 && stop_.load(std::memory_order_relaxed)) break;
                    shared_.operate(handle, rng);
                }
            });
        }
    }
    ~workers() { join(); }

    void join() {
        stop_.store(true, std::memory_order_relaxed);
        for (auto& t : threads_) {
            if (t.joinable()) t.join();
        }
    }

  private:
    Domain& domain_;
    cells<Domain>& shared_;
    std::atomic<bool> stop_{false};
    std::vector<std::thread> threads_;
};

template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout = 30s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!pred()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

/// Small parameters so every test runs in well under a second under ASan.
smr::domain_config test_config(smr::free_mode mode) {
    smr::domain_config config;
    config.max_threads = 16;
    config.free.mode = mode;
    config.bag_threshold = 256;  // rcu: scan every 256 retirements
    config.time_frees = true;    // expect_consistent_counts counts timed frees
    return config;
}

template <class Domain>
constexpr bool frees_while_running = Domain::traits.family != smr::reclaimer_family::leak;

/// Two schemes free a batch while they hold up everyone else, so with
/// operations as cheap as these (one allocation, one exchange) the other
/// threads retire as fast as the batch is freed and every batch is larger
/// than the last: garbage grows without bound by design. For them the tests
/// check only that frees keep happening.
///  - Naive Token-EBR under batch free frees its previous bag before passing
///    the token, so frees are serialized around the ring (Epochs paper,
///    Section 4.1, "garbage pile up"). Under ASan 3 threads already show it.
///  - rcu under batch free scans and frees inside retire, that is inside an
///    operation whose reservation pins the epoch of its start: while one
///    thread frees a million nodes, the other's retire list cannot shrink
///    (measured: reservations ~300 epochs behind, lists of 1-3 M nodes
///    alternating between the two threads). In the data-structure stress,
///    where an operation costs more than a free, it keeps up.
template <class Setup>
constexpr bool piles_up() {
    return Setup::mode == smr::free_mode::batch &&
           (std::is_same_v<typename Setup::domain, smr::token_naive_domain> ||
            std::is_same_v<typename Setup::domain, smr::rcu_epoch_domain>);
}

/// Reclamation keeps up while the workers run: garbage drops below 10% of all
/// retired nodes at some point within 30 s (or, for a scheme that piles
/// garbage up by design, at least 1000 more nodes are freed).
template <class Setup, class D>
void expect_reclaims(D& domain, const cells<D>& shared) {
    if constexpr (piles_up<Setup>()) {
        // freed, from counters that may be read while threads run.
        auto freed = [&] {
            return static_cast<std::int64_t>(shared.retired()) -
                   static_cast<std::int64_t>(domain.garbage());
        };
        const std::int64_t before = freed();
        EXPECT_TRUE(eventually([&] { return freed() > before + 1000; }))
            << "freed " << freed() << ", was " << before;
    } else {
        EXPECT_TRUE(eventually([&] { return domain.garbage() * 10 < shared.retired(); }))
            << "garbage " << domain.garbage() << " of " << shared.retired() << " retired";
    }
}

/// The counters add up once every thread is done.
template <class Domain>
void expect_consistent_counts(const Domain& domain, std::uint64_t retired, std::size_t live) {
    const smr::reclaimer_stats stats = domain.stats();
    EXPECT_EQ(stats.retired, retired);
    EXPECT_EQ(stats.allocated, retired + live);
    EXPECT_EQ(stats.freed + stats.garbage, stats.retired);
    EXPECT_EQ(stats.free_latency.count(), stats.freed + stats.discarded);
}

// ---- typed tests over every domain and free mode -----------------------------

template <class Setup>
class reclaimer_test : public ::testing::Test {
  protected:
    using domain_type = typename Setup::domain;
    static smr::domain_config config() { return test_config(Setup::mode); }
};

TYPED_TEST_SUITE(reclaimer_test, all_setups, setup_names);

template <class Setup>
class freeing_test : public reclaimer_test<Setup> {};
TYPED_TEST_SUITE(freeing_test, freeing_setups, setup_names);

template <class Setup>
class pinning_test : public reclaimer_test<Setup> {};
TYPED_TEST_SUITE(pinning_test, pinning_setups, setup_names);

// Garbage stays bounded and frees keep happening while 3 threads retire.
TYPED_TEST(freeing_test, garbage_stays_bounded) {
    using D = typename TestFixture::domain_type;
    D domain(TestFixture::config());
    {
        cells<D> shared(domain, 64);
        workers<D> crew(domain, shared, 3);
        ASSERT_TRUE(eventually([&] { return shared.retired() >= 30'000; }));
        // Garbage below 10% of everything retired so far: with the parameters
        // above every scheme holds a few hundred nodes per thread (ebr/nebr:
        // ~3 epochs of 100 operations; rcu: 256 + one epoch; token: two
        // rounds), so only a reclaimer that stops freeing can fail this. It
        // only has to hold once: a worker preempted inside an operation may
        // hold up reclamation for a while on a 2-core machine.
        expect_reclaims<TypeParam>(domain, shared);
        crew.join();
        EXPECT_EQ(shared.bad_reads(), 0u);
        if constexpr (!piles_up<TypeParam>()) {
            EXPECT_GT(domain.stats().freed, shared.retired() / 2);
        }
        expect_consistent_counts(domain, shared.retired(), shared.size());
    }
}

// One registered thread stalled inside an operation stops every epoch-family
// reclaimer; releasing it lets reclamation resume.
TYPED_TEST(pinning_test, stalled_thread_pins_garbage) {
    using D = typename TestFixture::domain_type;
    D domain(TestFixture::config());
    cells<D> shared(domain, 64);
    {
        smr::context staller(domain);
        // A stall: begin_op without end_op. For qsbr it is a registered
        // (online) thread that declares no quiescent state; for nebr an online
        // thread that starts no more operations; begin_op is harmless there.
        domain.begin_op(staller);
        workers<D>(domain, shared, 3, 4'000).join();
        const std::uint64_t retired = shared.retired();
        ASSERT_EQ(retired, 12'000u);
        EXPECT_GE(domain.garbage() * 10, retired * 9)
            << "garbage " << domain.garbage() << " of " << retired << " retired";
        domain.end_op(staller);
    }
    // Stall over: four workers take slots 0-3 (the staller's and the three
    // workers'), inherit their bags and free them.
    {
        workers<D> crew(domain, shared, 4);
        expect_reclaims<TypeParam>(domain, shared);
    }
    EXPECT_EQ(shared.bad_reads(), 0u);
    expect_consistent_counts(domain, shared.retired(), shared.size());
}

// Threads created and joined many times, more than cores: slots are reused,
// counts add up, and LeakSanitizer finds nothing once the domain is gone.
TYPED_TEST(reclaimer_test, thread_churn_keeps_counts_and_leaks_nothing) {
    using D = typename TestFixture::domain_type;
    D domain(TestFixture::config());
    cells<D> shared(domain, 16);
    constexpr int rounds = 50;
    constexpr int threads = 4;
    constexpr std::uint64_t ops = 150;
    for (int round = 0; round < rounds; ++round) {
        workers<D> crew(domain, shared, threads, ops);
    }
    EXPECT_EQ(shared.retired(), rounds * threads * ops);
    EXPECT_LE(domain.registry().scan_limit(), threads + 1);  // + the setup handle
    EXPECT_EQ(shared.bad_reads(), 0u);
    expect_consistent_counts(domain, shared.retired(), shared.size());
    if constexpr (frees_while_running<D>) {
        EXPECT_GT(domain.stats().freed, 0u);
    }
}

// Threads joining and leaving while others run (for token: while the token
// circulates) never stop reclamation.
TYPED_TEST(freeing_test, join_and_leave_while_running) {
    using D = typename TestFixture::domain_type;
    D domain(TestFixture::config());
    {
        cells<D> shared(domain, 64);
        workers<D> steady(domain, shared, 2);
        std::vector<std::thread> churners;
        for (int c = 0; c < 2; ++c) {
            churners.emplace_back([&, c] {
                std::uint64_t rng = 99 + static_cast<std::uint64_t>(c);
                for (int i = 0; i < 150; ++i) {
                    smr::context handle(domain);
                    const int ops = static_cast<int>(splitmix(rng) % 4);  // 0-3
                    for (int n = 0; n < ops; ++n) shared.operate(handle, rng);
                    if (splitmix(rng) % 2 == 0) {
                        domain.thread_offline(handle);
                        std::this_thread::yield();
                        domain.thread_online(handle);
                        shared.operate(handle, rng);
                    }
                }
            });
        }
        for (auto& t : churners) t.join();
        // The churners' last slots keep a few hundred nodes nobody frees until
        // the slots are reused; everything else must keep being reclaimed.
        const std::uint64_t after_churn = shared.retired();
        ASSERT_TRUE(eventually([&] { return shared.retired() >= after_churn + 20'000; }));
        expect_reclaims<TypeParam>(domain, shared);
        steady.join();
        EXPECT_EQ(shared.bad_reads(), 0u);
        expect_consistent_counts(domain, shared.retired(), shared.size());
    }
    if constexpr (requires { domain.token_holder(); }) {
        EXPECT_EQ(domain.token_holder(), -1);  // everyone left: the token names nobody
    }
}

// A registered thread that is offline (an extended quiescent state) holds up
// nobody, for every scheme.
TYPED_TEST(freeing_test, offline_thread_does_not_block) {
    using D = typename TestFixture::domain_type;
    D domain(TestFixture::config());
    cells<D> shared(domain, 64);
    smr::context idle(domain);
    domain.thread_offline(idle);
    {
        workers<D> crew(domain, shared, 2);
        ASSERT_TRUE(eventually([&] { return shared.retired() >= 20'000; }));
        expect_reclaims<TypeParam>(domain, shared);
    }
    domain.thread_online(idle);
    EXPECT_EQ(shared.bad_reads(), 0u);
}

// ---- token ring, step by step (one OS thread playing several slots) ---------

template <class Domain>
class token_ring_test : public ::testing::Test {};
using token_domains = ::testing::Types<smr::token_naive_domain, smr::token_passfirst_domain,
                                       smr::token_periodic_domain>;
struct token_names {
    template <class D>
    static std::string GetName(int) {
        return std::string(D::traits.name);
    }
};
TYPED_TEST_SUITE(token_ring_test, token_domains, token_names);

TYPED_TEST(token_ring_test, passes_in_slot_order_and_survives_leavers) {
    using D = TypeParam;
    smr::domain_config config = test_config(smr::free_mode::batch);
    D domain(config);
    EXPECT_EQ(domain.token_holder(), -1);
    smr::context<D> a(domain);
    EXPECT_EQ(domain.token_holder(), a.tid());  // the first joiner takes the token
    smr::context<D> b(domain);
    smr::context<D> c(domain);
    ASSERT_EQ(std::vector<int>({a.tid(), b.tid(), c.tid()}), std::vector<int>({0, 1, 2}));

    auto op = [&](smr::context_ref<D> self) {
        domain.begin_op(self);
        domain.end_op(self);
    };
    op(c);  // not the holder: nothing happens
    EXPECT_EQ(domain.token_holder(), a.tid());
    op(a);
    EXPECT_EQ(domain.token_holder(), b.tid());
    op(b);
    EXPECT_EQ(domain.token_holder(), c.tid());
    EXPECT_EQ(domain.stats().epochs, 0u);

    c.detach();  // leaves holding the token: passes it on, wrapping
    EXPECT_EQ(domain.token_holder(), a.tid());
    EXPECT_EQ(domain.stats().epochs, 1u);
    b.detach();  // leaves without it
    EXPECT_EQ(domain.token_holder(), a.tid());
    op(a);  // a lone member passes to itself: every receipt is a round
    EXPECT_EQ(domain.token_holder(), a.tid());
    EXPECT_EQ(domain.stats().epochs, 2u);

    domain.thread_offline(a);  // the last member leaves: the token names nobody
    EXPECT_EQ(domain.token_holder(), -1);
    smr::context<D> d(domain);  // takes the free slot 1 and the token
    EXPECT_EQ(d.tid(), 1);
    EXPECT_EQ(domain.token_holder(), d.tid());
    domain.thread_online(a);
    op(d);
    EXPECT_EQ(domain.token_holder(), a.tid());  // 1 -> 0 wraps
    d.detach();
    a.detach();
    EXPECT_EQ(domain.token_holder(), -1);
}

// A node is freed at the retiring slot's second receipt after its retirement,
// not earlier: the first receipt only moves it to the previous bag.
TYPED_TEST(token_ring_test, frees_at_the_second_receipt) {
    using D = TypeParam;
    D domain(test_config(smr::free_mode::batch));
    smr::context<D> a(domain);
    smr::context<D> b(domain);
    auto op = [&](smr::context_ref<D> self, bool retire) {
        domain.begin_op(self);
        if (retire) domain.retire(self, domain.template allocate<test_node<D>>(self, 1));
        domain.end_op(self);
    };
    op(a, true);  // receipt 1 of a (empty bags), then retire x: current = {x}
    EXPECT_EQ(domain.token_holder(), b.tid());
    EXPECT_EQ(domain.garbage(), 1u);
    op(b, false);  // b's receipt; b has nothing
    op(a, false);  // receipt 2 of a: x moves to previous; b began an op since x's unlink
    EXPECT_EQ(domain.garbage(), 1u);
    op(b, false);
    EXPECT_EQ(domain.garbage(), 1u);
    op(a, false);  // receipt 3 of a: x is safe and freed
    EXPECT_EQ(domain.garbage(), 0u);
    EXPECT_EQ(domain.stats().freed, 1u);
    b.detach();
    a.detach();
}

// Periodic: while freeing a large bag, a thread that gets the token back
// passes it on again mid-batch (every token_check_every frees), without
// rotating its bags: as in the paper's variant, those passes free nothing
// more; what it retired since its receipt waits for its next one.
TEST(token_periodic, passes_again_while_freeing) {
    using D = smr::token_periodic_domain;
    smr::domain_config config = test_config(smr::free_mode::batch);
    config.token_check_every = 10;
    D domain(config);
    smr::context<D> a(domain);  // the only member: passes to itself
    domain.begin_op(a);         // receipt 1
    for (int i = 0; i < 1000; ++i) domain.retire(a, domain.allocate<test_node<D>>(a, 1));
    domain.end_op(a);
    domain.begin_op(a);  // receipt 2: the 1000 nodes become previous
    for (int i = 0; i < 5; ++i) domain.retire(a, domain.allocate<test_node<D>>(a, 1));
    domain.end_op(a);
    EXPECT_EQ(domain.stats().epochs, 2u);
    domain.begin_op(a);  // receipt 3 frees them; every 10 frees the token is back: 100 more rounds
    domain.end_op(a);
    EXPECT_EQ(domain.stats().freed, 1000u);
    EXPECT_EQ(domain.stats().epochs, 3u + 100u);
    EXPECT_EQ(domain.garbage(), 5u) << "a pass while freeing rotates nothing";
    domain.begin_op(a);  // receipt 104: the 5 were previous since receipt 3
    domain.end_op(a);
    EXPECT_EQ(domain.stats().freed, 1005u);
    a.detach();
}

// Hart's QSBR: every quiescent state tries to advance the epoch (a fuzzy
// barrier entry), which succeeds once every online thread has announced the
// current epoch; an online thread that declares none holds everyone up, an
// offline one nobody.
TEST(qsbr, every_quiescent_state_tries_to_advance) {
    using D = smr::qsbr_domain;
    D domain(test_config(smr::free_mode::batch));
    smr::context<D> a(domain);
    const auto state = [&](smr::context_ref<D> self, bool retire) {
        if (retire) domain.retire(self, domain.template allocate<test_node<D>>(self, 1));
        domain.quiescent(self);
    };
    const std::uint64_t start = domain.stats().epochs;
    state(a, true);
    EXPECT_EQ(domain.stats().epochs, start + 1) << "alone, each state advances";
    state(a, false);
    state(a, false);
    EXPECT_EQ(domain.garbage(), 1u) << "retired in e, safe in e + 3";
    state(a, false);
    EXPECT_EQ(domain.garbage(), 0u);
    EXPECT_EQ(domain.stats().epochs, start + 4);

    smr::context<D> b(domain);  // online, in the current epoch
    state(a, false);            // the epoch moves once: b announced it
    state(a, false);
    state(a, false);
    EXPECT_EQ(domain.stats().epochs, start + 5) << "b lags and holds a up";
    state(b, false);  // b enters the new epoch and, with a in it too, advances
    EXPECT_EQ(domain.stats().epochs, start + 6);
    domain.thread_offline(b);
    state(a, false);
    state(a, false);
    EXPECT_EQ(domain.stats().epochs, start + 8) << "an offline thread holds up nobody";
    domain.thread_online(b);
    b.detach();
    a.detach();
}

// Brown's DEBRA frees a bag at the third epoch change its owner observes,
// however far each change moved the epoch: a thread that finds the epoch two
// ahead rotates once. (Labelled with the epoch it was retired in, x would be
// freed at the first change here: the epoch moved three.)
TEST(debra, frees_at_the_third_epoch_change_it_observes) {
    using D = smr::debra_domain;
    smr::domain_config config = test_config(smr::free_mode::batch);
    config.check_every = 1;  // b, checking a (quiescent) each operation, advances each time
    D domain(config);
    smr::context<D> a(domain);
    smr::context<D> b(domain);
    const auto op = [&](smr::context_ref<D> self, bool retire) {
        domain.begin_op(self);
        if (retire) domain.retire(self, domain.template allocate<test_node<D>>(self, 1));
        domain.end_op(self);
    };
    const auto advance_to = [&](std::uint64_t target) {
        for (int i = 0; i < 100 && domain.global_epoch() < target; ++i) op(b, false);
        ASSERT_GE(domain.global_epoch(), target);
    };
    op(a, true);  // x
    advance_to(domain.global_epoch() + 2);
    op(a, false);  // change 1, by two epochs or more
    EXPECT_EQ(domain.garbage(), 1u) << "freed at the first observed change";
    advance_to(domain.global_epoch() + 1);
    op(a, false);  // change 2
    EXPECT_EQ(domain.garbage(), 1u) << "freed at the second observed change";
    advance_to(domain.global_epoch() + 1);
    op(a, false);  // change 3
    EXPECT_EQ(domain.garbage(), 0u);
    b.detach();
    a.detach();
}

// ---- the list itself ----------------------------------------------------------

TEST(measured_domains, order_and_names) {
    std::string names;
    [&]<class... Ds>(std::type_identity<std::tuple<Ds...>>) {
        ((names += ' ', names += Ds::traits.name), ...);
    }(std::type_identity<smr::measured_domains>{});
    EXPECT_EQ(
        names,
        " none ebr nebr debra qsbr rcu qsbr_ibr token_naive token_passfirst token_periodic hp "
        "hp_pop hp_pp he he_pop epoch_pop ibr wfe hyaline crystalline_l crystalline lfrc nbr "
        "nbrplus urcu_qsbr urcu_memb");
    EXPECT_TRUE(smr::qsbr_domain::traits.needs_quiescent_states);
    EXPECT_FALSE(smr::ebr_domain::traits.needs_quiescent_states);
}

}  // namespace
