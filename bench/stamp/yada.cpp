// STAMP's Yada on smrlab's STM: the input mesh, the transactions (the work
// heap, the neighbour lists, the refinement), the clients and the
// verification (bench/stamp/yada.hpp says what and why).
#include "stamp/yada.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <new>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

#include "smr/core/mutant.hpp"
#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/guards.hpp"
#include "stamp/named_inputs.hpp"
#include "stamp/words.hpp"

namespace smrbench::stamp {

using smr::ds::stm_rb_node;
using smr::ds::stm_rb_view;
using smr::ds::validation_result;
using smr::stm::transaction;

namespace {

/// Twice the area of many triangles: 2^57 each, more than 2^63 together once
/// a corrupted mesh overlaps itself.
__extension__ typedef __int128 area_sum;

/// A state that an opaque STM never shows a transaction (STAMP asserts), or
/// a point the grid cannot hold: stops the run with the reason.
[[noreturn]] void impossible(const std::string& what) { throw std::logic_error("yada: " + what); }

/// A segment's key in the boundary set: its first corner along the boundary,
/// counterclockwise (each boundary vertex starts exactly one segment). Both
/// coordinates are in [0, 2^28].
std::int64_t boundary_key(yada_point p) noexcept { return (p.x << 29) | p.y; }

bool is_segment(const yada_element& e) noexcept { return e.corner_count == 2; }
std::size_t edge_count(const yada_element& e) noexcept { return is_segment(e) ? 1 : 3; }
std::size_t corner_count(const yada_element& e) noexcept { return is_segment(e) ? 2 : 3; }

yada_edge edge_of(const yada_element& e, std::size_t i) noexcept {
    return {e.corners[i], e.corners[(i + 1) % corner_count(e)]};
}
yada_edge undirected(yada_edge e) noexcept { return e.to < e.from ? yada_edge{e.to, e.from} : e; }
bool is_bad(const yada_element& e) noexcept { return e.encroached_edge >= 0 || e.skinny != 0; }

bool has_corner(const yada_element& e, yada_point p) noexcept {
    for (std::size_t i = 0; i != corner_count(e); ++i) {
        if (e.corners[i] == p) return true;
    }
    return false;
}

/// a's edge whose two corners are b's too (directed as in a), if a and b
/// share exactly two corners.
std::optional<std::size_t> shared_edge(const yada_element& a, const yada_element& b) noexcept {
    std::size_t common = 0;
    for (std::size_t i = 0; i != corner_count(a); ++i)
        common += has_corner(b, a.corners[i]) ? 1 : 0;
    if (common != 2) return std::nullopt;
    for (std::size_t i = 0; i != edge_count(a); ++i) {
        const yada_edge side = edge_of(a, i);
        if (has_corner(b, side.from) && has_corner(b, side.to)) return i;
    }
    return std::nullopt;
}

/// The new point p belongs to the cavity of e: inside a triangle's
/// circumcircle, strictly; or, for a boundary segment, in its closed
/// diametral disk (it encroaches) or not strictly inside the square (on or
/// beyond the segment's line): either way the segment is split instead.
bool in_cavity(const yada_element& e, yada_point p) noexcept {
    const yada_point* c = e.corners;
    if (!is_segment(e)) return in_circle(c[0], c[1], c[2], p) > 0;
    return in_diametral_disk(c[0], c[1], p) || orientation(c[0], c[1], p) <= 0;
}

std::string describe(yada_point p) {
    return "(" + std::to_string(p.x) + ", " + std::to_string(p.y) + ")";
}
std::string describe(const yada_edge& e) { return describe(e.from) + "-" + describe(e.to); }
std::string describe(const yada_element& e) {
    std::string out = is_segment(e) ? "segment" : "triangle";
    for (std::size_t i = 0; i != corner_count(e); ++i) out += " " + describe(e.corners[i]);
    return out;
}

std::string decimal(area_sum v) {
    if (v == 0) return "0";
    const bool negative = v < 0;
    std::string digits;
    for (; v != 0; v /= 10) {
        const int digit = static_cast<int>(v % 10);
        digits += static_cast<char>('0' + (digit < 0 ? -digit : digit));
    }
    if (negative) digits += '-';
    std::reverse(digits.begin(), digits.end());
    return digits;
}

/// STAMP's element_alloc: the corners (a triangle's turned so that the
/// smallest comes first, still counterclockwise; a segment's as given, along
/// the boundary), the smallest angle and whether it is below the constraint,
/// and the edge across an obtuse angle: only a candidate, which settle keeps
/// if that edge is a boundary segment (STAMP's mesh_insert).
template <std::size_t N>
void shape(yada_element& e, const std::array<yada_point, N>& corners, double angle) {
    std::size_t first = 0;
    if constexpr (N == 3) {
        first = static_cast<std::size_t>(std::min_element(corners.begin(), corners.end()) -
                                         corners.begin());
    }
    for (std::size_t i = 0; i != N; ++i) e.corners[i] = corners[(first + i) % N];
    e.corner_count = static_cast<std::int64_t>(N);
    e.encroached_edge = -1;
    e.skinny = 0;
    e.min_angle = 180.0;
    if constexpr (N == 3) {
        const yada_point* c = e.corners;
        e.min_angle = min_angle_degrees(c[0], c[1], c[2]);
        e.skinny = e.min_angle < angle ? 1 : 0;
        for (std::size_t i = 0; i != 3; ++i) {
            if (obtuse_at(c[(i + 2) % 3], c[i], c[(i + 1) % 3])) {
                e.encroached_edge = static_cast<std::int64_t>(i);
            }
        }
    }
}

/// Once the boundary check is done: the point refining the element inserts
/// (STAMP's element_getNewPoint).
void settle(yada_element& e, bool across_segment) {
    if (!across_segment) e.encroached_edge = -1;
    const yada_point* c = e.corners;
    if (is_segment(e)) {
        e.new_point = midpoint(c[0], c[1]);
    } else if (e.encroached_edge >= 0) {
        const yada_edge side = edge_of(e, static_cast<std::size_t>(e.encroached_edge));
        e.new_point = midpoint(side.from, side.to);
    } else {
        e.new_point = refinement_point(c[0], c[1], c[2]);
    }
}

/// The words of the input mesh and its heap, before any transaction: read
/// and written plainly, allocated with malloc.
class plain_words {
  public:
    template <class T>
    T load(const T* word) const noexcept {
        return *word;
    }
    template <class T>
    void store(T* word, std::type_identity_t<T> value) const noexcept {
        *word = value;
    }
    template <class T, class O>
    void store(T* word, std::type_identity_t<T> value, const O*) const noexcept {
        *word = value;
    }
    void* alloc(std::size_t bytes) const { return checked_malloc(bytes); }
    template <class T, class... Args>
    T* make(Args&&... args) const {
        return ::new (checked_malloc(sizeof(T))) T{std::forward<Args>(args)...};
    }
    void free(void* block, std::size_t) const noexcept { std::free(block); }
};

/// The same words through a transaction: STAMP's TM_SHARED_READ and _WRITE,
/// TM_MALLOC and TM_FREE. A store names its object, so that a conflict with
/// another word of it counts as true and only one with a neighbour in the
/// stripe as false (stm_stats::false_aborts).
class tx_words {
  public:
    explicit tx_words(transaction& tx) noexcept : tx_(tx) {}

