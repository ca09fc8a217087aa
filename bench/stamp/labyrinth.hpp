// STAMP's Labyrinth on smrlab's STM: Lee's maze routing, which connects pairs
// of cells of a 3-D grid by shortest paths that may not cross, each path
// routed and claimed by one transaction. Minh, Chung, Kozyrakis and
// Olukotun, "STAMP: Stanford Transactional Applications for
// Multi-Processing", IISWC 2008 (doi:10.1109/IISWC.2008.4636089), Section
// III (their transactional router follows Watson, Kirkham and Lujan, PACT
// 2007). Written from the paper's description and the public suite's
// structure (labyrinth/labyrinth.c, router.c, maze.c, grid.c, coordinate.c,
// README and inputs/generate.py of STAMP 0.9.10); no code is copied.
//
// ---- The workload ----------------------------------------------------------------
//
// A grid of x by y by z cells and n source/destination pairs, every endpoint
// marked in the grid before the clients start. The pairs wait in a shared
// work queue, the longest straight-line distance first (STAMP's order: its
// sorted list puts a later pair first among equals). Each client, in a loop
// until the queue is empty (STAMP's router_solve):
//
//   1. one transaction pops a pair;
//   2. one transaction routes it: the shared grid copied into the client's
//      own grid with plain reads; Lee's expansion, a breadth-first wave from
//      the source over the free cells, each labelled with its cost from the
//      source (x and y steps 1, z steps 2: STAMP's defaults), until the
//      destination is reached; the traceback from the destination, always to
//      the cheapest labelled neighbour, a change of direction costing one more
//      (STAMP's bend cost), to the source. Then the path is claimed: each of
//      its interior cells read again through the transaction (restart if one
//      is taken now), every cell written with the path's id, the path's cells
//      copied into a block allocated in the transaction and that block pushed
//      onto the shared list of paths. A pair with no way through, on the copy,
//      is counted as failed, as STAMP drops it.
//
// Why a copy read plainly is enough (STAMP's own argument, "ok if not most
// up-to-date"): during the run a cell only ever changes from free to a path's
// id, never back. A path found on an old copy is still a good path if each
// of its interior cells is still free, and that is what the claim checks
// through the transaction: the cells it re-read are in its read set and its
// stores lock them, so a commit that claims one of them before ours either
// shows its id to our re-read (we restart, copy again and route again) or
// changes a version our commit validates (we abort), or holds the lock our
// store meets (we abort). Two paths therefore never claim one cell. A stale
// copy only costs retries: it can show a cell free that is taken, never one
// taken that is free, so a pair that fails on it fails on the current grid.
//
// The allocator sees, inside transactions (tx.alloc), one block per routed
// path of 24 + 8 L bytes (L its cells, both endpoints included: the next
// link, the id, L, then the cells), by every attempt that gets through its
// claim; an attempt that aborts after that frees its block at once. The
// blocks are freed after the run, outside transactions. Before the clients
// start: the grid (8 bytes a cell) and the pairs; at each client's start
// (timed, as STAMP's PGRID_ALLOC in router_solve): its own grid, expansion
// queue and trace, outside transactions.
//
// ---- Where this port differs from STAMP 0.9.10 -------------------------------------
//
// - No input file: the pairs are drawn in-process from std::mt19937 seeded
//   with labyrinth_params::seed (0, as generate.py seeds Python's random),
//   each coordinate uniform, x then y then z, the source then the
//   destination, on the grid size and with the path count of STAMP's named
//   input files: the same kind of maze, not the files' cells. Unlike
//   generate.py, which only keeps a pair's two ends apart, no two of the 2n
//   endpoints share a cell (a draw that hits a used cell is drawn again), so
//   that every endpoint belongs to one pair. Neither has walls.
// - The grid holds who owns a cell: free (labyrinth_empty), an endpoint of a
//   pair not routed (labyrinth_endpoint), or the id of the path on it (its
//   pair's place in the queue, from 1), which the routing transaction also
//   writes onto its two endpoints. STAMP writes one value (GRID_POINT_FULL)
//   for all of them, so only the path list says whose a cell is.
// - The queue is the pairs in a constant array and one shared index word
//   that the pop transaction advances; STAMP's is a transactional queue of
//   pointers to pairs.
// - A routed path's block is allocated in its routing transaction (STAMP:
//   PVECTOR_ALLOC, a private malloc inside the transaction, starting at one
//   slot and doubling; its TODO notes that an abort leaks it; here rollback
//   frees it) and pushed onto the shared list by the same transaction, at its
//   very end, so that the list head's lock is held only until the commit.
//   STAMP keeps each thread's paths in a private vector and inserts that
//   vector into the shared list once, when the thread is done: here every
//   routing transaction also writes the list head.
// - The path is kept as cell indices from source to destination; STAMP
//   keeps pointers into the grid, from destination to source.
// - The verification checks more than STAMP's checkPaths (below), and the
//   grid, the paths and the client's grids are freed at the end.
// - A client that throws stops the run with its reason (clients.hpp).
//
// The verification, after the run: every path on the list has a pair's id,
// once; it starts at its pair's source and ends at its destination; each
// step goes to a neighbouring cell; every cell it occupies carries its id;
// no cell is claimed by two paths (nor twice by one); every cell marked with
// an id is on that path; every cell marked as an endpoint, and only those,
// is an endpoint of a pair not routed; routed and failed pairs add up to n,
// the list to the clients' counts of routed pairs; no versioned lock held.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "smr/ds/validation.hpp"
#include "smr/stm/stm.hpp"
#include "stamp/clients.hpp"

