// STAMP's Kmeans on smrlab's STM: k-means clustering of random points, the
// clients sharing each iteration's points and adding each point to its
// nearest cluster's running sums in a transaction. Minh, Chung, Kozyrakis and
// Olukotun, "STAMP: Stanford Transactional Applications for
// Multi-Processing", IISWC 2008 (doi:10.1109/IISWC.2008.4636089), Section
// III (their Kmeans comes from NU-MineBench 2.0). Written from the paper's
// description and the public suite's structure (kmeans/kmeans.c, cluster.c,
// normal.c, common.c and the README of STAMP 0.9.10); no code is copied.
//
// ---- The workload ----------------------------------------------------------------
//
// n points of d features, z-scored per feature (STAMP's default). For each
// cluster count k from -n to -m (one value in every named input), k centers
// are drawn among the points (a Mersenne Twister seeded 7, as STAMP), then
// each iteration:
//
//   the clients share the points in chunks of 3: each starts at its own
//     chunk, then takes the next from a shared index, one small transaction
//     per chunk;
//   a point's nearest center is found with plain reads (the centers do not
//     change during an iteration), its membership is written plainly (only
//     this client assigns it in this iteration), and one transaction adds it
//     to that cluster: the cluster's count plus one, each of its d sums plus
//     the feature (d + 1 read-modify-writes, the same cluster's words for
//     every point that joins it: the contention, higher with fewer clusters);
//   each client adds how many of its points changed cluster to a shared
//     delta, in one transaction;
//   then the centers become the sums over the counts, the accumulators go
//     back to zero, and the loop ends once delta / n <= -t, or after 501
//     iterations (STAMP tests loop++ < 500 after each).
//
// Nothing is allocated inside a transaction (STAMP's Kmeans has no
// TM_MALLOC): the allocator only places the arrays, once, before the clients
// start, which is why Kmeans is the control among the applications, one whose
// speed the allocator should not change.
//
// ---- Where this port differs from STAMP 0.9.10 -------------------------------------
//
// - No input file: the points are generated in-process as STAMP's
//   inputs/generate.py made its random-n<n>-d<d>-c<c> files (c centers
//   uniform in [0, 1)^d, each point one of them, drawn uniformly, plus
//   Gaussian noise of sigma (1/c)^3 per feature), with the same n, d and c,
//   but drawn from std::mt19937 seeded with kmeans_params::seed by this
//   port's own uniform and Gaussian draws: the same kind of points, not the
//   files' numbers.
// - Features are doubles (STAMP: floats), z-scored in double, then rounded to
//   a multiple of a power of two (the quantum) chosen so that the sum of any
//   subset of a feature's values is below 2^52 quanta: at most n x 2^-50,
//   since z-scores average at most 1 in magnitude, so 2^-34 at the ++ size,
//   where a float's step near 1 is 2^-23. The accumulators hold those sums
//   as std::int64_t counts of quanta (STAMP: float sums): integer additions
//   give the same sums in any order, so the parallel clustering equals the
//   sequential one bit for bit, and the verification compares them exactly.
//   A transaction still reads and writes d + 1 words of the cluster, 8 bytes
//   each where STAMP's are 4 (an int and floats).
// - Each cluster's block (its count, then its sums) is padded to a multiple
//   of 32 bytes, as STAMP pads it, and the blocks start 64-byte aligned (STAMP
//   takes calloc's 16-byte alignment), so that no two clusters share a stripe
//   of the STM's default 32-byte stripes. The chunk index and the delta (an
//   integer count here, a float in STAMP) get a stripe each.
// - A cluster left without points keeps its center. STAMP means the same
//   (it tests new_centers_len[i] > 0), but that compares the pointer, so it
//   divides 0 by 0 and the center becomes NaN, never nearest again.
// - The clients run all of a cluster count's iterations in one phase
//   (clients.hpp), meeting at a std::barrier between iterations, and the
//   center update runs in the barrier's completion step, on the last client
//   to arrive. STAMP's thread pool meets at its barrier too (thread_start),
//   but its main thread is client 0 and updates the centers itself. The
//   timed span is the same: the iteration loop, center updates included,
//   summed over the cluster counts (STAMP's global_time).
// - The completion step also records each iteration's totals (points counted
//   by the clusters, points the clients assigned, changes they counted, the
//   clusters' sums against the points'), O(k d) as the update itself; the
//   verification afterwards reads them. STAMP verifies nothing.
// - A client that throws stops the run with its reason (clients.hpp); it
//   leaves the barrier first, so that the others finish the iteration and
//   stop.
#pragma once

