// Linearizability of every structure of smrbench's registry, under one
// reclaimer of each family the structure accepts (smr::check), as a typed
// test suite that each tests/lincheck_runs/<group>.cpp instantiates for its
// structures (one translation unit per group: they build in parallel).
//
// Each test repeats short recorded runs (tests/lincheck/drive.hpp) with
// different seeds and checks every history: the answers of the operations,
// which the stress tests' key sums and validate() cannot see.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <utility>

#include "lincheck/drive.hpp"
#include "smr/compatibility.hpp"
#include "smr/reclaim/all.hpp"
#include "tested_domains.hpp"

namespace smr::test {

/// One structure under one reclaimer: the type parameter of the suite.
template <class Domain, template <class...> class DS>
struct lincheck_combo {
    static constexpr bool is_queue = smr::ds_traits_of<DS<Domain>>().is_queue;
    static constexpr bool transactional = smr::ds_traits_of<DS<Domain>>().transactional;
    static std::string name() { return std::string(Domain::traits.name); }
    static lincheck::run_result run(const lincheck::run_options& o) {
        if constexpr (is_queue) {
            return lincheck::run_queue<Domain, DS>(o);
        } else {
            return lincheck::run_set<Domain, DS>(o);
        }
    }
};

/// Which of `Domains` check a structure: the first that smr::check calls
/// safe with it in each reclaimer family, and every scheme that publishes on
/// ping (the newest schemes, each a combination of its own).
template <template <class...> class DS, class... Domains>
constexpr auto one_per_family() {
    constexpr std::size_t n = sizeof...(Domains);
    constexpr std::array<bool, n> safe{smr::check<DS<Domains>, Domains>().safe...};
    constexpr std::array<reclaimer_family, n> family{Domains::traits.family...};
    constexpr std::array<bool, n> pings{Domains::traits.pings...};
    std::array<bool, n> selected{};
    for (std::size_t i = 0; i < n; ++i) {
        selected[i] = safe[i];
        if (pings[i]) continue;
        for (std::size_t j = 0; j < i && selected[i]; ++j) {
            if (safe[j] && family[j] == family[i] && !pings[j]) selected[i] = false;
        }
    }
    return selected;
}

template <template <class...> class DS, class Tuple,
          class Indices = std::make_index_sequence<std::tuple_size_v<Tuple>>>
struct lincheck_combos_of;
template <template <class...> class DS, class... Domains, std::size_t... I>
struct lincheck_combos_of<DS, std::tuple<Domains...>, std::index_sequence<I...>> {
    static constexpr auto selected = one_per_family<DS, Domains...>();
    using tuple = decltype(std::tuple_cat(
        std::declval<std::conditional_t<selected[I], std::tuple<lincheck_combo<Domains, DS>>,
                                        std::tuple<>>>()...));
};

template <class Tuple>
struct lincheck_gtest_types;
template <class... Ts>
struct lincheck_gtest_types<std::tuple<Ts...>> {
    using type = ::testing::Types<Ts...>;
};

/// The gtest type list of DS's combinations.
template <template <class...> class DS>
using lincheck_combos =
    typename lincheck_gtest_types<typename lincheck_combos_of<DS, tested_domains>::tuple>::type;

struct lincheck_combo_names {
    template <class C>
    static std::string GetName(int) {
        return C::name();
    }
};

/// A positive whole number from the environment variable `name`, else
/// `fallback`; a test fails on anything else (a contributor's typo must not
/// run the default silently).
inline std::uint64_t knob(const char* name, std::uint64_t fallback) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') return fallback;
    char* end = nullptr;
    const unsigned long long value = std::strtoull(text, &end, 10);
    if (*end != '\0' || value == 0 || text[0] == '-') {
        ADD_FAILURE() << name << "=" << text << ": expected a positive whole number";
        return fallback;
    }
    return value;
}

