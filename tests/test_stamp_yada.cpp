// STAMP's Yada on smrlab's STM (bench/stamp/yada.hpp): the input mesh is a
// Delaunay triangulation with STAMP's element counts, a quick size verifies
// at 1, 2 and 4 clients and STAMP's simulator input at 4; the verification
// fails on an unrefined or corrupted mesh, naming what is wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/guards.hpp"
#include "stamp/yada.hpp"

namespace smrbench::stamp {

/// The tests' way into a refiner's mesh (befriended by yada_refiner).
struct yada_testing {
    template <class Domain>
    static yada_element* root(yada_refiner<Domain>& r) {
        return r.mesh_->root;
    }
    template <class Domain>
    static yada_heap& heap(yada_refiner<Domain>& r) {
        return *r.heap_;
    }
    template <class Domain>
    static double& angle(yada_refiner<Domain>& r) {
        return r.angle_;
    }
};

namespace {

constexpr smr::stm::stm_config small_table{.ort_bits = 16, .shift = 5};

/// 240 points, 12 segments, 20 degrees: a few hundred refinements, so that
/// every client meets the others' cavities and each refinement hands
/// several new bad triangles to the heap at once; small enough for ASan and
/// TSan.
yada_params quick() {
    yada_params p;
    p.angle = 20.0;
    p.points = 240;
    p.boundary_segments = 12;
    p.seed = 0;
    return p;
}

smr::domain_config two_threads() {
    smr::domain_config c;
    c.max_threads = 2;  // the constructor's thread, then one client
    return c;
}

std::string refusal(const yada_params& params, long clients) {
    try {
        params.check(clients);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "accepted";
}

/// As the verification names a triangle.
std::string name_of(const yada_element& e) {
    std::string out = e.corner_count == 2 ? "segment" : "triangle";
    for (std::int64_t i = 0; i != e.corner_count; ++i) {
        out += " (" + std::to_string(e.corners[i].x) + ", " + std::to_string(e.corners[i].y) + ")";
    }
    return out;
}

TEST(Yada, NamedInputsAreStamps) {
    const yada_params simulator = yada_input("yada");
    EXPECT_EQ(simulator.angle, 20.0);
    EXPECT_EQ(simulator.points, 633);
    EXPECT_EQ(simulator.boundary_segments, 16);
    EXPECT_EQ(simulator.seed, 0U);
    const yada_params plus = yada_input("yada+");
    EXPECT_EQ(plus.angle, 10.0);
    EXPECT_EQ(plus.points, 10000);
    EXPECT_EQ(plus.boundary_segments, 23);
    const yada_params plus_plus = yada_input("yada++");
    EXPECT_EQ(plus_plus.angle, 15.0);
    EXPECT_EQ(plus_plus.points, 1000000);
    EXPECT_EQ(plus_plus.boundary_segments, 43);
    const std::vector<std::string_view> expected{"yada", "yada+", "yada++"};
    EXPECT_EQ(yada_inputs(), expected);
    for (const std::string_view name : yada_inputs()) {
        EXPECT_EQ(refusal(yada_input(name), 4), "accepted") << name;
    }
    try {
        yada_input("yada+++");
        FAIL() << "an unknown input was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()),
                  "unknown Yada input 'yada+++' (one of yada, yada+, yada++)");
    }
}

/// Brute force: every triangle counterclockwise, its circumcircle empty of
/// all vertices, its neighbours' links symmetric, the areas the square's,
/// and Euler's counts for the vertices on the boundary.
TEST(Yada, TheInputMeshIsDelaunay) {
    const yada_input_mesh mesh = make_yada_input(240, 12, 0);
    ASSERT_EQ(mesh.triangles.size(), 2U * 240 - 12 - 2);
    EXPECT_EQ(mesh.vertices, 240);
    EXPECT_EQ(mesh.boundary_segments(), 12);
    std::set<yada_point> vertices;
    for (const auto& t : mesh.triangles) vertices.insert(t.begin(), t.end());
    EXPECT_EQ(vertices.size(), 240U);
    std::int64_t twice_area = 0;
    for (std::size_t t = 0; t != mesh.triangles.size(); ++t) {
        const auto& c = mesh.triangles[t];
        ASSERT_GT(orientation(c[0], c[1], c[2]), 0) << "triangle " << t;
        twice_area += orientation(c[0], c[1], c[2]);
        for (const yada_point v : vertices) {
            ASSERT_LE(in_circle(c[0], c[1], c[2], v), 0) << "triangle " << t << " holds a vertex";
        }
        for (std::size_t i = 0; i != 3; ++i) {
            const std::int32_t u = mesh.adjacent[t][i];
            if (u < 0) continue;
            const auto& other = mesh.adjacent[static_cast<std::size_t>(u)];
            EXPECT_NE(std::find(other.begin(), other.end(), static_cast<std::int32_t>(t)),
                      other.end())
                << "triangle " << t << "'s neighbour " << u << " does not list it back";
        }
    }
    EXPECT_EQ(twice_area, 2 * yada_side * yada_side);
}

/// STAMP's files' counts: 633.2 has 1,248 triangles and 16 segments,
/// ttimeu10000.2 19,975 and 23. The same seed gives the same mesh.
TEST(Yada, TheInputMeshesHaveStampsCounts) {
    const yada_input_mesh simulator = make_yada_input(633, 16, 0);
    EXPECT_EQ(simulator.triangles.size(), 1248U);
    EXPECT_EQ(simulator.boundary_segments(), 16);
    const yada_input_mesh plus = make_yada_input(10000, 23, 0);
    EXPECT_EQ(plus.triangles.size(), 19975U);
    EXPECT_EQ(plus.boundary_segments(), 23);
    EXPECT_EQ(make_yada_input(633, 16, 0).triangles, simulator.triangles);
    EXPECT_NE(make_yada_input(633, 16, 1).triangles, simulator.triangles);
}

TEST(Yada, TheUnrefinedMeshIsAValidTriangulation) {
    smr::debra_domain domain{two_threads()};
    yada_refiner<smr::debra_domain> refiner(domain, small_table, quick());
    EXPECT_EQ(refiner.initial_elements(), 2 * 240 - 2);
    EXPECT_GT(refiner.initial_bad(), 0);
    const smr::ds::validation_result r = refiner.validate_triangulation();
    EXPECT_TRUE(r.ok) << r.error;
}

/// Five transactions per element refined, and each client's last pop.
void expect_quick_run_verifies(int clients) {
    const app_run run = run_yada(quick(), clients, small_table);
    EXPECT_TRUE(run.validation.ok) << clients << " clients: " << run.validation.error;
    EXPECT_GT(run.tasks, 0);
    EXPECT_GE(run.stm.commits, static_cast<std::uint64_t>(5 * run.tasks + clients));
    EXPECT_GT(run.seconds, 0.0);
}

TEST(Yada, QuickSizeVerifiesWithOneClient) { expect_quick_run_verifies(1); }
TEST(Yada, QuickSizeVerifiesWithTwoClients) { expect_quick_run_verifies(2); }
TEST(Yada, QuickSizeVerifiesWithFourClients) { expect_quick_run_verifies(4); }

TEST(Yada, OneClientRefinesDeterministically) {
    const app_run first = run_yada(quick(), 1, small_table);
    const app_run second = run_yada(quick(), 1, small_table);
    ASSERT_TRUE(first.validation.ok) << first.validation.error;
    EXPECT_EQ(first.tasks, second.tasks);
    EXPECT_EQ(first.stm.commits, second.stm.commits);
}

TEST(Yada, SimulatorInputVerifiesWithFourClients) {
    const app_run run = run_yada(yada_input("yada"), 4, small_table);
    EXPECT_TRUE(run.validation.ok) << run.validation.error;
    EXPECT_GT(run.tasks, 0);
}

TEST(Yada, ParametersOutOfRangeAreRefused) {
    const yada_params ok = quick();
    EXPECT_EQ(refusal(ok, 1), "accepted");
    EXPECT_NE(refusal(ok, 0).find("clients (-t)"), std::string::npos);
    for (const double angle : {0.0, -5.0, 25.0, std::numeric_limits<double>::quiet_NaN()}) {
        yada_params p = ok;
        p.angle = angle;
        EXPECT_NE(refusal(p, 1).find("angle constraint (-a)"), std::string::npos) << angle;
    }
    yada_params p = ok;
    p.angle = yada_max_angle;
    EXPECT_EQ(refusal(p, 1), "accepted");
    p = ok;
    p.boundary_segments = 3;
    EXPECT_NE(refusal(p, 1).find("the boundary segments must"), std::string::npos) << refusal(p, 1);
    p = ok;
    p.points = 11;  // fewer than the 12 boundary vertices
    EXPECT_NE(refusal(p, 1).find("the points must"), std::string::npos) << refusal(p, 1);
    EXPECT_THROW(run_yada(p, 1, small_table), std::invalid_argument);
    EXPECT_THROW(run_yada(ok, 0, small_table), std::invalid_argument);
    EXPECT_THROW(make_yada_input(3, 4, 0), std::invalid_argument);
}

/// What STAMP's heap would leave behind if it lost its entries: the input's
/// bad triangles, skinny or encroaching.
TEST(Yada, AnUnrefinedMeshIsCaught) {
    smr::debra_domain domain{two_threads()};
    yada_refiner<smr::debra_domain> refiner(domain, small_table, quick());
    const smr::ds::validation_result r = refiner.validate();
    EXPECT_FALSE(r.ok);
    const bool skinny = r.error.find("below the constraint of 20") != std::string::npos;
    const bool encroaching = r.error.find("encroaches on it") != std::string::npos;
    EXPECT_TRUE(r.error.starts_with("triangle (") && (skinny || encroaching)) << r.error;
}

// ---- corruptions of a refined mesh -----------------------------------------------

/// Takes `gone` out of `list`; returns its node, kept for the undo.
yada_node* take_out(yada_list& list, const yada_element* gone) {
    for (yada_node* previous = &list.head; previous->next != nullptr; previous = previous->next) {
        yada_node* n = previous->next;
        if (n->data != gone) continue;
        previous->next = n->next;
        --list.size;
        return n;
    }
    return nullptr;
}

/// Puts back a node `take_out` took, at its place in the list's order.
void put_back(yada_list& list, yada_node* node) {
    yada_node* previous = &list.head;
    while (previous->next != nullptr && precedes(*previous->next->data, *node->data)) {
        previous = previous->next;
    }
    node->next = previous->next;
    previous->next = node;
    ++list.size;
}

/// A refiner after one client's run of the quick size, for corrupting.
struct ran {
    smr::debra_domain domain{two_threads()};
    yada_refiner<smr::debra_domain> refiner{domain, small_table, quick()};
    client_phase phase = refiner.run(1);

