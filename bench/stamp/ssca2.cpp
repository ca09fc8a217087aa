// STAMP's SSCA2 on smrlab's STM: the scalable data, kernel 1's steps, the
// in-edge transaction and the verification (bench/stamp/ssca2.hpp says what
// and why).
#include "stamp/ssca2.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "smr/core/mutant.hpp"
#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/guards.hpp"
#include "stamp/named_inputs.hpp"
#include "stamp/words.hpp"

namespace smrbench::stamp {

using smr::ds::validation_result;
using smr::stm::transaction;

namespace {

/// A state that an opaque STM never shows a transaction: stops the run.
[[noreturn]] void impossible(const std::string& what) { throw std::logic_error("ssca2: " + what); }

std::size_t at(std::int64_t i) noexcept { return static_cast<std::size_t>(i); }

std::int64_t* as_block(std::int64_t v) noexcept {
    return reinterpret_cast<std::int64_t*>(static_cast<std::intptr_t>(v));
}

std::string vertex(std::int64_t v) { return "vertex " + std::to_string(v) + ": "; }

/// [first, last) of n items for one of `clients` (STAMP's createPartition).
std::pair<std::int64_t, std::int64_t> share(std::int64_t n, int client, int clients) {
    return {n * client / clients, n * (client + 1) / clients};
}

// ---- the scalable data ------------------------------------------------------------

/// STAMP draws with random_generate() % bound (genrand_int32).
std::int64_t draw(std::mt19937& g, std::int64_t bound) {
    return static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(bound));
}
/// STAMP's (float)(random_generate() % 1000) / 1000.
float draw_unit(std::mt19937& g) { return static_cast<float>(g() % 1000) / 1000.0f; }

struct edge_list {
    std::vector<std::int64_t> start;
    std::vector<std::int64_t> end;

