// Objects the domain did not allocate (smr/reclaim/obj_base.hpp): made with
// new by the test, retired through obj_base::retire, freed by their deleter
// exactly once and never while a reader holds them. (A node type retire
// cannot destroy as itself is refused at compile time:
// compile_fail/retire_non_final_node.cpp.)
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <cstdint>
#include <thread>
#include <vector>

#include "one_thread_scenarios.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/reclaim/measured.hpp"
#include "smr/reclaim/obj_base.hpp"
#include "stress.hpp"
#include "tested_domains.hpp"

namespace {

using smr::test::domain_names;

// Everything the build's sanitizer can judge but lfrc, which frees only
// nodes of its own pool (obj_base refuses it at compile time).
using user_object_domains = smr::test::gtest_types_of<
    typename smr::test::domains_where<smr::test::tested_domains, [](smr::reclaimer_traits t) {
        return t.family != smr::reclaimer_family::reference_count;
    }>::type>::type;

template <class Domain>
class user_object_test : public ::testing::Test {};
TYPED_TEST_SUITE(user_object_test, user_object_domains, domain_names);

template <class Domain>
struct object;

/// A deleter with state: it counts what it deletes, and checks that it was
/// given to the object it deletes (the tag the object was retired with).
template <class Domain>
struct counting_deleter {
    std::atomic<std::uint64_t>* deleted = nullptr;
    std::atomic<std::uint64_t>* wrong_tag = nullptr;
    std::uint64_t tag = 0;
    void operator()(object<Domain>* o) const noexcept;
};

template <class Domain>
struct object : smr::obj_base<object<Domain>, Domain, counting_deleter<Domain>> {
    static constexpr std::uint64_t intact = 0x5EA1'5EA1'5EA1'5EA1ull;
    explicit object(std::uint64_t t) noexcept : tag(t) {}
    ~object() { *static_cast<volatile std::uint64_t*>(&seal) = 0; }  // kept by the optimizer
    std::uint64_t tag;
    std::uint64_t seal = intact;
};

template <class Domain>
void counting_deleter<Domain>::operator()(object<Domain>* o) const noexcept {
    if (o->tag != tag || o->seal != object<Domain>::intact) wrong_tag->fetch_add(1);
    delete o;
    deleted->fetch_add(1, std::memory_order_relaxed);
}

struct tally {
    std::atomic<std::uint64_t> deleted{0};
    std::atomic<std::uint64_t> wrong_tag{0};
    template <class Domain>
    counting_deleter<Domain> deleter_for(std::uint64_t tag) {
        return {&deleted, &wrong_tag, tag};
    }
};

/// One writer operation: publishes a fresh object and retires the old one.
template <class Domain>
void replace_object(Domain& domain, smr::context_ref<Domain> self,
                    std::atomic<object<Domain>*>& cell, tally& counts, std::uint64_t tag) {
    {
        smr::op_guard op(domain, self);
        object<Domain>* old = cell.exchange(new object<Domain>(tag), std::memory_order_acq_rel);
        old->retire(domain, self, counts.deleter_for<Domain>(old->tag));
    }
    domain.quiescent(self);
}

// Every retired object reaches its own deleter exactly once, with the state
// it was retired with; the domain allocated nothing.
TYPED_TEST(user_object_test, each_object_reaches_its_deleter_once) {
    using Domain = TypeParam;
    tally counts;
    constexpr std::uint64_t replacements = 1000;
    {
        smr::domain_config config = smr::test::eager_config();
        config.bag_threshold = 8;  // nbrplus needs room between its watermarks
        Domain domain(config);
        smr::context self(domain);
        std::atomic<object<Domain>*> cell{new object<Domain>(0)};
        for (std::uint64_t i = 1; i <= replacements; ++i)
            replace_object(domain, self, cell, counts, i);
        EXPECT_EQ(domain.stats().allocated, 0u);
        EXPECT_EQ(domain.stats().retired, replacements);
        delete cell.load();  // never retired: its user frees it
    }
    EXPECT_EQ(counts.deleted.load(), replacements);
    EXPECT_EQ(counts.wrong_tag.load(), 0u);
}

// rcu, he, ibr and wfe advance their epoch or era every epoch_freq x T
// allocations of a thread; a program that allocates its own objects must still see them
// freed while it runs, not only at a barrier (without obj_base::retire's
// clock tick, none of them was). liburcu frees on its own call_rcu thread,
// whenever that runs, and none frees nothing while the domain lives: for
// them the barrier is the check.
TYPED_TEST(user_object_test, retiring_only_user_objects_frees_them_while_running) {
    using Domain = TypeParam;
    constexpr auto family = Domain::traits.family;
    smr::domain_config config;  // the defaults, epoch_freq 150 included
    config.max_threads = 2;
    config.bag_threshold = 16;
    tally counts;
    Domain domain(config);
    smr::context self(domain);
    std::atomic<object<Domain>*> cell{new object<Domain>(0)};
    constexpr std::uint64_t replacements = 20'000;
    for (std::uint64_t i = 1; i <= replacements; ++i) replace_object(domain, self, cell, counts, i);
    if constexpr (family == smr::reclaimer_family::leak) {
        EXPECT_EQ(counts.deleted.load(), 0u);
    } else {
        if constexpr (family != smr::reclaimer_family::external) {
            EXPECT_GE(counts.deleted.load(), replacements / 2) << "freeing did not keep up";
        }
        domain.barrier(self);
        EXPECT_EQ(counts.deleted.load(), replacements);
    }
    EXPECT_EQ(counts.wrong_tag.load(), 0u);
    delete cell.load();
}

// More threads than cores: readers read the current object while writers
// replace it with new ones and retire the old; a reader that meets a freed
// object is a use-after-free under ASan and a torn seal elsewhere.
TYPED_TEST(user_object_test, readers_never_meet_a_deleted_object) {
    using Domain = TypeParam;
    const int threads = smr::test::default_stress_threads();
    smr::domain_config config = smr::test::eager_config();
    config.max_threads = static_cast<std::size_t>(threads) + 1;
    config.bag_threshold = 8;
    tally counts;
    std::atomic<int> torn{0};
    std::uint64_t retired = 0;
    {
        Domain domain(config);
        std::atomic<object<Domain>*> cell{new object<Domain>(0)};
        constexpr int iterations = 10'000;
        std::barrier start(threads);
        std::vector<std::thread> workers;
        for (int t = 0; t < threads; ++t) {
            workers.emplace_back([&, t] {
                smr::context self(domain);
                start.arrive_and_wait();
                for (int i = 0; i < iterations; ++i) {
                    if (!smr::test::read_intact(domain, self, cell)) torn.fetch_add(1);
                    if (t % 2 == 0 && i % 4 == 0) {
                        const auto tag = static_cast<std::uint64_t>(t) << 32 | i;
                        replace_object(domain, self, cell, counts, tag);
                    }
                }
            });
        }
        for (auto& worker : workers) worker.join();
        retired = domain.stats().retired;
        delete cell.load();
    }
    EXPECT_EQ(torn.load(), 0);
    EXPECT_EQ(counts.wrong_tag.load(), 0u);
    EXPECT_GT(retired, 0u);
    EXPECT_EQ(counts.deleted.load(), retired) << "an object was deleted twice or never";
}

}  // namespace
