// STAMP's Kmeans on smrlab's STM: the generated points, the clients'
// iterations, the center update between them and the verification
// (bench/stamp/kmeans.hpp says what and why).
//
// Why the verification compares exactly: the clients add integers (counts of
// the quantum), so every order of their transactions gives the same sums as
// the sequential clustering's; the centers are computed from those sums by
// one function, the nearest centers by another, both shared with the
// sequential clustering. A parallel run therefore reproduces the sequential
// one bit for bit, iteration by iteration, and any difference is an error. A
// lost or doubled addition shows first in its iteration's totals (the
// clusters' counts no longer add up to n, or their sums to the points'), so
// the iteration it happened in is named.
#include "stamp/kmeans.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "smr/core/mutant.hpp"
#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/guards.hpp"
#include "stamp/named_inputs.hpp"

namespace smrbench::stamp {

using smr::ds::validation_result;
using smr::stm::transaction;

namespace {

// ---- the points -------------------------------------------------------------

/// A double in [0, 1) from 53 bits of two draws.
double draw_unit(std::mt19937& g) {
    const auto high = static_cast<double>(g() >> 5);  // 27 bits
    const auto low = static_cast<double>(g() >> 6);   // 26 bits
    return std::ldexp(high * 67108864.0 + low, -53);
}

/// A standard normal draw (Box-Muller; 1 - u keeps the logarithm finite).
double draw_normal(std::mt19937& g) {
    const double radius = std::sqrt(-2.0 * std::log(1.0 - draw_unit(g)));
    const double angle = 2.0 * std::numbers::pi * draw_unit(g);
    return radius * std::cos(angle);
}

/// generate.py's points: c centers uniform in [0, 1)^d, each point one of
/// them drawn uniformly plus Gaussian noise of sigma (1/c)^3 per feature.
std::vector<double> raw_points(const kmeans_params& p) {
    std::mt19937 g(p.seed);
    const auto d = static_cast<std::size_t>(p.dimensions);
    std::vector<double> centers(static_cast<std::size_t>(p.generated_clusters) * d);
    for (double& x : centers) x = draw_unit(g);
    const double sigma = std::pow(1.0 / static_cast<double>(p.generated_clusters), 3);
    std::vector<double> out(static_cast<std::size_t>(p.points) * d);
    for (std::size_t i = 0; i != static_cast<std::size_t>(p.points); ++i) {
        const std::size_t c = g() % static_cast<std::uint32_t>(p.generated_clusters);
        for (std::size_t j = 0; j != d; ++j) {
            out[i * d + j] = centers[c * d + j] + sigma * draw_normal(g);
        }
    }
    return out;
}

/// STAMP's default z-score: each feature less its mean, over its population
/// standard deviation. A constant feature becomes 0 (STAMP would divide by 0).
void z_score(std::vector<double>& x, std::size_t n, std::size_t d) {
    for (std::size_t j = 0; j != d; ++j) {
        double mean = 0;
        for (std::size_t i = 0; i != n; ++i) mean += x[i * d + j];
        mean /= static_cast<double>(n);
        double variance = 0;
        for (std::size_t i = 0; i != n; ++i) {
            variance += (x[i * d + j] - mean) * (x[i * d + j] - mean);
        }
        const double deviation = std::sqrt(variance / static_cast<double>(n));
        for (std::size_t i = 0; i != n; ++i) {
            x[i * d + j] = deviation > 0 ? (x[i * d + j] - mean) / deviation : 0.0;
        }
    }
}

/// Puts the features on the grid of the finest quantum 2^-e for which the
/// magnitudes of any feature's values add up to less than 2^52 quanta: then
/// every sum of them is exact in an int64 and again as a double.
void quantize(kmeans_points& points) {
    const auto n = static_cast<std::size_t>(points.count);
    const auto d = static_cast<std::size_t>(points.dimensions);
    double largest = 1;  // the largest sum of one feature's magnitudes
    for (std::size_t j = 0; j != d; ++j) {
        double sum = 0;
        for (std::size_t i = 0; i != n; ++i) sum += std::fabs(points.features[i * d + j]);
        largest = std::max(largest, sum);
    }
    // 2^(exponent - 1) > largest: below 2^51 quanta, and rounding adds at most n / 2.
    const int exponent = std::ilogb(largest) + 2;
    points.quantum = std::ldexp(1.0, exponent - 52);
    points.quanta.resize(n * d);
    points.column_totals.assign(d, 0);
    for (std::size_t w = 0; w != n * d; ++w) {
        const std::int64_t q = std::llround(std::ldexp(points.features[w], 52 - exponent));
        points.quanta[w] = q;
        points.features[w] = std::ldexp(static_cast<double>(q), exponent - 52);  // exact
        points.column_totals[w % d] += q;
    }
}

// ---- the clustering's rules, shared by the clients and the reference ----------

/// STAMP's common_findNearestPoint: a center replaces the best so far only if
/// its squared distance is below 0.99999 of the best's, and one at distance 0
/// ends the search. -1 if no distance is a number. One function for the
/// clients and the verification, so that the same doubles give the same
/// answer.
int nearest_center(const kmeans_points& points, long point, const std::vector<double>& centers,
                   long clusters) {
    const auto d = static_cast<std::size_t>(points.dimensions);
    const double* const x = points.feature_row(point);
    int nearest = -1;
    double best = std::numeric_limits<double>::max();
    for (long c = 0; c != clusters; ++c) {
        const double* const center = centers.data() + static_cast<std::size_t>(c) * d;
        double distance = 0;
        for (std::size_t j = 0; j != d; ++j) distance += (x[j] - center[j]) * (x[j] - center[j]);
        if (distance / best < 0.99999) {
            best = distance;
            nearest = static_cast<int>(c);
            if (best == 0) break;
        }
    }
    return nearest;
}

/// A center's coordinate from its cluster's sum (in quanta) and count: one
/// rounding, the same wherever it is computed.
double mean_of(std::int64_t sum, std::int64_t count, double quantum) {
    return static_cast<double>(sum) / static_cast<double>(count) * quantum;
}

/// STAMP's loop condition after `iterations` iterations whose last moved
/// `delta` of the points: more than the threshold's share, and fewer than 501.
bool goes_on(std::int64_t delta, long points, double threshold, long iterations) {
    return static_cast<double>(delta) / static_cast<double>(points) > threshold &&
           iterations < kmeans_max_iterations;
}

/// STAMP's initial centers: points drawn (with repetition) by a Mersenne
/// Twister seeded 7, genrand_int32() % n; std::mt19937 gives the same draws.
std::vector<double> initial_centers(const kmeans_points& points, long clusters) {
    std::mt19937 g(kmeans_center_seed);
    const auto d = static_cast<std::size_t>(points.dimensions);
    std::vector<double> centers(static_cast<std::size_t>(clusters) * d);
    for (std::size_t c = 0; c != static_cast<std::size_t>(clusters); ++c) {
        const auto chosen = static_cast<long>(g() % static_cast<std::uint32_t>(points.count));
        std::copy_n(points.feature_row(chosen), d, centers.data() + c * d);
    }
    return centers;
}

[[noreturn]] void no_nearest_center(long point) {
    throw std::logic_error("kmeans: point " + std::to_string(point) + " has no nearest center");
}

// ---- the verification's reference ---------------------------------------------

/// The same clustering in one thread, in plain C++.
struct sequential_clustering {
    std::vector<double> centers;
    std::vector<int> membership;
    std::vector<std::int64_t> deltas;  // per iteration
};

/// One iteration of the reference: every point to its nearest center, the
/// centers of the clusters with points moved to their means. Returns the
/// points that changed cluster.
std::int64_t sequential_iteration(const kmeans_points& points, long clusters,
                                  sequential_clustering& s) {
    const auto d = static_cast<std::size_t>(points.dimensions);
    const auto k = static_cast<std::size_t>(clusters);
    std::vector<std::int64_t> sums(k * d, 0), counts(k, 0);
    std::int64_t changed = 0;
    for (long point = 0; point != points.count; ++point) {
        const int nearest = nearest_center(points, point, s.centers, clusters);
        if (nearest < 0) no_nearest_center(point);
        int& member = s.membership[static_cast<std::size_t>(point)];
        if (member != nearest) ++changed;
        member = nearest;
        const auto c = static_cast<std::size_t>(nearest);
        ++counts[c];
        for (std::size_t j = 0; j != d; ++j) sums[c * d + j] += points.quanta_row(point)[j];
    }
    for (std::size_t c = 0; c != k; ++c) {
        if (counts[c] == 0) continue;  // keeps its center
        for (std::size_t j = 0; j != d; ++j) {
            s.centers[c * d + j] = mean_of(sums[c * d + j], counts[c], points.quantum);
        }
    }
    return changed;
}

sequential_clustering cluster_sequentially(const kmeans_points& points, long clusters,
                                           double threshold) {
    sequential_clustering s{initial_centers(points, clusters),
                            std::vector<int>(static_cast<std::size_t>(points.count), -1),
                            {}};
    do {
        s.deltas.push_back(sequential_iteration(points, clusters, s));
    } while (goes_on(s.deltas.back(), points.count, threshold, static_cast<long>(s.deltas.size())));
    return s;
}

/// A double with every digit, so that a one-ulp difference shows.
std::string shown(double value) {
    std::array<char, 32> text{};
    std::snprintf(text.data(), text.size(), "%.17g", value);
    return text.data();
}

// ---- the named inputs -----------------------------------------------------------

const std::array<named_input<kmeans_params>, 6>& named_inputs() {
    // STAMP's README and web page: low -m40 -n40, high -m15 -n15; -t0.05 on
    // random-n2048-d16-c16 (simulator) and random-n16384-d24-c16 (+),
    // -t0.00001 on random-n65536-d32-c16 (++).
    static const std::array<named_input<kmeans_params>, 6> inputs{{
        {"kmeans-low", {40, 40, 0.05, 2048, 16, 16, 0}},
        {"kmeans-high", {15, 15, 0.05, 2048, 16, 16, 0}},
        {"kmeans-low+", {40, 40, 0.05, 16384, 24, 16, 0}},
        {"kmeans-high+", {15, 15, 0.05, 16384, 24, 16, 0}},
        {"kmeans-low++", {40, 40, 0.00001, 65536, 32, 16, 0}},
        {"kmeans-high++", {15, 15, 0.00001, 65536, 32, 16, 0}},
    }};
    return inputs;
}

}  // namespace

const std::vector<std::string_view>& kmeans_inputs() {
    static const std::vector<std::string_view> names = input_names(named_inputs());
    return names;
}

kmeans_params kmeans_input(std::string_view name) {
    return find_input(named_inputs(), "Kmeans", name);
}

void kmeans_params::check(long clients) const {
    const auto refuse = [](const std::string& what) {
        throw std::invalid_argument("kmeans: " + what);
    };
    if (clients < 1) refuse("clients (-p) must be at least 1");
    if (points < 2 || points > (1L << 22)) refuse("points (the input's n) must be in [2, 2^22]");
    if (dimensions < 1 || dimensions > 1024) {
        refuse("dimensions (the input's d) must be in [1, 1024]");
    }
    if (points * dimensions > (1L << 26)) refuse("points x dimensions must not exceed 2^26");
    if (generated_clusters < 1 || generated_clusters > points) {
        refuse("generated clusters (the input's c) must be in [1, points]");
    }
    if (min_clusters < 1) refuse("min clusters (-n) must be at least 1");
    if (max_clusters < min_clusters) refuse("max clusters (-m) must be at least min clusters (-n)");
    if (max_clusters > points) refuse("max clusters (-m) must not exceed the points");
    if (!(threshold >= 0 && threshold <= 1)) refuse("the threshold (-t) must be in [0, 1]");
}

kmeans_points generate_kmeans_points(const kmeans_params& params) {
    kmeans_points points;
    points.count = params.points;
    points.dimensions = params.dimensions;
    points.features = raw_points(params);
    z_score(points.features, static_cast<std::size_t>(params.points),
            static_cast<std::size_t>(params.dimensions));
    quantize(points);
    return points;
}

// ---- the clustering --------------------------------------------------------------

template <class Domain>
kmeans_clustering<Domain>::kmeans_clustering(Domain& domain, const smr::stm::stm_config& config,
                                             const kmeans_points& points, long max_clusters)
    : points_(points), max_clusters_(max_clusters), stm_(domain, config) {
    if (max_clusters < 1 || max_clusters > points.count) {
        throw std::invalid_argument("kmeans: max_clusters must be in [1, points]");
    }
    const auto d = static_cast<std::size_t>(points.dimensions);
    stride_ = (d + 1 + 3) / 4 * 4;  // the count and d sums, in 32-byte steps as STAMP pads them
    // 7 spare words: the first block moves up to a 64-byte boundary.
    words_.assign(static_cast<std::size_t>(max_clusters) * stride_ + 7, 0);
    while (reinterpret_cast<std::uintptr_t>(words_.data() + first_word_) % 64 != 0) ++first_word_;
    records_.resize(static_cast<std::size_t>(kmeans_max_iterations));
    column_scratch_.resize(d);
}

template <class Domain>
void kmeans_clustering<Domain>::reset(long clusters, double threshold) {
    if (clusters < 1 || clusters > max_clusters_) {
        throw std::invalid_argument("kmeans: clusters must be in [1, max_clusters]");
    }
    clusters_ = clusters;
    threshold_ = threshold;
    centers_ = initial_centers(points_, clusters);
    assigned_with_ = centers_;
    membership_.assign(static_cast<std::size_t>(points_.count), -1);
    last_counts_.assign(static_cast<std::size_t>(clusters), 0);
    std::fill(words_.begin(), words_.end(), 0);  // plainly: no transaction runs
    iterations_ = 0;
    assignments_ = 0;
    ready_ = true;
}

template <class Domain>
client_phase kmeans_clustering<Domain>::run(int clients) {
    if (!ready_) throw std::logic_error("kmeans: reset before each run");
    if (clients < 1) throw std::invalid_argument("kmeans: clients must be at least 1");
    ready_ = false;
    clients_ = clients;
    counts_.assign(static_cast<std::size_t>(clients), client_counts{});
    next_chunk_ = static_cast<std::int64_t>(clients) * kmeans_chunk;  // past each one's first
    delta_ = 0;
    done_ = false;
    failed_.store(false, std::memory_order_relaxed);
    std::vector<long> committed(static_cast<std::size_t>(clients), 0);
    iteration_barrier barrier(clients, iteration_end{this});
    client_phase phase = run_clients(
        stm_.domain(), stm_, clients,
        [&](smr::context_ref<Domain> self, int client, const std::atomic<bool>& stop) {
            committed[static_cast<std::size_t>(client)] = run_client(self, client, barrier, stop);
        });
    for (const long c : committed) assignments_ += c;
    return phase;
}

/// One client's iterations, until the completion step says done. Returns its
/// point transactions.
template <class Domain>
long kmeans_clustering<Domain>::run_client(smr::context_ref<Domain> self, int client,
                                           iteration_barrier& barrier,
                                           const std::atomic<bool>& stop) {
    long committed = 0;
    try {
        while (!done_) {  // written by the completion step, before the barrier lets us go
            if (stop.load(std::memory_order_relaxed)) {  // a client failed, or never started
                barrier.arrive_and_drop();
                break;
            }
            const client_counts counts = assign_share(self, client);
            counts_[static_cast<std::size_t>(client)] = counts;
            committed += static_cast<long>(counts.assigned);
            barrier.arrive_and_wait();
        }
    } catch (...) {
        failed_.store(true, std::memory_order_relaxed);  // the barrier's arrival publishes it
        barrier.arrive_and_drop();  // so that the others' iteration ends without us
        throw;
    }
    stm_.flush(self);
    return committed;
}

/// STAMP's work(): the client's first chunk, then chunks from the shared
/// index until the points run out; then its changes added to the delta.
template <class Domain>
auto kmeans_clustering<Domain>::assign_share(smr::context_ref<Domain> self, int client)
    -> client_counts {
    client_counts counts;
    const long n = points_.count;
    for (long start = client * kmeans_chunk; start < n;) {
        const long end = std::min(start + kmeans_chunk, n);
        for (long point = start; point != end; ++point) {
            const int nearest = nearest_center(points_, point, centers_, clusters_);
            if (nearest < 0) no_nearest_center(point);
            int& member = membership_[static_cast<std::size_t>(point)];  // ours this iteration
            if (member != nearest) ++counts.changed;
            member = nearest;
            add_point(self, point, nearest);
            ++counts.assigned;
        }
        if (start + kmeans_chunk >= n) break;  // as STAMP: no chunk taken past the last
        start = static_cast<long>(take_chunk(self));
    }
    add_delta(self, counts.changed);
    return counts;
}

/// The point's transaction: its cluster's count and each of its sums.
template <class Domain>
void kmeans_clustering<Domain>::add_point(smr::context_ref<Domain> self, long point, long cluster) {
    std::int64_t* const count = count_word(cluster);
    std::int64_t* const sums = count + 1;
    const std::int64_t* const quanta = points_.quanta_row(point);
    const auto d = static_cast<std::size_t>(points_.dimensions);
    const transaction::object_extent block{count, (d + 1) * sizeof(std::int64_t)};
    stm_.atomically(self, [&](transaction& tx) {
        // Mutant: the count read without the transaction. A commit to this
        // cluster between that read and our lock on the word is not in our
        // read set, so nothing aborts us, and our store overwrites its count.
        const std::int64_t members =
            SMR_MUTANT("kmeans_center_add_uninstrumented") ? *count : tx.load(count);
        tx.store(count, members + 1, block);
        for (std::size_t j = 0; j != d; ++j) {
            tx.store(sums + j, tx.load(sums + j) + quanta[j], block);
        }
    });
}

template <class Domain>
std::int64_t kmeans_clustering<Domain>::take_chunk(smr::context_ref<Domain> self) {
    return stm_.atomically(self, [&](transaction& tx) {
        const std::int64_t start = tx.load(&next_chunk_);
        tx.store(&next_chunk_, start + kmeans_chunk, {&next_chunk_, sizeof next_chunk_});
        return start;
    });
}

template <class Domain>
void kmeans_clustering<Domain>::add_delta(smr::context_ref<Domain> self, std::int64_t changed) {
    stm_.atomically(self, [&](transaction& tx) {  // even when 0, as STAMP
        tx.store(&delta_, tx.load(&delta_) + changed, {&delta_, sizeof delta_});
    });
}

/// The barrier's completion step: every client has arrived (or left), so no
/// transaction runs and the shared words are written plainly, as STAMP's main
/// thread does between its thread_start calls.
template <class Domain>
void kmeans_clustering<Domain>::end_iteration() noexcept {
    iteration_record record;
    record.delta = delta_;
    for (const client_counts& c : counts_) {
        record.changed += c.changed;
        record.assigned += c.assigned;
    }
    update_centers(record);
    records_[static_cast<std::size_t>(iterations_)] = record;
    ++iterations_;
    next_chunk_ = static_cast<std::int64_t>(clients_) * kmeans_chunk;
    delta_ = 0;
    done_ = failed_.load(std::memory_order_relaxed) ||
            !goes_on(record.delta, points_.count, threshold_, iterations_);
}

/// STAMP's center update (sums over counts, a cluster without points kept),
/// the accumulators back to zero, and the iteration's totals.
template <class Domain>
void kmeans_clustering<Domain>::update_centers(iteration_record& record) noexcept {
    const auto d = static_cast<std::size_t>(points_.dimensions);
    std::copy(centers_.begin(), centers_.end(), assigned_with_.begin());
    std::fill(column_scratch_.begin(), column_scratch_.end(), 0);
    for (long c = 0; c != clusters_; ++c) {
        std::int64_t* const count = count_word(c);
        std::int64_t* const sums = count + 1;
        double* const center = centers_.data() + static_cast<std::size_t>(c) * d;
        record.counted += *count;
        last_counts_[static_cast<std::size_t>(c)] = *count;
        for (std::size_t j = 0; j != d; ++j) {
            column_scratch_[j] += sums[j];
            if (*count > 0) center[j] = mean_of(sums[j], *count, points_.quantum);
            sums[j] = 0;
        }
        *count = 0;
    }
    record.sums_match = column_scratch_ == points_.column_totals;
}

// ---- the verification ------------------------------------------------------------

template <class Domain>
validation_result kmeans_clustering<Domain>::validate() const {
    validation_result result;
    if (iterations_ < 1) {
        result.fail("no iteration ran");
        return result;
    }
    check_records(result);
    if (result.ok) check_memberships(result);
    if (result.ok) check_centers(result);
    if (result.ok) check_sequential(result);
    if (const std::size_t locked = stm_.orecs().locked_entries(); locked != 0) {
        result.fail(std::to_string(locked) + " versioned locks still held");
    }
    return result;
}

/// Each iteration's totals: every point assigned once, counted once by its
/// cluster and added once to its sums, every change in the shared delta.
template <class Domain>
void kmeans_clustering<Domain>::check_records(validation_result& result) const {
    const std::string n = std::to_string(points_.count);
    for (long t = 0; t != iterations_; ++t) {
        const iteration_record& r = records_[static_cast<std::size_t>(t)];
        const std::string at = "iteration " + std::to_string(t + 1) + ": ";
        if (r.assigned != points_.count) {
            return result.fail(at + "the clients assigned " + std::to_string(r.assigned) + " of " +
                               n + " points");
        }
        if (r.counted != points_.count) {
            return result.fail(at + "the clusters counted " + std::to_string(r.counted) + " of " +
                               n + " points");
        }
        if (!r.sums_match) return result.fail(at + "the clusters' sums are not the points' totals");
        if (r.delta != r.changed) {
            return result.fail(at + "the shared delta is " + std::to_string(r.delta) +
                               ", the clients counted " + std::to_string(r.changed) + " changes");
        }
    }
}

/// Every point in the cluster of its nearest center, of the centers the last
/// iteration assigned by (STAMP's rule for near ties).
template <class Domain>
void kmeans_clustering<Domain>::check_memberships(validation_result& result) const {
    for (long point = 0; point != points_.count; ++point) {
        const int member = membership_[static_cast<std::size_t>(point)];
        const int nearest = nearest_center(points_, point, assigned_with_, clusters_);
        if (member != nearest || member < 0) {
            return result.fail("point " + std::to_string(point) + " is in cluster " +
                               std::to_string(member) + ", its nearest center is " +
                               std::to_string(nearest) + "'s");
        }
    }
}

/// Every cluster's count its members, every center their mean (exactly:
/// integer sums), or where it was if it has none.
template <class Domain>
void kmeans_clustering<Domain>::check_centers(validation_result& result) const {
    const auto d = static_cast<std::size_t>(points_.dimensions);
    const auto k = static_cast<std::size_t>(clusters_);
    std::vector<std::int64_t> sums(k * d, 0), members(k, 0);
    for (long point = 0; point != points_.count; ++point) {
        const auto c = static_cast<std::size_t>(membership_[static_cast<std::size_t>(point)]);
        ++members[c];  // in range: check_memberships passed
        for (std::size_t j = 0; j != d; ++j) sums[c * d + j] += points_.quanta_row(point)[j];
    }
    for (std::size_t c = 0; c != k; ++c) {
        const std::string what = "center " + std::to_string(c) + ": ";
        if (members[c] != last_counts_[c]) {
            return result.fail(what + std::to_string(members[c]) + " members, its count says " +
                               std::to_string(last_counts_[c]));
        }
        for (std::size_t j = 0; j != d; ++j) {
            const double expected = members[c] > 0
                                        ? mean_of(sums[c * d + j], members[c], points_.quantum)
                                        : assigned_with_[c * d + j];
            const double found = centers_[c * d + j];
            if (found != expected) {
                return result.fail(what + "coordinate " + std::to_string(j) + " is " +
                                   shown(found) + ", the mean of its members " + shown(expected));
            }
        }
    }
}

/// The sequential clustering's iterations, deltas, memberships and centers.
template <class Domain>
void kmeans_clustering<Domain>::check_sequential(validation_result& result) const {
    const sequential_clustering s = cluster_sequentially(points_, clusters_, threshold_);
    const std::string other = " in the sequential clustering";
    if (static_cast<long>(s.deltas.size()) != iterations_) {
        return result.fail(std::to_string(iterations_) + " iterations, " +
                           std::to_string(s.deltas.size()) + other);
    }
    for (std::size_t t = 0; t != s.deltas.size(); ++t) {
        if (records_[t].delta != s.deltas[t]) {
            return result.fail("iteration " + std::to_string(t + 1) + ": " +
                               std::to_string(records_[t].delta) + " points changed cluster, " +
                               std::to_string(s.deltas[t]) + other);
        }
    }
    for (std::size_t i = 0; i != s.membership.size(); ++i) {
        if (membership_[i] != s.membership[i]) {
            return result.fail("point " + std::to_string(i) + " is in cluster " +
                               std::to_string(membership_[i]) + ", " +
                               std::to_string(s.membership[i]) + other);
        }
    }
    const auto d = static_cast<std::size_t>(points_.dimensions);
    for (std::size_t w = 0; w != s.centers.size(); ++w) {
        if (centers_[w] != s.centers[w]) {
            return result.fail("center " + std::to_string(w / d) + ", coordinate " +
                               std::to_string(w % d) + ": " + shown(centers_[w]) + ", " +
                               shown(s.centers[w]) + other);
        }
    }
}

template class kmeans_clustering<smr::debra_domain>;

app_run run_kmeans(const kmeans_params& params, int clients,
                   const smr::stm::stm_config& stm_config) {
    params.check(clients);
    const kmeans_points points = generate_kmeans_points(params);
    smr::domain_config domain_config;
    domain_config.max_threads = static_cast<std::size_t>(clients) + 1;  // as Vacation's
    smr::debra_domain domain(domain_config);
    kmeans_clustering<smr::debra_domain> clustering(domain, stm_config, points,
                                                    params.max_clusters);
    app_run run;
    const smr::stm::stm_stats before = clustering.transactional_memory().stats();
    for (long k = params.min_clusters; k <= params.max_clusters && run.validation.ok; ++k) {
        clustering.reset(k, params.threshold);
        const client_phase phase = clustering.run(clients);
        run.seconds += phase.seconds;
        run.tasks += clustering.assignments();
        validation_result checked = phase.validation();
        if (checked.ok) checked = clustering.validate();
        if (!checked.ok) run.validation.fail(std::to_string(k) + " clusters: " + checked.error);
    }
    run.stm = clustering.transactional_memory().stats() - before;
    return run;
}

}  // namespace smrbench::stamp
