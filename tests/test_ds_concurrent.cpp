// Multi-threaded stress tests of every set data structure under every
// reclaimer of smr::all_domains, with batch and amortized free. Small key ranges make
// updates collide and nodes be retired and freed constantly; with DEBRA the
// nodes really are freed, so a use-after-free shows up under AddressSanitizer
// and a missing happens-before under ThreadSanitizer.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "smr/ds/dgt_bst.hpp"
#include "smr/ds/lazylist.hpp"
#include "smr/reclaim/all.hpp"
#include "stress.hpp"

namespace {

template <class Domain, template <class...> class DS>
struct combo {
    using domain_type = Domain;
    template <class D>
    using structure = DS<D>;
    static std::string name() {
        return std::string(DS<Domain>::name) + "_" + std::string(Domain::traits.name);
    }
    static smr::test::stress_result run(const smr::test::stress_options& options) {
        return smr::test::run_stress<Domain, DS>(options);
    }
};

template <class Tuple, template <class...> class DS>
struct combos_for;
template <class... Domains, template <class...> class DS>
struct combos_for<std::tuple<Domains...>, DS> {
    using type = std::tuple<combo<Domains, DS>...>;
};

template <class Tuple>
struct as_gtest_types;
template <class... Ts>
struct as_gtest_types<std::tuple<Ts...>> {
    using type = ::testing::Types<Ts...>;
};

// Every reclaimer x every set. A new reclaimer added to smr::all_domains is
// stress-tested here without further changes.
using combos = as_gtest_types<decltype(std::tuple_cat(
    std::declval<combos_for<smr::all_domains, smr::ds::lazylist>::type>(),
    std::declval<combos_for<smr::all_domains, smr::ds::dgt_bst>::type>()))>::type;

struct combo_names {
    template <class C>
    static std::string GetName(int) {
        return C::name();
    }
};

template <class C>
class DsConcurrent : public ::testing::Test {
  protected:
    static constexpr bool frees = !std::is_same_v<typename C::domain_type, smr::leak_domain>;

    /// Runs, checks the result and the domain's counters, returns the result.
    smr::test::stress_result run_and_check(const smr::test::stress_options& options) {
        const smr::test::stress_result r = C::run(options);
        EXPECT_TRUE(r.ok()) << r.error;
        EXPECT_TRUE(r.validation.ok) << r.validation.error;
        EXPECT_EQ(r.operations, options.ops_per_thread * std::uint64_t(options.threads));
        EXPECT_GT(r.inserted, 0u);
        EXPECT_GT(r.erased, 0u);
        EXPECT_LE(r.stats.freed, r.stats.retired);
        if constexpr (frees) {
            // Nodes really were freed while threads ran.
            EXPECT_GT(r.stats.freed, 0u);
        } else {
            EXPECT_EQ(r.stats.freed, 0u);
        }
        return r;
    }

    static smr::test::stress_options options(smr::free_mode mode, std::int64_t key_range) {
        smr::test::stress_options o;
        o.key_range = key_range;
        o.ops_per_thread = 60000;
        o.rounds = 3;
        o.cfg.free.mode = mode;
        // rcu scans its retire list at this length: small, so it frees
        // constantly (the default, 32K, is more than a test retires).
        o.cfg.bag_threshold = 128;
        return o;
    }
};

TYPED_TEST_SUITE(DsConcurrent, combos, combo_names);

TYPED_TEST(DsConcurrent, UpdatesBatchFree) {
    this->run_and_check(this->options(smr::free_mode::batch, 32));
}

TYPED_TEST(DsConcurrent, UpdatesAmortizedFree) {
    this->run_and_check(this->options(smr::free_mode::amortized, 32));
}

TYPED_TEST(DsConcurrent, MixedTinyRange) {
    // 16 keys: every update collides; a third of the operations are contains.
    auto o = this->options(smr::free_mode::amortized, 16);
    o.insert_pct = 35;
    o.erase_pct = 35;
    const auto r = this->run_and_check(o);
    EXPECT_GT(r.found, 0u);
}

TYPED_TEST(DsConcurrent, LargerRangeBatchFree) {
    this->run_and_check(this->options(smr::free_mode::batch, 64));
}

TYPED_TEST(DsConcurrent, ManyRoundsReuseSlots) {
    // Threads come and go 20 times; each new thread inherits a slot (and its
    // limbo bags) from a departed one.
    auto o = this->options(smr::free_mode::batch, 32);
    o.rounds = 20;
    o.ops_per_thread = 20000;
    this->run_and_check(o);
}

}  // namespace
