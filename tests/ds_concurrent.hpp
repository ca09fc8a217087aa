// The multi-threaded stress suite of a set data structure, as a typed test
// suite that each tests/ds_concurrent/<structure>.cpp instantiates for one
// structure with every reclaimer safe on it. One translation unit per
// structure: each instantiates the structure with ~17 reclaimers, which
// takes minutes to compile under a sanitizer, and separate units build in
// parallel.
//
// Small key ranges make updates collide and nodes be retired and freed
// constantly; the nodes really are freed while threads run (checked), so a
// use-after-free shows up under AddressSanitizer and a missing happens-before
// under ThreadSanitizer.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "smr/compatibility.hpp"
#include "smr/reclaim/all.hpp"
#include "stress.hpp"
#include "tested_domains.hpp"

namespace smr::test {

/// One structure under one reclaimer: the type parameter of the suite.
template <class Domain, template <class...> class DS>
struct combo {
    using domain_type = Domain;
    /// Retires pointer blocks of the STM's frees, 60 frees to a retire.
    static constexpr bool transactional = smr::ds_traits_of<DS<Domain>>().transactional;
    static std::string name() { return std::string(Domain::traits.name); }
    static stress_result run(const stress_options& options) {
        return run_stress<Domain, DS>(options);
    }
};

template <class Tuple>
struct as_gtest_types;
template <class... Ts>
struct as_gtest_types<std::tuple<Ts...>> {
    using type = ::testing::Types<Ts...>;
};

/// Which reclaimers of `Domains` a structure is stress-tested with in this
/// build. Every one that smr::check calls safe with DS (an unsafe pair, hp
/// with lazylist say, would fail for the reason the table gives, not because
/// of a bug) -- except under ThreadSanitizer for a structure other than the
/// one that carries every reclaimer: there the first safe reclaimer of each
/// family. TSan judges two things here: the structure's own publication and
/// marking (any reclaimer exercises them), and each family's protect and
/// restart path through the structure (one reclaimer per family does); the
/// reclaimers' own synchronization is judged on the carrier and in
/// test_reclaimers. That keeps the TSan stage to minutes on two cores.
template <template <class...> class DS, bool CarriesEveryReclaimer, class... Domains>
constexpr auto selected_for_stress() {
    constexpr std::size_t n = sizeof...(Domains);
    constexpr std::array<bool, n> safe{smr::check<DS<Domains>, Domains>().safe...};
    constexpr std::array<reclaimer_family, n> family{Domains::traits.family...};
    std::array<bool, n> selected{};
    for (std::size_t i = 0; i < n; ++i) {
        selected[i] = safe[i];
        if (!thread_sanitizer_build || CarriesEveryReclaimer) continue;
        for (std::size_t j = 0; j < i && selected[i]; ++j) {
            if (safe[j] && family[j] == family[i]) selected[i] = false;
        }
    }
    return selected;
}

template <template <class...> class DS, bool CarriesEveryReclaimer, class Tuple,
          class Indices = std::make_index_sequence<std::tuple_size_v<Tuple>>>
struct stress_combos_of;
template <template <class...> class DS, bool CarriesEveryReclaimer, class... Domains,
          std::size_t... I>
struct stress_combos_of<DS, CarriesEveryReclaimer, std::tuple<Domains...>,
                        std::index_sequence<I...>> {
    static constexpr auto selected = selected_for_stress<DS, CarriesEveryReclaimer, Domains...>();
    using type = decltype(std::tuple_cat(
        std::declval<
            std::conditional_t<selected[I], std::tuple<combo<Domains, DS>>, std::tuple<>>>()...));
};

/// The gtest type list of DS's stress combinations (see selected_for_stress).
template <template <class...> class DS, bool CarriesEveryReclaimer = false>
using stress_combos = typename as_gtest_types<
    typename stress_combos_of<DS, CarriesEveryReclaimer, tested_domains>::type>::type;

/// Type names in test names: the reclaimer's run-time name (the structure is
/// the instantiation's prefix: lazylist/DsConcurrent/debra.UpdatesBatchFree).
struct combo_names {
    template <class C>
    static std::string GetName(int) {
        return C::name();
    }
};

template <class C>
class DsConcurrent : public ::testing::Test {
  protected:
    static constexpr bool frees = C::domain_type::traits.family != reclaimer_family::leak;
    static constexpr std::uint64_t min_retired_for_ratio = 1000;

    /// Runs, checks the result and the domain's counters, returns the result.
    stress_result run_and_check(const stress_options& options) {
        const stress_result r = C::run(options);
        EXPECT_TRUE(r.ok()) << r.error;
        EXPECT_TRUE(r.validation.ok) << r.validation.error;
        EXPECT_EQ(r.operations, options.ops_per_thread * std::uint64_t(options.threads));
        EXPECT_GT(r.inserted, 0u);
        EXPECT_GT(r.erased, 0u);
        EXPECT_LE(r.stats.freed, r.stats.retired);
        if constexpr (frees) {
            // Reclamation kept up while threads ran and were preempted: at
            // least half of what was retired is freed by the end, once enough
            // was retired for half to mean that. Below min_retired_for_ratio
            // the last epochs' bags, which the end of a run legitimately
            // holds, can be half on their own (a transactional list on 16
            // keys retires about 240 nodes; 116 of 238 were freed in one run
            // under rcu). liburcu frees on its own call_rcu thread, which runs
            // behind the workers by design (and is liburcu's to test).
            EXPECT_GT(r.stats.freed, 0u);
            if (C::domain_type::traits.family != reclaimer_family::external &&
                r.stats.retired >= min_retired_for_ratio) {
                EXPECT_GE(r.stats.freed, r.stats.retired / 2)
                    << r.stats.freed << " freed of " << r.stats.retired << " retired";
            }
        } else {
            EXPECT_EQ(r.stats.freed, 0u);
        }
        return r;
    }