    void add(std::int64_t from, std::int64_t to, std::int64_t copies = 1) {
        for (std::int64_t c = 0; c != copies; ++c) {
            start.push_back(from);
            end.push_back(to);
        }
    }
};

/// STAMP's permV: for each i, a swap with a position drawn in [i, n).
std::vector<std::int64_t> permutation(std::mt19937& g, std::int64_t n) {
    std::vector<std::int64_t> perm(at(n));
    std::iota(perm.begin(), perm.end(), std::int64_t{0});
    for (std::int64_t i = 0; i != n; ++i) std::swap(perm[at(i)], perm[at(i + draw(g, n - i))]);
    return perm;
}

/// Each clique's first vertex, then n. STAMP draws all its estimated
/// cliques' sizes first (the draws that follow depend on it), then cuts the
/// clique that reaches the last vertex.
std::vector<std::int64_t> clique_bounds(std::mt19937& g, std::int64_t n, std::int64_t cluster) {
    const auto estimate = static_cast<std::int64_t>(
        std::ceil(1.5 * static_cast<double>(n) / static_cast<double>((1 + cluster) / 2)));
    std::vector<std::int64_t> sizes(at(estimate));
    for (std::int64_t& size : sizes) size = 1 + draw(g, cluster);
    std::vector<std::int64_t> bounds{0};
    for (const std::int64_t size : sizes) {
        if (bounds.back() + size >= n) {
            bounds.push_back(n);
            return bounds;
        }
        bounds.push_back(bounds.back() + size);
    }
    impossible("the estimated cliques do not cover the vertices");
}

/// STAMP's edges inside one clique: every pair one or both ways, then
/// parallel edges drawn among its pairs.
void clique_edges(std::mt19937& g, const ssca2_params& p, std::int64_t first, std::int64_t size,
                  edge_list& edges) {
    const auto u = static_cast<float>(p.unidirectional);
    std::vector<std::int64_t> parallel(at(size * size), 0);  // per ordered pair
    const auto made = [&](std::int64_t i, std::int64_t j) -> std::int64_t& {
        return parallel[at(i * size + j)];
    };
    for (std::int64_t i = 0; i != size; ++i) {
        for (std::int64_t j = 0; j != i; ++j) {
            const float r = draw_unit(g);
            const bool forward = r >= u || r >= 0.5f;
            const bool backward = r >= u || r < 0.5f;
            if (forward) edges.add(first + i, first + j);
            if (backward) edges.add(first + j, first + i);
            made(i, j) = forward ? 1 : 0;
            made(j, i) = backward ? 1 : 0;
        }
    }
    if (size == 1) return;
    const std::int64_t extra = draw(g, 2 * size * p.max_parallel_edges);
    for (std::int64_t k = 0; k != extra; ++k) {
        const std::int64_t i = draw(g, size);
        const std::int64_t j = draw(g, size);
        if (i == j || made(i, j) >= p.max_parallel_edges) continue;
        if (draw_unit(g) >= u) {
            edges.add(first + i, first + j);
            ++made(i, j);
        }
    }
}

std::int64_t clique_of(const std::vector<std::int64_t>& bounds, std::int64_t v) {
    return std::upper_bound(bounds.begin(), bounds.end(), v) - bounds.begin() - 1;
}

/// STAMP's links between cliques: from each vertex i, to i + d and i - d
/// (mod n) with probability -i halved at each power of two d.
void inter_clique_edges(std::mt19937& g, const ssca2_params& p,
                        const std::vector<std::int64_t>& bounds, std::int64_t n, edge_list& edges) {
    const auto link = [&](std::int64_t from, std::int64_t to) {
        if (clique_of(bounds, from) == clique_of(bounds, to)) return;
        edges.add(from, to, draw(g, p.max_parallel_edges) + 1);
    };
    for (std::int64_t i = 0; i != n; ++i) {
        auto chance = static_cast<float>(p.inter_clique);
        for (std::int64_t d = 1; d < n; d *= 2, chance /= 2) {
            if (draw_unit(g) <= chance) link(i, (i + d) % n);
            if (draw_unit(g) <= chance) link(i, (i - d + n) % n);  // drawn always, as STAMP
        }
    }
}

/// STAMP's weights: an integer in [1, 2^s) with probability -w, else minus
/// the next string's index (from 0).
std::vector<std::int64_t> edge_weights(std::mt19937& g, const ssca2_params& p, std::size_t count) {
    const auto share_int = static_cast<float>(p.int_weight_share);
    const std::int64_t max_int = std::int64_t{1} << p.scale;
    std::vector<std::int64_t> weights(count);
    std::int64_t strings = 0;
    for (std::int64_t& w : weights) {
        w = draw_unit(g) <= share_int ? 1 + draw(g, max_int - 1) : -(strings++);
    }
    return weights;
}

const std::array<named_input<ssca2_params>, 3>& named_inputs() {
    // ssca2/README: -s13 -i1.0 -u1.0 -l3 -p3 (simulator), -s20 (native runs);
    // the paper's Table IV adds ssca2+ at -s14.
    static const std::array<named_input<ssca2_params>, 3> inputs{{
        {"ssca2", {13, 1.0, 1.0, 3, 3}},
        {"ssca2+", {14, 1.0, 1.0, 3, 3}},
        {"ssca2++", {20, 1.0, 1.0, 3, 3}},
    }};
    return inputs;
}

/// The sequential kernel 1: per vertex, its distinct out-neighbours, sorted,
/// and its implied in-neighbours (those without an edge back).
struct reference_graph {
    std::int64_t vertices = 0;
    std::vector<std::vector<std::int64_t>> out;
    std::vector<std::vector<std::int64_t>> in;
};

reference_graph build_reference(const ssca2_data& d) {
    reference_graph r;
    for (std::size_t j = 0; j != d.start.size(); ++j) {
        r.vertices = std::max({r.vertices, d.start[j] + 1, d.end[j] + 1});
    }
    r.out.resize(at(r.vertices));
    r.in.resize(at(r.vertices));
    for (std::size_t j = 0; j != d.start.size(); ++j) r.out[at(d.start[j])].push_back(d.end[j]);
    for (auto& list : r.out) {
        std::sort(list.begin(), list.end());
        list.erase(std::unique(list.begin(), list.end()), list.end());
    }
    for (std::int64_t u = 0; u != r.vertices; ++u) {
        for (const std::int64_t v : r.out[at(u)]) {
            const auto& back = r.out[at(v)];
            if (!std::binary_search(back.begin(), back.end(), u)) r.in[at(v)].push_back(u);
        }
    }
    return r;
}

std::int64_t total_size(const std::vector<std::vector<std::int64_t>>& lists) {
    std::int64_t n = 0;
    for (const auto& list : lists) n += static_cast<std::int64_t>(list.size());
    return n;
}

/// Exclusive prefix sums (STAMP's prefix_sums); returns the total.
std::int64_t prefix_sums(const std::vector<std::int64_t>& counts, std::vector<std::int64_t>& out) {
    std::int64_t sum = 0;
    for (std::size_t i = 0; i != counts.size(); ++i) {
        out[i] = sum;
        sum += counts[i];
    }
    return sum;
}

/// The list of `count` items from `index` in `list`, sorted; false if it
/// does not fit in the list.
bool sorted_slice(const std::vector<std::int64_t>& list, std::int64_t index, std::int64_t count,
                  std::vector<std::int64_t>& out) {
    if (index < 0 || count < 0 || index + count > static_cast<std::int64_t>(list.size())) {
        return false;
    }
    out.assign(list.begin() + index, list.begin() + index + count);
    std::sort(out.begin(), out.end());
    return true;
}

}  // namespace