    /// A triangle other than the root whose three neighbours are triangles.
    yada_element& inner_triangle() {
        yada_element* root = yada_testing::root(refiner);
        std::vector<yada_element*> queue{root};
        std::set<yada_element*> seen{root};
        for (std::size_t i = 0; i != queue.size(); ++i) {
            yada_element* e = queue[i];
            int triangles = 0;
            for (yada_node* n = e->neighbors->head.next; n != nullptr; n = n->next) {
                triangles += n->data->corner_count == 3 ? 1 : 0;
                if (seen.insert(n->data).second) queue.push_back(n->data);
            }
            if (e != root && e->corner_count == 3 && triangles == 3) return *e;
        }
        throw std::logic_error("no triangle inside the mesh");
    }

    void expect_caught(const std::string& error, const std::function<void()>& corrupt,
                       const std::function<void()>& undo) {
        ASSERT_TRUE(phase.validation().ok) << phase.validation().error;
        ASSERT_TRUE(refiner.validate().ok) << "valid before: " << refiner.validate().error;
        corrupt();
        const smr::ds::validation_result r = refiner.validate();
        EXPECT_FALSE(r.ok);
        EXPECT_NE(r.error.find(error), std::string::npos) << "error: " << r.error;
        undo();
        EXPECT_TRUE(refiner.validate().ok) << "valid after the undo: " << refiner.validate().error;
    }
};

TEST(Yada, ASkinnyTriangleIsCaught) {
    ran r;
    double& angle = yada_testing::angle(r.refiner);
    r.expect_caught(
        "below the constraint of 30", [&] { angle = 30.0; }, [&] { angle = 20.0; });
}

/// One side of a neighbour link gone: the verification names the triangle
/// that lost it, from either side.
TEST(Yada, ABrokenNeighbourLinkIsCaught) {
    ran r;
    yada_element& t = r.inner_triangle();
    yada_element* u = t.neighbors->head.next->data;
    yada_node* taken = nullptr;
    r.expect_caught(
        name_of(t), [&] { taken = take_out(*t.neighbors, u); },
        [&] { put_back(*t.neighbors, taken); });
}

/// A triangle unlinked from its three neighbours: the walk from the root no
/// longer finds it, and the mesh has a hole.
TEST(Yada, AMissingTriangleIsCaught) {
    ran r;
    yada_element& t = r.inner_triangle();
    std::vector<std::pair<yada_list*, yada_node*>> taken;
    r.expect_caught(
        "elements reachable from its root",
        [&] {
            for (yada_node* n = t.neighbors->head.next; n != nullptr; n = n->next) {
                taken.emplace_back(n->data->neighbors, take_out(*n->data->neighbors, &t));
            }
        },
        [&] {
            for (const auto& [list, node] : taken) put_back(*list, node);
        });
}

/// Two corners swapped: the triangle covers its area negatively, and the
/// mesh no longer adds up to the square.
TEST(Yada, AnInvertedTriangleIsCaught) {
    ran r;
    yada_element& t = r.inner_triangle();
    r.expect_caught(
        "twice the triangles' areas add up to", [&] { std::swap(t.corners[1], t.corners[2]); },
        [&] { std::swap(t.corners[1], t.corners[2]); });
}

TEST(Yada, AGarbageElementInTheMeshIsCaught) {
    ran r;
    yada_element& t = r.inner_triangle();
    r.expect_caught(
        name_of(t) + " is garbage", [&] { t.garbage = 1; }, [&] { t.garbage = 0; });
}

TEST(Yada, AnElementLeftInTheHeapIsCaught) {
    ran r;
    yada_heap& heap = yada_testing::heap(r.refiner);
    r.expect_caught(
        "the work heap still holds 1 elements",
        [&] {
            heap.elements[1] = yada_testing::root(r.refiner);
            heap.size = 1;
        },
        [&] { heap.size = 0; });
}

}  // namespace
}  // namespace smrbench::stamp
