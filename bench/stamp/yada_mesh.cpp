// Yada's geometry and input mesh (bench/stamp/yada_mesh.hpp says what and why).
#include "stamp/yada_mesh.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

namespace smrbench::stamp {
namespace {

/// The incircle determinant's terms reach 2^122 for points in
/// [-side, 2 x side]^2: a GCC and Clang extension, as smr::core::uint128.
__extension__ typedef __int128 exact_wide;

constexpr std::int32_t none = -1;

/// The margin a refinement point may lie outside the square (see
/// refinement_point): the predicates are exact out to a whole side.
constexpr long double margin = static_cast<long double>(yada_side) / 2;

std::int64_t dot(yada_point v, yada_point a, yada_point b) noexcept {
    return (a.x - v.x) * (b.x - v.x) + (a.y - v.y) * (b.y - v.y);
}

/// The angle at v of v, a, b, in radians.
long double angle_at(yada_point v, yada_point a, yada_point b) noexcept {
    const std::int64_t cross = orientation(v, a, b);
    const auto sine = static_cast<long double>(cross < 0 ? -cross : cross);
    return std::atan2(sine, static_cast<long double>(dot(v, a, b)));
}

bool in_margin(long double x, long double y) noexcept {
    const long double low = -margin;
    const long double high = static_cast<long double>(yada_side) + margin;
    return x >= low && x <= high && y >= low && y <= high;
}

/// The largest t in (0, 1] for which from + t (to - from) is within the
/// margin along one axis (`from` is inside the square).
long double clip(long double from, long double to, long double t) noexcept {
    const long double high = static_cast<long double>(yada_side) + margin;
    if (to > high) return std::min(t, (high - from) / (to - from));
    if (to < -margin) return std::min(t, (-margin - from) / (to - from));
    return t;
}

yada_point on_grid(long double x, long double y) noexcept {
    return {static_cast<std::int64_t>(std::llround(x)), static_cast<std::int64_t>(std::llround(y))};
}

/// A Delaunay triangulation grown by Bowyer-Watson insertion: each new point
/// removes the triangles whose circumcircle holds it and fans the hole's rim
/// out from it. The square's corners come first (two triangles); a point on
/// a boundary edge splits it (the rim edge it lies on is left out of the
/// fan). Triangles are slots in a vector, reused as cavities free them.
class square_triangulation {
  public:
    explicit square_triangulation(std::size_t points) {
        points_.reserve(points);
        triangles_.reserve(2 * points);
        const std::int64_t s = yada_side;
        points_ = {{0, 0}, {s, 0}, {s, s}, {0, s}};
        allocate({0, 1, 2}, {none, none, 1});
        allocate({0, 2, 3}, {0, none, none});
    }

    void insert(yada_point p) {
        const auto index = static_cast<std::int32_t>(points_.size());
        points_.push_back(p);
        collect_cavity(locate(p), p);
        collect_rims(p);
        for (const std::int32_t t : cavity_) release(t);
        fan(index);
    }

    yada_input_mesh finish() const {
        std::vector<std::int32_t> renumbered(triangles_.size(), none);
        std::int32_t count = 0;
        for (std::size_t t = 0; t != triangles_.size(); ++t) {
            if (alive(static_cast<std::int32_t>(t))) renumbered[t] = count++;
        }
        yada_input_mesh out;
        out.vertices = static_cast<long>(points_.size());
        out.triangles.reserve(static_cast<std::size_t>(count));
        out.adjacent.reserve(static_cast<std::size_t>(count));
        for (std::size_t t = 0; t != triangles_.size(); ++t) {
            if (renumbered[t] == none) continue;
            const triangle& tri = triangles_[t];
            std::array<std::int32_t, 3> across{};
            for (int i = 0; i != 3; ++i) {
                const std::int32_t n = tri.across[static_cast<std::size_t>(i)];
                across[static_cast<std::size_t>(i)] =
                    n == none ? none : renumbered[static_cast<std::size_t>(n)];
            }
            out.triangles.push_back(
                {point(tri.corner[0]), point(tri.corner[1]), point(tri.corner[2])});
            out.adjacent.push_back(across);
        }
        return out;
    }

