// STAMP's Kmeans on smrlab's STM (bench/stamp/kmeans.hpp): a quick, contended
// size verifies at 1, 2 and 4 clients and STAMP's simulator inputs at 4; the
// verification fails on a corrupted result, naming what is wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/guards.hpp"
#include "stamp/kmeans.hpp"

namespace smrbench::stamp {

/// The tests' way into a clustering's result (befriended by kmeans_clustering).
struct kmeans_testing {
    template <class Domain>
    static std::vector<int>& membership(kmeans_clustering<Domain>& c) {
        return c.membership_;
    }
    template <class Domain>
    static std::vector<double>& centers(kmeans_clustering<Domain>& c) {
        return c.centers_;
    }
    template <class Domain>
    static auto& records(kmeans_clustering<Domain>& c) {
        return c.records_;
    }
    template <class Domain>
    static long& iterations(kmeans_clustering<Domain>& c) {
        return c.iterations_;
    }
};

namespace {

constexpr smr::stm::stm_config small_table{.ort_bits = 16, .shift = 5};

/// Two and three clusters of 4 features: every client adds to the same few
/// clusters' words at once, so that an addition lost under contention (the
/// kmeans_center_add_uninstrumented mutant) shows within a run; two cluster
/// counts, as STAMP's -n to -m loop; small enough for ASan.
kmeans_params quick() {
    kmeans_params p;
    p.max_clusters = 3;
    p.min_clusters = 2;
    p.threshold = 0.001;  // STAMP's default: stops once at most 2 of the 2048 points move
    p.points = 2048;
    p.dimensions = 4;
    p.generated_clusters = 16;
    return p;
}

TEST(Kmeans, NamedInputsAreStamps) {
    const kmeans_params low = kmeans_input("kmeans-low");
    EXPECT_EQ(low.max_clusters, 40);
    EXPECT_EQ(low.min_clusters, 40);
    EXPECT_EQ(low.threshold, 0.05);
    EXPECT_EQ(low.points, 2048);
    EXPECT_EQ(low.dimensions, 16);
    EXPECT_EQ(low.generated_clusters, 16);
    const kmeans_params high_plus = kmeans_input("kmeans-high+");
    EXPECT_EQ(high_plus.max_clusters, 15);
    EXPECT_EQ(high_plus.min_clusters, 15);
    EXPECT_EQ(high_plus.threshold, 0.05);
    EXPECT_EQ(high_plus.points, 16384);
    EXPECT_EQ(high_plus.dimensions, 24);
    const kmeans_params high_plus_plus = kmeans_input("kmeans-high++");
    EXPECT_EQ(high_plus_plus.max_clusters, 15);
    EXPECT_EQ(high_plus_plus.threshold, 0.00001);
    EXPECT_EQ(high_plus_plus.points, 65536);
    EXPECT_EQ(high_plus_plus.dimensions, 32);
    const std::vector<std::string_view> expected{"kmeans-low",   "kmeans-high",  "kmeans-low+",
                                                 "kmeans-high+", "kmeans-low++", "kmeans-high++"};
    EXPECT_EQ(kmeans_inputs(), expected);
    for (const std::string_view name : kmeans_inputs()) {
        EXPECT_NO_THROW(kmeans_input(name).check(4)) << name;
    }
    try {
        kmeans_input("kmeans-medium");
        FAIL() << "an unknown input was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()),
                  "unknown Kmeans input 'kmeans-medium' (one of kmeans-low, kmeans-high, "
                  "kmeans-low+, kmeans-high+, kmeans-low++, kmeans-high++)");
    }
}

TEST(Kmeans, PointsAreDeterministicZScoredAndOnTheirGrid) {
    const kmeans_params params = quick();
    const kmeans_points points = generate_kmeans_points(params);
    const kmeans_points again = generate_kmeans_points(params);
    EXPECT_EQ(points.features, again.features);
    ASSERT_EQ(points.features.size(), static_cast<std::size_t>(params.points * params.dimensions));
    const auto d = static_cast<std::size_t>(params.dimensions);
    std::vector<std::int64_t> totals(d, 0);
    std::vector<double> sums(d, 0), squares(d, 0);
    for (std::size_t w = 0; w != points.features.size(); ++w) {
        ASSERT_EQ(points.features[w], static_cast<double>(points.quanta[w]) * points.quantum);
        totals[w % d] += points.quanta[w];
        sums[w % d] += points.features[w];
        squares[w % d] += points.features[w] * points.features[w];
    }
    EXPECT_EQ(totals, points.column_totals);
    const auto n = static_cast<double>(params.points);
    for (std::size_t j = 0; j != d; ++j) {
        EXPECT_NEAR(sums[j] / n, 0.0, 1e-6) << "feature " << j;
        EXPECT_NEAR(squares[j] / n, 1.0, 1e-6) << "feature " << j;
    }
    kmeans_params other = params;
    other.seed = 1;
    EXPECT_NE(generate_kmeans_points(other).features, points.features);
}

/// The clustering does not depend on the clients: every run reproduces the
/// sequential one, so the point transactions are the same count each time.
TEST(Kmeans, QuickSizeVerifiesWithOneTwoAndFourClients) {
    const kmeans_params params = quick();
    long tasks = 0;
    for (const int clients : {1, 2, 4}) {
        const app_run run = run_kmeans(params, clients, small_table);
        EXPECT_TRUE(run.validation.ok) << clients << " clients: " << run.validation.error;
        EXPECT_GE(run.tasks, 2 * params.points) << clients << " clients";  // two cluster counts
        EXPECT_EQ(run.tasks % params.points, 0) << clients << " clients";
        // and each client's chunk and delta transactions
        EXPECT_GT(run.stm.commits, static_cast<std::uint64_t>(run.tasks)) << clients;
        EXPECT_GT(run.seconds, 0.0);
        if (tasks == 0) tasks = run.tasks;
        EXPECT_EQ(run.tasks, tasks) << clients << " clients";
    }
}

/// Two clusters that every point's transaction updates, 16,384 points per
/// iteration: the most contended clustering, where a lost update is all but
/// certain if a transaction's read escapes the STM (the mutant
/// kmeans_center_add_uninstrumented; the quick size alone kills it in about
/// 87 % of runs, this one in every run).
TEST(Kmeans, TwoContendedClustersVerifyWithTwoAndFourClients) {
    kmeans_params params = quick();
    params.max_clusters = 2;
    params.points = 16384;
    params.dimensions = 2;
    for (const int clients : {2, 4}) {
        const app_run run = run_kmeans(params, clients, small_table);
        EXPECT_TRUE(run.validation.ok) << clients << " clients: " << run.validation.error;
        EXPECT_EQ(run.tasks % params.points, 0) << clients << " clients";
    }
}

TEST(Kmeans, LowAndHighVerifyWithFourClients) {
    for (const char* name : {"kmeans-low", "kmeans-high"}) {
        const kmeans_params params = kmeans_input(name);
        const app_run run = run_kmeans(params, 4, small_table);
        EXPECT_TRUE(run.validation.ok) << name << ": " << run.validation.error;
        EXPECT_GE(run.tasks, params.points) << name;
        EXPECT_EQ(run.tasks % params.points, 0) << name;
    }
}

void expect_refused(const kmeans_params& p, long clients, const std::string& named) {
    try {
        p.check(clients);
        ADD_FAILURE() << "accepted, expected a refusal naming " << named;
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
    }
}

TEST(Kmeans, ParametersOutOfRangeAreRefused) {
    const kmeans_params high = kmeans_input("kmeans-high");
    EXPECT_NO_THROW(high.check(1));
    expect_refused(high, 0, "clients (-p)");
    kmeans_params p = high;
    p.min_clusters = 0;
    expect_refused(p, 1, "min clusters (-n)");
    p = high;
    p.max_clusters = 14;  // below -n15
    expect_refused(p, 1, "max clusters (-m) must be at least");
    p = high;
    p.points = 14;
    p.generated_clusters = 4;
    expect_refused(p, 1, "max clusters (-m) must not exceed");
    p = high;
    p.threshold = -0.1;
    expect_refused(p, 1, "threshold (-t)");
    p.threshold = std::numeric_limits<double>::quiet_NaN();
    expect_refused(p, 1, "threshold (-t)");
    p = high;
    p.points = 1;
    expect_refused(p, 1, "points (the input's n)");
    p = high;
    p.dimensions = 0;
    expect_refused(p, 1, "dimensions (the input's d)");
    p = high;
    p.generated_clusters = 0;
    expect_refused(p, 1, "generated clusters (the input's c)");
    EXPECT_THROW(run_kmeans(p, 1, small_table), std::invalid_argument);
}

/// A clustering after one client's run of the quick size's first cluster
/// count, for corrupting.
struct ran {
    kmeans_params params = quick();
    kmeans_points points = generate_kmeans_points(params);
    smr::debra_domain domain{[] {
        smr::domain_config c;
        c.max_threads = 2;
        return c;
    }()};
    kmeans_clustering<smr::debra_domain> clustering{domain, small_table, points,
                                                    params.max_clusters};

