// STAMP's SSCA2 on smrlab's STM: kernel 1 of the Scalable Synthetic Compact
// Applications 2 graph benchmark (Bader and Madduri, HiPC 2005), which turns
// a generated edge list into adjacency arrays, the clients appending each
// "implied" in-edge to its vertex's list in a small transaction. Minh, Chung,
// Kozyrakis and Olukotun, "STAMP: Stanford Transactional Applications for
// Multi-Processing", IISWC 2008 (doi:10.1109/IISWC.2008.4636089), Section
// III. Written from the paper's description and the public suite's structure
// (ssca2/ssca2.c, genScalData.c, computeGraph.c, defs.h, globals.c,
// getUserParameters.c and the README of STAMP 0.9.10); no code is copied.
//
// ---- The workload ----------------------------------------------------------------
//
// Untimed, the scalable data (STAMP's genScalData): 2^s vertices in cliques
// of 1..2^(s/3) vertices; inside a clique every pair gets one edge each way
// (probability 1 - u) or one way, then random parallel edges up to -p per
// pair; between cliques, vertex i links to i + d and i - d (mod 2^s) for d =
// 1, 2, 4... with probability -i, halved at each d, each link 1..-p parallel
// edges; every edge gets a random weight (an integer with probability -w,
// else a string's index). The vertices are permuted at random and the list is
// sorted by (start, end). Then the clients' phase (computeGraph), in steps
// separated by a barrier:
//
//   0. each client finds the largest vertex of its share of the edges; one
//      transaction per client folds it into the shared maximum;
//   1. per vertex of its share, the out-degree: its distinct end vertices
//      (parallel edges count once);
//   2. one transaction per client adds its out-list total to a shared size;
//   3. per vertex, its out-list and the index of each neighbour's first edge;
//   4. per vertex u and out-neighbour v without an edge back to u, one
//      transaction appends u to v's implied in-edges: v's in-degree read and
//      written, u stored in one of v's 2^(s/3) fixed slots, or past them in
//      an overflow block, allocated by the transaction that needs it;
//   5. per vertex, its in-list gathered from its slots and blocks, and the
//      blocks freed.
//
// Between the steps, the barrier's completion step (one thread, no
// transaction running) sizes the next step's arrays and computes the prefix
// sums that place each vertex's list (STAMP's thread 0 and prefix_sums).
//
// Transactions are tiny and rarely meet (two clients append to the same vertex
// only by chance): the paper's short, low-contention application.
//
// The allocator sees, inside transactions (tx.alloc), one block of 2^(s/3)
// words (8 x 2^(s/3) bytes: 64 at -s10, 128 at -s13 and -s14, 512 at -s20)
// when a vertex's implied in-degree passes 2^(s/3), and another every 2^(s/3)
// - 1 in-edges after (STAMP's TM_MALLOC of MAX_CLUSTER_SIZE words). Those
// blocks are freed outside transactions (std::free, STAMP's P_FREE) in step 5
// by the client that owns the vertex. Everything else (degree, index and
// list arrays, the implied slots, V x 2^(s/3) words as STAMP's, the overflow
// pointers) is allocated plainly, before the clients start or in a
// completion step.
//
// ---- Where this port differs from STAMP 0.9.10 -------------------------------------
//
// - The data is generated sequentially, with the draws of STAMP's
//   genScalData_seq in its order (std::mt19937 seeded -seed, STAMP's
//   random_seed 0 by default), untimed. STAMP's transactional build generates
//   it in parallel (a transaction per swap of the vertex permutation) and
//   times that phase separately; only kernel 1 is timed here. The weights'
//   strings and the sought string are not drawn (kernel 1 only counts the
//   string edges), and, as in STAMP, the weights stay in generation order
//   while the edges are sorted.
// - STAMP tests i - d >= 0 in unsigned arithmetic, always true, so the
//   backward link wraps around; this port wraps explicitly (the same edges).
// - The vertex count is the largest vertex (start or end) + 1, folded once.
//   STAMP scans start vertices only and adds 1 in every client's
//   transaction, so its count grows with the thread count.
// - A vertex's edges are found by binary search in the sorted list (STAMP
//   scans linearly for the first), and the prefix sums run sequentially in the
//   completion step (STAMP's in parallel with three more barriers).
// - Overflow blocks keep STAMP's size, but their last word links the
//   vertex's previous block, so a block holds 2^(s/3) - 1 in-edges. STAMP
//   keeps one block per vertex: past 2 x 2^(s/3) implied in-edges it
//   overwrites (and leaks) the earlier block and gathers the list wrongly.
// - The append stores the in-degree + 1 first and then reads it back (its own
//   buffered store) to find the new edge's slot; STAMP keeps the value it
//   read in a local. The same words are read and written. A slot that is
//   not in the vertex's range (never, with an opaque STM) stops the run.
// - STAMP reads the overflow pointer plainly inside the transaction; here
//   it is tx.load, since another client's commit may have just written it.
// - Arrays hold std::int64_t (STAMP: unsigned long, the same 8 bytes).
// - A client that throws stops the run with its reason (clients.hpp), after
//   leaving the barrier so that the others stop at the next step.
//
// The verification, after the run: the graph equals one built sequentially
// from the same edge list: vertex and edge counts, the integer and string
// edges, and per vertex its out-degree, out-index, out-neighbours (and each
// one's first parallel edge), in-degree, in-index and in-neighbours (as
// multisets); no versioned lock held. STAMP verifies nothing.
#pragma once