template <class C>
class Linearizable : public ::testing::Test {
  protected:
    static lincheck::run_options options(std::int64_t key_range) {
        lincheck::run_options o;
        o.key_range = key_range;
        // More threads than the 2 cores of the test machines.
        o.threads = static_cast<int>(knob("SMR_LINCHECK_THREADS", 4));
        o.ops_per_thread = knob("SMR_LINCHECK_OPS", 1'500);
        if constexpr (C::is_queue) {
            o.insert_pct = 50;
            // A queue's configuration copies and hashes the whole queue: a
            // history whose search explodes (a thread preempted across much
            // of the run, as on a loaded CI machine) would take minutes to
            // exhaust the default budget. Given up on, it is replaced.
            o.max_configurations = 300'000;
        }
        o.max_configurations = knob("SMR_LINCHECK_BUDGET", o.max_configurations);
        // A transactional structure retires one pointer block per 60 frees:
        // smaller thresholds keep frees happening during the run.
        if constexpr (C::transactional) {
            o.cfg.bag_threshold = 2;
            o.cfg.epoch_freq = 2;
        }
        return o;
    }

    /// Checks SMR_LINCHECK_RUNS (10) recorded runs, each with its own seed;
    /// stops at the first that fails. A history the checker gives up on
    /// (verdict::too_hard: neither proven nor refuted) is replaced by another
    /// run, up to as many again; more than that fails the test, which must
    /// not pass on histories it never checked. Prints what the runs cost.
    static void run_repeatedly(lincheck::run_options o) {
        const std::uint64_t runs = knob("SMR_LINCHECK_RUNS", 10);
        double recording = 0;
        double checking = 0;
        std::size_t configurations = 0;
        std::uint64_t checked = 0;
        std::uint64_t gave_up = 0;
        for (std::uint64_t attempt = 0; checked < runs; ++attempt) {
            ASSERT_LT(attempt, 2 * runs)
                << "the checker gave up on " << gave_up << " of " << attempt << " histories";
            o.seed = 0x5eed0000u + attempt;
            // Half the runs with each fence mode of the reservation schemes
            // (smr::fence_mode; the other schemes read no fence).
            o.cfg.fence =
                attempt % 2 == 0 ? smr::fence_mode::asymmetric : smr::fence_mode::symmetric;
            const lincheck::run_result r = C::run(o);
            recording += r.record_seconds;
            checking += r.check_seconds;
            configurations += r.checked.configurations;
            if (r.error.empty() && r.checked.answer == lincheck::verdict::too_hard) {
                ++gave_up;
                continue;
            }
            ASSERT_TRUE(r.ok()) << "run " << attempt + 1 << " (seed " << o.seed
                                << "): " << r.text();
            ASSERT_EQ(r.checked.checked, static_cast<std::size_t>(o.threads) * o.ops_per_thread);
            ++checked;
        }
        std::printf(
            "[ lincheck  ] %llu histories of %llu operations (%llu more given up on): recorded "
            "in %.3f s, checked in %.3f s (%.0f histories/s, %zu configurations)\n",
            static_cast<unsigned long long>(runs),
            static_cast<unsigned long long>(o.threads * o.ops_per_thread),
            static_cast<unsigned long long>(gave_up), recording, checking,
            checking > 0 ? static_cast<double>(runs + gave_up) / checking : 0.0, configurations);
    }
};

TYPED_TEST_SUITE_P(Linearizable);

// Sets: two keys, every operation races with the others. The queue: as
// many enqueues as dequeues, so it hovers near empty.
TYPED_TEST_P(Linearizable, HeavyConflict) { this->run_repeatedly(this->options(2)); }

// Sets: eight keys, longer structures (rotations, splits, longer chains). The
// queue: two enqueues to a dequeue, so it grows.
TYPED_TEST_P(Linearizable, LightConflict) {
    auto o = this->options(8);
    if constexpr (TypeParam::is_queue) o.insert_pct = 65;
    this->run_repeatedly(o);
}

REGISTER_TYPED_TEST_SUITE_P(Linearizable, HeavyConflict, LightConflict);

}  // namespace smr::test
