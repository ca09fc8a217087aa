// STAMP's SSCA2 on smrlab's STM (bench/stamp/ssca2.hpp): the scalable data
// is sorted and in range, a quick size verifies at 1, 2 and 4 clients, a hub
// that overflows its fixed slots chains its blocks under contention, and the
// verification fails on a corrupted graph, naming the vertex.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/guards.hpp"
#include "stamp/ssca2.hpp"

namespace smrbench::stamp {

/// The tests' way into a graph's result (befriended by ssca2_graph).
struct ssca2_testing {
    template <class Domain>
    static std::vector<std::int64_t>& out_degree(ssca2_graph<Domain>& g) {
        return g.out_degree_;
    }
    template <class Domain>
    static std::vector<std::int64_t>& out_index(ssca2_graph<Domain>& g) {
        return g.out_index_;
    }
    template <class Domain>
    static std::vector<std::int64_t>& out_list(ssca2_graph<Domain>& g) {
        return g.out_list_;
    }
    template <class Domain>
    static std::vector<std::int64_t>& in_degree(ssca2_graph<Domain>& g) {
        return g.in_degree_;
    }
    template <class Domain>
    static std::vector<std::int64_t>& in_index(ssca2_graph<Domain>& g) {
        return g.in_index_;
    }
    template <class Domain>
    static std::vector<std::int64_t>& in_list(ssca2_graph<Domain>& g) {
        return g.in_list_;
    }
};

namespace {

constexpr smr::stm::stm_config small_table{.ort_bits = 16, .shift = 5};

/// STAMP's simulator input at -s10: 1024 vertices, 8 fixed in-edge slots
/// each; small enough for ASan and TSan.
ssca2_params quick() {
    ssca2_params p = ssca2_input("ssca2");
    p.scale = 10;
    return p;
}

std::string refusal(const ssca2_params& params, long clients) {
    try {
        params.check(clients);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "accepted";
}

smr::domain_config threads(std::size_t n) {
    smr::domain_config c;
    c.max_threads = n;
    return c;
}

TEST(Ssca2, NamedInputsAreStamps) {
    const long scales[] = {13, 14, 20};
    const std::vector<std::string_view> expected{"ssca2", "ssca2+", "ssca2++"};
    EXPECT_EQ(ssca2_inputs(), expected);
    for (std::size_t i = 0; i != expected.size(); ++i) {
        const ssca2_params p = ssca2_input(expected[i]);
        EXPECT_EQ(p.scale, scales[i]) << expected[i];
        EXPECT_EQ(p.inter_clique, 1.0) << expected[i];
        EXPECT_EQ(p.unidirectional, 1.0) << expected[i];
        EXPECT_EQ(p.max_path_length, 3) << expected[i];
        EXPECT_EQ(p.max_parallel_edges, 3) << expected[i];
        EXPECT_EQ(refusal(p, 4), "accepted") << expected[i];
    }
    try {
        ssca2_input("ssca2+++");
        FAIL() << "an unknown input was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()),
                  "unknown SSCA2 input 'ssca2+++' (one of ssca2, ssca2+, ssca2++)");
    }
}

TEST(Ssca2, ParametersOutOfRangeAreRefused) {
    const ssca2_params ok = quick();
    EXPECT_EQ(refusal(ok, 1), "accepted");
    EXPECT_NE(refusal(ok, 0).find("clients (-t)"), std::string::npos);
    const auto expect_refused = [&](const std::function<void(ssca2_params&)>& spoil,
                                    const std::string& named) {
        ssca2_params p = ok;
        spoil(p);
        EXPECT_NE(refusal(p, 1).find(named), std::string::npos) << refusal(p, 1);
    };
    expect_refused([](ssca2_params& p) { p.scale = 2; }, "problem scale (-s)");
    expect_refused([](ssca2_params& p) { p.scale = 21; }, "problem scale (-s)");
    expect_refused([](ssca2_params& p) { p.inter_clique = -0.1; }, "inter-clique probability (-i)");
    expect_refused([](ssca2_params& p) { p.inter_clique = 1.5; }, "inter-clique probability (-i)");
    expect_refused([](ssca2_params& p) { p.unidirectional = 2; },
                   "unidirectional probability (-u)");
    expect_refused([](ssca2_params& p) { p.max_path_length = 0; }, "max path length (-l)");
    expect_refused([](ssca2_params& p) { p.max_parallel_edges = 0; }, "max parallel edges (-p)");
    expect_refused([](ssca2_params& p) { p.int_weight_share = -1; }, "integer weight share (-w)");
    ssca2_params bad = ok;
    bad.scale = 0;
    EXPECT_THROW(run_ssca2(bad, 1, small_table), std::invalid_argument);
    EXPECT_THROW(run_ssca2(ok, 0, small_table), std::invalid_argument);
}

/// The list is sorted by (start, end), every vertex in range, no self-loop;
/// the same params give the same list.
TEST(Ssca2, TheDataIsSortedAndInRange) {
    const ssca2_data d = generate_ssca2_data(quick());
    EXPECT_EQ(d.generated_vertices, 1024);
    EXPECT_EQ(d.max_cluster, 8);
    ASSERT_GT(d.edges(), 1024);
    ASSERT_EQ(d.end.size(), d.start.size());
    ASSERT_EQ(d.weight.size(), d.start.size());
    for (std::size_t j = 0; j != d.start.size(); ++j) {
        ASSERT_TRUE(d.start[j] >= 0 && d.start[j] < 1024 && d.end[j] >= 0 && d.end[j] < 1024);
        ASSERT_NE(d.start[j], d.end[j]) << "edge " << j;
        if (j > 0) {
            ASSERT_TRUE(d.start[j - 1] < d.start[j] ||
                        (d.start[j - 1] == d.start[j] && d.end[j - 1] <= d.end[j]))
                << "edge " << j;
        }
    }
    const ssca2_data again = generate_ssca2_data(quick());
    EXPECT_EQ(again.start, d.start);
    EXPECT_EQ(again.end, d.end);
    EXPECT_EQ(again.weight, d.weight);
}

/// A graph after its run, for counting and corrupting.
struct ran {
    ssca2_data data;
    smr::debra_domain domain;
    ssca2_graph<smr::debra_domain> graph;
    client_phase phase;

