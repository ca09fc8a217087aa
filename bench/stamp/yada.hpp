// STAMP's Yada on smrlab's STM: Ruppert's Delaunay mesh refinement, the
// clients taking bad triangles from a shared work heap and retriangulating
// the region around each in one transaction. Minh, Chung, Kozyrakis and
// Olukotun, "STAMP: Stanford Transactional Applications for
// Multi-Processing", IISWC 2008 (doi:10.1109/IISWC.2008.4636089), Section
// III (after Kulkarni, Chew and Pingali's transactional mesh refinement);
// the allocator/STM study (Baldassin, Borin and Araujo, TRANSACT 2014) finds
// it the application whose speed depends most on the allocator (Table 5:
// tcmalloc 170.9 % faster than glibc). Written from the paper's description
// and the public suite's structure (yada/yada.c, mesh.c, element.c,
// region.c, coordinate.c and lib/heap.c, list.c of STAMP 0.9.10); no code is
// copied.
//
// ---- The workload ----------------------------------------------------------------
//
// The mesh is a Delaunay triangulation of the square whose elements are its
// triangles and its boundary segments (a segment is an element of two
// corners, the neighbour of the one triangle along it). A triangle is bad if
// an angle is below the constraint (skinny), or if its angle across a
// boundary segment is obtuse (it encroaches on the segment). Every bad
// element of the input goes into a shared work heap (encroaching ones first,
// the rest in any order: STAMP's element_heapCompare), shuffled as STAMP
// shuffles them (a Mersenne Twister seeded 0). Each client then loops, five
// transactions per element, until it finds the heap empty:
//
//   1. pop an element;
//   2. if it is garbage (a refinement removed it since it was queued), free
//      it and start over;
//   3. refine it (STAMP's TM_BEGIN around region_refine, the large one): the
//      point to insert is its circumcenter, or the middle of the segment it
//      encroaches on; a breadth-first walk over neighbour lists collects the
//      cavity, every triangle whose circumcircle holds the point. A boundary
//      segment the point encroaches on (or lies beyond) is split at its middle
//      instead, in the same transaction, and the walk starts over unless the
//      split removed the element. Then the cavity's elements leave the mesh
//      (each unlinked from its neighbours' lists, marked garbage, and freed
//      unless a heap or a client still holds it), a triangle from the point to
//      each edge of the cavity's rim joins it (allocated, linked to its
//      neighbours through an edge map, checked against the boundary set if
//      obtuse), and the new bad ones are marked referenced for step 5;
//   4. the element is no longer referenced: freed if garbage (it always is
//      after its own refinement);
//   5. push the refinement's new bad elements, freeing those a concurrent
//      refinement removed meanwhile.
//
// app_run::tasks counts the elements refined (step 3 committed on an element
// that was still in the mesh; STAMP's numProcess).
//
// The allocator sees, inside transactions (tx.make, tx.free, STAMP's
// TM_MALLOC and TM_FREE): per new element a 256-byte element (STAMP's
// element_t on LP64), a 32-byte neighbour list header (list_t) and a 16-byte
// list node per neighbour, plus one node in each rim neighbour's list; the
// same blocks freed for each element removed, and one node from each rim
// neighbour's list; per segment split two 48-byte boundary-set nodes in and
// one out (stm_rb_node, STAMP's rbtree node); the heap's pointer array,
// doubled (8 x capacity bytes) when a push finds it full, the old one freed.
// Also inside the refine transaction, malloc'd and freed privately (STAMP's
// P_MALLOC'd lists, AVL tree and pairs: a block per entry there too): with
// libstdc++, a 40-byte set node per cavity element, a 64-byte one per rim
// edge and a 72-byte edge-map node per rim edge and per new edge from the
// point, all freed at the end of the walk or of the transaction. Before the
// clients start: the input mesh's elements, lists and nodes (about 1 GB at
// yada++, as STAMP's), the heap grown from one slot by doubling, the
// boundary set (one transaction per segment) and the headers.
//
// ---- Where this port differs from STAMP 0.9.10 -------------------------------------
//
// - No input files. STAMP reads Triangle's .node, .ele and .poly files (633.2,
//   ttimeu10000.2, ttimeu1000000.2); here the input is generated in-process,
//   deterministic in yada_params::seed: `points` vertices on a 2^28 grid in a
//   square (its corners, its sides split at random points into
//   `boundary_segments` segments, the rest uniform inside) and their Delaunay
//   triangulation (bench/stamp/yada_mesh.hpp; sequential and untimed, as
//   STAMP's reading: a few seconds at yada++). The counts are the files':
//   2 x points - segments - 2 triangles plus the segments, so 1,248 + 16 for
//   633.2 and 19,975 + 23 for ttimeu10000.2, as in the files, and
//   1,999,955 + 43 at ttimeu1000000.2's counts. The points are not the
//   files' (633.2's run along curves, the ttimeu files' are spread), and the
//   domain is a square where the files' is their points' convex hull
//   (triangle -c): its 90-degree corners leave Ruppert's algorithm no small
//   input angle to give up at, so no triangle is exempt.
// - Exact geometry on the grid (yada_mesh.hpp says how degeneracies go):
//   STAMP decides in doubles, distance <= radius. The point a refinement
//   inserts is rounded to the grid; a circumcenter more than half a side out
//   of the square is pulled back along its ray (only a triangle obtuse across
//   a segment can make one, and those are refined first).
// - A boundary segment is split when the new point encroaches on it, as
//   STAMP, and also when the point is on or beyond its line. STAMP would then
//   make a triangle outside the square, which can happen with several
//   clients: another client's new triangle, obtuse across a segment, is not
//   refined yet when this one's circumcenter falls beyond it.
// - Step 3 returns at once if the element is garbage by then (STAMP reads the
//   flag, ignores it and walks from the removed element's stale list).
// - Frees go through the transaction (tx.free: deferred by the reclaimer
//   until no transaction can still read the block). STAMP frees the garbage
//   element of steps 2 and 4 outside any transaction; it also marks the
//   encroached segment referenced before splitting it, so its removal keeps
//   it, and never frees it: here it is freed with its cavity. Everything is
//   freed at the end (STAMP: "TODO: deallocate mesh and work heap").
// - The walk's private bookkeeping (cavity set, rim set, edge map) is
//   std::set and std::map, with the cavity and rim ordered by coordinates as
//   STAMP's lists are, so that one client's run is deterministic; the queue
//   and the bad-element vector are per client and reused, as STAMP's region.
// - The boundary set (STAMP: a red-black tree of edges compared by
//   coordinates) is a transactional red-black tree (smr/ds/stm_rb_core.hpp)
//   keyed by a segment's first corner along the boundary, counterclockwise;
//   a segment keeps that direction (STAMP sorts its corners) and each
//   triangle's corners stay counterclockwise, smallest first.
// - The input mesh's neighbour lists come from the triangulation's adjacency
//   (STAMP: an edge map over the file's elements), segments first, as STAMP
//   reads its .poly before its .ele; the mesh's root is STAMP's, the first
//   element, kept in a transactional word (read by every insert).
// - The element keeps its corners, what it needs to be refined (the point,
//   the edge it encroaches on) and its flags, padded to STAMP's 256 bytes.
// - The angle constraint is at most 20.7 degrees, up to which Ruppert's
//   algorithm provably terminates on this domain (STAMP accepts any).
// - A state no transaction may see (STAMP asserts) or a point the grid cannot
//   hold stops the run with the reason (clients.hpp).
// - The verification (STAMP's mesh_check is compiled out, #if 0): validate().
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "smr/ds/stm_rb_core.hpp"
#include "smr/ds/validation.hpp"
#include "smr/stm/stm.hpp"
#include "stamp/clients.hpp"
#include "stamp/yada_mesh.hpp"