  private:
    /// Point indices, counterclockwise (corner[0] none: a free slot), and
    /// the triangle across each edge i (corner i to i + 1), or none.
    struct triangle {
        std::array<std::int32_t, 3> corner;
        std::array<std::int32_t, 3> across;
    };
    /// An edge of the cavity's rim, directed as in its cavity triangle.
    struct rim {
        std::int32_t from;
        std::int32_t to;
        std::int32_t outside;  ///< the triangle beyond it, or none (the boundary)
    };

    yada_point point(std::int32_t i) const { return points_[static_cast<std::size_t>(i)]; }
    triangle& at(std::int32_t t) { return triangles_[static_cast<std::size_t>(t)]; }
    const triangle& at(std::int32_t t) const { return triangles_[static_cast<std::size_t>(t)]; }
    bool alive(std::int32_t t) const { return at(t).corner[0] != none; }
    bool marked(std::int32_t t) const { return mark_[static_cast<std::size_t>(t)] == stamp_; }

    /// The visibility walk from the last triangle made: across any edge the
    /// point is beyond. It ends on a Delaunay triangulation (Edelsbrunner);
    /// the bound only turns a bug into an error.
    std::int32_t locate(yada_point p) const {
        std::int32_t t = last_;
        for (std::size_t steps = 0; steps <= triangles_.size(); ++steps) {
            const std::int32_t next = step_towards(t, p);
            if (next == t) return t;
            t = next;
        }
        throw std::logic_error("yada: the walk to a new input point does not end");
    }

    std::int32_t step_towards(std::int32_t t, yada_point p) const {
        const triangle& tri = at(t);
        for (std::size_t i = 0; i != 3; ++i) {
            if (orientation(point(tri.corner[i]), point(tri.corner[(i + 1) % 3]), p) >= 0) continue;
            if (tri.across[i] == none)
                throw std::logic_error("yada: an input point outside the square");
            return tri.across[i];
        }
        return t;
    }

    bool encircles(std::int32_t t, yada_point p) const {
        const triangle& tri = at(t);
        return in_circle(point(tri.corner[0]), point(tri.corner[1]), point(tri.corner[2]), p) > 0;
    }

    /// The triangle holding p and every triangle connected to it whose
    /// circumcircle holds p strictly.
    void collect_cavity(std::int32_t first, yada_point p) {
        ++stamp_;
        cavity_.assign(1, first);
        mark_[static_cast<std::size_t>(first)] = stamp_;
        for (std::size_t i = 0; i != cavity_.size(); ++i) {
            const std::array<std::int32_t, 3> across = at(cavity_[i]).across;
            for (const std::int32_t n : across) {
                if (n == none || marked(n) || !encircles(n, p)) continue;
                mark_[static_cast<std::size_t>(n)] = stamp_;
                cavity_.push_back(n);
            }
        }
    }

    /// The cavity's rim, each edge seeing p strictly on its inner side but a
    /// boundary edge p lies on, which p splits.
    void collect_rims(yada_point p) {
        rims_.clear();
        for (const std::int32_t c : cavity_) {
            const triangle& tri = at(c);
            for (std::size_t i = 0; i != 3; ++i) {
                const std::int32_t n = tri.across[i];
                if (n != none && marked(n)) continue;
                const rim edge{tri.corner[i], tri.corner[(i + 1) % 3], n};
                const std::int64_t side = orientation(point(edge.from), point(edge.to), p);
                if (side == 0 && n == none) continue;
                if (side <= 0) {
                    throw std::logic_error(
                        "yada: a cavity of the input triangulation is not star-shaped");
                }
                rims_.push_back(edge);
            }
        }
    }

    void release(std::int32_t t) {
        at(t).corner[0] = none;
        free_.push_back(t);
    }

    std::int32_t allocate(std::array<std::int32_t, 3> corner, std::array<std::int32_t, 3> across) {
        std::int32_t t;
        if (free_.empty()) {
            t = static_cast<std::int32_t>(triangles_.size());
            triangles_.push_back({corner, across});
            mark_.push_back(0);
        } else {
            t = free_.back();
            free_.pop_back();
            at(t) = {corner, across};
        }
        return t;
    }