    template <class T>
    T load(const T* word) {
        return tx_.load(word);
    }
    template <class T>
    void store(T* word, std::type_identity_t<T> value) {
        tx_.store(word, value);
    }
    template <class T, class O>
    void store(T* word, std::type_identity_t<T> value, const O* object) {
        tx_.store(word, value, {object, sizeof(O)});
    }
    void* alloc(std::size_t bytes) { return tx_.alloc(bytes); }
    template <class T, class... Args>
    T* make(Args&&... args) {
        return tx_.make<T>(std::forward<Args>(args)...);
    }
    void free(void* block, std::size_t bytes) { tx_.free(block, bytes); }

  private:
    transaction& tx_;
};

// ---- STAMP's sorted list (lib/list.c), over either kind of words ----------

struct list_position {
    yada_node* previous;  ///< the last node before the element, or the head
    yada_node* node;      ///< the first node not before it, or null
};

template <class Words>
list_position find_position(Words w, yada_list* list, const yada_element* data) {
    yada_node* previous = &list->head;
    yada_node* node = w.load(&list->head.next);
    while (node != nullptr && precedes(*node->data, *data)) {  // data: fixed once published
        previous = node;
        node = w.load(&node->next);
    }
    return {previous, node};
}

template <class Words>
void set_next(Words w, yada_list* list, yada_node* previous, yada_node* next) {
    if (previous == &list->head) {
        w.store(&list->head.next, next, list);
    } else {
        w.store(&previous->next, next, previous);
    }
}

/// STAMP's list_insert without duplicates: false if an equal element is in.
template <class Words>
bool list_insert(Words w, yada_list* list, yada_element* data) {
    const list_position at = find_position(w, list, data);
    if (at.node != nullptr && !precedes(*data, *at.node->data)) return false;
    yada_node* added = w.template make<yada_node>(data, at.node);
    set_next(w, list, at.previous, added);
    w.store(&list->size, w.load(&list->size) + 1, list);
    return true;
}

/// STAMP's list_remove, of this very element.
template <class Words>
bool list_remove(Words w, yada_list* list, const yada_element* data) {
    const list_position at = find_position(w, list, data);
    if (at.node == nullptr || at.node->data != data) return false;
    set_next(w, list, at.previous, w.load(&at.node->next));
    w.free(at.node, sizeof(yada_node));
    w.store(&list->size, w.load(&list->size) - 1, list);
    return true;
}

// ---- STAMP's heap (lib/heap.c): a binary max-heap in slots 1..size -------

/// STAMP's element_heapCompare: an element that encroaches on a segment
/// before one that does not; the rest in any order.
int priority(const yada_element* a, const yada_element* b) noexcept {
    const bool a_first = a->encroached_edge >= 0;
    const bool b_first = b->encroached_edge >= 0;
    return a_first == b_first ? 0 : (a_first ? 1 : -1);
}

/// Twice the capacity; the slots copied into the new array before it is
/// published (plain stores), the old one freed.
template <class Words>
void heap_grow(Words w, yada_heap* heap, std::int64_t size, std::int64_t capacity) {
    const std::int64_t larger = capacity * 2;
    auto** fresh = static_cast<yada_element**>(
        w.alloc(static_cast<std::size_t>(larger) * sizeof(yada_element*)));
    yada_element** slots = w.load(&heap->elements);
    fresh[0] = nullptr;
    for (std::int64_t i = 1; i <= size; ++i) fresh[i] = w.load(&slots[i]);
    w.free(slots, static_cast<std::size_t>(capacity) * sizeof(yada_element*));
    w.store(&heap->elements, fresh, heap);
    w.store(&heap->capacity, larger, heap);
}

template <class Words>
void heap_sift_up(Words w, yada_element** slots, std::int64_t index) {
    while (index > 1) {
        const std::int64_t parent = index / 2;
        yada_element* above = w.load(&slots[parent]);
        yada_element* here = w.load(&slots[index]);
        if (priority(above, here) >= 0) return;
        w.store(&slots[parent], here);
        w.store(&slots[index], above);
        index = parent;
    }
}

template <class Words>
void heap_sift_down(Words w, yada_element** slots, std::int64_t size) {
    for (std::int64_t index = 1;;) {
        std::int64_t best = index;
        for (const std::int64_t child : {2 * index, 2 * index + 1}) {
            if (child <= size && priority(w.load(&slots[child]), w.load(&slots[best])) > 0) {
                best = child;
            }
        }
        if (best == index) return;
        yada_element* moved = w.load(&slots[index]);
        w.store(&slots[index], w.load(&slots[best]));
        w.store(&slots[best], moved);
        index = best;
    }
}

/// The heap's size word, as a push reads it. Mutant: read without the
/// transaction, which then misses the size its own earlier push buffered
/// until the commit. Step 5 pushes all of a refinement's new bad elements in
/// one transaction (STAMP's TMregion_transferBad), so its second push writes
/// the slot the first one filled and counts one element for two: a bad
/// element drops out of the heap, still marked referenced, and nobody refines
/// it. The verification then finds it in the mesh below the angle constraint
/// or, if another refinement removed it, never freed (its mark kept it).
/// Deterministic, with any number of clients: at the quick size the first
/// refinements already hand several new bad elements to the heap at once.
std::int64_t size_for_push(tx_words w, yada_heap* heap) {
    return SMR_MUTANT("yada_heap_size_read_uninstrumented") ? heap->size : w.load(&heap->size);
}
std::int64_t size_for_push(plain_words w, yada_heap* heap) { return w.load(&heap->size); }

/// STAMP's heap_insert: grown first if full (it keeps slot 0 unused and one
/// slot spare), then sifted up.
template <class Words>
void heap_push(Words w, yada_heap* heap, yada_element* e) {
    std::int64_t size = size_for_push(w, heap);
    const std::int64_t capacity = w.load(&heap->capacity);
    if (size + 1 >= capacity) heap_grow(w, heap, size, capacity);
    ++size;
    w.store(&heap->size, size, heap);
    yada_element** slots = w.load(&heap->elements);
    w.store(&slots[size], e);
    heap_sift_up(w, slots, size);
}

/// STAMP's heap_remove: the top, or null if empty.
template <class Words>
yada_element* heap_pop(Words w, yada_heap* heap) {
    const std::int64_t size = w.load(&heap->size);
    if (size < 1) return nullptr;
    yada_element** slots = w.load(&heap->elements);
    yada_element* top = w.load(&slots[1]);
    w.store(&slots[1], w.load(&slots[size]));
    w.store(&heap->size, size - 1, heap);
    heap_sift_down(w, slots, size - 1);
    return top;
}

/// An input element, from malloc; recorded in `built` before anything else
/// can throw, so that a failed construction frees it.
template <std::size_t N>
yada_element* make_plain(const std::array<yada_point, N>& corners, double angle,
                         std::vector<yada_element*>& built) {
    built.push_back(nullptr);
    auto* e = ::new (checked_malloc(sizeof(yada_element))) yada_element{};
    built.back() = e;
    e->neighbors = ::new (checked_malloc(sizeof(yada_list))) yada_list{};
    shape(*e, corners, angle);
    return e;
}

const yada_node* first_plain(const yada_element& e) noexcept {
    return e.neighbors == nullptr ? nullptr : e.neighbors->head.next;
}

/// Quiescent: other's list holds e (a sound list has at most three nodes).
bool lists(const yada_element& other, const yada_element& e) noexcept {
    int steps = 0;
    for (const yada_node* n = first_plain(other); n != nullptr && steps != 4; n = n->next) {
        if (n->data == &e) return true;
        ++steps;
    }
    return false;
}

const stm_rb_node* find_plain(const stm_rb_node* n, std::int64_t key) noexcept {
    while (n != nullptr && n->key != key) n = key < n->key ? n->left : n->right;
    return n;
}

bool in_square(yada_point p) noexcept {
    return p.x >= 0 && p.x <= yada_side && p.y >= 0 && p.y <= yada_side;
}

/// a..b lies along one of the square's sides.
bool on_one_side(yada_point a, yada_point b) noexcept {
    if (a == b) return false;
    if (a.x == b.x) return a.x == 0 || a.x == yada_side;
    return a.y == b.y && (a.y == 0 || a.y == yada_side);
}

const std::array<named_input<yada_params>, 3>& named_inputs() {
    // yada/README: -a20 -i inputs/633.2 (simulator), -a15 -i
    // inputs/ttimeu1000000.2 (native runs); yada+ is -a10 on ttimeu10000.2.
    // The vertex and boundary segment counts are those files'.
    static const std::array<named_input<yada_params>, 3> inputs{{
        {"yada", {20.0, 633, 16, 0}},
        {"yada+", {10.0, 10000, 23, 0}},
        {"yada++", {15.0, 1000000, 43, 0}},
    }};
    return inputs;
}

}  // namespace

bool precedes(const yada_element& a, const yada_element& b) noexcept {
    if (a.corner_count != b.corner_count) return a.corner_count < b.corner_count;
    for (std::size_t i = 0; i != corner_count(a); ++i) {
        if (a.corners[i] != b.corners[i]) return a.corners[i] < b.corners[i];
    }
    return false;
}

const std::vector<std::string_view>& yada_inputs() {
    static const std::vector<std::string_view> names = input_names(named_inputs());
    return names;
}

yada_params yada_input(std::string_view name) { return find_input(named_inputs(), "Yada", name); }

void yada_params::check(long clients) const {
    const auto refuse = [](const std::string& what) {
        throw std::invalid_argument("yada: " + what);
    };
    if (clients < 1) refuse("clients (-t) must be at least 1");
    if (!(angle > 0.0 && angle <= yada_max_angle)) {
        refuse(
            "the angle constraint (-a) must be in (0, 20.7] degrees, where Ruppert's "
            "refinement provably ends");
    }
    if (boundary_segments < 4 || boundary_segments > (1L << 20)) {
        refuse("the boundary segments must be in [4, 2^20]");
    }
    if (points < boundary_segments || points > (1L << 24)) {
        refuse("the points must be in [the boundary segments, 2^24]");
    }
}

/// A client's private state for the refinement (STAMP's region_t): the
/// walk's queue and the bad elements are reused from one element to the
/// next; the cavity and rim sets are cleared at each walk (their nodes freed,
/// as STAMP's PLIST_CLEAR).
template <class Domain>
struct yada_refiner<Domain>::region {
    std::vector<yada_element*> queue;                    // STAMP's expandQueue
    std::set<yada_element*, yada_element_order> before;  // the cavity (beforeList)
    std::set<yada_edge> rim;  // its edges to the rest, directed as in the cavity (borderList)
    std::vector<yada_element*> bad;  // new bad elements, for step 5 (badVector)
};

namespace {
/// STAMP's edge map of a retriangulation: an edge (undirected) waiting for
/// its second element, or null once two share it.
using edge_map = std::map<yada_edge, yada_element*>;
}  // namespace

/// One transaction's view of the mesh: STAMP's TMheap_*, TMelement_*,
/// TMmesh_* and TMregion_*, every mutable word through `tx`, the attempt's
/// element counts into `tally`.
template <class Domain>
class yada_refiner<Domain>::tx_view {
  public:
    tx_view(yada_refiner& refiner, transaction& tx, yada_tally& tally) noexcept
        : refiner_(refiner), tx_(tx), tally_(tally) {}