    ran(ssca2_data d, int clients)
        : data(std::move(d)),
          domain(threads(static_cast<std::size_t>(clients) + 1)),
          graph(domain, small_table, data),
          phase(graph.run(clients)) {}

    /// The first vertex with at least `n` entries in `degrees`.
    std::int64_t vertex_with(const std::vector<std::int64_t>& degrees, std::int64_t n) {
        const auto it =
            std::find_if(degrees.begin(), degrees.end(), [n](std::int64_t d) { return d >= n; });
        if (it == degrees.end()) ADD_FAILURE() << "no vertex of degree " << n;
        return it == degrees.end() ? 0 : it - degrees.begin();
    }

    void expect_caught(const std::string& error, const std::function<void()>& corrupt,
                       const std::function<void()>& undo) {
        ASSERT_TRUE(phase.validation().ok) << phase.validation().error;
        ASSERT_TRUE(graph.validate().ok) << "valid before the corruption";
        corrupt();
        const smr::ds::validation_result r = graph.validate();
        EXPECT_FALSE(r.ok);
        EXPECT_NE(r.error.find(error), std::string::npos) << "error: " << r.error;
        undo();
        EXPECT_TRUE(graph.validate().ok) << "valid after the undo";
    }
};

/// Two transactions per client and one per implied in-edge, all committed.
void expect_quick_run_verifies(int clients) {
    ran r(generate_ssca2_data(quick()), clients);
    ASSERT_TRUE(r.phase.validation().ok) << clients << " clients: " << r.phase.validation().error;
    const smr::ds::validation_result v = r.graph.validate();
    EXPECT_TRUE(v.ok) << clients << " clients: " << v.error;
    EXPECT_EQ(r.graph.vertices(), 1024);
    EXPECT_GT(r.graph.implied_edges(), 1024);
    EXPECT_EQ(r.graph.transactional_memory().stats().commits,
              static_cast<std::uint64_t>(2 * clients + r.graph.implied_edges()));
    EXPECT_GT(r.phase.seconds, 0.0);

    const app_run run = run_ssca2(quick(), clients, small_table);
    EXPECT_TRUE(run.validation.ok) << clients << " clients: " << run.validation.error;
    EXPECT_EQ(run.tasks, static_cast<long>(run.stm.commits));
    EXPECT_EQ(run.tasks, 2 * clients + r.graph.implied_edges());
}

TEST(Ssca2, QuickSizeVerifiesWithOneClient) { expect_quick_run_verifies(1); }
TEST(Ssca2, QuickSizeVerifiesWithTwoClients) { expect_quick_run_verifies(2); }
TEST(Ssca2, QuickSizeVerifiesWithFourClients) { expect_quick_run_verifies(4); }

/// Vertices 1..n all point at vertex 0 (3 twice, a parallel edge), and 0
/// points back at 5 only: 0 gets n - 1 implied in-edges, past its fixed
/// slots into a chain of overflow blocks, every client appending to it.
ssca2_data hub(std::int64_t n, long slots) {
    ssca2_data d;
    d.generated_vertices = static_cast<long>(n + 1);
    d.max_cluster = slots;
    const auto add = [&d](std::int64_t from, std::int64_t to) {
        d.start.push_back(from);
        d.end.push_back(to);
        d.weight.push_back(1);
    };
    add(0, 5);
    for (std::int64_t u = 1; u <= n; ++u) {
        add(u, 0);
        if (u == 3) add(u, 0);
    }
    return d;
}

TEST(Ssca2, AHubChainsItsOverflowBlocks) {
    for (const long slots : {2L, 4L, 8L}) {
        for (const int clients : {1, 4}) {
            ran r(hub(200, slots), clients);
            ASSERT_TRUE(r.phase.validation().ok) << r.phase.validation().error;
            const smr::ds::validation_result v = r.graph.validate();
            EXPECT_TRUE(v.ok) << slots << " slots, " << clients << " clients: " << v.error;
            EXPECT_EQ(r.graph.implied_edges(), 199);
            EXPECT_EQ(ssca2_testing::in_degree(r.graph).at(0), 199);
        }
    }
}

TEST(Ssca2, ALostInEdgeIsCaught) {
    ran r(generate_ssca2_data(quick()), 1);
    std::vector<std::int64_t>& in_list = ssca2_testing::in_list(r.graph);
    const std::int64_t v = r.vertex_with(ssca2_testing::in_degree(r.graph), 1);
    std::int64_t& entry = in_list.at(
        static_cast<std::size_t>(ssca2_testing::in_index(r.graph).at(static_cast<std::size_t>(v))));
    const std::int64_t was = entry;
    r.expect_caught(
        "vertex " + std::to_string(v) + ": its in-neighbours", [&] { entry = v; },
        [&] { entry = was; });  // v is never its own in-neighbour: no self-loops
}

TEST(Ssca2, AWrongDegreeIsCaught) {
    ran r(generate_ssca2_data(quick()), 1);
    std::int64_t& degree = ssca2_testing::out_degree(r.graph).at(0);
    r.expect_caught(
        "vertex 0: out-degree", [&] { ++degree; }, [&] { --degree; });
    std::int64_t& in = ssca2_testing::in_degree(r.graph).at(0);
    r.expect_caught(
        "vertex 0: in-degree", [&] { ++in; }, [&] { --in; });
}

TEST(Ssca2, ADuplicatedEdgeIsCaught) {
    ran r(generate_ssca2_data(quick()), 1);
    const std::int64_t v = r.vertex_with(ssca2_testing::out_degree(r.graph), 2);
    std::vector<std::int64_t>& out_list = ssca2_testing::out_list(r.graph);
    const auto first =
        static_cast<std::size_t>(ssca2_testing::out_index(r.graph).at(static_cast<std::size_t>(v)));
    const std::int64_t was = out_list.at(first + 1);
    r.expect_caught(
        "vertex " + std::to_string(v) + ": its out-neighbours",
        [&] { out_list.at(first + 1) = out_list.at(first); },
        [&] { out_list.at(first + 1) = was; });
}

TEST(Ssca2, AGraphRunsOnce) {
    ran r(hub(10, 2), 1);
    EXPECT_THROW(r.graph.run(1), std::logic_error);
}

}  // namespace
}  // namespace smrbench::stamp