    ran() {
        clustering.reset(params.min_clusters, params.threshold);
        const client_phase phase = clustering.run(1);
        EXPECT_TRUE(phase.validation().ok) << phase.validation().error;
    }

    void expect_caught(const std::string& error, const std::function<void()>& corrupt,
                       const std::function<void()>& undo) {
        ASSERT_TRUE(clustering.validate().ok) << "valid before the corruption";
        corrupt();
        const smr::ds::validation_result r = clustering.validate();
        EXPECT_FALSE(r.ok);
        EXPECT_NE(r.error.find(error), std::string::npos) << "error: " << r.error;
        undo();
        EXPECT_TRUE(clustering.validate().ok) << "valid after the undo";
    }
};

TEST(Kmeans, ALostCountIsCaughtInItsIteration) {
    ran r;
    auto& first = kmeans_testing::records(r.clustering)[0];
    r.expect_caught(
        "iteration 1: the clusters counted 2047 of 2048 points", [&] { --first.counted; },
        [&] { ++first.counted; });
}

TEST(Kmeans, ALostSumIsCaughtInItsIteration) {
    ran r;
    auto& first = kmeans_testing::records(r.clustering)[0];
    r.expect_caught(
        "iteration 1: the clusters' sums are not the points' totals",
        [&] { first.sums_match = false; }, [&] { first.sums_match = true; });
}

TEST(Kmeans, ALostDeltaIsCaught) {
    ran r;
    const long last = r.clustering.iterations() - 1;
    auto& record = kmeans_testing::records(r.clustering)[static_cast<std::size_t>(last)];
    r.expect_caught(
        "the shared delta is", [&] { ++record.delta; }, [&] { --record.delta; });
}

TEST(Kmeans, APointInAnotherClusterThanItsNearestIsCaught) {
    ran r;
    int& member = kmeans_testing::membership(r.clustering)[0];
    const int was = member;
    r.expect_caught(
        "point 0 is in cluster", [&] { member = (was + 1) % 2; }, [&] { member = was; });
}

TEST(Kmeans, ACenterOffItsMembersMeanIsCaught) {
    ran r;
    double& coordinate = kmeans_testing::centers(r.clustering)[0];
    const double was = coordinate;
    r.expect_caught(
        "center 0: coordinate 0 is",
        [&] { coordinate = std::nextafter(was, std::numeric_limits<double>::infinity()); },
        [&] { coordinate = was; });
}

TEST(Kmeans, AnIterationCountOffTheSequentialOneIsCaught) {
    ran r;
    long& iterations = kmeans_testing::iterations(r.clustering);
    ASSERT_GE(iterations, 2) << "the quick size converges in one iteration";
    r.expect_caught(
        "in the sequential clustering", [&] { --iterations; }, [&] { ++iterations; });
}

/// STAMP's loop rule: delta / n <= -t stops it, and no share exceeds 1.
TEST(Kmeans, AThresholdOfOneStopsAfterOneIteration) {
    ran r;
    r.clustering.reset(r.params.max_clusters, 1.0);
    const client_phase phase = r.clustering.run(1);
    EXPECT_TRUE(phase.validation().ok) << phase.validation().error;
    EXPECT_EQ(r.clustering.iterations(), 1);
    EXPECT_EQ(r.clustering.assignments(), r.params.points);
    const smr::ds::validation_result v = r.clustering.validate();
    EXPECT_TRUE(v.ok) << v.error;
    EXPECT_THROW(r.clustering.run(1), std::logic_error) << "a second run without a reset";
}

}  // namespace
}  // namespace smrbench::stamp