    /// Step 1.
    yada_element* pop() { return heap_pop(words(), refiner_.heap_); }

    /// Step 2: true (and freed) if a refinement removed it since it was queued.
    bool drop_if_garbage(yada_element* e) {
        if (flag(e, &yada_element::garbage) == 0) return false;
        free_element(e);
        return true;
    }

    /// Step 3, STAMP's TMregion_refine: false if e is no longer in the mesh.
    /// Until the walk finds no segment to split, a segment split (in this
    /// transaction) and the walk again, unless the split removed e.
    bool refine(yada_element* e, region& r) {
        if (flag(e, &yada_element::garbage) != 0) return false;
        const yada_point p = e->new_point;
        const yada_point* c = e->corners;
        if (!is_segment(*e) && in_circle(c[0], c[1], c[2], p) <= 0) {
            impossible(describe(*e) + ": its new point " + describe(p) +
                       " is not inside its circumcircle on the grid");
        }
        edge_map edges;
        for (;;) {
            edges.clear();
            yada_element* segment = grow(e, p, r, edges);
            if (segment == nullptr) break;
            split(segment, r);
            if (flag(e, &yada_element::garbage) != 0) return true;
        }
        retriangulate(e, p, r, edges);
        return true;
    }

    /// Step 4: no longer referenced, and freed if garbage.
    void release(yada_element* e) {
        set_flag(e, &yada_element::referenced, 0);
        if (flag(e, &yada_element::garbage) != 0) free_element(e);
    }