namespace smrbench::stamp {

/// STAMP's command line for Labyrinth (-t is the thread count; its defaults),
/// and the input file's grid and path count, here the generator's.
struct labyrinth_params {
    long width = 32;         ///< the input's d x
    long height = 32;        ///< the input's d y
    long depth = 3;          ///< the input's d z
    long paths = 96;         ///< the input's p lines (n)
    long x_cost = 1;         ///< -x
    long y_cost = 1;         ///< -y
    long z_cost = 2;         ///< -z
    long bend_cost = 1;      ///< -b
    std::uint32_t seed = 0;  ///< the pairs' generator (STAMP: the file)

    /// Throws std::invalid_argument naming the first parameter out of range.
    void check(long clients) const;
};

/// STAMP's named inputs: labyrinth (random-x32-y32-z3-n96, its README's
/// simulator input), labyrinth+ (random-x48-y48-z3-n64) and labyrinth++
/// (random-x512-y512-z7-n512, its native-run input). Throws
/// std::invalid_argument naming the inputs for any other name.
labyrinth_params labyrinth_input(std::string_view name);

/// The names labyrinth_input accepts, in order.
const std::vector<std::string_view>& labyrinth_inputs();

/// A free cell of the shared grid.
inline constexpr std::int64_t labyrinth_empty = 0;
/// An endpoint of a pair that no path connects (yet).
inline constexpr std::int64_t labyrinth_endpoint = -1;

struct labyrinth_point {
    long x, y, z;
};

/// Two cells of the grid, by index.
struct labyrinth_pair {
    std::int64_t source;
    std::int64_t destination;
};

/// The maze as STAMP's maze_read leaves it, and the router's costs.
struct labyrinth_maze {
    long width = 0, height = 0, depth = 0;
    long x_cost = 1, y_cost = 1, z_cost = 2, bend_cost = 1;
    std::vector<labyrinth_pair> pairs;  ///< in the queue's order: pairs[i] is path i + 1's

    std::int64_t cells() const noexcept {
        return static_cast<std::int64_t>(width) * height * depth;
    }
    /// STAMP's layout: x fastest, then y, then z.
    std::int64_t cell_of(labyrinth_point p) const noexcept {
        return (static_cast<std::int64_t>(p.z) * height + p.y) * width + p.x;
    }
    labyrinth_point point_of(std::int64_t cell) const noexcept {
        const std::int64_t area = static_cast<std::int64_t>(width) * height;
        return {static_cast<long>(cell % area % width), static_cast<long>(cell % area / width),
                static_cast<long>(cell / area)};
    }
    /// "(x, y, z)", for messages.
    std::string shown(std::int64_t cell) const;
    /// One step apart along one axis.
    bool adjacent(std::int64_t a, std::int64_t b) const noexcept;
};

/// The maze of params, deterministic. Call params.check first.
labyrinth_maze generate_labyrinth_maze(const labyrinth_params& params);

/// A routed path: one block from tx.alloc, its cells following the header.
/// next, id and length are written before the block is published, never again.
struct labyrinth_path {
    labyrinth_path* next;
    std::int64_t id;
    std::int64_t length;