#include <atomic>
#include <barrier>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "smr/ds/validation.hpp"
#include "smr/stm/stm.hpp"
#include "stamp/clients.hpp"

namespace smrbench::stamp {

/// STAMP's command line for SSCA2 (-t is the thread count); the defaults of
/// the ones the named inputs leave out are getUserParameters.c's.
struct ssca2_params {
    long scale = 13;                ///< -s: 2^s vertices
    double inter_clique = 1.0;      ///< -i: probability of a link between cliques
    double unidirectional = 1.0;    ///< -u: probability of a one-way intra-clique edge
    long max_path_length = 3;       ///< -l: kernel 3's, unused by kernel 1
    long max_parallel_edges = 3;    ///< -p
    double int_weight_share = 0.6;  ///< -w: share of the edges with integer weights
    std::uint32_t seed = 0;         ///< the generator's (STAMP: random_seed 0)

    /// Throws std::invalid_argument naming the first parameter out of range.
    void check(long clients) const;
};

/// STAMP's named inputs: ssca2 (-s13 -i1.0 -u1.0 -l3 -p3, its README's
/// simulator input), ssca2+ (-s14, the rest alike) and ssca2++ (-s20, its
/// native-run input). Throws std::invalid_argument naming the inputs for any
/// other name.
ssca2_params ssca2_input(std::string_view name);

/// The names ssca2_input accepts, in order.
const std::vector<std::string_view>& ssca2_inputs();

/// STAMP's MAX_CLIQUE_SIZE and MAX_CLUSTER_SIZE: 2^(s/3).
constexpr long ssca2_max_cluster(long scale) noexcept { return 1L << (scale / 3); }

/// STAMP's graphSDG: the edge list, sorted by (start, end).
struct ssca2_data {
    long generated_vertices = 0;       ///< 2^s
    long max_cluster = 0;              ///< 2^(s/3): a vertex's fixed in-edge slots
    std::vector<std::int64_t> start;   ///< per edge
    std::vector<std::int64_t> end;     ///< per edge
    std::vector<std::int64_t> weight;  ///< > 0 an integer, <= 0 minus a string's index

    long edges() const noexcept { return static_cast<long>(start.size()); }
};

/// The data of params, deterministic (params.seed decides it). Call
/// params.check first.
ssca2_data generate_ssca2_data(const ssca2_params& params);

/// STAMP's graph and kernel 1 over one STM. Instantiated for
/// smr::debra_domain (bench/stamp/ssca2.cpp), the reclaimer of the allocator
/// study's runs. `data` must outlive it.
template <class Domain>
class ssca2_graph {
  public:
    ssca2_graph(Domain& domain, const smr::stm::stm_config& config, const ssca2_data& data);
    ~ssca2_graph();
    ssca2_graph(const ssca2_graph&) = delete;
    ssca2_graph& operator=(const ssca2_graph&) = delete;

    /// The clients' phase (run_clients): `clients` threads, which the domain
    /// needs room for, through the six steps. Once per graph
    /// (std::logic_error otherwise). Throws what thread creation throws.
    client_phase run(int clients);

