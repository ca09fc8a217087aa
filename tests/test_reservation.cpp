// Tests of the reservation reclaimers (hp, hp_pop, hp_pp, he, he_pop, epoch_pop, ibr, hyaline,
// crystalline_l, wfe).
//
// Unlike tests/test_reclaimers.cpp, whose workers read shared cells without
// protect (valid only for grace-period schemes), every read of a shared
// pointer here goes through domain.protect(), as the reservation schemes
// require. Nodes carry a canary that their destructor clears: a node freed
// too early is a heap-use-after-free under AddressSanitizer, a data race under
// ThreadSanitizer, and a bad canary in any build.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "smr/core/asymmetric_fence.hpp"
#include "smr/ds/dgt_bst.hpp"
#include "smr/ds/lazylist.hpp"
#include "smr/reclaim/all.hpp"
#include "smr/reclaim/guards.hpp"
#include "stress.hpp"

namespace {

// ---- parameters: scheme x free mode x fence ----------------------------------

template <class Domain, smr::free_mode Mode, smr::fence_mode Fence = smr::fence_mode::asymmetric>
struct setup {
    using domain = Domain;
    static constexpr smr::free_mode mode = Mode;
    static constexpr smr::fence_mode fence = Fence;
};

using setups = ::testing::Types<
    setup<smr::hp_domain, smr::free_mode::batch>, setup<smr::hp_domain, smr::free_mode::amortized>,
    setup<smr::hp_pop_domain, smr::free_mode::batch>,
    setup<smr::hp_pop_domain, smr::free_mode::amortized>,
    setup<smr::hp_pp_domain, smr::free_mode::batch>,
    setup<smr::hp_pp_domain, smr::free_mode::amortized>,
    setup<smr::he_pop_domain, smr::free_mode::batch>,
    setup<smr::he_pop_domain, smr::free_mode::amortized>,
    setup<smr::epoch_pop_domain, smr::free_mode::batch>,
    setup<smr::epoch_pop_domain, smr::free_mode::amortized>,
    setup<smr::he_domain, smr::free_mode::batch>, setup<smr::he_domain, smr::free_mode::amortized>,
    setup<smr::ibr_domain, smr::free_mode::batch>,
    setup<smr::ibr_domain, smr::free_mode::amortized>,
    setup<smr::wfe_domain, smr::free_mode::batch>,
    setup<smr::wfe_domain, smr::free_mode::amortized>,
    setup<smr::hyaline_domain, smr::free_mode::batch>,
    setup<smr::hyaline_domain, smr::free_mode::amortized>,
    setup<smr::crystalline_l_domain, smr::free_mode::batch>,
    setup<smr::crystalline_l_domain, smr::free_mode::amortized>,
    setup<smr::crystalline_domain, smr::free_mode::batch>,
    setup<smr::crystalline_domain, smr::free_mode::amortized>,
    // Michael's full fences, both free modes, every scheme.
    setup<smr::hp_domain, smr::free_mode::batch, smr::fence_mode::symmetric>,
    setup<smr::hp_domain, smr::free_mode::amortized, smr::fence_mode::symmetric>,
    setup<smr::hp_pp_domain, smr::free_mode::batch, smr::fence_mode::symmetric>,
    setup<smr::he_domain, smr::free_mode::batch, smr::fence_mode::symmetric>,
    setup<smr::he_domain, smr::free_mode::amortized, smr::fence_mode::symmetric>,
    setup<smr::ibr_domain, smr::free_mode::batch, smr::fence_mode::symmetric>,
    setup<smr::ibr_domain, smr::free_mode::amortized, smr::fence_mode::symmetric>,
    setup<smr::wfe_domain, smr::free_mode::batch, smr::fence_mode::symmetric>,
    setup<smr::wfe_domain, smr::free_mode::amortized, smr::fence_mode::symmetric>,
    setup<smr::hyaline_domain, smr::free_mode::batch, smr::fence_mode::symmetric>,
    setup<smr::crystalline_l_domain, smr::free_mode::batch, smr::fence_mode::symmetric>,
    setup<smr::crystalline_domain, smr::free_mode::batch, smr::fence_mode::symmetric>>;

struct setup_names {
    template <class S>
    static std::string GetName(int) {
        const std::string fence = S::fence == smr::fence_mode::symmetric ? "_symmetric_fences" : "";
        return std::string(S::domain::traits.name) + "_" + std::string(smr::to_string(S::mode)) +
               fence;
    }
};

/// More threads than cores (at least 4), so operations are preempted while
/// they hold reservations.
int worker_count() { return smr::test::default_stress_threads(); }

smr::domain_config small_config(smr::free_mode mode,
                                smr::fence_mode fence = smr::fence_mode::asymmetric) {
    smr::domain_config config;
    config.max_threads = 32;
    config.free.mode = mode;
    config.fence = fence;
    config.bag_threshold = 64;  // scan (and free) every 64 retirements
    config.time_frees = true;   // expect_consistent_counts counts timed frees
    config.epoch_freq = 8;      // eras move often: protect's retry paths run
    config.hp_scan_factor = 1;  // R = max(64, slots): hp scans as often as the others
    return config;
}

std::uint64_t splitmix(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// ---- nodes with a canary -----------------------------------------------------

template <class Domain>
struct test_node final : Domain::node_base {
    static constexpr std::uint64_t alive = 0x5AFE5AFE5AFE5AFEull;
    std::uint64_t canary = alive;
    std::uint64_t payload;
    std::atomic<test_node*> next{nullptr};  // Treiber stack link
    explicit test_node(std::uint64_t p) : payload(p) {}
    ~test_node() { canary = 0; }
};

std::atomic<std::uint64_t> bad_reads{0};

template <class Node>
void check(const Node* n) {
    // relaxed: a test tally.
    if (n->canary != Node::alive) bad_reads.fetch_add(1, std::memory_order_relaxed);
}

// ---- cells: read through protect, replace, retire ----------------------------

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

    /// One operation: protect a cell's node, replace another cell's node and
    /// retire the old one, protect a third, and re-check the first.
    void operate(smr::context_ref<Domain> self, std::uint64_t& rng) {
        smr::op_guard guard(domain_, self);
        node* first = domain_.protect(self, 0, pick(rng));
        check(first);
        node* fresh = domain_.template allocate<node>(self, rng);
        // acq_rel: acquire pairs with the release that published the old
        // node; release publishes fresh.
        node* old = pick(rng).exchange(fresh, std::memory_order_acq_rel);
        check(old);  // ours alone now: only we retire it
        domain_.retire(self, old);
        node* third = domain_.protect(self, 1, pick(rng));
        check(third);
        check(first);  // still protected by slot 0
        retired_.fetch_add(1, std::memory_order_relaxed);
    }

    /// Protect one node per slot and keep them (the stalled thread).
    void hold(smr::context_ref<Domain> self) {
        for (int slot = 0; slot < smr::max_protect_slots; ++slot) {
            check(domain_.protect(self, slot, cells_[static_cast<std::size_t>(slot) % size()]));
        }
    }

    std::atomic<node*>& pick(std::uint64_t& rng) { return cells_[splitmix(rng) % cells_.size()]; }
    std::size_t size() const noexcept { return cells_.size(); }
    std::uint64_t retired() const noexcept { return retired_.load(std::memory_order_relaxed); }

  private:
    Domain& domain_;
    std::vector<std::atomic<node*>> cells_;
    std::atomic<std::uint64_t> retired_{0};
};

/// Runs `threads` workers for `ops` operations each on `shared`.
template <class Domain>
void run_workers(Domain& domain, cells<Domain>& shared, int threads, std::uint64_t ops) {
    std::vector<std::thread> crew;
    for (int i = 0; i < threads; ++i) {
        crew.emplace_back([&, i] {
            smr::context handle(domain);
            std::uint64_t rng = 0x1234 + static_cast<std::uint64_t>(i) * 7919;
            for (std::uint64_t n = 0; n < ops; ++n) shared.operate(handle, rng);
        });
    }
    for (auto& t : crew) t.join();
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

template <class Setup>
class reservation_test : public ::testing::Test {
  protected:
    using domain_type = typename Setup::domain;
    static smr::domain_config config() { return small_config(Setup::mode, Setup::fence); }
    void SetUp() override { bad_reads.store(0, std::memory_order_relaxed); }
};

TYPED_TEST_SUITE(reservation_test, setups, setup_names);

TYPED_TEST(reservation_test, traits) {
    using D = typename TestFixture::domain_type;
    EXPECT_EQ(D::traits.family, smr::reclaimer_family::reservation);
    EXPECT_TRUE(D::traits.garbage_bounded);
    EXPECT_FALSE(D::traits.uses_signals);
}

// Each scan of a domain with asymmetric fences calls membarrier once (the
// reclaimer's side of every protect's compiler barrier); one with symmetric
// fences never does, nor does hp_pop, which pings instead. The nodes are
// retired outside any operation, so no reservation keeps them (ibr reserves
// at begin_op) and every scan frees all.
TYPED_TEST(reservation_test, each_asymmetric_scan_issues_one_heavy_barrier) {
    using D = typename TestFixture::domain_type;
    using node = test_node<D>;
    smr::domain_config config = TestFixture::config();
    config.bag_threshold = 4;
    config.hp_scan_factor = 0;  // hp: a scan every 4 retirements, as the others
    D domain(config);
    bool asymmetric = false;
    if constexpr (D::traits.reads.fence) {
        asymmetric =
            config.fence == smr::fence_mode::asymmetric && smr::core::asymmetric_fence_available();
        EXPECT_EQ(domain.fence(),
                  asymmetric ? smr::fence_mode::asymmetric : smr::fence_mode::symmetric);
    }
    {
        smr::context handle(domain);
        // hyaline and crystalline_l seal a batch (one fence) at
        // max(bag_threshold, slots + 1) retirements.
        std::uint64_t per_scan = 4;
        if constexpr (requires { domain.batch_size(); }) per_scan = domain.batch_size();
        for (std::uint64_t i = 0; i < 3 * per_scan; ++i) {
            domain.retire(handle, domain.template allocate<node>(handle, 0));
        }
        if (TypeParam::mode == smr::free_mode::batch) {
            EXPECT_EQ(domain.stats().freed, 3 * per_scan);
        }
    }
    EXPECT_EQ(domain.stats().heavy_barriers, asymmetric ? 3u : 0u);
}

// Nodes are replaced and freed constantly while more threads than cores read
// them through protect: no read sees a freed node, frees keep up.
TYPED_TEST(reservation_test, cells_stress_frees_and_never_reads_freed) {
    using D = typename TestFixture::domain_type;
    D domain(TestFixture::config());
    {
        cells<D> shared(domain, 16);
        const int threads = worker_count();
        const std::uint64_t ops = 50'000;
        run_workers(domain, shared, threads, ops);
        EXPECT_EQ(bad_reads.load(), 0u);
        EXPECT_EQ(shared.retired(), static_cast<std::uint64_t>(threads) * ops);
        const auto stats = domain.stats();
        EXPECT_GT(stats.freed, shared.retired() / 2);
        expect_consistent_counts(domain, shared.retired(), shared.size());
    }
}

/// Runs `workers` thread handles' operations in turn on the calling thread,
/// one operation each per round: the same interleaving, the same eras and the
/// same scans at every run, so garbage peaks are exact, not scheduling luck.
template <class Domain>
void run_round_robin(Domain& domain, cells<Domain>& shared, int workers, std::uint64_t rounds) {
    std::vector<smr::context<Domain>> handles;
    std::vector<std::uint64_t> rngs;
    for (int i = 0; i < workers; ++i) {
        handles.emplace_back(domain);
        rngs.push_back(0x1234 + static_cast<std::uint64_t>(i) * 7919);
    }
    for (std::uint64_t round = 0; round < rounds; ++round) {
        for (int i = 0; i < workers; ++i) {
            shared.operate(handles[i], rngs[i]);
            domain.sample_garbage();  // the peak is what samples see: after every step here
        }
    }
}

// A thread stalled inside an operation, holding a reservation in every slot,
// keeps garbage bounded by what the algorithm allows. Each worker scans once
// its list has grown by R (bag_threshold) since its last scan and keeps only
// reserved nodes, so its list never exceeds R + P, P being the nodes all
// reservations pin at a scan:
//  - hp: one node per hazard, the stall's 8 and the scanning worker's 2;
//  - hyaline, crystalline_l: no scan; see the bound's comment below;
//  - he, ibr, wfe: the nodes alive in a reserved era. The stall reserves one
//    era (nothing allocates while it protects) and the scanning worker at
//    most the era it began in and the current one. An era lasts at most
//    epoch_freq x T allocations of each worker (T threads registered: the
//    workers and the staller), so it sees at most the cells' nodes plus
//    workers x epoch_freq x T new ones.
// Amortized mode adds a freeable list: each scan moves at most R + P nodes
// to it and one is freed per operation, one retirement per operation, so it
// too stays within R + P. Workers take turns on one thread, so the bound is
// checked on the same interleaving at every run; the concurrent stress test
// above covers preemption.
TYPED_TEST(reservation_test, stalled_thread_keeps_garbage_bounded) {
    using D = typename TestFixture::domain_type;
    const int workers = 3;
    const std::uint64_t rounds = 15'000;  // 45'000 retirements: epochs would pin them all
    smr::domain_config config = TestFixture::config();
    config.bag_threshold = 256;
    const std::size_t cell_count = 16;
    auto peak = [&](bool stall) {
        D domain(config);
        cells<D> shared(domain, cell_count);
        smr::context staller(domain);
        if (stall) {
            domain.begin_op(staller);
            shared.hold(staller);
        }
        run_round_robin(domain, shared, workers, rounds);
        const auto stats = domain.stats();
        if (stall) domain.end_op(staller);
        EXPECT_EQ(shared.retired(), workers * rounds);
        expect_consistent_counts(domain, shared.retired(), shared.size());
        return stats.garbage_peak;
    };
    const std::uint64_t without = peak(false);
    const std::uint64_t with = peak(true);
    const std::uint64_t registered = workers + 1;
    const std::uint64_t per_era = cell_count + workers * config.epoch_freq * registered;
    // epoch_pop: with the stall holding the epochs back, its hazard sweep.
    const bool by_address = D::traits.name == "hp" || D::traits.name == "hp_pop" ||
                            D::traits.name == "hp_pp" || D::traits.name == "epoch_pop";
    const std::uint64_t pinned = by_address ? smr::max_protect_slots + 2 : 3 * per_era;
    const std::uint64_t lists = config.bag_threshold + pinned;
    const bool amortized = TestFixture::config().free.mode == smr::free_mode::amortized;
    // hyaline, crystalline_l: each worker's unsealed batch, and the batches holding a node
    // born at or before the stall's era (at most per_era such nodes, one
    // batch each), which wait for the stall; every other batch skips it.
    const std::uint64_t held = requires(D & d) { d.batch_size(); }
    ? (workers + per_era) * config.bag_threshold : workers* lists;
    const std::uint64_t bound = held * (amortized ? 2 : 1);
    std::printf("%s: peak garbage %llu without a stall, %llu with, bound %llu\n",
                std::string(D::traits.name).c_str(), static_cast<unsigned long long>(without),
                static_cast<unsigned long long>(with), static_cast<unsigned long long>(bound));
    EXPECT_EQ(bad_reads.load(), 0u);
    EXPECT_GE(without, workers * config.bag_threshold - workers);  // every list filled once
    EXPECT_LE(without, bound);
    EXPECT_LE(with, bound);
    EXPECT_EQ(peak(true), with) << "the interleaving is fixed, so is the peak";
}

// Deterministic: a node protected by one thread survives scans of another
// until the protecting operation ends.
TYPED_TEST(reservation_test, protected_node_survives_until_end_op) {
    using D = typename TestFixture::domain_type;
    smr::domain_config config = TestFixture::config();
    config.bag_threshold = 1;
    config.hp_scan_factor = 0;  // hp: scan at every retirement too
    config.epoch_freq = 1;      // every 2 allocations (epoch_freq x 2 threads) move the era
    D domain(config);
    using node = test_node<D>;
    // ibr reserves, at begin_op, every node alive then: the node the writer
    // retires inside an operation is pinned by that operation itself and
    // freed by the writer's next scan.
    const std::uint64_t own = std::is_same_v<D, smr::ibr_domain> ? 1 : 0;
    // epoch_pop, once nothing holds the epochs back, frees by its epoch
    // sweep, and the node the writer retires inside an operation carries the
    // epoch that operation reserved: it waits for the writer's next sweep.
    const std::uint64_t own_at_end = own + (std::is_same_v<D, smr::epoch_pop_domain> ? 1 : 0);
    const smr::context<D> reader(domain);
    const smr::context<D> writer(domain);
    // hyaline and crystalline_l hold `held`'s whole batch, sealed together:
    // batch_size() nodes (here 3 and 17, the slots of two threads plus one).
    std::uint64_t batch = 1;
    if constexpr (requires { domain.batch_size(); }) batch = domain.batch_size();
    const std::uint64_t rounds = batch > 1 ? 2 * batch : 21;
    const std::uint64_t freed_before = batch > 1 ? batch : 20 - own;
    const std::uint64_t freed_after = batch > 1 ? (rounds + 3) / batch * batch : 24 - own_at_end;
    std::atomic<node*> cell{domain.template allocate<node>(writer, 1)};
    // Allocations (discarded) that move the era on at least once.
    auto move_era = [&] {
        for (int i = 0; i < 2; ++i)
            domain.discard(writer, domain.template allocate<node>(writer, 0));
    };
    // One writer operation: replace the cell's node and retire it. Then move
    // the era on between operations, and run one more operation (amortized
    // free frees at begin_op).
    auto replace = [&] {
        domain.begin_op(writer);
        domain.retire(writer, cell.exchange(domain.template allocate<node>(writer, 2)));
        domain.end_op(writer);
        move_era();
        domain.begin_op(writer);
        domain.end_op(writer);
    };

    domain.begin_op(reader);
    // Through the thread's reader (what traversals use), in a slot other
    // than the first, named once as a traversal names its slots.
    const auto through = domain.reader(reader);
    const auto slot = through.slot(5);
    EXPECT_EQ(through.index(slot), D::traits.protect_uses_slots ? 5 : 0);  // ibr's hold nothing
    node* held = through.protect(slot, cell);
    // Move the era past the reader's reservation, so the nodes allocated
    // below are born after it (era schemes pin every node alive in a
    // reserved era, not only the one the reader holds).
    move_era();
    move_era();
    for (std::uint64_t i = 0; i < rounds; ++i) replace();  // retires `held`, then more
    for (int i = 0; i < 40; ++i) {  // amortized: drain the writer's freeable list
        domain.begin_op(writer);
        domain.end_op(writer);
    }
    check(held);
    EXPECT_EQ(bad_reads.load(), 0u);
    EXPECT_EQ(domain.stats().retired, rounds);
    EXPECT_EQ(domain.stats().freed, freed_before);  // everything but `held` (and its batch)
    domain.end_op(reader);
    for (int i = 0; i < 3; ++i) replace();
    for (int i = 0; i < 40; ++i) {  // amortized: drain the freeable lists
        domain.begin_op(writer);
        domain.end_op(writer);
        // hyaline, crystalline_l: the reader's end_op dropped the last
        // reference to `held`'s batch, so its freeable list holds it.
        domain.begin_op(reader);
        domain.end_op(reader);
    }
    EXPECT_EQ(domain.stats().freed, freed_after);  // now `held` too
    domain.free_unshared(cell.load());
}

// Deterministic: a node born after the reader's operation began, and read
// through protect, survives the writer's scans. Era schemes reserve at
// begin_op only what is alive then; protect must extend the reservation to
// the era it reads in (he, wfe: the slot's era; ibr: the interval's upper
// end), which is the validation this test sees skipped.
TYPED_TEST(reservation_test, node_born_during_the_operation_survives) {
    using D = typename TestFixture::domain_type;
    smr::domain_config config = TestFixture::config();
    config.bag_threshold = 1;
    config.hp_scan_factor = 0;
    config.epoch_freq = 1;
    D domain(config);
    using node = test_node<D>;
    const smr::context<D> reader(domain);
    const smr::context<D> writer(domain);
    std::atomic<node*> cell{domain.template allocate<node>(writer, 1)};
    auto replace = [&](std::uint64_t payload) {
        domain.begin_op(writer);
        domain.retire(writer, cell.exchange(domain.template allocate<node>(writer, payload)));
        domain.end_op(writer);
        domain.discard(writer, domain.template allocate<node>(writer, 0));  // moves the era
    };

    domain.begin_op(reader);
    replace(2);  // the cell now holds a node born after the reader began
    node* held = domain.protect(reader, 0, cell);
    ASSERT_EQ(held->payload, 2u);
    for (int i = 0; i < 21; ++i) replace(3);  // retires `held`, then 20 more
    check(held);                              // a heap-use-after-free under ASan if it was freed
    EXPECT_EQ(bad_reads.load(), 0u);
    domain.end_op(reader);
    domain.free_unshared(cell.load());
}

// ---- Treiber stack: the textbook hazard-pointer client ------------------------

template <class Domain>
class treiber_stack {
  public:
    using node = test_node<Domain>;

    explicit treiber_stack(Domain& domain) : domain_(domain) {}
    ~treiber_stack() {
        node* n = top_.load(std::memory_order_relaxed);
        while (n != nullptr) {
            node* next = n->next.load(std::memory_order_relaxed);
            domain_.free_unshared(n);
            n = next;
        }
    }

    void push(smr::context_ref<Domain> self, std::uint64_t value) {
        smr::op_guard guard(domain_, self);
        node* fresh = domain_.template allocate<node>(self, value);
        node* top = top_.load(std::memory_order_relaxed);
        do {
            fresh->next.store(top, std::memory_order_relaxed);
            // release: publishes fresh; relaxed on failure (we only retry).
        } while (!top_.compare_exchange_weak(top, fresh, std::memory_order_release,
                                             std::memory_order_relaxed));
    }

    /// Returns false when empty.
    bool pop(smr::context_ref<Domain> self, std::uint64_t& value) {
        smr::op_guard guard(domain_, self);
        for (;;) {
            node* top = domain_.protect(self, 0, top_);
            if (top == nullptr) return false;
            check(top);
            // Safe to read: top is protected (and ABA-free: it cannot be freed
            // and reused while protected).
            node* next = top->next.load(std::memory_order_relaxed);
            // acquire: we read the popped node's payload below (its
            // publication was a release CAS).
            if (top_.compare_exchange_strong(top, next, std::memory_order_acquire,
                                             std::memory_order_relaxed)) {
                value = top->payload;
                domain_.retire(self, top);
                return true;
            }
        }
    }

  private:
    Domain& domain_;
    alignas(smr::core::false_sharing_range) std::atomic<node*> top_{nullptr};
};

TYPED_TEST(reservation_test, treiber_stack_push_pop) {
    using D = typename TestFixture::domain_type;
    D domain(TestFixture::config());
    std::uint64_t popped_total = 0;
    std::uint64_t pushed_total = 0;
    {
        treiber_stack<D> stack(domain);
        const int threads = worker_count();
        const std::uint64_t ops = 40'000;
        std::vector<std::uint64_t> pushed(threads), popped(threads), sum_in(threads),
            sum_out(threads);
        std::vector<std::thread> crew;
        for (int i = 0; i < threads; ++i) {
            crew.emplace_back([&, i] {
                smr::context handle(domain);
                std::uint64_t rng = 77 + static_cast<std::uint64_t>(i);
                for (std::uint64_t n = 0; n < ops; ++n) {
                    if (splitmix(rng) % 2 == 0) {
                        const std::uint64_t v = splitmix(rng) % 1000;
                        stack.push(handle, v);
                        ++pushed[i];
                        sum_in[i] += v;
                    } else {
                        std::uint64_t v = 0;
                        if (stack.pop(handle, v)) {
                            ++popped[i];
                            sum_out[i] += v;
                        }
                    }
                }
            });
        }
        for (auto& t : crew) t.join();
        // Drain what is left; every value pushed comes out exactly once.
        smr::context handle(domain);
        std::uint64_t rest = 0, rest_sum = 0, v = 0;
        while (stack.pop(handle, v)) {
            ++rest;
            rest_sum += v;
        }
        for (int i = 0; i < threads; ++i) {
            pushed_total += pushed[i];
            popped_total += popped[i];
        }
        std::uint64_t in = 0, out = rest_sum;
        for (int i = 0; i < threads; ++i) {
            in += sum_in[i];
            out += sum_out[i];
        }
        EXPECT_EQ(popped_total + rest, pushed_total);
        EXPECT_EQ(out, in);
        popped_total += rest;
    }
    EXPECT_EQ(bad_reads.load(), 0u);
    const auto stats = domain.stats();
    EXPECT_EQ(stats.retired, popped_total);
    EXPECT_EQ(stats.allocated, pushed_total);
    EXPECT_EQ(stats.freed + stats.garbage, stats.retired);
    EXPECT_GT(stats.freed, 0u);
}

// ---- the wait-free schemes' slow path and helping (wfe, crystalline) ---------

// With `attempts` fast-path attempts (wfe: 1; crystalline: 0, since its
// fast path announces before it gives up) and the era advancing at every
// allocation, protect falls to the slow path constantly and allocating
// threads help it.
template <class D, std::uint32_t attempts>
void expect_slow_path_and_helping_safe() {
    for (smr::free_mode mode : {smr::free_mode::batch, smr::free_mode::amortized}) {
        bad_reads.store(0);
        smr::domain_config config = small_config(mode);
        config.epoch_freq = 1;
        config.wfe_fast_attempts = attempts;
        D domain(config);
        {
            cells<D> shared(domain, 16);
            const int threads = worker_count();
            run_workers(domain, shared, threads, 8'000);
            EXPECT_EQ(bad_reads.load(), 0u);
            EXPECT_GT(domain.slow_paths(), 0u);
            expect_consistent_counts(domain, shared.retired(), shared.size());
            EXPECT_GT(domain.stats().freed, 0u);
        }
        std::printf("%s %s: %llu slow paths, %llu answered by helpers\n",
                    std::string(D::traits.name).c_str(), std::string(smr::to_string(mode)).c_str(),
                    static_cast<unsigned long long>(domain.slow_paths()),
                    static_cast<unsigned long long>(domain.helped()));
    }
}

// Readers preempted inside the slow path are answered by helpers: the era
// moves at every allocation, so every era increment finds pending requests.
// The answered pointers are read (canary) like any other. Helping needs a
// reader preempted inside its slow path, which scheduling decides: the run
// lasts at least 200,000 writer operations (not a duration) and goes on until
// ten requests were answered; the deadline only stops a run that would hang.
template <class D, std::uint32_t attempts>
void expect_helpers_answer_preempted_slow_paths() {
    bad_reads.store(0);
    smr::domain_config config = small_config(smr::free_mode::batch);
    config.epoch_freq = 1;
    config.wfe_fast_attempts = attempts;
    D domain(config);
    {
        cells<D> shared(domain, 16);
        std::atomic<bool> stop{false};
        std::atomic<std::uint64_t> written{0};
        std::vector<std::thread> crew;
        const int readers = std::max(2, worker_count() / 2);
        for (int i = 0; i < readers + 2; ++i) {
            crew.emplace_back([&, i] {
                smr::context handle(domain);
                const auto self = handle.lent();
                std::uint64_t rng = 4242 + static_cast<std::uint64_t>(i);
                while (!stop.load(std::memory_order_relaxed)) {
                    if (i >= readers) {
                        shared.operate(self, rng);  // allocates: advances eras and helps
                        written.fetch_add(1, std::memory_order_relaxed);
                        continue;
                    }
                    smr::op_guard guard(domain, self);
                    for (int k = 0; k < 8; ++k)
                        check(domain.protect(self, k % 2, shared.pick(rng)));
                }
            });
        }
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while ((written.load(std::memory_order_relaxed) < 200'000 || domain.helped() < 10) &&
               std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        stop.store(true);
        for (auto& t : crew) t.join();
        EXPECT_EQ(bad_reads.load(), 0u);
        EXPECT_GE(domain.helped(), 10u) << domain.slow_paths() << " slow paths";
        expect_consistent_counts(domain, shared.retired(), shared.size());
        std::printf("%s: %llu slow paths, %llu answered by helpers\n",
                    std::string(D::traits.name).c_str(),
                    static_cast<unsigned long long>(domain.slow_paths()),
                    static_cast<unsigned long long>(domain.helped()));
    }
}

TEST(wfe, slow_path_and_helping_stay_safe) {
    expect_slow_path_and_helping_safe<smr::wfe_domain, 1>();
}
TEST(wfe, helpers_answer_preempted_slow_paths) {
    expect_helpers_answer_preempted_slow_paths<smr::wfe_domain, 1>();
}
TEST(crystalline, slow_path_and_helping_stay_safe) {
    expect_slow_path_and_helping_safe<smr::crystalline_domain, 0>();
}
TEST(crystalline, helpers_answer_preempted_slow_paths) {
    expect_helpers_answer_preempted_slow_paths<smr::crystalline_domain, 0>();
}

// ---- the unsafe combinations still compile -----------------------------------

// lazylist and dgt_bst traverse unlinked nodes, so reservation schemes cannot
// protect them (smrbench refuses the combination). They are still
// instantiated; one single-threaded operation each proves they link and run.
template <class D>
void instantiate_with_unsafe_structures() {
    D domain(small_config(smr::free_mode::batch));
    smr::context handle(domain);
    smr::ds::lazylist<D> list(domain);
    smr::ds::dgt_bst<D> tree(domain);
    EXPECT_TRUE(list.insert(handle, 5, 5));
    EXPECT_TRUE(list.contains(handle, 5));
    EXPECT_TRUE(list.erase(handle, 5));
    EXPECT_TRUE(tree.insert(handle, 5, 5));
    EXPECT_TRUE(tree.contains(handle, 5));
    EXPECT_TRUE(tree.erase(handle, 5));
}

// hp scans at R = max(bag_threshold, factor x H + offset), H the hazard slots
// of the registered threads: Michael's H + Omega(H), and Hart et al.'s
// R = 2H + 100 with a bag threshold of 1.
TEST(hp, scan_threshold_takes_harts_form) {
    smr::domain_config config = small_config(smr::free_mode::batch);
    config.bag_threshold = 1;
    config.hp_scan_factor = 2;
    config.hp_scan_offset = 100;
    smr::hp_domain domain(config);
    constexpr std::size_t slots = smr::max_protect_slots;
    smr::context first(domain);
    EXPECT_EQ(domain.scan_threshold(), 2 * slots + 100);
    smr::context second(domain);
    EXPECT_EQ(domain.scan_threshold(), 2 * 2 * slots + 100);
    config.bag_threshold = 4096;  // a larger bag threshold dominates
    smr::hp_domain batched(config);
    smr::context third(batched);
    EXPECT_EQ(batched.scan_threshold(), 4096u);
}

TEST(reservation, compiles_with_lazylist_and_dgt_bst_single_threaded) {
    instantiate_with_unsafe_structures<smr::hp_domain>();
    instantiate_with_unsafe_structures<smr::he_domain>();
    instantiate_with_unsafe_structures<smr::ibr_domain>();
    instantiate_with_unsafe_structures<smr::wfe_domain>();
}

}  // namespace