    /// A triangle from the new point to each rim edge; each takes its rim
    /// edge's outside neighbour, and each spoke from the new point joins the
    /// two triangles on its sides (a spoke with one: a boundary edge).
    void fan(std::int32_t p) {
        fresh_.clear();
        for (const rim& edge : rims_) {
            const std::int32_t t = allocate({p, edge.from, edge.to}, {none, edge.outside, none});
            if (edge.outside != none) face(edge.outside, edge.to, edge.from, t);
            fresh_.push_back(t);
        }
        for (const std::int32_t t : fresh_) {
            for (const std::int32_t u : fresh_) {
                // t's spoke out to its first rim corner is u's spoke back from it.
                if (at(u).corner[2] != at(t).corner[1]) continue;
                at(t).across[0] = u;
                at(u).across[2] = t;
            }
        }
        last_ = fresh_.front();
    }

    /// Triangle t's edge from..to now has `neighbour` across it.
    void face(std::int32_t t, std::int32_t from, std::int32_t to, std::int32_t neighbour) {
        triangle& tri = at(t);
        for (std::size_t i = 0; i != 3; ++i) {
            if (tri.corner[i] == from && tri.corner[(i + 1) % 3] == to) {
                tri.across[i] = neighbour;
                return;
            }
        }
        throw std::logic_error("yada: a rim edge missing from the triangle beyond it");
    }

    std::vector<yada_point> points_;
    std::vector<triangle> triangles_;
    std::vector<std::int32_t> free_;
    std::vector<std::uint32_t> mark_;  // == stamp_: in the current cavity
    std::uint32_t stamp_ = 0;
    std::vector<std::int32_t> cavity_;
    std::vector<rim> rims_;
    std::vector<std::int32_t> fresh_;
    std::int32_t last_ = 0;
};

/// A grid coordinate strictly between 0 and the side.
std::int64_t draw_inside(std::mt19937& g) {
    return 1 + static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(yada_side - 1));
}

/// The split points of the four sides (bottom, right, top, left): side s
/// gets segments / 4 segments, one more for the first segments % 4 sides.
std::vector<yada_point> side_points(std::mt19937& g, long segments) {
    std::vector<yada_point> out;
    for (long side = 0; side != 4; ++side) {
        const long count = segments / 4 + (side < segments % 4 ? 1 : 0) - 1;
        std::unordered_set<std::int64_t> taken;
        while (static_cast<long>(taken.size()) != count) {
            const std::int64_t at = draw_inside(g);
            if (!taken.insert(at).second) continue;
            const std::int64_t s = yada_side;
            const std::array<yada_point, 4> on_side{{{at, 0}, {s, at}, {at, s}, {0, at}}};
            out.push_back(on_side[static_cast<std::size_t>(side)]);
        }
    }
    return out;
}

std::vector<yada_point> interior_points(std::mt19937& g, long count) {
    std::vector<yada_point> out;
    out.reserve(static_cast<std::size_t>(count));
    std::unordered_set<std::uint64_t> taken;
    taken.reserve(static_cast<std::size_t>(count));
    while (static_cast<long>(out.size()) != count) {
        const yada_point p{draw_inside(g), draw_inside(g)};
        const auto key = (static_cast<std::uint64_t>(p.x) << 32) | static_cast<std::uint64_t>(p.y);
        if (taken.insert(key).second) out.push_back(p);
    }
    return out;
}

/// Horizontal bands, left to right in even ones and right to left in odd
/// ones: consecutive points are neighbours, so each walk is a step or two.
void sort_in_bands(std::vector<yada_point>& points) {
    const auto bands = static_cast<std::int64_t>(
        std::max(1.0, std::round(std::sqrt(static_cast<double>(points.size()) / 2.0))));
    const auto key = [bands](yada_point p) {
        const std::int64_t band = p.y * bands / (yada_side + 1);
        return std::array<std::int64_t, 3>{band, band % 2 == 0 ? p.x : -p.x, p.y};
    };
    std::sort(points.begin(), points.end(),
              [&](yada_point a, yada_point b) { return key(a) < key(b); });
}

}  // namespace