    /// Step 5, STAMP's TMregion_transferBad.
    void transfer(const std::vector<yada_element*>& bad) {
        for (yada_element* e : bad) {
            if (flag(e, &yada_element::garbage) != 0) {
                free_element(e);
            } else {
                heap_push(words(), refiner_.heap_, e);
            }
        }
    }

  private:
    /// STAMP's TMgrowRegion: the cavity of p from `start`, breadth first, and
    /// its rim into the edge map; or the boundary segment to split first
    /// (only when the walk starts from a triangle).
    yada_element* grow(yada_element* start, yada_point p, region& r, edge_map& edges) {
        r.before.clear();
        r.rim.clear();
        r.queue.assign(1, start);
        const bool from_segment = is_segment(*start);
        for (std::size_t next = 0; next != r.queue.size(); ++next) {
            yada_element* current = r.queue[next];
            if (!r.before.insert(current).second) continue;  // queued twice
            for (yada_node* n = first(current); n != nullptr; n = tx_.load(&n->next)) {
                yada_element* segment = visit(current, n->data, p, from_segment, r, edges);
                if (segment != nullptr) return segment;
            }
        }
        return nullptr;
    }

    /// A neighbour of a cavity element: queued if in the cavity, its shared
    /// edge on the rim if not, returned if it is a segment to split.
    yada_element* visit(yada_element* current, yada_element* neighbor, yada_point p,
                        bool from_segment, region& r, edge_map& edges) {
        // Read so that a concurrent removal aborts this walk (STAMP's reason).
        if (flag(neighbor, &yada_element::garbage) != 0) {
            impossible(describe(*current) + " lists the removed " + describe(*neighbor));
        }
        if (r.before.contains(neighbor)) return nullptr;
        if (!in_cavity(*neighbor, p)) {
            add_rim(*current, neighbor, r, edges);
            return nullptr;
        }
        if (!is_segment(*neighbor)) {
            r.queue.push_back(neighbor);
            return nullptr;
        }
        // A boundary point is never in another segment's diametral disk on a
        // square (yada_mesh.hpp): STAMP would take the segment into the cavity.
        if (from_segment) impossible(describe(p) + " encroaches on " + describe(*neighbor));
        return neighbor;
    }

    void add_rim(const yada_element& current, yada_element* neighbor, region& r, edge_map& edges) {
        const std::optional<std::size_t> shared = shared_edge(current, *neighbor);
        if (!shared) {
            impossible(describe(current) + " and its neighbour " + describe(*neighbor) +
                       " share no edge");
        }
        const yada_edge side = edge_of(current, *shared);
        r.rim.insert(side);
        edges.try_emplace(undirected(side), neighbor);
    }

    /// A boundary segment's own refinement: its middle, and the cavity of it.
    void split(yada_element* segment, region& r) {
        const yada_point p = segment->new_point;
        if (p == segment->corners[0] || p == segment->corners[1]) {
            impossible(describe(*segment) + " is too short to split on the grid");
        }
        edge_map edges;
        grow(segment, p, r, edges);
        retriangulate(segment, p, r, edges);
    }

    /// STAMP's TMretriangulate: the cavity out, a split segment's two halves
    /// in, then a triangle from p to each rim edge. Every edge the edge map
    /// holds must have found its second element.
    void retriangulate(yada_element* e, yada_point p, region& r, edge_map& edges) {
        for (yada_element* gone : r.before) remove(gone);
        if (is_segment(*e)) replace_segment(*e, p, edges);
        for (const yada_edge& side : r.rim) add_triangle(p, side, r, edges);
        for (const auto& [side, waiting] : edges) {
            if (waiting == nullptr) continue;
            impossible("retriangulating around " + describe(p) + " left the edge " +
                       describe(side) + " of " + describe(*waiting) + " without a neighbour");
        }
    }