    /// Quiescent, after run: the checks at the top of this header, the first
    /// failure named with its vertex.
    smr::ds::validation_result validate() const;

    long vertices() const noexcept { return static_cast<long>(vertices_); }
    /// Implied in-edges appended (one transaction each).
    long implied_edges() const noexcept { return static_cast<long>(undirected_edges_); }
    smr::stm::stm<Domain>& transactional_memory() noexcept { return stm_; }

  private:
    friend struct ssca2_testing;  // tests corrupt the result

    static constexpr int steps = 6;
    struct step_end {
        ssca2_graph* self;
        void operator()() noexcept { self->end_step(); }
    };
    using step_barrier = std::barrier<step_end>;
    /// One client's out-list total, carried from step 1 to step 2.
    struct alignas(64) client_share {
        std::int64_t out_list_size = 0;
    };

    void run_client(smr::context_ref<Domain> self, int client, step_barrier& barrier,
                    const std::atomic<bool>& stop);
    void run_step(int step, smr::context_ref<Domain> self, int client);
    void end_step() noexcept;
    void prepare(int finished);
    void find_max_vertex(smr::context_ref<Domain> self, int client);
    void count_out_edges(int client);
    void add_list_size(smr::context_ref<Domain> self, int client);
    void fill_out_lists(int client);
    void add_implied_edges(smr::context_ref<Domain> self, int client);
    void append_in_edge(smr::stm::transaction& tx, std::int64_t v, std::int64_t u);
    void fill_in_lists(int client);
    void free_overflow(std::int64_t v) noexcept;
    bool has_out_neighbour(std::int64_t v, std::int64_t u) const noexcept;
    std::pair<std::int64_t, std::int64_t> edges_of(std::int64_t v) const noexcept;
    std::pair<std::int64_t, std::int64_t> vertex_share(int client) const noexcept;

    void check_totals(smr::ds::validation_result& result) const;
    void check_out_lists(smr::ds::validation_result& result,
                         const std::vector<std::vector<std::int64_t>>& out) const;
    void check_in_lists(smr::ds::validation_result& result,
                        const std::vector<std::vector<std::int64_t>>& in) const;

    const ssca2_data& data_;
    const std::int64_t slots_;  // 2^(s/3): fixed in-edge slots per vertex, words per block
    int clients_ = 0;
    int step_ = 0;  // the completion step's count
    bool ran_ = false;
    std::atomic<bool> failed_{false};
    std::string step_error_;
    // STAMP's graph.
    std::int64_t vertices_ = 0;
    std::int64_t edges_ = 0;
    std::int64_t int_edges_ = 0;
    std::int64_t str_edges_ = 0;
    std::int64_t directed_edges_ = 0;    // the shared out-list size, as the transactions left it
    std::int64_t undirected_edges_ = 0;  // implied in-edges
    std::vector<std::int64_t> out_degree_;
    std::vector<std::int64_t> out_index_;
    std::vector<std::int64_t> out_list_;
    std::vector<std::int64_t> parallel_index_;  // each out-neighbour's first edge
    std::vector<std::int64_t> in_degree_;       // transactional in step 4
    std::vector<std::int64_t> in_index_;
    std::vector<std::int64_t> in_list_;
    std::vector<std::int64_t> implied_;    // V x slots_, transactional in step 4
    std::vector<std::int64_t*> overflow_;  // per vertex, its newest block (STAMP's auxArr)
    std::vector<client_share> shares_;
    alignas(64) std::int64_t max_vertex_ = -1;  // STAMP's global_maxNumVertices, less 1
    alignas(64) std::int64_t list_size_ = 0;    // STAMP's global_outVertexListSize
    smr::stm::stm<Domain> stm_;
};

/// One run as STAMP's main makes it: the data generated (untimed), then the
/// clients' kernel 1, timed, then the verification. app_run::tasks counts
/// the transactions committed (two per client and one per implied in-edge,
/// all of stm.commits). A client that met a state no transaction may see
/// ends the run, and its reason is the verification's failure. Throws
/// std::invalid_argument for bad params, and what thread creation throws.
app_run run_ssca2(const ssca2_params& params, int clients, const smr::stm::stm_config& stm_config);

}  // namespace smrbench::stamp