namespace smrbench::stamp {

/// Ruppert's algorithm provably ends for constraints up to arcsin(1 / (2
/// sqrt 2)) = 20.7 degrees when no input angle is below 60 degrees.
inline constexpr double yada_max_angle = 20.7;

/// STAMP's command line for Yada (-t is the thread count), and what its input
/// file gives, here the generator's.
struct yada_params {
    double angle = 20.0;          ///< -a: the smallest angle a triangle may keep, degrees
    long points = 633;            ///< the input's vertices (.node), corners and boundary's included
    long boundary_segments = 16;  ///< the input's boundary (.poly): segments around the square
    std::uint32_t seed = 0;       ///< the points' generator (STAMP: the input file)

    /// Throws std::invalid_argument naming the first parameter out of range.
    void check(long clients) const;
};

/// STAMP's named inputs: yada (-a20 -i 633.2, its simulator input), yada+
/// (-a10 -i ttimeu10000.2) and yada++ (-a15 -i ttimeu1000000.2, its
/// native-run input; generating its mesh takes a few seconds), each as the
/// file's vertex and segment counts. Throws std::invalid_argument naming the
/// inputs for any other name.
yada_params yada_input(std::string_view name);

/// The names yada_input accepts, in order.
const std::vector<std::string_view>& yada_inputs();

struct yada_element;

/// STAMP's list node: 16 bytes, its element written before it is published.
struct yada_node {
    yada_element* data;
    yada_node* next;
};
/// STAMP's list header: the head node, its comparator's word (unused here,
/// kept for malloc's size class) and the length: 32 bytes.
struct yada_list {
    yada_node head;
    std::int64_t comparator_unused;
    std::int64_t size;
};

/// A triangle or a boundary segment. Everything but the list's words and
/// the two flags is written before the element is published and never
/// again, so transactions read it plainly (as STAMP).
struct yada_element {
    /// A triangle's corners counterclockwise, the smallest first; a segment's
    /// two in the boundary's counterclockwise direction (the square on its left).
    yada_point corners[3];
    std::int64_t corner_count;  ///< 3: a triangle; 2: a boundary segment
    /// The edge (corners[i] to corners[i + 1]) that is a boundary segment
    /// and across an obtuse angle, or -1.
    std::int64_t encroached_edge;
    std::int64_t skinny;   ///< an angle below the constraint
    double min_angle;      ///< degrees; a segment's 180, as STAMP's
    yada_point new_point;  ///< what refining it inserts
    /// STAMP's element_t also keeps its circumcircle, its edges as pointer
    /// pairs, their midpoints and half-lengths: kept as room, so that malloc
    /// sees STAMP's 256 bytes.
    std::int64_t stamp_room_unused[17];
    yada_list* neighbors;     ///< sorted by element order, no duplicates
    std::int64_t garbage;     ///< transactional: removed from the mesh
    std::int64_t referenced;  ///< transactional: a heap or a client holds it
};
static_assert(sizeof(yada_node) == 16 && sizeof(yada_list) == 32);
static_assert(sizeof(yada_element) == 256);

/// STAMP's element_compare: segments before triangles, then the corners
/// in order. Two elements of one mesh never compare equal.
bool precedes(const yada_element& a, const yada_element& b) noexcept;
struct yada_element_order {
    bool operator()(const yada_element* a, const yada_element* b) const noexcept {
        return precedes(*a, *b);
    }
};

/// The boundary set's own block, as STAMP's rbtree_t: its root and its
/// comparator's word.
struct yada_boundary_set {
    smr::ds::stm_rb_node* root;
    std::int64_t comparator_unused;
};
/// STAMP's mesh_t: the root (any element, from which the verification
/// walks), its initial bad queue's and size's words (unused: kept for the
/// block's size) and the boundary set: 32 bytes.
struct yada_mesh_header {
    yada_element* root;
    std::int64_t bad_queue_unused;
    std::int64_t size_unused;
    yada_boundary_set* boundary;
};
/// STAMP's heap_t: slots 1..size of a pointer array (a binary max-heap by
/// element_heapCompare), its capacity, the comparator's word: 32 bytes.
struct yada_heap {
    yada_element** elements;
    std::int64_t size;
    std::int64_t capacity;
    std::int64_t compare_unused;
};
static_assert(sizeof(yada_mesh_header) == 32 && sizeof(yada_boundary_set) == 16 &&
              sizeof(yada_heap) == 32);

/// What clients' committed transactions did, summed.
struct yada_tally {
    long refined = 0;  ///< elements refined (app_run::tasks)
    long created = 0;  ///< elements allocated
    long removed = 0;  ///< elements taken out of the mesh
    long freed = 0;    ///< elements freed