    void add_triangle(yada_point p, const yada_edge& side, region& r, edge_map& edges) {
        // Exact: a Delaunay cavity of a point inside the square sees its rim.
        if (orientation(side.from, side.to, p) <= 0) {
            impossible("the cavity of " + describe(p) + " does not see its rim edge " +
                       describe(side));
        }
        yada_element* added = make(std::array<yada_point, 3>{p, side.from, side.to});
        insert(added, edges);
        if (!is_bad(*added)) return;
        r.bad.push_back(added);
        set_flag(added, &yada_element::referenced, 1);
    }

    /// The split segment's halves, in the mesh and the boundary set.
    void replace_segment(const yada_element& old, yada_point p, edge_map& edges) {
        yada_element* first_half = make(std::array<yada_point, 2>{old.corners[0], p});
        yada_element* second_half = make(std::array<yada_point, 2>{p, old.corners[1]});
        insert(first_half, edges);
        insert(second_half, edges);
        stm_rb_view boundary{refiner_.mesh_->boundary->root, tx_};
        const bool replaced = boundary.erase(boundary_key(old.corners[0])) &&
                              boundary.insert(boundary_key(old.corners[0]), as_value(first_half)) &&
                              boundary.insert(boundary_key(p), as_value(second_half));
        if (!replaced) impossible("the boundary set does not hold " + describe(old) + " alone");
    }

    /// STAMP's TMelement_alloc: the element and its list (tx.make, as
    /// TM_MALLOC), plain until the commit publishes them.
    template <std::size_t N>
    yada_element* make(const std::array<yada_point, N>& corners) {
        auto* e = tx_.make<yada_element>();
        e->neighbors = tx_.make<yada_list>();
        shape(*e, corners, refiner_.angle_);
        ++tally_.created;
        return e;
    }

    /// STAMP's TMmesh_insert: the root if there is none, a neighbour link for
    /// each edge the map already holds, and the encroachment kept only across
    /// a boundary segment.
    void insert(yada_element* e, edge_map& edges) {
        yada_mesh_header* mesh = refiner_.mesh_;
        if (tx_.load(&mesh->root) == nullptr)
            tx_.store(&mesh->root, e, {mesh, sizeof(yada_mesh_header)});
        for (std::size_t i = 0; i != edge_count(*e); ++i) {
            const auto [at, fresh] = edges.try_emplace(undirected(edge_of(*e, i)), e);
            if (fresh) continue;
            if (at->second == nullptr)
                impossible("three elements share the edge " + describe(at->first));
            link(e, at->second);
            at->second = nullptr;
        }
        const std::int64_t obtuse = e->encroached_edge;
        settle(*e, obtuse >= 0 && on_boundary(edge_of(*e, static_cast<std::size_t>(obtuse))));
    }

    void link(yada_element* a, yada_element* b) {
        if (!list_insert(words(), a->neighbors, b) || !list_insert(words(), b->neighbors, a)) {
            impossible(describe(*a) + " and " + describe(*b) + " are neighbours already");
        }
    }

    /// STAMP's TMmesh_remove: out of each neighbour's list, garbage, and freed
    /// unless a heap or a client holds it.
    void remove(yada_element* gone) {
        if (flag(gone, &yada_element::garbage) != 0) impossible(describe(*gone) + " removed twice");
        yada_mesh_header* mesh = refiner_.mesh_;
        if (tx_.load(&mesh->root) == gone)
            tx_.store(&mesh->root, nullptr, {mesh, sizeof(yada_mesh_header)});
        for (yada_node* n = first(gone); n != nullptr; n = tx_.load(&n->next)) {
            if (!list_remove(words(), n->data->neighbors, gone)) {
                impossible(describe(*n->data) + " does not list its neighbour " + describe(*gone));
            }
        }
        set_flag(gone, &yada_element::garbage, 1);
        ++tally_.removed;
        if (flag(gone, &yada_element::referenced) == 0) free_element(gone);
    }

    /// STAMP's TMelement_free: the list's nodes, the list and the element,
    /// each locked until the commit and freed once no transaction can read it.
    void free_element(yada_element* e) {
        for (yada_node* n = first(e); n != nullptr;) {
            yada_node* next = tx_.load(&n->next);
            tx_.free(n);
            n = next;
        }
        tx_.free(e->neighbors);
        tx_.free(e);
        ++tally_.freed;
    }

    /// The edge is a boundary segment (STAMP's TMSET_CONTAINS on the
    /// boundary set). A triangle's edge runs as the segment does: both have
    /// the square on their left.
    bool on_boundary(const yada_edge& side) {
        stm_rb_view boundary{refiner_.mesh_->boundary->root, tx_};
        stm_rb_node* n = boundary.find(boundary_key(side.from));
        return n != nullptr &&
               as_pointer<yada_element>(boundary.value_of(n))->corners[1] == side.to;
    }

    yada_node* first(yada_element* e) { return tx_.load(&e->neighbors->head.next); }

    std::int64_t flag(yada_element* e, std::int64_t yada_element::*field) {
        return tx_.load(&(e->*field));
    }
    void set_flag(yada_element* e, std::int64_t yada_element::*field, std::int64_t value) {
        tx_.store(&(e->*field), value, {e, sizeof(yada_element)});
    }

    /// Made per call rather than kept: a field of this file's own type in the
    /// refiner's nested class would have internal linkage inside an external
    /// one (GCC's -Wsubobject-linkage).
    tx_words words() const noexcept { return tx_words(tx_); }

