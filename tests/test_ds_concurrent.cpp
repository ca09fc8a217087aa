// Multi-threaded stress tests of every set data structure under every
// reclaimer of smr::all_domains, with batch and amortized free. Small key ranges make
// updates collide and nodes be retired and freed constantly; with DEBRA the
// nodes really are freed, so a use-after-free shows up under AddressSanitizer
// and a missing happens-before under ThreadSanitizer.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "smr/compatibility.hpp"
#include "smr/ds/abtree.hpp"
#include "smr/ds/dgt_bst.hpp"
#include "smr/ds/harris_list.hpp"
#include "smr/ds/hm_list.hpp"
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

template <class Tuple>
struct as_gtest_types;
template <class... Ts>
struct as_gtest_types<std::tuple<Ts...>> {
    using type = ::testing::Types<Ts...>;
};

/// hm_list built with ds_options::restart_from_head (the NBR paper's E4
/// "restarts" variant), as a type of its own for the typed tests.
template <class Domain>
class hm_list_restarting : public smr::ds::hm_list<Domain> {
  public:
    static constexpr std::string_view name = "hm_list_restarting";
    explicit hm_list_restarting(Domain& domain)
        : smr::ds::hm_list<Domain>(domain, smr::ds::ds_options{.restart_from_head = true}) {}
};

/// combo<D, DS> for every domain D of `Tuple` that smr::check calls safe with
/// DS: an unsafe pair (hp with lazylist, ...) would fail for the reason the
/// table gives, not because of a bug. A reclaimer added to smr::all_domains
/// is stress-tested here with every structure it is safe with.
template <template <class...> class DS, class Tuple>
struct safe_combos_for;
template <template <class...> class DS, class... Domains>
struct safe_combos_for<DS, std::tuple<Domains...>> {
    using type = decltype(std::tuple_cat(
        std::declval<std::conditional_t<smr::check<DS<Domains>, Domains>().safe,
                                        std::tuple<combo<Domains, DS>>, std::tuple<>>>()...));
};

using combos = as_gtest_types<decltype(std::tuple_cat(
    std::declval<safe_combos_for<smr::ds::lazylist, smr::all_domains>::type>(),
    std::declval<safe_combos_for<smr::ds::dgt_bst, smr::all_domains>::type>(),
    std::declval<safe_combos_for<smr::ds::harris_list, smr::all_domains>::type>(),
    std::declval<safe_combos_for<smr::ds::hm_list, smr::all_domains>::type>(),
    std::declval<safe_combos_for<hm_list_restarting, smr::all_domains>::type>(),
    std::declval<safe_combos_for<smr::ds::abtree, smr::all_domains>::type>()))>::type;

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