    /// A transactional structure's operation costs five times a set's (a
    /// logged read per node, validation, an exception per abort; in release,
    /// 720,000 operations on 8 threads take 0.53 s on stm_rbtree and 0.11 s
    /// on hm_list), and under the sanitizers its tests were half of this
    /// suite's time. With a third of the operations a test still retires
    /// over 300 pointer blocks (80,000 operations), a scan every second one
    /// at the thresholds below.
    ///
    /// Under ThreadSanitizer an operation costs 5 to 10 times more again, and
    /// this suite was two thirds of the TSan stage (608 of 879 test-s in CI).
    /// With half the operations a set's test still retires and frees about
    /// 30,000 nodes while 8 threads run (10,000 in ManyRoundsReuseSlots), a
    /// transactional structure's about 170 pointer blocks (10,000 frees):
    /// what TSan needs to see is every retire-to-free path raced against
    /// every protect, and it sees each thousands of times. Each reclaimer's own
    /// synchronization is judged apart, in test_reclaimers and test_barrier.
    static constexpr std::uint64_t ops_per_thread =
        (C::transactional ? 10000 : 30000) / (thread_sanitizer_build ? 2 : 1);

    static stress_options options(free_mode mode, std::int64_t key_range) {
        stress_options o;
        o.key_range = key_range;
        // Four threads per core, not two: a thread is preempted inside an
        // operation several times a round (rounds of ~15 ms are a few time
        // slices), so reservations and announcements go stale while others
        // retire. The same operations in all as with half the threads.
        o.threads = 2 * default_stress_threads();
        o.ops_per_thread = ops_per_thread;
        o.rounds = 3;
        o.cfg.free.mode = mode;
        // The reservation schemes' two fence modes (smr::fence_mode), each
        // on every structure without doubling the suite: Michael's full
        // fences with batch free, membarrier with amortized.
        o.cfg.fence =
            mode == free_mode::batch ? smr::fence_mode::symmetric : smr::fence_mode::asymmetric;
        // rcu scans its retire list at this length: small, so it frees
        // constantly (the default, 32K, is more than a test retires).
        o.cfg.bag_threshold = 128;
        // The era schemes (rcu, he, ibr, wfe) advance their clock every
        // epoch_freq x T allocations of a thread: at the default (150) and 8
        // threads, every 1,200, more than a thread of ManyRoundsReuseSlots
        // allocates in a round, so a scan found almost nothing older than
        // the oldest announcement (9,905 freed of 19,967 retired under TSan
        // in CI). At 16, a thread's clock moves every 128 allocations, as
        // often as it scans.
        o.cfg.epoch_freq = 16;
        // A transactional structure allocates and retires one pointer block
        // per 60 frees: thresholds 60 times smaller keep the scans (and rcu's
        // allocation-counted epoch advances) as frequent.
        if constexpr (C::transactional) {
            o.cfg.bag_threshold = 2;
            o.cfg.epoch_freq = 2;
        }
        return o;
    }
};

TYPED_TEST_SUITE_P(DsConcurrent);

TYPED_TEST_P(DsConcurrent, UpdatesBatchFree) {
    this->run_and_check(this->options(free_mode::batch, 32));
}

TYPED_TEST_P(DsConcurrent, UpdatesAmortizedFree) {
    this->run_and_check(this->options(free_mode::amortized, 32));
}

TYPED_TEST_P(DsConcurrent, MixedTinyRange) {
    // 16 keys: every update collides; a third of the operations are contains.
    auto o = this->options(free_mode::amortized, 16);
    o.insert_pct = 35;
    o.erase_pct = 35;
    const auto r = this->run_and_check(o);
    EXPECT_GT(r.found, 0u);
}

TYPED_TEST_P(DsConcurrent, LargerRangeBatchFree) {
    this->run_and_check(this->options(free_mode::batch, 64));
}

TYPED_TEST_P(DsConcurrent, ManyRoundsReuseSlots) {
    // Threads come and go 20 times; each new thread inherits a slot (and its
    // limbo bags) from a departed one.
    auto o = this->options(free_mode::batch, 32);
    o.rounds = 20;
    o.ops_per_thread = TestFixture::ops_per_thread / 3;
    this->run_and_check(o);
}

REGISTER_TYPED_TEST_SUITE_P(DsConcurrent, UpdatesBatchFree, UpdatesAmortizedFree, MixedTinyRange,
                            LargerRangeBatchFree, ManyRoundsReuseSlots);

}  // namespace smr::test