const std::vector<std::string_view>& ssca2_inputs() {
    static const std::vector<std::string_view> names = input_names(named_inputs());
    return names;
}

ssca2_params ssca2_input(std::string_view name) {
    return find_input(named_inputs(), "SSCA2", name);
}

void ssca2_params::check(long clients) const {
    const auto refuse = [](const std::string& what) {
        throw std::invalid_argument("ssca2: " + what);
    };
    const auto probability = [](double x) { return x >= 0.0 && x <= 1.0; };
    if (clients < 1) refuse("clients (-t) must be at least 1");
    // 2^(s/3) >= 2 for the overflow blocks' link; 2^20 x 2^6 implied slots
    // already take 512 MiB, as STAMP's.
    if (scale < 3 || scale > 20) refuse("the problem scale (-s) must be in [3, 20]");
    if (!probability(inter_clique)) refuse("the inter-clique probability (-i) must be in [0, 1]");
    if (!probability(unidirectional)) {
        refuse("the unidirectional probability (-u) must be in [0, 1]");
    }
    if (max_path_length < 1) refuse("the max path length (-l) must be at least 1");
    if (max_parallel_edges < 1 || max_parallel_edges > 64) {
        refuse("the max parallel edges (-p) must be in [1, 64]");
    }
    if (!probability(int_weight_share)) {
        refuse("the integer weight share (-w) must be in [0, 1]");
    }
}

ssca2_data generate_ssca2_data(const ssca2_params& params) {
    std::mt19937 g(params.seed);
    const std::int64_t n = std::int64_t{1} << params.scale;
    const std::int64_t cluster = ssca2_max_cluster(params.scale);
    const std::vector<std::int64_t> perm = permutation(g, n);
    const std::vector<std::int64_t> bounds = clique_bounds(g, n, cluster);
    edge_list edges;
    for (std::size_t c = 0; c + 1 != bounds.size(); ++c) {
        clique_edges(g, params, bounds[c], bounds[c + 1] - bounds[c], edges);
    }
    inter_clique_edges(g, params, bounds, n, edges);
    ssca2_data data;
    data.generated_vertices = static_cast<long>(n);
    data.max_cluster = static_cast<long>(cluster);
    data.weight = edge_weights(g, params, edges.start.size());
    std::vector<std::pair<std::int64_t, std::int64_t>> sorted(edges.start.size());
    for (std::size_t j = 0; j != sorted.size(); ++j) {
        sorted[j] = {perm[at(edges.start[j])], perm[at(edges.end[j])]};
    }
    std::sort(sorted.begin(), sorted.end());
    for (const auto& [from, to] : sorted) {
        data.start.push_back(from);
        data.end.push_back(to);
    }
    return data;
}

// ---- kernel 1 ---------------------------------------------------------------------

template <class Domain>
ssca2_graph<Domain>::ssca2_graph(Domain& domain, const smr::stm::stm_config& config,
                                 const ssca2_data& data)
    : data_(data), slots_(data.max_cluster), stm_(domain, config) {
    if (slots_ < 2) throw std::invalid_argument("ssca2: max_cluster must be at least 2");
}

template <class Domain>
ssca2_graph<Domain>::~ssca2_graph() {
    // A run that stopped before step 5 leaves blocks its transactions committed.
    for (std::size_t v = 0; v != overflow_.size(); ++v) free_overflow(static_cast<std::int64_t>(v));
}

