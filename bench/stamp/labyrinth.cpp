// STAMP's Labyrinth on smrlab's STM: the maze, Lee's expansion and
// traceback, the clients' transactions and the verification
// (bench/stamp/labyrinth.hpp says what and why).
#include "stamp/labyrinth.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <new>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "smr/core/mutant.hpp"
#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/guards.hpp"
#include "stamp/named_inputs.hpp"

namespace smrbench::stamp {

using smr::ds::validation_result;
using smr::stm::transaction;

/// A client's private state, allocated at its start and reused for every pair.
struct labyrinth_scratch {
    std::vector<std::int64_t> distance;  // per cell: a cost from the source, or below
    std::vector<std::int64_t> queue;     // the expansion's FIFO (a cell may enter twice)
    std::vector<std::int64_t> path;      // the traceback, then source first
};

namespace {

constexpr std::int64_t unreached = -1;  // free, not labelled yet
constexpr std::int64_t blocked = -2;    // taken, or already on the trace

struct heading {
    int dx, dy, dz;
    int axis;  // 0 x, 1 y, 2 z: which cost a step pays
};
// STAMP expands toward +x, -x, +y, -y, +z, -z but traces back toward +x, +y,
// +z, -x, -y, -z; with ties broken by order, both orders shape the paths.
constexpr std::array<heading, 6> expansion_moves{
    {{1, 0, 0, 0}, {-1, 0, 0, 0}, {0, 1, 0, 1}, {0, -1, 0, 1}, {0, 0, 1, 2}, {0, 0, -1, 2}}};
constexpr std::array<heading, 6> trace_moves{
    {{1, 0, 0, 0}, {0, 1, 0, 1}, {0, 0, 1, 2}, {-1, 0, 0, 0}, {0, -1, 0, 1}, {0, 0, -1, 2}}};

/// The cell one move from p, or -1 off the grid.
std::int64_t neighbour(const labyrinth_maze& m, labyrinth_point p, const heading& mv) {
    const labyrinth_point q{p.x + mv.dx, p.y + mv.dy, p.z + mv.dz};
    if (q.x < 0 || q.x >= m.width || q.y < 0 || q.y >= m.height || q.z < 0 || q.z >= m.depth) {
        return -1;
    }
    return m.cell_of(q);
}

std::int64_t cost_of(const labyrinth_maze& m, const heading& mv) {
    return mv.axis == 0 ? m.x_cost : mv.axis == 1 ? m.y_cost : m.z_cost;
}

/// Lee's wave from the source over the copy, until the destination is
/// popped; a cell reached again more cheaply is queued again (STAMP's rule).
bool expand(const labyrinth_maze& m, labyrinth_scratch& s, const labyrinth_pair& pair) {
    s.distance[static_cast<std::size_t>(pair.source)] = 0;
    s.distance[static_cast<std::size_t>(pair.destination)] = unreached;  // ours to enter
    s.queue.assign(1, pair.source);
    for (std::size_t head = 0; head != s.queue.size(); ++head) {
        const std::int64_t cell = s.queue[head];
        if (cell == pair.destination) return true;
        const std::int64_t value = s.distance[static_cast<std::size_t>(cell)];
        const labyrinth_point p = m.point_of(cell);
        for (const heading& mv : expansion_moves) {
            const std::int64_t next = neighbour(m, p, mv);
            if (next < 0) continue;
            std::int64_t& label = s.distance[static_cast<std::size_t>(next)];
            const std::int64_t reached = value + cost_of(m, mv);
            if (label == unreached || (label != blocked && reached < label)) {
                label = reached;
                s.queue.push_back(next);
            }
        }
    }
    return false;
}

struct trace_step {
    std::int64_t cell;
    std::int64_t value;
    int momentum;  // the trace_moves index that led here; -1 at the destination
};

/// The labelled neighbour to step to: the last of the cheapest (STAMP's
/// "<=" favours a neighbour over staying), a turn costing the bend cost
/// when momentum counts. `here` itself if none is cheap enough.
trace_step cheapest_neighbour(const labyrinth_maze& m, const labyrinth_scratch& s,
                              const trace_step& here, bool use_momentum) {
    trace_step best = here;
    const labyrinth_point p = m.point_of(here.cell);
    for (int k = 0; k != static_cast<int>(trace_moves.size()); ++k) {
        const std::int64_t next = neighbour(m, p, trace_moves[static_cast<std::size_t>(k)]);
        if (next < 0) continue;
        const std::int64_t value = s.distance[static_cast<std::size_t>(next)];
        if (value < 0) continue;  // unlabelled, taken, or traced already
        const std::int64_t bend = use_momentum && here.momentum != k ? m.bend_cost : 0;
        if (value + bend <= best.value) best = {next, value, k};
    }
    return best;
}

/// From the destination down the labels to the source (the only cell
/// labelled 0: every step costs at least 1), into s.path, source first.
/// False at a dead end, where STAMP gives the pair up.
bool trace_back(const labyrinth_maze& m, labyrinth_scratch& s, const labyrinth_pair& pair) {
    s.path.clear();
    trace_step at{pair.destination, s.distance[static_cast<std::size_t>(pair.destination)], -1};
    for (;;) {
        s.path.push_back(at.cell);
        s.distance[static_cast<std::size_t>(at.cell)] = blocked;  // never traced twice
        if (at.value == 0) break;
        trace_step next = cheapest_neighbour(m, s, at, true);
        if (next.cell == at.cell) next = cheapest_neighbour(m, s, at, false);
        if (next.cell == at.cell) return false;
        at = next;
    }
    std::reverse(s.path.begin(), s.path.end());
    return true;
}

/// STAMP's pair order: the longer straight-line distance first.
std::int64_t squared_distance(const labyrinth_maze& m, const labyrinth_pair& pair) {
    const labyrinth_point a = m.point_of(pair.source);
    const labyrinth_point b = m.point_of(pair.destination);
    const std::int64_t dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
    return dx * dx + dy * dy + dz * dz;
}

/// A cell not yet an endpoint, drawn as generate.py draws a point.
std::int64_t draw_free_cell(std::mt19937& g, const labyrinth_maze& m, std::vector<bool>& used) {
    for (;;) {
        const auto x = static_cast<long>(g() % static_cast<std::uint32_t>(m.width));
        const auto y = static_cast<long>(g() % static_cast<std::uint32_t>(m.height));
        const auto z = static_cast<long>(g() % static_cast<std::uint32_t>(m.depth));
        const std::int64_t cell = m.cell_of({x, y, z});
        if (!used[static_cast<std::size_t>(cell)]) {
            used[static_cast<std::size_t>(cell)] = true;
            return cell;
        }
    }
}

const std::array<named_input<labyrinth_params>, 3>& named_inputs() {
    // labyrinth/README: random-x32-y32-z3-n96 (simulator) and
    // random-x512-y512-z7-n512 (native runs); the paper's Table IV adds
    // labyrinth+ on random-x48-y48-z3-n64. STAMP's default costs throughout.
    static const std::array<named_input<labyrinth_params>, 3> inputs{{
        {"labyrinth", {32, 32, 3, 96, 1, 1, 2, 1, 0}},
        {"labyrinth+", {48, 48, 3, 64, 1, 1, 2, 1, 0}},
        {"labyrinth++", {512, 512, 7, 512, 1, 1, 2, 1, 0}},
    }};
    return inputs;
}

}  // namespace

std::string labyrinth_maze::shown(std::int64_t cell) const {
    const labyrinth_point p = point_of(cell);
    return "(" + std::to_string(p.x) + ", " + std::to_string(p.y) + ", " + std::to_string(p.z) +
           ")";
}

bool labyrinth_maze::adjacent(std::int64_t a, std::int64_t b) const noexcept {
    const labyrinth_point p = point_of(a), q = point_of(b);
    const long d = std::labs(p.x - q.x) + std::labs(p.y - q.y) + std::labs(p.z - q.z);
    return d == 1;
}

const std::vector<std::string_view>& labyrinth_inputs() {
    static const std::vector<std::string_view> names = input_names(named_inputs());
    return names;
}

labyrinth_params labyrinth_input(std::string_view name) {
    return find_input(named_inputs(), "Labyrinth", name);
}

void labyrinth_params::check(long clients) const {
    const auto refuse = [](const std::string& what) {
        throw std::invalid_argument("labyrinth: " + what);
    };
    constexpr long max_side = 1L << 12;
    constexpr long max_cost = 1L << 20;  // with 2^24 cells, no label passes 2^45
    if (clients < 1) refuse("clients (-t) must be at least 1");
    if (width < 1 || width > max_side) refuse("the width (the input's x) must be in [1, 4096]");
    if (height < 1 || height > max_side) refuse("the height (the input's y) must be in [1, 4096]");
    if (depth < 1 || depth > max_side) refuse("the depth (the input's z) must be in [1, 4096]");
    const long cells = width * height * depth;
    if (cells > (1L << 24)) refuse("the grid (x * y * z) must have at most 2^24 cells");
    if (paths < 1) refuse("paths (the input's n) must be at least 1");
    if (2 * paths > cells) refuse("paths (the input's n): their 2n endpoints need 2n cells");
    if (x_cost < 1 || x_cost > max_cost) refuse("the x cost (-x) must be in [1, 2^20]");
    if (y_cost < 1 || y_cost > max_cost) refuse("the y cost (-y) must be in [1, 2^20]");
    if (z_cost < 1 || z_cost > max_cost) refuse("the z cost (-z) must be in [1, 2^20]");
    if (bend_cost < 0 || bend_cost > max_cost) refuse("the bend cost (-b) must be in [0, 2^20]");
}

labyrinth_maze generate_labyrinth_maze(const labyrinth_params& params) {
    labyrinth_maze m;
    m.width = params.width;
    m.height = params.height;
    m.depth = params.depth;
    m.x_cost = params.x_cost;
    m.y_cost = params.y_cost;
    m.z_cost = params.z_cost;
    m.bend_cost = params.bend_cost;
    std::mt19937 g(params.seed);
    std::vector<bool> used(static_cast<std::size_t>(m.cells()), false);
    for (long i = 0; i != params.paths; ++i) {
        const std::int64_t source = draw_free_cell(g, m, used);
        m.pairs.push_back({source, draw_free_cell(g, m, used)});
    }
    // STAMP's sorted list: farther first, and a later pair before an equal one.
    std::reverse(m.pairs.begin(), m.pairs.end());
    std::stable_sort(m.pairs.begin(), m.pairs.end(), [&](const auto& a, const auto& b) {
        return squared_distance(m, a) > squared_distance(m, b);
    });
    return m;
}

// ---- the router ---------------------------------------------------------------

template <class Domain>
labyrinth_router<Domain>::labyrinth_router(Domain& domain, const smr::stm::stm_config& config,
                                           const labyrinth_maze& maze)
    : maze_(maze), stm_(domain, config) {
    // 7 spare words: the grid moves up to a 64-byte boundary (STAMP aligns it
    // to its 32-byte line).
    words_.assign(static_cast<std::size_t>(maze.cells()) + 7, labyrinth_empty);
    while (reinterpret_cast<std::uintptr_t>(words_.data() + first_word_) % 64 != 0) ++first_word_;
    for (const labyrinth_pair& pair : maze.pairs) {
        grid()[pair.source] = labyrinth_endpoint;
        grid()[pair.destination] = labyrinth_endpoint;
    }
}

template <class Domain>
labyrinth_router<Domain>::~labyrinth_router() {
    for (labyrinth_path* p = paths_; p != nullptr;) {
        labyrinth_path* next = p->next;
        std::free(p);
        p = next;
    }
}

template <class Domain>
client_phase labyrinth_router<Domain>::run(int clients) {
    if (ran_) throw std::logic_error("labyrinth: a router runs once");
    ran_ = true;
    counts_ = std::vector<client_counts>(static_cast<std::size_t>(clients));
    return run_clients(
        stm_.domain(), stm_, clients,
        [&](smr::context_ref<Domain> self, int client, const std::atomic<bool>& stop) {
            run_client(self, counts_[static_cast<std::size_t>(client)], stop);
        });
}

/// STAMP's router_solve: pop a pair, route it, until the queue is empty.
template <class Domain>
void labyrinth_router<Domain>::run_client(smr::context_ref<Domain> self, client_counts& counts,
                                          const std::atomic<bool>& stop) {
    labyrinth_scratch scratch;
    scratch.distance.resize(static_cast<std::size_t>(maze_.cells()));
    while (!stop.load(std::memory_order_relaxed)) {
        const std::int64_t pair = take_pair(self);
        if (pair < 0) break;
        if (route(self, pair, scratch)) {
            ++counts.routed;
        } else {
            ++counts.failed;
        }
    }
    stm_.flush(self);
}

/// The queue's next pair, or -1 once every pair is taken.
template <class Domain>
std::int64_t labyrinth_router<Domain>::take_pair(smr::context_ref<Domain> self) {
    const auto pairs = static_cast<std::int64_t>(maze_.pairs.size());
    return stm_.atomically(self, [&](transaction& tx) -> std::int64_t {
        const std::int64_t next = tx.load(&next_pair_);
        if (next == pairs) return -1;
        tx.store(&next_pair_, next + 1, {&next_pair_, sizeof next_pair_});
        return next;
    });
}

/// The routing transaction. A restart runs it all again, copy included, as
/// STAMP's TM_RESTART does. False: no way through (a read-only commit).
template <class Domain>
bool labyrinth_router<Domain>::route(smr::context_ref<Domain> self, std::int64_t pair,
                                     labyrinth_scratch& scratch) {
    const labyrinth_pair& ends = maze_.pairs[static_cast<std::size_t>(pair)];
    const std::int64_t id = pair + 1;
    return stm_.atomically(self, [&](transaction& tx) {
        copy_grid(scratch);
        if (!expand(maze_, scratch, ends) || !trace_back(maze_, scratch, ends)) return false;
        claim(tx, scratch.path, id);
        publish(tx, scratch.path, id);
        return true;
    });
}

/// STAMP's grid_copy: plain reads (relaxed atomics, since commits write the
/// cells meanwhile), which claim() makes safe.
template <class Domain>
void labyrinth_router<Domain>::copy_grid(labyrinth_scratch& scratch) {
    std::int64_t* const cells = grid();
    for (std::size_t c = 0; c != scratch.distance.size(); ++c) {
        const std::int64_t owner =
            std::atomic_ref<std::int64_t>(cells[c]).load(std::memory_order_relaxed);
        scratch.distance[c] = owner == labyrinth_empty ? unreached : blocked;
    }
}

/// STAMP's TMgrid_addPath, writing the id: each interior cell re-read
/// through the transaction, a taken one restarting it; then every cell
/// written, the endpoints too (only this pair's transaction writes them).
///
/// Mutant: the re-read done plainly. A client whose re-read saw a cell free
/// just before another client's commit took it then stores over that commit:
/// the cell is not in its read set, so the store's snapshot extension and its
/// commit validate nothing about it, and both paths end up claiming the cell
/// (the second's id on the first's path). The window is from the re-read to
/// the store, a path's length of loads: tests/test_stamp_labyrinth.cpp's
/// crowded maze gives it many chances per run.
template <class Domain>
void labyrinth_router<Domain>::claim(transaction& tx, const std::vector<std::int64_t>& path,
                                     std::int64_t id) {
    std::int64_t* const cells = grid();
    for (std::size_t i = 1; i + 1 < path.size(); ++i) {
        std::int64_t* const cell = cells + path[i];
        const std::int64_t owner =
            SMR_MUTANT("labyrinth_path_cell_read_uninstrumented")
                ? std::atomic_ref<std::int64_t>(*cell).load(std::memory_order_relaxed)
                : tx.load(cell);
        if (owner != labyrinth_empty) tx.restart();
    }
    for (const std::int64_t c : path) {
        std::int64_t* const cell = cells + c;
        // A cell is its own object: a neighbour's claim in the stripe is a false conflict.
        tx.store(cell, id, {cell, sizeof *cell});
    }
}

/// The path's block, from the transaction, onto the shared list: last, so
/// the head's lock is held only until the commit.
template <class Domain>
void labyrinth_router<Domain>::publish(transaction& tx, const std::vector<std::int64_t>& path,
                                       std::int64_t id) {
    const std::size_t bytes = sizeof(labyrinth_path) + path.size() * sizeof(std::int64_t);
    auto* block =
        ::new (tx.alloc(bytes)) labyrinth_path{nullptr, id, static_cast<std::int64_t>(path.size())};
    std::copy(path.begin(), path.end(), block->cells());  // unpublished: plain
    block->next = tx.load(&paths_);
    tx.store(&paths_, block, {&paths_, sizeof paths_});
}

template <class Domain>
long labyrinth_router<Domain>::paths_routed() const noexcept {
    long n = 0;
    for (const client_counts& c : counts_) n += c.routed;
    return n;
}

template <class Domain>
long labyrinth_router<Domain>::pairs_failed() const noexcept {
    long n = 0;
    for (const client_counts& c : counts_) n += c.failed;
    return n;
}

// ---- the verification ------------------------------------------------------------

template <class Domain>
validation_result labyrinth_router<Domain>::validate() const {
    validation_result result;
    std::vector<std::int64_t> owner(static_cast<std::size_t>(maze_.cells()), 0);
    check_claims(result, owner);
    if (result.ok) check_paths(result);
    if (result.ok) check_grid(result, owner);
    check_counts(result);
    if (const std::size_t locked = stm_.orecs().locked_entries(); locked != 0) {
        result.fail(std::to_string(locked) + " versioned locks still held");
    }
    return result;
}

/// Every path a pair's, once; its cells on the grid; no cell claimed twice.
/// `owner` gets each claimed cell's path id.
template <class Domain>
void labyrinth_router<Domain>::check_claims(validation_result& result,
                                            std::vector<std::int64_t>& owner) const {
    const auto pairs = static_cast<std::int64_t>(maze_.pairs.size());
    std::vector<bool> listed(static_cast<std::size_t>(pairs) + 1, false);
    for (const labyrinth_path* p = paths_; p != nullptr; p = p->next) {
        const std::string what = "path " + std::to_string(p->id);
        if (p->id < 1 || p->id > pairs) return result.fail(what + " has no pair of that id");
        if (listed[static_cast<std::size_t>(p->id)]) return result.fail(what + " is listed twice");
        listed[static_cast<std::size_t>(p->id)] = true;
        if (p->length < 2) {
            return result.fail(what + " has " + std::to_string(p->length) + " cells");
        }
        for (std::int64_t i = 0; i != p->length; ++i) {
            const std::int64_t cell = p->cells()[i];
            if (cell < 0 || cell >= maze_.cells()) {
                return result.fail(what + ": its cell " + std::to_string(i) + " is off the grid");
            }
            std::int64_t& claimed = owner[static_cast<std::size_t>(cell)];
            if (claimed == p->id) {
                return result.fail(what + " visits " + maze_.shown(cell) + " twice");
            }
            if (claimed != 0) {
                return result.fail("cell " + maze_.shown(cell) + " is claimed by paths " +
                                   std::to_string(claimed) + " and " + std::to_string(p->id));
            }
            claimed = p->id;
        }
    }
}

/// STAMP's checkPaths: each path from its pair's source to its destination,
/// step by step through neighbours; and each of its cells carrying its id.
template <class Domain>
void labyrinth_router<Domain>::check_paths(validation_result& result) const {
    for (const labyrinth_path* p = paths_; p != nullptr; p = p->next) {
        const std::string what = "path " + std::to_string(p->id);
        const labyrinth_pair& ends = maze_.pairs[static_cast<std::size_t>(p->id - 1)];
        const std::int64_t* const cells = p->cells();
        if (cells[0] != ends.source) {
            return result.fail(what + " starts at " + maze_.shown(cells[0]) + ", its source is " +
                               maze_.shown(ends.source));
        }
        if (cells[p->length - 1] != ends.destination) {
            return result.fail(what + " ends at " + maze_.shown(cells[p->length - 1]) +
                               ", its destination is " + maze_.shown(ends.destination));
        }
        for (std::int64_t i = 0; i != p->length; ++i) {
            if (i > 0 && !maze_.adjacent(cells[i - 1], cells[i])) {
                return result.fail(what + " is broken: " + maze_.shown(cells[i - 1]) + " and " +
                                   maze_.shown(cells[i]) + " are not neighbours");
            }
            const std::int64_t mark = grid()[cells[i]];
            if (mark != p->id) {
                return result.fail(what + ": its cell " + maze_.shown(cells[i]) + " is marked " +
                                   std::to_string(mark));
            }
        }
    }
}

/// Every marked cell: an id on that path's list entry, or an endpoint of a
/// pair not routed; and every such pair's endpoints still marked so.
template <class Domain>
void labyrinth_router<Domain>::check_grid(validation_result& result,
                                          const std::vector<std::int64_t>& owner) const {
    const auto pairs = static_cast<std::int64_t>(maze_.pairs.size());
    std::vector<bool> unrouted_end(owner.size(), false);
    for (std::int64_t id = 1; id <= pairs; ++id) {
        if (routed(id)) continue;
        const labyrinth_pair& ends = maze_.pairs[static_cast<std::size_t>(id - 1)];
        for (const std::int64_t cell : {ends.source, ends.destination}) {
            unrouted_end[static_cast<std::size_t>(cell)] = true;
            if (grid()[cell] != labyrinth_endpoint) {
                return result.fail("pair " + std::to_string(id) + " is not routed, its endpoint " +
                                   maze_.shown(cell) + " is marked " +
                                   std::to_string(grid()[cell]));
            }
        }
    }
    for (std::size_t c = 0; c != owner.size(); ++c) {
        const std::int64_t mark = grid()[c];
        const auto cell = static_cast<std::int64_t>(c);
        if (mark == labyrinth_empty) continue;  // a path's cells were checked by check_paths
        if (mark == labyrinth_endpoint && !unrouted_end[c]) {
            return result.fail("cell " + maze_.shown(cell) +
                               " is marked an endpoint, of no pair left unrouted");
        }
        if (mark != labyrinth_endpoint && mark != owner[c]) {
            return result.fail("cell " + maze_.shown(cell) + " is marked " + std::to_string(mark) +
                               ", on no path of that id");
        }
    }
}

/// The list is what the clients counted, and every pair routed or failed.
template <class Domain>
void labyrinth_router<Domain>::check_counts(validation_result& result) const {
    long listed = 0;
    for (const labyrinth_path* p = paths_; p != nullptr; p = p->next) ++listed;
    if (listed != paths_routed()) {
        result.fail("the path list holds " + std::to_string(listed) +
                    " paths, the clients routed " + std::to_string(paths_routed()));
    }
    const auto pairs = static_cast<long>(maze_.pairs.size());
    if (paths_routed() + pairs_failed() != pairs) {
        result.fail(std::to_string(paths_routed()) + " pairs routed and " +
                    std::to_string(pairs_failed()) + " failed, of " + std::to_string(pairs));
    }
}

/// Quiescent: whether a path of this id is on the list.
template <class Domain>
bool labyrinth_router<Domain>::routed(std::int64_t id) const noexcept {
    for (const labyrinth_path* p = paths_; p != nullptr; p = p->next) {
        if (p->id == id) return true;
    }
    return false;
}

template class labyrinth_router<smr::debra_domain>;

app_run run_labyrinth(const labyrinth_params& params, int clients,
                      const smr::stm::stm_config& stm_config) {
    params.check(clients);
    const labyrinth_maze maze = generate_labyrinth_maze(params);  // untimed, as STAMP's maze_read
    smr::domain_config domain_config;
    domain_config.max_threads = static_cast<std::size_t>(clients) + 1;  // as run_vacation
    smr::debra_domain domain(domain_config);
    labyrinth_router<smr::debra_domain> router(domain, stm_config, maze);
    auto& stm = router.transactional_memory();
    const smr::stm::stm_stats before = stm.stats();
    const client_phase phase = router.run(clients);
    app_run run;
    run.seconds = phase.seconds;
    run.stm = stm.stats() - before;
    run.tasks = router.paths_routed();
    run.validation = phase.validation();
    if (!run.validation.ok) return run;
    run.validation = router.validate();
    return run;
}

}  // namespace smrbench::stamp