    yada_tally& operator+=(const yada_tally& other) noexcept {
        refined += other.refined;
        created += other.created;
        removed += other.removed;
        freed += other.freed;
        return *this;
    }
};

/// The mesh, its work heap and its boundary set under one STM. Instantiated
/// for smr::debra_domain (bench/stamp/yada.cpp), the reclaimer of the
/// allocator study's runs.
template <class Domain>
class yada_refiner {
  public:
    /// The input mesh (params.check first; make_yada_input), its bad
    /// elements queued as STAMP's initializeWork queues them, and the
    /// boundary set filled in transactions by a thread the constructor
    /// registers with `domain` for the call (so the domain needs room for
    /// one more). Throws what params.check and allocation throw.
    yada_refiner(Domain& domain, const smr::stm::stm_config& config, const yada_params& params);
    ~yada_refiner();
    yada_refiner(const yada_refiner&) = delete;
    yada_refiner& operator=(const yada_refiner&) = delete;

    /// The clients' phase (run_clients): `clients` threads refine until the
    /// heap is empty. The domain needs room for them. Once per refiner.
    client_phase run(int clients);

    /// Quiescent: the refined mesh is a valid triangulation
    /// (validate_triangulation), no triangle is below the angle constraint
    /// or obtuse across a boundary segment (no exemption: the square has
    /// none of the small input angles for which refinement gives up), no
    /// element is still referenced, the heap is empty, every element
    /// removed was freed, and no versioned lock is held. The first failure,
    /// naming the element.
    smr::ds::validation_result validate() const;