template <class Domain>
client_phase ssca2_graph<Domain>::run(int clients) {
    if (ran_) throw std::logic_error("ssca2: one run per graph");
    if (clients < 1) throw std::invalid_argument("ssca2: clients must be at least 1");
    ran_ = true;
    clients_ = clients;
    shares_.assign(static_cast<std::size_t>(clients), client_share{});
    step_barrier barrier(clients, step_end{this});
    client_phase phase =
        run_clients(stm_.domain(), stm_, clients,
                    [&](smr::context_ref<Domain> self, int client, const std::atomic<bool>& stop) {
                        run_client(self, client, barrier, stop);
                    });
    if (!step_error_.empty()) {
        std::string& first = phase.errors.front();
        first += (first.empty() ? "" : "; ") + step_error_;
    }
    return phase;
}

/// The six steps, a barrier after each. A client that fails leaves the
/// barrier so that the others reach the next step, see failed_ and leave too.
template <class Domain>
void ssca2_graph<Domain>::run_client(smr::context_ref<Domain> self, int client,
                                     step_barrier& barrier, const std::atomic<bool>& stop) {
    try {
        for (int step = 0; step != steps; ++step) {
            // failed_: set before its setter's arrival, which the barrier publishes.
            if (stop.load(std::memory_order_relaxed) || failed_.load(std::memory_order_relaxed)) {
                barrier.arrive_and_drop();
                break;
            }
            run_step(step, self, client);
            barrier.arrive_and_wait();
        }
    } catch (...) {
        failed_.store(true, std::memory_order_relaxed);
        barrier.arrive_and_drop();
        throw;
    }
    stm_.flush(self);
}

template <class Domain>
void ssca2_graph<Domain>::run_step(int step, smr::context_ref<Domain> self, int client) {
    switch (step) {
        case 0:
            return find_max_vertex(self, client);
        case 1:
            return count_out_edges(client);
        case 2:
            return add_list_size(self, client);
        case 3:
            return fill_out_lists(client);
        case 4:
            return add_implied_edges(self, client);
        default:
            return fill_in_lists(client);
    }
}

/// The barrier's completion step: every client has arrived or left, so no
/// transaction runs and the shared words are read and written plainly.
template <class Domain>
void ssca2_graph<Domain>::end_step() noexcept {
    const int finished = step_++;
    if (failed_.load(std::memory_order_relaxed)) return;
    try {
        prepare(finished);
    } catch (const std::exception& e) {  // an allocation: the run stops with it
        step_error_ = std::string("after step ") + std::to_string(finished) + ": " + e.what();
        failed_.store(true, std::memory_order_relaxed);
    }
}

/// What STAMP's thread 0 does between the steps: the arrays of the next.
template <class Domain>
void ssca2_graph<Domain>::prepare(int finished) {
    const std::size_t v = at(vertices_);
    switch (finished) {
        case 0: {
            vertices_ = max_vertex_ + 1;
            edges_ = data_.edges();
            // STAMP's count: the last string weight is minus the strings less one.
            const auto last = std::find_if(data_.weight.rbegin(), data_.weight.rend(),
                                           [](std::int64_t w) { return w <= 0; });
            str_edges_ = last == data_.weight.rend() ? 0 : 1 - *last;
            int_edges_ = edges_ - str_edges_;
            out_degree_.assign(at(vertices_), 0);
            out_index_.assign(at(vertices_), 0);
            return;
        }
        case 1: {
            const std::int64_t total = prefix_sums(out_degree_, out_index_);
            out_list_.assign(at(total), 0);  // sized by the degrees, checked against list_size_
            parallel_index_.assign(at(total), 0);
            return;
        }
        case 2:
            directed_edges_ = list_size_;
            return;
        case 3:
            in_degree_.assign(v, 0);
            in_index_.assign(v, 0);
            implied_.assign(v * at(slots_), 0);
            overflow_.assign(v, nullptr);
            return;
        case 4:
            undirected_edges_ = prefix_sums(in_degree_, in_index_);
            in_list_.assign(at(undirected_edges_), 0);
            return;
        default:  // STAMP frees its temporary arrays at the end of kernel 1
            std::vector<std::int64_t>().swap(implied_);
            std::vector<std::int64_t*>().swap(overflow_);
    }
}