#include <atomic>
#include <barrier>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "smr/ds/validation.hpp"
#include "smr/stm/stm.hpp"
#include "stamp/clients.hpp"

namespace smrbench::stamp {

/// STAMP's command line for Kmeans (-p is the thread count), and the input
/// file's n, d and c, here the generator's.
struct kmeans_params {
    long max_clusters = 13;        ///< -m
    long min_clusters = 4;         ///< -n
    double threshold = 0.001;      ///< -t: stop once at most this share of the points moved
    long points = 2048;            ///< the input's n
    long dimensions = 16;          ///< the input's d
    long generated_clusters = 16;  ///< the input's c: the centers the points are drawn around
    std::uint32_t seed = 0;        ///< the points' generator (STAMP: the file)

    /// Throws std::invalid_argument naming the first parameter out of range.
    void check(long clients) const;
};

/// STAMP's named inputs: kmeans-low (-m40 -n40) and kmeans-high (-m15 -n15),
/// at -t0.05 on random-n2048-d16-c16 (its simulator inputs), "+" on
/// random-n16384-d24-c16, "++" at -t0.00001 on random-n65536-d32-c16 (its
/// native-run inputs). Throws std::invalid_argument naming the inputs for any
/// other name.
kmeans_params kmeans_input(std::string_view name);

/// The names kmeans_input accepts, in order.
const std::vector<std::string_view>& kmeans_inputs();

/// STAMP's CHUNK: the points a client takes from the shared index at once.
inline constexpr long kmeans_chunk = 3;
/// At most this many iterations per cluster count (STAMP's loop++ < 500).
inline constexpr long kmeans_max_iterations = 501;
/// The seed of the initial centers' draws, every cluster count (STAMP's).
inline constexpr std::uint32_t kmeans_center_seed = 7;

/// A generated input, z-scored and on its quantum's grid (see above).
struct kmeans_points {
    long count = 0;
    long dimensions = 0;
    double quantum = 0;                       ///< a power of two; every feature is a multiple
    std::vector<double> features;             ///< count x dimensions, row-major
    std::vector<std::int64_t> quanta;         ///< the same features in quanta: what is added
    std::vector<std::int64_t> column_totals;  ///< per dimension, all points' quanta

    const double* feature_row(long point) const noexcept {
        return features.data() + point * dimensions;
    }
    const std::int64_t* quanta_row(long point) const noexcept {
        return quanta.data() + point * dimensions;
    }
};

/// The points of params (n, d, c, seed), deterministic. Call params.check first.
kmeans_points generate_kmeans_points(const kmeans_params& params);

/// One cluster count's clustering over one STM, as STAMP's normal_exec.
/// Instantiated for smr::debra_domain (bench/stamp/kmeans.cpp), the
/// reclaimer of the allocator study's runs. `points` must outlive it.
template <class Domain>
class kmeans_clustering {
  public:
    kmeans_clustering(Domain& domain, const smr::stm::stm_config& config,
                      const kmeans_points& points, long max_clusters);
    kmeans_clustering(const kmeans_clustering&) = delete;
    kmeans_clustering& operator=(const kmeans_clustering&) = delete;

    /// Quiescent: STAMP's start of normal_exec for `clusters` (at most the
    /// constructor's max_clusters): centers drawn, every membership -1,
    /// accumulators zero. Required before each run.
    void reset(long clusters, double threshold);

    /// The clients' phase (run_clients): `clients` threads iterate until the
    /// clustering stops. The domain needs room for them.
    client_phase run(int clients);