std::int64_t orientation(yada_point a, yada_point b, yada_point c) noexcept {
    return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
}

int in_circle(yada_point a, yada_point b, yada_point c, yada_point d) noexcept {
    const std::int64_t ax = a.x - d.x, ay = a.y - d.y;
    const std::int64_t bx = b.x - d.x, by = b.y - d.y;
    const std::int64_t cx = c.x - d.x, cy = c.y - d.y;
    const exact_wide lifted_a = ax * ax + ay * ay;
    const exact_wide lifted_b = bx * bx + by * by;
    const exact_wide lifted_c = cx * cx + cy * cy;
    const exact_wide det = lifted_a * (bx * cy - cx * by) + lifted_b * (cx * ay - ax * cy) +
                           lifted_c * (ax * by - bx * ay);
    return det > 0 ? 1 : (det < 0 ? -1 : 0);
}

bool in_diametral_disk(yada_point a, yada_point b, yada_point p) noexcept {
    return dot(p, a, b) <= 0;
}

bool obtuse_at(yada_point v, yada_point a, yada_point b) noexcept { return dot(v, a, b) < 0; }

double min_angle_degrees(yada_point a, yada_point b, yada_point c) noexcept {
    const long double smallest =
        std::min({angle_at(a, b, c), angle_at(b, c, a), angle_at(c, a, b)});
    return static_cast<double>(smallest * 180.0L / std::numbers::pi_v<long double>);
}

yada_point midpoint(yada_point a, yada_point b) noexcept {
    return {(a.x + b.x) / 2, (a.y + b.y) / 2};  // non-negative: rounded down
}

yada_point refinement_point(yada_point a, yada_point b, yada_point c) noexcept {
    // The circumcenter relative to a: exact numerators over twice the
    // orientation, divided once in long double.
    const std::int64_t bx = b.x - a.x, by = b.y - a.y, cx = c.x - a.x, cy = c.y - a.y;
    const std::int64_t b2 = bx * bx + by * by, c2 = cx * cx + cy * cy;
    const exact_wide ux = static_cast<exact_wide>(cy) * b2 - static_cast<exact_wide>(by) * c2;
    const exact_wide uy = static_cast<exact_wide>(bx) * c2 - static_cast<exact_wide>(cx) * b2;
    const long double twice = 2.0L * static_cast<long double>(orientation(a, b, c));
    const long double x = static_cast<long double>(a.x) + static_cast<long double>(ux) / twice;
    const long double y = static_cast<long double>(a.y) + static_cast<long double>(uy) / twice;
    if (in_margin(x, y)) return on_grid(x, y);
    const long double gx = static_cast<long double>(a.x + b.x + c.x) / 3.0L;
    const long double gy = static_cast<long double>(a.y + b.y + c.y) / 3.0L;
    const long double t = clip(gy, y, clip(gx, x, 1.0L));
    return on_grid(gx + t * (x - gx), gy + t * (y - gy));
}

long yada_input_mesh::boundary_segments() const noexcept {
    long count = 0;
    for (const auto& across : adjacent) {
        count += static_cast<long>(std::count(across.begin(), across.end(), none));
    }
    return count;
}

yada_input_mesh make_yada_input(long points, long boundary_segments, std::uint32_t seed) {
    if (boundary_segments < 4 || points < boundary_segments) {
        throw std::invalid_argument(
            "yada: the square needs 4 <= boundary segments <= points, got " +
            std::to_string(boundary_segments) + " and " + std::to_string(points));
    }
    std::mt19937 g(seed);
    const std::vector<yada_point> sides = side_points(g, boundary_segments);
    std::vector<yada_point> inside = interior_points(g, points - boundary_segments);
    sort_in_bands(inside);
    square_triangulation mesh(static_cast<std::size_t>(points));
    for (const yada_point p : sides) mesh.insert(p);
    for (const yada_point p : inside) mesh.insert(p);
    return mesh.finish();
}

}  // namespace smrbench::stamp