/// Step 0: the largest vertex of the client's edges, folded into the shared
/// maximum (STAMP's first transaction).
template <class Domain>
void ssca2_graph<Domain>::find_max_vertex(smr::context_ref<Domain> self, int client) {
    const auto [first, last] = share(data_.edges(), client, clients_);
    std::int64_t local = -1;
    for (std::int64_t j = first; j != last; ++j) {
        local = std::max({local, data_.start[at(j)], data_.end[at(j)]});
    }
    stm_.atomically(self, [&](transaction& tx) {
        const std::int64_t seen = tx.load(&max_vertex_);
        tx.store(&max_vertex_, std::max(seen, local), {&max_vertex_, sizeof max_vertex_});
    });
}

/// Step 1: each vertex's distinct end vertices (the list is sorted).
template <class Domain>
void ssca2_graph<Domain>::count_out_edges(int client) {
    const auto [first, last] = vertex_share(client);
    std::int64_t size = 0;
    for (std::int64_t v = first; v != last; ++v) {
        const auto [begin, end] = edges_of(v);
        std::int64_t degree = 0;
        for (std::int64_t j = begin; j != end; ++j) {
            if (j == begin || data_.end[at(j)] != data_.end[at(j - 1)]) ++degree;
        }
        out_degree_[at(v)] = degree;
        size += degree;
    }
    shares_[static_cast<std::size_t>(client)].out_list_size = size;
}

/// Step 2: STAMP's second transaction, the client's total into the shared size.
template <class Domain>
void ssca2_graph<Domain>::add_list_size(smr::context_ref<Domain> self, int client) {
    const std::int64_t mine = shares_[static_cast<std::size_t>(client)].out_list_size;
    stm_.atomically(self, [&](transaction& tx) {
        tx.store(&list_size_, tx.load(&list_size_) + mine, {&list_size_, sizeof list_size_});
    });
}

/// Step 3: each vertex's out-list, with the first edge of each neighbour.
template <class Domain>
void ssca2_graph<Domain>::fill_out_lists(int client) {
    const auto [first, last] = vertex_share(client);
    for (std::int64_t v = first; v != last; ++v) {
        const auto [begin, end] = edges_of(v);
        std::int64_t slot = out_index_[at(v)];
        for (std::int64_t j = begin; j != end; ++j) {
            if (j != begin && data_.end[at(j)] == data_.end[at(j - 1)]) continue;
            out_list_[at(slot)] = data_.end[at(j)];
            parallel_index_[at(slot)] = j;
            ++slot;
        }
    }
}

/// Step 4: for every edge u -> v without v -> u, u appended to v's in-edges,
/// one transaction each (STAMP's transactional heart of kernel 1).
template <class Domain>
void ssca2_graph<Domain>::add_implied_edges(smr::context_ref<Domain> self, int client) {
    const auto [first, last] = vertex_share(client);
    for (std::int64_t u = first; u != last; ++u) {
        const std::int64_t begin = out_index_[at(u)];
        for (std::int64_t k = begin; k != begin + out_degree_[at(u)]; ++k) {
            const std::int64_t v = out_list_[at(k)];
            if (has_out_neighbour(v, u)) continue;
            stm_.atomically(self, [&](transaction& tx) { append_in_edge(tx, v, u); });
        }
    }
}

/// v's in-degree one more, u in its new slot: one of v's fixed slots, or in
/// its newest overflow block, a new one first if the last is full.
template <class Domain>
void ssca2_graph<Domain>::append_in_edge(transaction& tx, std::int64_t v, std::int64_t u) {
    std::int64_t* const degree = &in_degree_[at(v)];
    tx.store(degree, tx.load(degree) + 1, {degree, sizeof *degree});
    // Mutant: the in-degree read back without the transaction. The STM
    // writes back at commit, so memory still holds the degree from before the
    // store just above (buffered): the slot comes out one too low. At a
    // vertex's first in-edge that is -1, which no transaction of an opaque
    // STM can see, and the run stops with the reason. Deterministic: it
    // misses our own store, not another client's, so every run fails at any
    // client count (the quick size appends thousands of first in-edges).
    const std::int64_t slot =
        (SMR_MUTANT("ssca2_in_degree_read_uninstrumented") ? *degree : tx.load(degree)) - 1;
    if (slot < 0)
        impossible(vertex(v) + "in-degree " + std::to_string(slot + 1) + " after one more");
    if (slot < slots_) {
        std::int64_t* const fixed = implied_.data() + at(v * slots_);
        tx.store(fixed + slot, u, {fixed, at(slots_) * sizeof(std::int64_t)});
        return;
    }
    const std::int64_t within = (slot - slots_) % (slots_ - 1);  // the last word links
    std::int64_t** const newest = &overflow_[at(v)];
    std::int64_t* block = nullptr;
    if (within == 0) {
        block = static_cast<std::int64_t*>(tx.alloc(at(slots_) * sizeof(std::int64_t)));
        block[slots_ - 1] = as_value(tx.load(newest));  // plain: ours until the commit
        tx.store(newest, block, {newest, sizeof *newest});
    } else {
        block = tx.load(newest);
        if (block == nullptr)
            impossible(vertex(v) + "no overflow block for slot " + std::to_string(slot));
    }
    tx.store(block + within, u, {block, at(slots_) * sizeof(std::int64_t)});
}