    std::int64_t* cells() noexcept { return reinterpret_cast<std::int64_t*>(this + 1); }
    const std::int64_t* cells() const noexcept {
        return reinterpret_cast<const std::int64_t*>(this + 1);
    }
};
static_assert(sizeof(labyrinth_path) == 24);

/// One client's own grid, expansion queue and trace (defined in the .cpp).
struct labyrinth_scratch;

/// STAMP's router over one maze and one STM. Instantiated for
/// smr::debra_domain (bench/stamp/labyrinth.cpp), the reclaimer of the
/// allocator study's runs.
template <class Domain>
class labyrinth_router {
  public:
    /// The grid with every endpoint marked. `maze` must outlive it.
    labyrinth_router(Domain& domain, const smr::stm::stm_config& config,
                     const labyrinth_maze& maze);
    ~labyrinth_router();
    labyrinth_router(const labyrinth_router&) = delete;
    labyrinth_router& operator=(const labyrinth_router&) = delete;

    /// The clients' phase (run_clients): `clients` threads, which the domain
    /// needs room for, until the queue is empty. Once per router
    /// (std::logic_error otherwise). Throws what thread creation throws.
    client_phase run(int clients);

    /// Quiescent, after run: the checks at the top of this header, the first
    /// failure named.
    smr::ds::validation_result validate() const;

    long paths_routed() const noexcept;
    long pairs_failed() const noexcept;
    smr::stm::stm<Domain>& transactional_memory() noexcept { return stm_; }

  private:
    friend struct labyrinth_testing;  // tests corrupt the result

    /// One client's counts, on its own lines.
    struct alignas(64) client_counts {
        long routed = 0;
        long failed = 0;
    };

    void run_client(smr::context_ref<Domain> self, client_counts& counts,
                    const std::atomic<bool>& stop);
    std::int64_t take_pair(smr::context_ref<Domain> self);
    bool route(smr::context_ref<Domain> self, std::int64_t pair, labyrinth_scratch& scratch);
    void copy_grid(labyrinth_scratch& scratch);
    void claim(smr::stm::transaction& tx, const std::vector<std::int64_t>& path, std::int64_t id);
    void publish(smr::stm::transaction& tx, const std::vector<std::int64_t>& path, std::int64_t id);

    void check_claims(smr::ds::validation_result& result, std::vector<std::int64_t>& owner) const;
    void check_paths(smr::ds::validation_result& result) const;
    void check_grid(smr::ds::validation_result& result,
                    const std::vector<std::int64_t>& owner) const;
    void check_counts(smr::ds::validation_result& result) const;
    bool routed(std::int64_t id) const noexcept;

    std::int64_t* grid() noexcept { return words_.data() + first_word_; }
    const std::int64_t* grid() const noexcept { return words_.data() + first_word_; }

    const labyrinth_maze& maze_;
    std::vector<std::int64_t> words_;  // the grid, from first_word_ (64-byte aligned)
    std::size_t first_word_ = 0;
    std::vector<client_counts> counts_;  // per client
    bool ran_ = false;
    alignas(64) labyrinth_path* paths_ = nullptr;  // the shared list's head
    alignas(64) std::int64_t next_pair_ = 0;       // the work queue's head
    smr::stm::stm<Domain> stm_;
};

/// One run as STAMP's main makes it: the maze generated (untimed), then the
/// clients started together; only their phase is timed. app_run::tasks
/// counts the paths routed (STAMP's "Paths routed"); stm.commits is two per
/// pair and one per client (its last, empty pop). Then the verification; a
/// client that met a state no transaction may see ends the run with its
/// reason. Throws std::invalid_argument for bad params, and what thread
/// creation throws.
app_run run_labyrinth(const labyrinth_params& params, int clients,
                      const smr::stm::stm_config& stm_config);

}  // namespace smrbench::stamp