    /// Quiescent, after run: each iteration's totals, every point in the
    /// cluster of its nearest center (of those the last iteration assigned
    /// by), every center the mean of its members, and the sequential
    /// clustering's result, exactly (bench/stamp/kmeans.cpp says why exactly).
    smr::ds::validation_result validate() const;

    long iterations() const noexcept { return iterations_; }
    /// Point transactions committed by the last run (one per point per iteration).
    long assignments() const noexcept { return assignments_; }
    smr::stm::stm<Domain>& transactional_memory() noexcept { return stm_; }

  private:
    friend struct kmeans_testing;  // tests corrupt the result

    /// What the completion step finds at the end of an iteration.
    struct iteration_record {
        std::int64_t delta = 0;     ///< the shared delta, as the transactions left it
        std::int64_t changed = 0;   ///< the clients' own counts of changes
        std::int64_t assigned = 0;  ///< points the clients assigned
        std::int64_t counted = 0;   ///< the clusters' counts, added up
        bool sums_match = false;    ///< the clusters' sums add up to the points' totals
    };
    /// One client's counts of one iteration, on its own lines.
    struct alignas(64) client_counts {
        std::int64_t changed = 0;
        std::int64_t assigned = 0;
    };
    struct iteration_end {
        kmeans_clustering* self;
        void operator()() noexcept { self->end_iteration(); }
    };
    using iteration_barrier = std::barrier<iteration_end>;

    long run_client(smr::context_ref<Domain> self, int client, iteration_barrier& barrier,
                    const std::atomic<bool>& stop);
    client_counts assign_share(smr::context_ref<Domain> self, int client);
    void add_point(smr::context_ref<Domain> self, long point, long cluster);
    std::int64_t take_chunk(smr::context_ref<Domain> self);
    void add_delta(smr::context_ref<Domain> self, std::int64_t changed);
    void end_iteration() noexcept;
    void update_centers(iteration_record& record) noexcept;

    void check_records(smr::ds::validation_result& result) const;
    void check_memberships(smr::ds::validation_result& result) const;
    void check_centers(smr::ds::validation_result& result) const;
    void check_sequential(smr::ds::validation_result& result) const;

    std::int64_t* count_word(long cluster) noexcept {
        return words_.data() + first_word_ + static_cast<std::size_t>(cluster) * stride_;
    }

    const kmeans_points& points_;
    long max_clusters_;
    long clusters_ = 0;
    double threshold_ = 0;
    int clients_ = 0;
    bool ready_ = false;  // reset since the last run
    bool done_ = false;   // during a run, written by the completion step only
    std::atomic<bool> failed_{false};
    long iterations_ = 0;
    long assignments_ = 0;
    std::size_t stride_ = 0;      // words per cluster's block
    std::size_t first_word_ = 0;  // of words_, 64-byte aligned
    std::vector<std::int64_t> words_;
    std::vector<double> centers_;        // k x d, plain: fixed during an iteration
    std::vector<double> assigned_with_;  // the centers the last iteration assigned by
    std::vector<int> membership_;
    std::vector<std::int64_t> last_counts_;  // per cluster, the last iteration's count
    std::vector<client_counts> counts_;
    std::vector<iteration_record> records_;  // kmeans_max_iterations, iterations_ used
    std::vector<std::int64_t> column_scratch_;
    alignas(64) std::int64_t next_chunk_ = 0;  // STAMP's global_i
    alignas(64) std::int64_t delta_ = 0;       // STAMP's global_delta, in points
    smr::stm::stm<Domain> stm_;
};

/// One run as STAMP's main makes it: the points generated (untimed), then
/// for each cluster count from min to max a reset and the clients' phase,
/// each verified after its phase. app_run::seconds sums the phases; tasks
/// counts the point transactions committed (the clients' chunk and delta
/// transactions are in stm.commits only). Throws std::invalid_argument for
/// bad params, and what thread creation throws.
app_run run_kmeans(const kmeans_params& params, int clients,
                   const smr::stm::stm_config& stm_config);

}  // namespace smrbench::stamp