/// Step 5: each vertex's in-list from its fixed slots, then its blocks
/// (newest first, so from the back), which are then freed.
template <class Domain>
void ssca2_graph<Domain>::fill_in_lists(int client) {
    const auto [first, last] = vertex_share(client);
    const std::int64_t per_block = slots_ - 1;
    for (std::int64_t v = first; v != last; ++v) {
        const std::int64_t degree = in_degree_[at(v)];
        std::int64_t* const list = in_list_.data() + at(in_index_[at(v)]);
        const std::int64_t* const fixed = implied_.data() + at(v * slots_);
        std::copy(fixed, fixed + std::min(degree, slots_), list);
        const std::int64_t spilled = degree - slots_;
        if (spilled <= 0) continue;
        const std::int64_t* block = overflow_[at(v)];
        for (std::int64_t b = (spilled - 1) / per_block; b >= 0 && block != nullptr; --b) {
            const std::int64_t used = std::min(per_block, spilled - b * per_block);
            std::copy(block, block + used, list + slots_ + b * per_block);
            block = as_block(block[slots_ - 1]);
        }
        free_overflow(v);
    }
}

template <class Domain>
void ssca2_graph<Domain>::free_overflow(std::int64_t v) noexcept {
    std::int64_t* block = overflow_[at(v)];
    while (block != nullptr) {
        std::int64_t* const older = as_block(block[slots_ - 1]);
        std::free(block);
        block = older;
    }
    overflow_[at(v)] = nullptr;
}

/// STAMP's linear search of v's out-list for u.
template <class Domain>
bool ssca2_graph<Domain>::has_out_neighbour(std::int64_t v, std::int64_t u) const noexcept {
    const auto begin = out_list_.begin() + out_index_[at(v)];
    return std::find(begin, begin + out_degree_[at(v)], u) != begin + out_degree_[at(v)];
}

/// v's edges in the sorted list: [first, last).
template <class Domain>
auto ssca2_graph<Domain>::edges_of(std::int64_t v) const noexcept
    -> std::pair<std::int64_t, std::int64_t> {
    const auto [begin, end] = std::equal_range(data_.start.begin(), data_.start.end(), v);
    return {begin - data_.start.begin(), end - data_.start.begin()};
}

template <class Domain>
auto ssca2_graph<Domain>::vertex_share(int client) const noexcept
    -> std::pair<std::int64_t, std::int64_t> {
    return share(vertices_, client, clients_);
}

// ---- the verification ------------------------------------------------------------

template <class Domain>
validation_result ssca2_graph<Domain>::validate() const {
    validation_result result;
    if (!ran_) {
        result.fail("kernel 1 never ran");
        return result;
    }
    const reference_graph reference = build_reference(data_);
    if (vertices_ != reference.vertices) {
        result.fail(std::to_string(vertices_) + " vertices, " + std::to_string(reference.vertices) +
                    " in the sequential build");
    }
    if (result.ok) check_totals(result);
    if (result.ok && directed_edges_ != total_size(reference.out)) {
        result.fail("the out-list size is " + std::to_string(directed_edges_) + ", " +
                    std::to_string(total_size(reference.out)) + " in the sequential build");
    }
    if (result.ok && undirected_edges_ != total_size(reference.in)) {
        result.fail(std::to_string(undirected_edges_) + " implied in-edges, " +
                    std::to_string(total_size(reference.in)) + " in the sequential build");
    }
    if (result.ok) check_out_lists(result, reference.out);
    if (result.ok) check_in_lists(result, reference.in);
    if (const std::size_t locked = stm_.orecs().locked_entries(); locked != 0) {
        result.fail(std::to_string(locked) + " versioned locks still held");
    }
    return result;
}

