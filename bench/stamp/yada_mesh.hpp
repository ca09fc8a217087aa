// Yada's geometry (bench/stamp/yada.hpp says what Yada is): points on an
// integer grid, the exact predicates the refinement decides by, the point a
// refinement inserts, and the input mesh, a Delaunay triangulation of random
// points in a square made in-process in place of STAMP's input files.
//
// ---- Why a grid ------------------------------------------------------------------
//
// STAMP computes in doubles and tests "inside the circumcircle" as distance
// <= radius, so a point near a circle can put a triangle into a cavity that
// the new point does not see, and the retriangulation folds. Here every
// coordinate is an integer in [0, 2^28] (the square is [0, yada_side]^2), a
// point a refinement inserts is rounded to the grid, and the predicates are
// exact: orientation in 64-bit integers, the incircle determinant in 128-bit
// ones, for points anywhere in [-side, 2 x side]^2 (the refinement keeps its
// points within half a side of the square, see refinement_point). Every
// decision is then the one exact arithmetic makes on the points actually in
// the mesh, which stays a Delaunay triangulation of them.
//
// Degeneracies: a cavity takes the triangles whose circumcircle holds the new
// point strictly (a point on a circle leaves that triangle out: with four
// points on one circle either diagonal is Delaunay); a boundary segment's
// diametral circle counts when the point is on it too (STAMP's <=). Four
// input points on one circle give whichever diagonal the insertion order
// makes. A refinement point that rounds out of its triangle's circumcircle,
// or a segment too short to halve on the grid, stops the run
// (bench/stamp/yada.cpp); even at yada++ (a million points) the closest
// input points are some hundred grid units apart, and Ruppert's refinement
// keeps its edges near that scale.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <vector>

namespace smrbench::stamp {

/// The square's side, in grid units: every vertex is in [0, yada_side]^2.
inline constexpr std::int64_t yada_side = std::int64_t{1} << 28;

/// A vertex: integer coordinates, compared x first (STAMP's
/// coordinate_compare).
struct yada_point {
    std::int64_t x;
    std::int64_t y;
    friend auto operator<=>(const yada_point&, const yada_point&) = default;
};

/// An edge from one vertex to another; ordered by from, then to.
struct yada_edge {
    yada_point from;
    yada_point to;
    friend auto operator<=>(const yada_edge&, const yada_edge&) = default;
};

/// Twice the signed area of a, b, c: positive if they turn counterclockwise.
/// Exact for points in [-side, 2 x side]^2.
std::int64_t orientation(yada_point a, yada_point b, yada_point c) noexcept;

/// The sign of the incircle determinant: positive if d is strictly inside
/// the circle through a, b, c (counterclockwise), zero on it. Exact for
/// points in [-side, 2 x side]^2.
int in_circle(yada_point a, yada_point b, yada_point c, yada_point d) noexcept;

/// p is in the closed disk whose diameter is a..b: it encroaches on the
/// segment (the angle a p b is at least 90 degrees). Exact.
bool in_diametral_disk(yada_point a, yada_point b, yada_point p) noexcept;

/// The angle at v of the triangle v, a, b is obtuse (above 90 degrees):
/// v encroaches on the edge a..b. Exact.
bool obtuse_at(yada_point v, yada_point a, yada_point b) noexcept;

/// The smallest angle of the triangle, in degrees (long double atan2 of the
/// exact cross and dot products). The refinement and the verification both
/// call this, so they agree on every triangle.
double min_angle_degrees(yada_point a, yada_point b, yada_point c) noexcept;

/// The middle of a..b, rounded down: a boundary segment's split point.
yada_point midpoint(yada_point a, yada_point b) noexcept;

/// The point refining the counterclockwise triangle a, b, c inserts: its
/// circumcenter, rounded to the grid. A circumcenter more than half a side
/// outside the square is moved back along the ray from the triangle's
/// centroid to it, onto that half-side margin: the ray crosses the same
/// boundary segments, and the point stays deep inside the circumcircle (at
/// least half a side), so the refinement still finds the segment to split.
/// Such circumcenters only belong to triangles of a mesh in which some
/// triangle is obtuse across a boundary segment (bench/stamp/yada.hpp).
yada_point refinement_point(yada_point a, yada_point b, yada_point c) noexcept;

/// The input mesh: a Delaunay triangulation of the square with its
/// vertices. Triangles are counterclockwise; adjacent[t][i] is the triangle
/// across edge i of triangle t (corner i to corner i + 1), or -1 where that
/// edge is a boundary segment.
struct yada_input_mesh {
    std::vector<std::array<yada_point, 3>> triangles;
    std::vector<std::array<std::int32_t, 3>> adjacent;
    long vertices = 0;

    /// Edges without a triangle across: the boundary segments.
    long boundary_segments() const noexcept;
};

/// `points` vertices, deterministic (`seed` decides them): the square's
/// corners, its sides split into `boundary_segments` segments at random
/// grid points (as evenly as the count allows: the first sides get one more),
/// and the rest random grid points strictly inside, all distinct; then their
/// Delaunay triangulation by Bowyer-Watson insertion (sequential, exact, the
/// interior points in a boustrophedon order of horizontal bands so that each
/// walk to the next point is short). 2 x points - boundary_segments - 2
/// triangles. Needs 4 <= boundary_segments <= points; throws
/// std::invalid_argument otherwise, std::logic_error if the triangulation
/// meets a state exact arithmetic excludes.
yada_input_mesh make_yada_input(long points, long boundary_segments, std::uint32_t seed);

}  // namespace smrbench::stamp