    yada_refiner& refiner_;
    transaction& tx_;
    yada_tally& tally_;
};

template <class Domain>
yada_refiner<Domain>::yada_refiner(Domain& domain, const smr::stm::stm_config& config,
                                   const yada_params& params)
    : angle_(params.angle), stm_(domain, config) {
    params.check(1);
    const yada_input_mesh input =
        make_yada_input(params.points, params.boundary_segments, params.seed);
    std::vector<yada_element*> built;
    try {
        mesh_ = ::new (checked_malloc(sizeof(yada_mesh_header))) yada_mesh_header{};
        mesh_->boundary = ::new (checked_malloc(sizeof(yada_boundary_set))) yada_boundary_set{};
        heap_ = ::new (checked_malloc(sizeof(yada_heap))) yada_heap{nullptr, 0, 1, 0};
        heap_->elements = static_cast<yada_element**>(checked_malloc(sizeof(yada_element*)));
        heap_->elements[0] = nullptr;
        build(input, built);
        queue_initial_bad(built);
        fill_boundary(domain, built);
    } catch (...) {
        free_all(std::move(built));
        throw;
    }
    initial_elements_ = static_cast<long>(built.size());
}

template <class Domain>
yada_refiner<Domain>::~yada_refiner() {
    std::vector<yada_element*> elements = reachable();
    // A run that stopped early may leave removed elements in the heap.
    std::unordered_set<const yada_element*> seen(elements.begin(), elements.end());
    for (std::int64_t i = 1; i <= heap_->size; ++i) {
        yada_element* e = heap_->elements[i];
        if (seen.insert(e).second) elements.push_back(e);
    }
    free_all(std::move(elements));
}

/// The input's elements (segments first, as STAMP reads its .poly before its
/// .ele), their neighbour lists from the triangulation's adjacency, and each
/// triangle's encroachment kept if its obtuse angle faces a segment.
template <class Domain>
void yada_refiner<Domain>::build(const yada_input_mesh& input, std::vector<yada_element*>& built) {
    const std::size_t count = input.triangles.size();
    std::vector<std::array<yada_element*, 3>> segment_at(count);  // value-initialized: null
    std::set<yada_edge> boundary;
    for (std::size_t t = 0; t != count; ++t) {
        for (std::size_t i = 0; i != 3; ++i) {
            if (input.adjacent[t][i] >= 0) continue;
            const std::array<yada_point, 2> ends{input.triangles[t][i],
                                                 input.triangles[t][(i + 1) % 3]};
            segment_at[t][i] = make_plain(ends, angle_, built);
            boundary.insert(yada_edge{ends[0], ends[1]});
        }
    }
    std::vector<yada_element*> triangles(count);
    for (std::size_t t = 0; t != count; ++t) {
        triangles[t] = make_plain(input.triangles[t], angle_, built);
    }
    plain_words plain;
    for (std::size_t t = 0; t != count; ++t) {
        for (std::size_t i = 0; i != 3; ++i) {
            const std::int32_t across = input.adjacent[t][i];
            yada_element* other =
                across >= 0 ? triangles[static_cast<std::size_t>(across)] : segment_at[t][i];
            list_insert(plain, triangles[t]->neighbors, other);
            if (across < 0) list_insert(plain, other->neighbors, triangles[t]);
        }
    }
    for (yada_element* e : built) {
        const std::int64_t obtuse = e->encroached_edge;
        settle(*e, obtuse >= 0 && boundary.contains(edge_of(*e, static_cast<std::size_t>(obtuse))));
    }
    mesh_->root = built.front();
}

/// STAMP's initializeWork: the bad elements in creation order, shuffled (n
/// swaps of two positions drawn from a Mersenne Twister seeded 0), each
/// pushed and marked referenced.
template <class Domain>
void yada_refiner<Domain>::queue_initial_bad(const std::vector<yada_element*>& built) {
    std::vector<yada_element*> bad;
    for (yada_element* e : built) {
        if (is_bad(*e)) bad.push_back(e);
    }
    std::mt19937 g(0);
    const std::size_t n = bad.size();
    for (std::size_t i = 0; i != n; ++i) {
        const std::size_t a = g() % n;
        const std::size_t b = g() % n;
        std::swap(bad[a], bad[b]);
    }
    plain_words plain;
    for (yada_element* e : bad) {
        heap_push(plain, heap_, e);
        e->referenced = 1;
    }
    initial_bad_ = static_cast<long>(n);
}

/// The boundary set, one transaction per segment, by a thread attached for
/// the call (stm_rb_core has no plain insert).
template <class Domain>
void yada_refiner<Domain>::fill_boundary(Domain& domain, const std::vector<yada_element*>& built) {
    const smr::context<Domain> self(domain);
    for (yada_element* e : built) {
        if (!is_segment(*e)) continue;
        stm_.atomically(self, [&](transaction& tx) {
            stm_rb_view boundary{mesh_->boundary->root, tx};
            if (!boundary.insert(boundary_key(e->corners[0]), as_value(e))) {
                impossible("two boundary segments start at " + describe(e->corners[0]));
            }
        });
    }
    stm_.flush(self);
}

/// Quiescent: every element linked from the root, breadth first (STAMP's
/// mesh_check walk). A list is followed for four nodes at most, so that a
/// corrupted one cannot loop.
template <class Domain>
std::vector<yada_element*> yada_refiner<Domain>::reachable() const {
    std::vector<yada_element*> out;
    if (mesh_ == nullptr || mesh_->root == nullptr) return out;
    std::unordered_set<const yada_element*> seen{mesh_->root};
    out.push_back(mesh_->root);
    for (std::size_t i = 0; i != out.size(); ++i) {
        int steps = 0;
        for (const yada_node* n = first_plain(*out[i]); n != nullptr && steps != 4; n = n->next) {
            ++steps;
            if (n->data != nullptr && seen.insert(n->data).second) out.push_back(n->data);
        }
    }
    return out;
}

template <class Domain>
void yada_refiner<Domain>::free_all(std::vector<yada_element*> elements) noexcept {
    for (yada_element* e : elements) {
        if (e == nullptr) continue;
        if (e->neighbors != nullptr) {
            for (yada_node* n = e->neighbors->head.next; n != nullptr;) {
                yada_node* next = n->next;
                std::free(n);
                n = next;
            }
            std::free(e->neighbors);
        }
        std::free(e);
    }
    if (heap_ != nullptr) {
        std::free(heap_->elements);
        std::free(heap_);
        heap_ = nullptr;
    }
    if (mesh_ != nullptr) {
        if (mesh_->boundary != nullptr) {
            smr::ds::free_stm_rb_tree(mesh_->boundary->root);
            std::free(mesh_->boundary);
        }
        std::free(mesh_);
        mesh_ = nullptr;
    }
}

/// One transaction of a client's loop: body(view) until an attempt commits;
/// that attempt's element counts go into `tally`.
template <class Domain>
template <class Body>
auto yada_refiner<Domain>::committed(smr::context_ref<Domain> self, yada_tally& tally, Body body) {
    yada_tally attempt;
    auto result = stm_.atomically(self, [&](transaction& tx) {
        attempt = yada_tally{};
        tx_view view{*this, tx, attempt};
        return body(view);
    });
    tally += attempt;
    return result;
}

/// STAMP's process(): the five transactions per element until the heap is
/// empty (bench/stamp/yada.hpp).
template <class Domain>
yada_tally yada_refiner<Domain>::run_client(smr::context_ref<Domain> self,
                                            const std::atomic<bool>& stop) {
    region r;
    yada_tally mine;
    while (!stop.load(std::memory_order_relaxed)) {
        yada_element* e = committed(self, mine, [](tx_view& v) { return v.pop(); });
        if (e == nullptr) break;
        if (committed(self, mine, [&](tx_view& v) { return v.drop_if_garbage(e); })) continue;
        const bool refined = committed(self, mine, [&](tx_view& v) {
            r.bad.clear();  // each attempt starts afresh (STAMP's PREGION_CLEARBAD)
            return v.refine(e, r);
        });
        if (refined) ++mine.refined;
        committed(self, mine, [&](tx_view& v) {
            v.release(e);
            return true;
        });
        committed(self, mine, [&](tx_view& v) {
            v.transfer(r.bad);
            return true;
        });
    }
    stm_.flush(self);
    return mine;
}

template <class Domain>
client_phase yada_refiner<Domain>::run(int clients) {
    std::vector<yada_tally> tallies(static_cast<std::size_t>(clients));
    const client_phase phase =
        run_clients(stm_.domain(), stm_, clients,
                    [&](smr::context_ref<Domain> self, int client, const std::atomic<bool>& stop) {
                        tallies[static_cast<std::size_t>(client)] = run_client(self, stop);
                    });
    for (const yada_tally& t : tallies) totals_ += t;
    return phase;
}

// ---- the verification ----------------------------------------------------------

template <class Domain>
validation_result yada_refiner<Domain>::validate_triangulation() const {
    validation_result result;
    check_triangulation(reachable(), result);
    return result;
}

template <class Domain>
validation_result yada_refiner<Domain>::validate() const {
    validation_result result;
    const std::vector<yada_element*> all = reachable();
    check_triangulation(all, result);
    for (std::size_t i = 0; i != all.size() && result.ok; ++i) check_quality(*all[i], result);
    for (std::size_t i = 0; i != all.size() && result.ok; ++i) {
        if (all[i]->referenced != 0) {
            result.fail(describe(*all[i]) +
                        " is still marked referenced, as if a heap or a client held it");
        }
    }
    if (result.ok && heap_->size != 0) {
        result.fail("the work heap still holds " + std::to_string(heap_->size) + " elements");
    }
    if (result.ok && totals_.freed != totals_.removed) {
        result.fail(std::to_string(totals_.removed) + " elements left the mesh, " +
                    std::to_string(totals_.freed) +
                    " were freed: the rest stay marked referenced (a lost heap entry)");
    }
    if (const std::size_t locked = stm_.orecs().locked_entries(); locked != 0) {
        result.fail(std::to_string(locked) + " versioned locks still held");
    }
    return result;
}

/// validate_triangulation's checks over the walk's elements; the global
/// ones first (a missing element shows as a count, a fold as an area), then
/// each element's, then each edge's.
template <class Domain>
void yada_refiner<Domain>::check_triangulation(const std::vector<yada_element*>& all,
                                               validation_result& result) const {
    if (all.empty()) return result.fail("the mesh has no root element");
    check_count(all, result);
    check_area(all, result);
    for (std::size_t i = 0; i != all.size() && result.ok; ++i) check_element(*all[i], result);
    for (std::size_t i = 0; i != all.size() && result.ok; ++i) check_delaunay(*all[i], result);
    if (result.ok) check_boundary(all, result);
}

/// STAMP's final count: the input's elements plus the net number added.
template <class Domain>
void yada_refiner<Domain>::check_count(const std::vector<yada_element*>& all,
                                       validation_result& result) const {
    const long expected = initial_elements_ + totals_.created - totals_.removed;
    if (static_cast<long>(all.size()) == expected) return;
    result.fail("the mesh holds " + std::to_string(all.size()) +
                " elements reachable from its root; the input's " +
                std::to_string(initial_elements_) + " plus the " + std::to_string(totals_.created) +
                " created less the " + std::to_string(totals_.removed) + " removed make " +
                std::to_string(expected));
}

/// Exact: twice each triangle's area is an integer on the grid.
template <class Domain>
void yada_refiner<Domain>::check_area(const std::vector<yada_element*>& all,
                                      validation_result& result) const {
    area_sum twice = 0;
    for (const yada_element* e : all) {
        if (is_segment(*e) || !std::all_of(e->corners, e->corners + 3, in_square)) continue;
        twice += orientation(e->corners[0], e->corners[1], e->corners[2]);
    }
    const area_sum square = static_cast<area_sum>(2) * yada_side * yada_side;
    if (twice == square) return;
    result.fail("twice the triangles' areas add up to " + decimal(twice) +
                " grid units squared, twice the square's to " + decimal(square));
}

template <class Domain>
void yada_refiner<Domain>::check_element(const yada_element& e, validation_result& result) const {
    if (e.corner_count != 2 && e.corner_count != 3) {
        return result.fail("an element of " + std::to_string(e.corner_count) + " corners");
    }
    const std::string who = describe(e);
    if (e.garbage != 0) return result.fail(who + " is garbage, yet linked into the mesh");
    if (e.neighbors == nullptr) return result.fail(who + " has no neighbour list");
    const yada_point* c = e.corners;
    if (!std::all_of(c, c + corner_count(e), in_square)) {
        return result.fail(who + " has a corner outside the square");
    }
    if (!is_segment(e) && orientation(c[0], c[1], c[2]) <= 0) {
        return result.fail(who + " is not counterclockwise (inverted or flat)");
    }
    const yada_point centre{yada_side / 2, yada_side / 2};
    if (is_segment(e) && (!on_one_side(c[0], c[1]) || orientation(c[0], c[1], centre) <= 0)) {
        return result.fail(who + " is not a counterclockwise piece of the square's side");
    }
    check_neighbors(e, result);
}

/// One neighbour across each edge, each listing e back, the list sorted and
/// as long as its size word.
template <class Domain>
void yada_refiner<Domain>::check_neighbors(const yada_element& e, validation_result& result) const {
    const std::string who = describe(e);
    std::array<int, 3> across{};
    std::int64_t held = 0;
    const yada_element* previous = nullptr;
    for (const yada_node* n = first_plain(e); n != nullptr; n = n->next) {
        if (++held > 3) return result.fail(who + " has more than three neighbours");
        const yada_element& other = *n->data;
        if (previous != nullptr && !precedes(*previous, other)) {
            return result.fail(who + ": its neighbour list is out of order");
        }
        previous = &other;
        const std::optional<std::size_t> side = shared_edge(e, other);
        if (!side)
            return result.fail(who + " shares no edge with its neighbour " + describe(other));
        if (++across[*side] > 1) {
            return result.fail(who + " has two neighbours across " + describe(edge_of(e, *side)));
        }
        if (!lists(other, e)) {
            return result.fail(who + " lists " + describe(other) +
                               " as a neighbour, which does not list it back");
        }
    }
    if (held != e.neighbors->size) {
        return result.fail(who + ": its neighbour list holds " + std::to_string(held) +
                           ", its size word says " + std::to_string(e.neighbors->size));
    }
    for (std::size_t i = 0; i != edge_count(e); ++i) {
        if (across[i] == 0) {
            return result.fail(who + " has no neighbour across " + describe(edge_of(e, i)));
        }
    }
}

/// Each neighbouring triangle's far corner is not strictly inside e's
/// circumcircle: every edge locally Delaunay, so the mesh is Delaunay.
template <class Domain>
void yada_refiner<Domain>::check_delaunay(const yada_element& e, validation_result& result) const {
    if (is_segment(e)) return;
    const yada_point* c = e.corners;
    for (const yada_node* n = first_plain(e); n != nullptr; n = n->next) {
        const yada_element& other = *n->data;
        if (is_segment(other)) continue;
        for (const yada_point v : other.corners) {
            if (has_corner(e, v) || in_circle(c[0], c[1], c[2], v) <= 0) continue;
            return result.fail(describe(e) + " and its neighbour " + describe(other) +
                               " are not Delaunay: " + describe(v) +
                               " is inside the first's circumcircle");
        }
    }
}

/// The segments go once around the square, and the boundary set holds
/// exactly them, each under its first corner.
template <class Domain>
void yada_refiner<Domain>::check_boundary(const std::vector<yada_element*>& all,
                                          validation_result& result) const {
    std::vector<const yada_element*> segments;
    std::int64_t perimeter = 0;
    for (const yada_element* e : all) {
        if (!is_segment(*e)) continue;
        segments.push_back(e);
        perimeter += std::abs(e->corners[1].x - e->corners[0].x) +
                     std::abs(e->corners[1].y - e->corners[0].y);
    }
    if (perimeter != 4 * yada_side) {
        return result.fail("the boundary segments add up to " + std::to_string(perimeter) +
                           ", the square's perimeter is " + std::to_string(4 * yada_side));
    }
    validation_result tree;
    smr::ds::check_stm_rb_tree(mesh_->boundary->root, tree);
    if (!tree.ok) return result.fail("the boundary set: " + tree.error);
    if (tree.size != segments.size()) {
        return result.fail("the boundary set holds " + std::to_string(tree.size) +
                           " segments, the mesh " + std::to_string(segments.size()));
    }
    for (const yada_element* s : segments) {
        const stm_rb_node* n = find_plain(mesh_->boundary->root, boundary_key(s->corners[0]));
        if (n == nullptr || as_pointer<const yada_element>(n->value) != s) {
            return result.fail("the boundary set does not hold " + describe(*s));
        }
    }
}

/// Ruppert's goal, decided as the refinement decides: no angle below the
/// constraint, no obtuse angle across a boundary segment.
template <class Domain>
void yada_refiner<Domain>::check_quality(const yada_element& e, validation_result& result) const {
    if (is_segment(e)) return;
    const yada_point* c = e.corners;
    const double smallest = min_angle_degrees(c[0], c[1], c[2]);
    if (smallest < angle_) {
        return result.fail(describe(e) + " has a smallest angle of " + std::to_string(smallest) +
                           " degrees, below the constraint of " + std::to_string(angle_));
    }
    for (const yada_node* n = first_plain(e); n != nullptr; n = n->next) {
        const yada_element& other = *n->data;
        if (!is_segment(other)) continue;
        for (const yada_point v : e.corners) {
            if (has_corner(other, v) || !obtuse_at(v, other.corners[0], other.corners[1])) continue;
            return result.fail(describe(e) + " is obtuse across the boundary " + describe(other) +
                               ": it encroaches on it");
        }
    }
}

template class yada_refiner<smr::debra_domain>;

app_run run_yada(const yada_params& params, int clients, const smr::stm::stm_config& stm_config) {
    params.check(clients);
    smr::domain_config domain_config;
    domain_config.max_threads = static_cast<std::size_t>(clients) + 1;  // and the constructor's
    smr::debra_domain domain(domain_config);
    yada_refiner<smr::debra_domain> refiner(domain, stm_config, params);  // untimed, as STAMP
    auto& stm = refiner.transactional_memory();
    const smr::stm::stm_stats before = stm.stats();
    const client_phase phase = refiner.run(clients);
    app_run run;
    run.seconds = phase.seconds;
    run.stm = stm.stats() - before;
    run.tasks = refiner.totals().refined;
    run.validation = phase.validation();
    if (!run.validation.ok) return run;
    run.validation = refiner.validate();
    return run;
}

}  // namespace smrbench::stamp