/// The edge counts and the arrays' sizes.
template <class Domain>
void ssca2_graph<Domain>::check_totals(validation_result& result) const {
    const auto strings = std::count_if(data_.weight.begin(), data_.weight.end(),
                                       [](std::int64_t w) { return w <= 0; });
    if (edges_ != data_.edges()) {
        return result.fail(std::to_string(edges_) + " edges, the list has " +
                           std::to_string(data_.edges()));
    }
    if (str_edges_ != strings || int_edges_ + str_edges_ != edges_) {
        return result.fail(std::to_string(int_edges_) + " integer and " +
                           std::to_string(str_edges_) + " string edges, the weights have " +
                           std::to_string(strings) + " strings");
    }
    const std::size_t v = at(vertices_);
    if (out_degree_.size() != v || out_index_.size() != v || in_degree_.size() != v ||
        in_index_.size() != v) {
        result.fail("a degree or index array is not one word per vertex");
    }
}

/// Per vertex: its out-degree, its place, its neighbours and each one's
/// first parallel edge.
template <class Domain>
void ssca2_graph<Domain>::check_out_lists(validation_result& result,
                                          const std::vector<std::vector<std::int64_t>>& out) const {
    std::vector<std::int64_t> found;
    std::int64_t place = 0;
    for (std::int64_t v = 0; v != vertices_; ++v) {
        const auto& expected = out[at(v)];
        const std::int64_t degree = out_degree_[at(v)];
        if (degree != static_cast<std::int64_t>(expected.size())) {
            return result.fail(vertex(v) + "out-degree " + std::to_string(degree) + ", " +
                               std::to_string(expected.size()) + " in the sequential build");
        }
        if (out_index_[at(v)] != place) {
            return result.fail(vertex(v) + "out-index " + std::to_string(out_index_[at(v)]) +
                               ", its predecessors' degrees add up to " + std::to_string(place));
        }
        if (!sorted_slice(out_list_, place, degree, found) || found != expected) {
            return result.fail(vertex(v) + "its out-neighbours are not the sequential build's");
        }
        for (std::int64_t k = place; k != place + degree; ++k) {
            const std::int64_t j = parallel_index_[at(k)];
            if (j < 0 || j >= data_.edges() || data_.start[at(j)] != v ||
                data_.end[at(j)] != out_list_[at(k)] ||
                (j > 0 && data_.start[at(j - 1)] == v &&
                 data_.end[at(j - 1)] == out_list_[at(k)])) {
                return result.fail(vertex(v) + "the parallel edge index of out-neighbour " +
                                   std::to_string(out_list_[at(k)]) + " is not its first edge");
            }
        }
        place += degree;
    }
}

/// Per vertex: its implied in-degree, its place and its in-neighbours.
template <class Domain>
void ssca2_graph<Domain>::check_in_lists(validation_result& result,
                                         const std::vector<std::vector<std::int64_t>>& in) const {
    std::vector<std::int64_t> found;
    std::vector<std::int64_t> expected;
    std::int64_t place = 0;
    for (std::int64_t v = 0; v != vertices_; ++v) {
        expected = in[at(v)];
        std::sort(expected.begin(), expected.end());
        const std::int64_t degree = in_degree_[at(v)];
        if (degree != static_cast<std::int64_t>(expected.size())) {
            return result.fail(vertex(v) + "in-degree " + std::to_string(degree) + ", " +
                               std::to_string(expected.size()) + " in the sequential build");
        }
        if (in_index_[at(v)] != place) {
            return result.fail(vertex(v) + "in-index " + std::to_string(in_index_[at(v)]) +
                               ", its predecessors' degrees add up to " + std::to_string(place));
        }
        if (!sorted_slice(in_list_, place, degree, found) || found != expected) {
            return result.fail(vertex(v) + "its in-neighbours are not the sequential build's");
        }
        place += degree;
    }
}

template class ssca2_graph<smr::debra_domain>;

app_run run_ssca2(const ssca2_params& params, int clients, const smr::stm::stm_config& stm_config) {
    params.check(clients);
    const ssca2_data data = generate_ssca2_data(params);  // untimed
    smr::domain_config domain_config;
    domain_config.max_threads = static_cast<std::size_t>(clients) + 1;  // as run_vacation
    smr::debra_domain domain(domain_config);
    ssca2_graph<smr::debra_domain> graph(domain, stm_config, data);
    return measured_run(graph, clients);
}

}  // namespace smrbench::stamp