    /// Quiescent, before or after run: the elements reachable from the root
    /// are as many as the input's plus those created less those removed;
    /// their triangles, each counterclockwise, add up to the square's area
    /// exactly; each element is in the mesh (not garbage), its neighbour list
    /// sorted, as long as its size word, one neighbour across each edge,
    /// each listing it back; each pair of neighbouring triangles is Delaunay
    /// (neither's opposite corner strictly inside the other's circumcircle);
    /// the segments run counterclockwise along the square's sides, add up to
    /// its perimeter and are exactly the boundary set's, a valid red-black
    /// tree.
    smr::ds::validation_result validate_triangulation() const;

    long initial_elements() const noexcept { return initial_elements_; }
    long initial_bad() const noexcept { return initial_bad_; }
    /// The last run's clients' counts, summed (zero before).
    const yada_tally& totals() const noexcept { return totals_; }
    double angle() const noexcept { return angle_; }
    smr::stm::stm<Domain>& transactional_memory() noexcept { return stm_; }

  private:
    friend struct yada_testing;  // tests corrupt the mesh
    class tx_view;
    struct region;

    template <class Body>
    auto committed(smr::context_ref<Domain> self, yada_tally& tally, Body body);
    yada_tally run_client(smr::context_ref<Domain> self, const std::atomic<bool>& stop);

    void build(const yada_input_mesh& input, std::vector<yada_element*>& built);
    void queue_initial_bad(const std::vector<yada_element*>& built);
    void fill_boundary(Domain& domain, const std::vector<yada_element*>& built);
    std::vector<yada_element*> reachable() const;
    void free_all(std::vector<yada_element*> elements) noexcept;

    void check_triangulation(const std::vector<yada_element*>& all,
                             smr::ds::validation_result& result) const;
    void check_count(const std::vector<yada_element*>& all,
                     smr::ds::validation_result& result) const;
    void check_area(const std::vector<yada_element*>& all,
                    smr::ds::validation_result& result) const;
    void check_element(const yada_element& e, smr::ds::validation_result& result) const;
    void check_neighbors(const yada_element& e, smr::ds::validation_result& result) const;
    void check_delaunay(const yada_element& e, smr::ds::validation_result& result) const;
    void check_boundary(const std::vector<yada_element*>& all,
                        smr::ds::validation_result& result) const;
    void check_quality(const yada_element& e, smr::ds::validation_result& result) const;

    double angle_;
    yada_mesh_header* mesh_ = nullptr;  // its boundary set's block hangs off it, as STAMP's
    yada_heap* heap_ = nullptr;
    long initial_elements_ = 0;
    long initial_bad_ = 0;
    yada_tally totals_;
    smr::stm::stm<Domain> stm_;
};

/// One run as STAMP's main makes it: the input mesh made and its bad elements
/// queued (untimed), then the clients started together; only their phase is
/// timed. Then the verification; a client that met a state no transaction
/// may see ends the run, and its reason is the verification's failure.
/// Throws std::invalid_argument for bad params, and what thread creation
/// throws.
app_run run_yada(const yada_params& params, int clients, const smr::stm::stm_config& stm_config);

}  // namespace smrbench::stamp
