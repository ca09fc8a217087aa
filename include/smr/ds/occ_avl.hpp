// OCC AVL tree: Bronson, Casper, Chafi, Olukotun, "A Practical Concurrent
// Binary Search Tree" (PPoPP 2010), the "OCCtree" of the Epochs paper.
//
// ---- The tree -------------------------------------------------------------------
//
// A relaxed-balance AVL tree that is *partially external*: every node holds a
// key, but a node may lose its value and stay in the tree as a routing node
// (erase of a node with two children only clears `present`). A routing node
// left with fewer than two children is spliced out by the repair below, so
// once no operation runs, routing nodes have exactly two children.
//
// Optimistic concurrency control. Every node carries a version: bit 0 =
// unlinked (final), bit 1 = shrinking (a rotation is moving the node down, so
// the key range of its subtree is about to shrink), bits 2.. = a count of
// completed shrinks. A search descends hand over hand: at node n, validated
// with version nv, it reads the child c, reads c's version cv (waiting while c
// is shrinking), checks that c is still n's child and that n's version is
// still nv; then the step from n to c was valid while both were read, and it
// recurses into c with cv. When a check fails the search retries from n, and
// when n itself has changed it returns to n's parent and retries there (the
// paper's attemptGet / attemptUpdate). A search that reaches a node with its
// key reads `present` there; how it got there does not matter.
//
// Updates lock nodes (a spin-then-yield lock per node) and revalidate under
// the lock:
//   - insert, key absent: lock the node n found with an empty child slot,
//     check n's version and the slot, link a new leaf; key found in a routing
//     node: lock it, check it is not unlinked, set its value;
//   - erase, node with two children: lock it, clear `present`; node with at
//     most one child: lock its parent, then it, clear `present` and splice it
//     out (its version becomes unlinked).
// Locks are always taken parent before child, so they cannot deadlock.
//
// Balance is relaxed: an update changes one node's subtree height and then
// repairs upward (the paper's fixHeightAndRebalance): at each damaged node,
// either recompute its height (its lock), or, with its parent and it locked,
// splice it out if it is a routing node with fewer than two children, or
// rotate (single, or double; each rotation locks the child and maybe the
// grandchild it moves), then continue at whatever the step damaged. Every
// thread that damages a node takes responsibility for repairing it. After any
// single-threaded history every height is then exact and every node AVL
// balanced (with two fixes to the authors' repair code, under "Departures");
// validate_balance() checks that. After concurrent histories it is not
// guaranteed: repairs read heights of nodes they do not lock, and a fixer can
// store a height computed from a child height that changed meanwhile. Those
// races are closed here (Departures): with threads stopping together after
// each of 2,000 short rounds (the test in tests/ds_concurrent/occ_avl.cpp),
// validate_balance() failed in 10 of 10 runs with the authors' repair and in
// none of 30 with ours. That is a measurement, not a proof, so validate()
// checks only the structural invariants, which every history must keep, and
// heights stay what the algorithm uses them for: balance hints.
//
// Progress: blocking. Updates wait for locks, and searches wait (spin, then
// yield) for a node that is shrinking, i.e. for the thread that holds its
// lock. Unsuccessful updates (key present for insert, absent for erase) and
// contains lock and write nothing.
//
// ---- Reclamation, read and write phases -------------------------------------------
//
// A node is retired by the thread that unlinked it, after it has released its
// locks (by then no linked node points to the node, and no reclaimer is ever
// entered while a lock is held): an erase that splices out its node retires
// that node; a repair step that splices out a routing node (on its own, or
// right after a double rotation, below) retires it. A successful insert
// allocates at most one node (none when it revives a routing node); an erase
// retires at most its own node, and any repair may retire routing nodes.
//
// traverses_unlinked_nodes: a search can stand on a node while it is unlinked
// (it validates *before* descending, and the found node is used unvalidated),
// and in Bronson's repair a thread walks up parent pointers from a node that
// may be unlinked by then. A reservation cannot protect those steps, so HP,
// HE, IBR and WFE are unsafe.
//
// Every operation is a sequence of read phases (SMR_READ_PHASE_BEGIN ...
// read_phase_end: the optimistic search, which only reads) and write phases
// (locks, revalidation, writes). The search's local retries (return to an
// ancestor) happen inside one read phase; a failed revalidation under a lock
// restarts from the root with a new read phase (Bronson retries at the node;
// the difference is one extra descent on a rare conflict). The write phase
// touches the nodes reserved at read_phase_end (at most two: parent and node)
// and their children and grandchildren, which it reads while holding the
// lock of their parent: a node is unlinked only by a thread holding its
// parent's lock, so those nodes stay linked, hence unretired, while we hold
// the locks, and NBR frees only retired nodes.
//
// The repair walk is the part that does not fit NBR as Bronson wrote it (NBR
// paper, Section 6, "Incompatible data structures": the rotations walk up
// parent pointers to nodes the search never saw). Like the paper suggests, with
// a reclaimer whose traits.needs_restart_from_root is set (NBR, NBR+) each
// repair step is a read phase that finds its node by a fresh validated search
// from the root, by key: the previous step records the key of the damaged node
// (and whether the damage is at that node's parent) while it still holds the
// node's lock. A node no longer found was unlinked, and its unlinker repairs
// above it. With every other reclaimer the repair walks parent pointers as in
// the paper. So the tree declares has_read_write_phases and
// read_phases_start_at_root, and NBR/NBR+ are safe. One more NBR detail: the
// wait for a shrinking node happens inside a read phase and may call
// sched_yield, which keeps no user-space state, so a neutralizing siglongjmp
// out of it is harmless.
//
// ---- Departures from the authors' code (SnapTree) -------------------------------------
//
// - A failed revalidation under a lock restarts from the root, not at the
//   node's parent (above; needed for NBR, rare).
// - SnapTree skips a double rotation that would leave the middle node a
//   routing node with a missing child and rotates that node alone instead;
//   when the middle node is not itself unbalanced that does nothing, and the
//   tree stays unbalanced (with a stale height) once operations stop: found
//   by validate() in a single-threaded run. Here the double rotation happens
//   and the routing node is spliced out in the same step (rebalance_toward).
// - A rotation that leaves its lower node damaged hands that node on (as in
//   the paper) but also keeps its parent np as a pending repair: the paper's
//   walk from the lower node can stop below np, whose subtree height the
//   rotation changed, and leave np's height stale (also found by validate();
//   see step_effects).
// - A repair that reaches a node because a child's height changed (without
//   the node's lock) decides under the node's lock, never on the optimistic
//   read alone, and follows the child if a rotation or splice moved it under
//   another node meanwhile (in the height path and in the rebalance path).
//   SnapTree stops on the optimistic read; a fixer holding the lock that read
//   the child's old height, or a rotation that moved the child and computed
//   its new parent's height from the old value, then leaves a stale height
//   (smrbench's validation found it, about 1 run in 400; see repair_step).
//   One more lock per update whose repair changed a height.
// - Keys are compared directly (no comparator object), values are a plain
//   field with a `present` flag instead of a nullable reference.
//
// ---- Memory orders ----------------------------------------------------------------
//
// Versions work like a seqlock whose readers validate one node at a time. A
// rotation stores the shrinking bit (relaxed: the release stores of the new
// links that follow order it before them), rewrites the links with release
// stores, and stores the next version with release. Searches read child
// pointers (protect), versions and the re-read child pointer with acquire, so
// their loads stay in program order: a search that saw a rotated link also
// sees the rotation's version change when it validates, and a search that
// validated the old version read only old links. Node publication: a new
// node's fields are written before the release store that links it. Fields
// written only under a node's lock (heights, `present`, `value`, a child
// slot checked under its parent's lock) are relaxed; the lock's acquire and
// release order them. Parent pointers change only while the locks of both the
// old and the new parent are held, so a check "n.parent == p" under p's lock
// is exact.
//
// ---- Layout -----------------------------------------------------------------------
//
// Node = domain header (none for the epoch family and the leak domain) +
// key 8 + value 8 + two children 16 + parent 8 + version 4 + height 2 + lock 1
// + present 1 = 48 bytes. A 32-bit version can only be
// mistaken for an earlier one after 2^30 rotations of one node during a
// single validation window; heights fit 16 bits (an AVL tree of height 64
// holds more than 2^40 nodes).
#pragma once

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "smr/core/compiler.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/padded.hpp"
#include "smr/ds/key_range.hpp"
#include "smr/ds/validation.hpp"
#include "smr/reclaim/guards.hpp"

namespace smr::ds {

namespace detail {

/// Pauses before a spinning thread yields: about 1-5 microseconds, far longer
/// than a critical section of the tree, far shorter than a time slice.
inline constexpr int occ_avl_spins_before_yield = 64;

/// Test-and-test-and-set lock of one tree node (1 byte). The benchmark runs
/// more threads than cores, so a waiter spins only briefly (the holder is
/// usually running and done within a few dozen instructions), then yields so
/// that a preempted holder can run.
class occ_avl_lock {
  public:
    void lock() noexcept {
        for (;;) {
            // acquire: pairs with unlock()'s release, so the previous
            // holder's writes to the node are visible to us.
            if (!held_.exchange(true, std::memory_order_acquire)) return;
            int spins = 0;
            while (held_.load(std::memory_order_relaxed)) {  // read-only spin
                if (++spins <= occ_avl_spins_before_yield) {
                    core::cpu_relax();
                } else {
                    std::this_thread::yield();
                    spins = 0;
                }
            }
        }
    }

    // release: pairs with lock()'s acquire (publishes the critical section).
    void unlock() noexcept { held_.store(false, std::memory_order_release); }

    /// For quiescent checks (validate) only.
    bool is_locked() const noexcept { return held_.load(std::memory_order_relaxed); }

  private:
    std::atomic<bool> held_{false};
};

}  // namespace detail

/// Bronson et al.'s OCC AVL tree as a set of Key (with a Value per key).
///
/// The root holder is never compared with a key, so any Key works; the
/// declared [min_key, max_key] = [numeric_limits<Key>::min() + 1,
/// numeric_limits<Key>::max() - 1] matches the other set structures (the
/// benchmark and the tests treat all of them alike).
///
/// See the top of this file for the algorithm, progress, reclamation and
/// layout.
template <class Domain, class Key = std::int64_t, class Value = std::int64_t>
class occ_avl {
    friend struct smr::ds::testing::access;  // tests corrupt internals

    enum side : int { left = 0, right = 1 };

    struct node final : Domain::node_base {
        node(Key k, Value v, node* up, bool has_value) noexcept
            : key(k), value(v), parent(up), present(has_value) {}

        const Key key;
        /// Written under `lock` only (a revived routing node gets a new
        /// value); nothing reads it concurrently (the set interface returns
        /// no values).
        Value value;
        std::atomic<node*> child[2]{nullptr, nullptr};
        std::atomic<node*> parent;
        /// unlinked_bit | shrinking_bit | shrink count (see the top of the
        /// file). Changed only under `lock`.
        std::atomic<std::uint32_t> version{0};
        /// Height of the subtree as last repaired (a leaf is 1). Changed only
        /// under `lock`; read optimistically by the repair, which rechecks.
        std::atomic<std::int16_t> height{1};
        detail::occ_avl_lock lock;
        /// The key is in the set (false: a routing node, or unlinked). Changed
        /// only under `lock`; searches read it without, relaxed: it carries
        /// no data, and the flag's own coherence is all they need.
        std::atomic<bool> present;
    };

    static constexpr std::uint32_t unlinked_bit = 1;
    static constexpr std::uint32_t shrinking_bit = 2;
    static constexpr std::uint32_t shrink_count_step = 4;

    static constexpr bool is_unlinked(std::uint32_t v) noexcept { return (v & unlinked_bit) != 0; }
    static constexpr bool is_changing(std::uint32_t v) noexcept {
        return (v & (unlinked_bit | shrinking_bit)) != 0;
    }

    /// Where a search ended: `found` is the node with the key (present or
    /// routing), reached from `parent`; or `found` is null and the key would
    /// be the `dir` child of `parent`, whose version was `parent_version`
    /// when the empty child slot was read.
    struct search_result {
        node* parent = nullptr;
        node* found = nullptr;
        side dir = right;
        std::uint32_t parent_version = 0;
    };

    /// The next node a repair must look at: `n`, or n's parent when `up`; n
    /// null when nothing is left. `key` is n's key, read while n was locked:
    /// in root-search mode the next step finds n again by it.
    struct repair {
        node* n = nullptr;
        Key key{};
        bool up = false;
    };

    /// What a repair step did besides returning the next node to repair.
    struct step_effects {
        /// A node the step unlinked; the caller retires it once unlocked.
        node* to_retire = nullptr;
        /// A second repair. A rotation that leaves its lower node damaged
        /// reports that node as the next one (the deepest first, as in the
        /// paper), but it has also changed the height of np's subtree; the
        /// walk from the lower node stops at the rotated node, whose height
        /// the rotation already set, so np would never be looked at
        /// (SnapTree loses that repair; validate() found stale heights).
        repair also;
    };

    /// Pending repairs kept per operation before the walk recurses.
    static constexpr int max_pending_repairs = 8;

    /// nodeCondition's answers other than "new height".
    static constexpr int unlink_required = -1;
    static constexpr int rebalance_required = -2;
    static constexpr int nothing_required = -3;

    /// Repair steps find their node by a search from the root (NBR: a read
    /// phase must start at the root) instead of walking parent pointers.
    static constexpr bool repair_from_root = Domain::traits.needs_restart_from_root;

    // Positions in the block of protect_slots slots each operation borrows
    // from its guard (0-2: the search path, see descend).
    static constexpr int slot_parent = 3;
    static constexpr int slot_child_left = 4;
    static constexpr int slot_child_right = 5;
    static constexpr int slot_grandchild = 6;
    static constexpr int slot_great_grandchild = 7;

  public:
    using domain_type = Domain;
    /// What every operation takes: the calling thread's attachment.
    using context_type = smr::context<Domain>;
    using key_type = Key;
    using value_type = Value;

    static constexpr std::string_view name = "occ_avl";
    /// Searches stand on nodes that may be unlinked, and Bronson's repair
    /// walks up parent pointers out of them.
    static constexpr bool traverses_unlinked_nodes = true;
    /// Read phases (optimistic searches) and write phases (locks,
    /// revalidation, writes) that touch only reserved nodes and nodes kept
    /// linked by the locks held; see the top of the file.
    static constexpr bool has_read_write_phases = true;
    /// A failed revalidation restarts from the root, and with
    /// needs_restart_from_root every repair step searches from the root.
    static constexpr bool read_phases_start_at_root = true;
    /// The block an operation borrows from its guard: 0-2 the search path,
    /// rotating; 3 the node being repaired or its parent; 4-5 its children;
    /// 6-7 the grandchildren a rotation moves. (The search may return to any
    /// ancestor, which rotating slots do not cover: reservation schemes
    /// cannot protect this tree anyway.)
    static constexpr int protect_slots = 8;
    static constexpr Key min_key = std::numeric_limits<Key>::min() + 1;
    static constexpr Key max_key = std::numeric_limits<Key>::max() - 1;
    /// Bytes of one node (for allocator studies).
    static constexpr std::size_t node_size = sizeof(node);

    /// `domain` must outlive the tree.
    explicit occ_avl(Domain& domain) : domain_(domain), holder_(Key{}, Value{}, nullptr, false) {}

    occ_avl(const occ_avl&) = delete;
    occ_avl& operator=(const occ_avl&) = delete;

    /// Frees every node still in the tree. No operation may be running.
    /// Retired nodes belong to the domain, which frees them.
    ~occ_avl() {
        std::vector<node*> stack;
        if (node* root = holder_.child[right].load(std::memory_order_relaxed))
            stack.push_back(root);
        while (!stack.empty()) {
            node* n = stack.back();
            stack.pop_back();
            for (auto& c : n->child) {
                if (node* child = c.load(std::memory_order_relaxed)) stack.push_back(child);
            }
            domain_.free_unshared(n);
        }
    }

    bool insert(smr::context_ref<Domain> caller, Key key, Value value) {
        detail::check_key(key, min_key, max_key);
        const auto self = smr::local_copy(caller);
        smr::op_guard guard(domain_, self);
        const auto block = smr::lend_slots<protect_slots>(guard);
        const slot_view slots = block.lent();
        node* fresh = nullptr;  // allocated in a write phase, kept across restarts
        for (;;) {
            SMR_READ_PHASE_BEGIN(domain_, self);
            const search_result r = search(slots, key);

            if (r.found != nullptr) {
                node* n = r.found;
                domain_.read_phase_end(self, n);
                // A node with a value is linked (erase clears `present`
                // before it unlinks): linearized like a successful contains.
                if (n->present.load(std::memory_order_relaxed)) {
                    if (fresh != nullptr) domain_.discard(self, fresh);
                    return false;
                }
                // A routing node with our key: give it the value back.
                n->lock.lock();
                if (is_unlinked(n->version.load(std::memory_order_relaxed))) {
                    n->lock.unlock();  // spliced out meanwhile: the key's place moved
                    continue;
                }
                const bool was_present = n->present.load(std::memory_order_relaxed);
                if (!was_present) {
                    n->value = value;
                    n->present.store(true, std::memory_order_relaxed);  // linearization point
                }
                n->lock.unlock();
                if (fresh != nullptr) domain_.discard(self, fresh);
                return !was_present;
            }

            node* p = r.parent;
            domain_.read_phase_end(self, p);
            if (fresh == nullptr)
                fresh = domain_.template allocate<node>(self, key, value, p, true);
            p->lock.lock();
            // Bronson's check: p has not shrunk (nor been unlinked) since the
            // search read the empty slot, so the key still belongs there; and
            // no other insert filled the slot.
            if (p->version.load(std::memory_order_relaxed) != r.parent_version ||
                p->child[r.dir].load(std::memory_order_relaxed) != nullptr) {
                p->lock.unlock();
                continue;
            }
            fresh->parent.store(p, std::memory_order_relaxed);  // not shared yet
            // release: publishes fresh's fields; pairs with the acquire load
            // of this slot in every search (protect).
            p->child[r.dir].store(fresh, std::memory_order_release);
            const repair next = damaged(p, false);
            p->lock.unlock();
            repair_upward(slots, next);
            return true;
        }
    }

    bool erase(smr::context_ref<Domain> caller, Key key) {
        detail::check_key(key, min_key, max_key);
        const auto self = smr::local_copy(caller);
        smr::op_guard guard(domain_, self);
        const auto block = smr::lend_slots<protect_slots>(guard);
        const slot_view slots = block.lent();
        for (;;) {
            SMR_READ_PHASE_BEGIN(domain_, self);
            const search_result r = search(slots, key);
            if (r.found == nullptr) {
                domain_.read_phase_end(self);
                return false;
            }
            node* const p = r.parent;
            node* const n = r.found;
            const bool was_present = n->present.load(std::memory_order_relaxed);
            // Only compared with null, and rechecked under the lock.
            const bool can_splice = n->child[left].load(std::memory_order_relaxed) == nullptr ||
                                    n->child[right].load(std::memory_order_relaxed) == nullptr;
            domain_.read_phase_end(self, p, n);

            // A routing or unlinked node: linearized like an unsuccessful contains.
            if (!was_present) return false;

            if (!can_splice) {
                // Two children: n stays in the tree as a routing node.
                n->lock.lock();
                if (is_unlinked(n->version.load(std::memory_order_relaxed))) {
                    n->lock.unlock();
                    continue;
                }
                if (!n->present.load(std::memory_order_relaxed)) {
                    n->lock.unlock();  // another erase got there first
                    return false;
                }
                if (n->child[left].load(std::memory_order_relaxed) == nullptr ||
                    n->child[right].load(std::memory_order_relaxed) == nullptr) {
                    n->lock.unlock();  // lost a child meanwhile: splice it out instead
                    continue;
                }
                n->present.store(false, std::memory_order_relaxed);  // linearization point
                n->lock.unlock();
                return true;
            }

            // At most one child: splice n out, under the locks of p and n.
            p->lock.lock();
            if (is_unlinked(p->version.load(std::memory_order_relaxed)) ||
                n->parent.load(std::memory_order_relaxed) != p) {
                p->lock.unlock();
                continue;
            }
            n->lock.lock();
            if (!n->present.load(std::memory_order_relaxed)) {
                n->lock.unlock();
                p->lock.unlock();
                return false;
            }
            if (!splice_out_nl(slots, p, n)) {  // n gained a second child, or moved
                n->lock.unlock();
                p->lock.unlock();
                continue;
            }
            const repair next = fix_height_nl(slots, p);
            n->lock.unlock();
            p->lock.unlock();
            domain_.retire(self, n);
            repair_upward(slots, next);
            return true;
        }
    }

    bool contains(smr::context_ref<Domain> caller, Key key) {
        detail::check_key(key, min_key, max_key);
        const auto self = smr::local_copy(caller);
        smr::op_guard guard(domain_, self);
        const auto block = smr::lend_slots<protect_slots>(guard);
        const slot_view slots = block.lent();
        for (;;) {  // contains never restarts by itself; NBR may neutralize its read phase
            SMR_READ_PHASE_BEGIN(domain_, self);
            const search_result r = search(slots, key);
            const bool found =
                r.found != nullptr && r.found->present.load(std::memory_order_relaxed);
            domain_.read_phase_end(self);
            return found;
        }
    }

    /// Quiescent only (no operation on the set runs): how many keys it
    /// holds, counted by a walk of the whole structure, O(n).
    std::size_t size() const { return validate().size; }

    /// Quiescent only. Checks what the algorithm guarantees once operations
    /// stop: the root holder intact; search-tree order (which also excludes
    /// cycles); parent pointers; no reachable node unlinked, shrinking or
    /// locked; routing nodes have two children. Sums keys and counts the
    /// nodes that hold a value. Heights and balance are hints in a
    /// relaxed-balance tree (see validate_balance()).
    validation_result validate() const { return walk(false); }

    /// validate(), and also: every stored height is 1 + the larger of the
    /// children's actual heights, and every node is AVL balanced. Holds
    /// after any single-threaded history; after concurrent ones it usually
    /// does, but not always (header comment, "Balance is relaxed").
    validation_result validate_balance() const { return walk(true); }

  private:
    validation_result walk(bool exact_balance) const {
        validation_result result;
        if (holder_.child[left].load(std::memory_order_relaxed) != nullptr) {
            result.fail("root holder has a left child");
        }
        if (holder_.version.load(std::memory_order_relaxed) != 0 || holder_.lock.is_locked()) {
            result.fail("root holder changed or locked");
        }

        // Pre-order walk with key bounds, then heights children first.
        struct entry {
            const node* n;
            int child_index[2];
        };
        struct frame {
            const node* n;
            const node* parent;
            int parent_index;  // in `order`; -1 for the root
            side dir;
            Key lo, hi;  // exclusive bounds, where present
            bool has_lo, has_hi;
        };
        std::vector<entry> order;
        std::vector<frame> stack;
        if (const node* root = holder_.child[right].load(std::memory_order_relaxed)) {
            stack.push_back({root, &holder_, -1, right, Key{}, Key{}, false, false});
        }
        std::uint64_t sum = 0;  // wraps: the sum of arbitrary keys may overflow
        while (!stack.empty() && result.ok) {
            const frame f = stack.back();
            stack.pop_back();
            const node* n = f.n;
            const std::string at = "node " + std::to_string(n->key);
            if ((f.has_lo && !(f.lo < n->key)) || (f.has_hi && !(n->key < f.hi))) {
                result.fail(at + " outside the key range of its position");
                break;
            }
            if (n->parent.load(std::memory_order_relaxed) != f.parent) {
                result.fail(at + " has a wrong parent pointer");
            }
            const std::uint32_t v = n->version.load(std::memory_order_relaxed);
            if (is_unlinked(v)) result.fail(at + " is reachable but unlinked");
            if ((v & shrinking_bit) != 0) result.fail(at + " is still shrinking");
            if (n->lock.is_locked()) result.fail(at + " is locked");
            if (n->height.load(std::memory_order_relaxed) < 1) {
                result.fail(at + " stores height " +
                            std::to_string(n->height.load(std::memory_order_relaxed)));
            }
            const node* l = n->child[left].load(std::memory_order_relaxed);
            const node* r = n->child[right].load(std::memory_order_relaxed);
            const bool has_value = n->present.load(std::memory_order_relaxed);
            if (!has_value && (l == nullptr || r == nullptr)) {
                result.fail(at + " is a routing node with fewer than two children");
            }
            if (has_value) {
                sum += static_cast<std::uint64_t>(n->key);
                ++result.size;
            }
            const int index = static_cast<int>(order.size());
            order.push_back({n, {-1, -1}});
            if (f.parent_index >= 0)
                order[static_cast<std::size_t>(f.parent_index)].child_index[f.dir] = index;
            if (r != nullptr) stack.push_back({r, n, index, right, n->key, f.hi, true, f.has_hi});
            if (l != nullptr) stack.push_back({l, n, index, left, f.lo, n->key, f.has_lo, true});
        }
        if (result.ok && exact_balance) {
            // Children come after their parent in pre-order.
            std::vector<int> height(order.size(), 0);
            for (std::size_t i = order.size(); i-- > 0;) {
                const entry& e = order[i];
                const int hl = e.child_index[left] < 0
                                   ? 0
                                   : height[static_cast<std::size_t>(e.child_index[left])];
                const int hr = e.child_index[right] < 0
                                   ? 0
                                   : height[static_cast<std::size_t>(e.child_index[right])];
                height[i] = 1 + (hl > hr ? hl : hr);
                const std::string at = "node " + std::to_string(e.n->key);
                if (e.n->height.load(std::memory_order_relaxed) != height[i]) {
                    result.fail(at + " stores height " +
                                std::to_string(e.n->height.load(std::memory_order_relaxed)) +
                                ", actual " + std::to_string(height[i]));
                }
                if (hl - hr > 1 || hr - hl > 1) {
                    result.fail(at + " is not AVL balanced: left height " + std::to_string(hl) +
                                ", right height " + std::to_string(hr));
                }
            }
        }
        result.key_sum = static_cast<std::int64_t>(sum);
        return result;
    }

    static side other(side s) noexcept { return s == left ? right : left; }

    static int height_of(const node* n) noexcept {
        return n == nullptr ? 0 : n->height.load(std::memory_order_relaxed);
    }

    static void set_height(node* n, int h) noexcept {
        n->height.store(static_cast<std::int16_t>(h), std::memory_order_relaxed);
    }

    /// Waits while n is shrinking with version `seen` (its rotator holds its
    /// lock for a few dozen instructions, unless preempted).
    static void await_shrink(const node* n, std::uint32_t seen) noexcept {
        int spins = 0;
        // acquire: pairs with the release store that ends the shrink.
        while (n->version.load(std::memory_order_acquire) == seen) {
            if (++spins <= detail::occ_avl_spins_before_yield) {
                core::cpu_relax();
            } else {
                std::this_thread::yield();
                spins = 0;
            }
        }
    }

    // ---- search (read phases) -------------------------------------------------------

    enum class outcome { retry, done };

    /// What the search and the repair steps take: the operation's block of
    /// protect_slots slots (smr::lend_slots), and the thread's slot number.
    using slot_view = typename smr::slot_block<Domain, protect_slots>::view;

    /// The optimistic descent: finds the node with `key`, or the empty slot
    /// where it would go. Only reads shared memory, so it is a read phase.
    search_result search(slot_view slots, Key key) noexcept {
        search_result out;
        // The holder's version never changes (it is never rotated or
        // unlinked), so the descent below it never asks for a retry here.
        while (descend(slots, key, &holder_, right, 0, 0, out) == outcome::retry) {
        }
        return out;
    }

    /// Bronson's attemptGet below n, entered with n's version nv, which the
    /// caller validated (n was its child, and it had not changed, after nv
    /// was read). Returns retry when n has changed since: the caller then
    /// retries from its own node.
    outcome descend(slot_view slots, Key key, node* n, side dir, std::uint32_t nv, int depth,
                    search_result& out) noexcept {
        const auto reader = smr::reader_of(domain_, slots);
        const auto slot = reader.slot(depth % 3);
        for (;;) {
            node* c = reader.protect(slot, n->child[dir]);
            if (c == nullptr) {
                // acquire (as every load here): keeps this re-check after the
                // slot read. Same version: n had not shrunk, so the slot was
                // still where the key belongs when it read empty.
                if (n->version.load(std::memory_order_acquire) != nv &&
                    !SMR_MUTANT("occ_avl_search_trusts_an_empty_slot")) {
                    return outcome::retry;
                }
                out = {n, nullptr, dir, nv};
                return outcome::done;
            }
            if (c->key == key) {
                out = {n, c, dir, nv};
                return outcome::done;
            }
            const std::uint32_t cv = c->version.load(std::memory_order_acquire);
            if (is_changing(cv)) {
                if ((cv & shrinking_bit) != 0) await_shrink(c, cv);
                // (Unlinked: n's slot has moved on already, or n changed.)
                if (n->version.load(std::memory_order_acquire) != nv) return outcome::retry;
                continue;
            }
            // The second read of the slot, after cv: c was still n's child
            // when its version was cv.
            if (c != n->child[dir].load(std::memory_order_acquire)) {
                if (n->version.load(std::memory_order_acquire) != nv) return outcome::retry;
                continue;
            }
            // And the step into n was still valid after that: from here on,
            // a shrink of n cannot hurt (c's own version guards c's range).
            if (n->version.load(std::memory_order_acquire) != nv) return outcome::retry;
            const side next = key < c->key ? left : right;
            if (descend(slots, key, c, next, cv, depth + 1, out) == outcome::done) {
                return outcome::done;
            }
        }
    }

    // ---- repair (fixHeightAndRebalance) ----------------------------------------------

    /// A repair target for x (locked by the caller, or reserved and about
    /// to be locked), or none for the root holder, which needs no repair.
    repair damaged(node* x, bool up) const noexcept {
        if (x == &holder_) return {};
        return {x, x->key, up};
    }

    /// A rotation's early answer: x (locked) is still damaged, and np
    /// (locked), whose subtree the rotation changed, is checked later.
    repair damaged_below(node* x, node* np, step_effects& fx) const noexcept {
        fx.also = damaged(np, false);
        return damaged(x, false);
    }

    /// Bronson's nodeCondition: unlink_required, rebalance_required,
    /// nothing_required, or the height n should have. Optimistic without
    /// n's lock: whoever changes n after our reads repairs it.
    int node_condition(slot_view slots, node* n) noexcept {
        const auto reader = smr::reader_of(domain_, slots);
        node* l = reader.protect(reader.slot(slot_child_left), n->child[left]);
        node* r = reader.protect(reader.slot(slot_child_right), n->child[right]);
        if ((l == nullptr || r == nullptr) && !n->present.load(std::memory_order_relaxed)) {
            return unlink_required;
        }
        const int hn = n->height.load(std::memory_order_relaxed);
        const int hl = height_of(l);
        const int hr = height_of(r);
        if (hl - hr > 1 || hr - hl > 1) return rebalance_required;
        const int h = 1 + (hl > hr ? hl : hr);
        return h != hn ? h : nothing_required;
    }

    /// Repairs from `next` upward until nothing is left (the paper's
    /// fixHeightAndRebalance), then every pending repair a rotation left
    /// (see step_effects).
    void repair_upward(slot_view slots, repair next) {
        const auto self = smr::context_of(slots);
        repair pending[max_pending_repairs];
        int pending_count = 0;
        for (;;) {
            if (next.n == nullptr) {
                if (pending_count == 0) return;
                next = pending[--pending_count];
            }
            step_effects fx;
            next = repair_step(slots, next, fx);
            if (fx.to_retire != nullptr) domain_.retire(self, fx.to_retire);
            if (fx.also.n != nullptr) {
                if (pending_count < max_pending_repairs) {
                    pending[pending_count++] = fx.also;
                } else {
                    repair_upward(slots, fx.also);  // a rare deep backlog: walk it now
                }
            }
        }
    }

    /// One repair step: a read phase that finds the node and reads its
    /// condition, then a write phase that locks and repairs it. Returns what
    /// to repair next (nothing when the node needs nothing).
    repair repair_step(slot_view slots, const repair& target, step_effects& fx) {
        const auto self = smr::context_of(slots);
        const auto reader = smr::reader_of(domain_, slots);
        SMR_READ_PHASE_BEGIN(domain_, self);
        node* child = nullptr;
        node* n = locate(slots, target, child);
        if (n == nullptr || n == &holder_) {
            domain_.read_phase_end(self);
            return {};
        }
        const int condition = node_condition(slots, n);
        const bool gone = is_unlinked(n->version.load(std::memory_order_relaxed));
        if (!target.up && (gone || condition == nothing_required)) {
            // n is gone, and its unlinker repairs its parent; or nothing to
            // do, read consistently (see below).
            domain_.read_phase_end(self);
            return {};
        }
        repair next;
        if (gone || condition >= 0 || condition == nothing_required) {
            // Only the height; or nothing, read optimistically after the
            // height of a child changed without n's lock (target.up). That
            // answer is not final: a fixer holding n's lock may have read the
            // child's old height and be about to store a height computed
            // from it, after our read (Bronson's "whoever changes n repairs
            // it" does not cover that blind store; validate() found such
            // stale heights once operations stopped). Under n's lock every
            // earlier fixer's store is visible, and every later fixer reads
            // the child's new height (stored before we took the lock).
            // Without `up` the change under repair was made under n's lock
            // itself, which orders it against every fixer of n.
            //
            // With `up`, n must still be the child's parent once locked: a
            // rotation, or a splice that unlinked n, may have moved the child
            // under another node while we waited, and computed that node's
            // height from a child height read without the child's lock, so
            // maybe from before the change. Then the confirmation follows the
            // child to its new parent. (Links change only under the old
            // parent's lock, so under n's lock "child of n" is exact.) A child
            // that was unlinked itself is its unlinker's to repair above.
            domain_.read_phase_end(self, n, child);
            n->lock.lock();
            if (!child_moved_away(target, child, n, next) &&
                !is_unlinked(n->version.load(std::memory_order_relaxed))) {
                next = fix_height_nl(slots, n);
            }
            n->lock.unlock();
            return next;
        }
        node* np = reader.protect(reader.slot(slot_parent), n->parent);
        domain_.read_phase_end(self, np, n, child);
        np->lock.lock();
        if (is_unlinked(np->version.load(std::memory_order_relaxed)) ||
            n->parent.load(std::memory_order_relaxed) != np) {
            np->lock.unlock();
            // n moved: retry at n, or, with `up`, at the child's parent now.
            return target.up ? target : damaged(n, false);
        }
        n->lock.lock();
        // As above; whoever moved the child held n's lock and repairs n.
        if (!child_moved_away(target, child, n, next) &&
            !is_unlinked(n->version.load(std::memory_order_relaxed))) {
            next = rebalance_nl(slots, np, n, fx);
        }
        n->lock.unlock();
        np->lock.unlock();
        return next;
    }

    /// The node a repair step works on, in its read phase; with target.up,
    /// `child` receives the node whose parent it is (else nullptr).
    node* locate(slot_view slots, const repair& target, node*& child) noexcept {
        const auto reader = smr::reader_of(domain_, slots);
        node* x = target.n;
        child = nullptr;
        if constexpr (repair_from_root) {
            // x may be freed by now: find the node with its key again. Not
            // found: x was unlinked, and its unlinker repairs above it. (A
            // node found with the same key but not x gets a harmless check.)
            x = search(slots, target.key).found;
            if (x == nullptr) return nullptr;
        }
        if (!target.up) return x;
        child = x;
        return reader.protect(reader.slot(slot_parent), x->parent);
    }

    /// n locked, `child` the node whose height change brought the repair to
    /// n (null without target.up). True if it is no longer n's child (n was
    /// unlinked, or a rotation moved the child): `next` is then the same
    /// repair again, which finds the child's parent anew, or nothing if the
    /// child was unlinked itself (its unlinker repairs above it).
    bool child_moved_away(const repair& target, const node* child, const node* n,
                          repair& next) const noexcept {
        if (child == nullptr) return false;
        const bool still_child = !is_unlinked(n->version.load(std::memory_order_relaxed)) &&
                                 (n->child[left].load(std::memory_order_relaxed) == child ||
                                  n->child[right].load(std::memory_order_relaxed) == child);
        if (still_child) return false;
        if (!is_unlinked(child->version.load(std::memory_order_relaxed))) next = target;
        return true;
    }

    /// Bronson's fixHeight_nl, n locked: set n's height if that is all n
    /// needs (then the damage moves to n's parent).
    repair fix_height_nl(slot_view slots, node* n) noexcept {
        if (n == &holder_) return {};
        const int c = node_condition(slots, n);
        if (c == nothing_required) return {};
        if (c < 0) return damaged(n, false);  // needs its parent's lock too
        set_height(n, c);
        return damaged(n, true);
    }

    /// Splices out n (at most one child), np and n locked, np linked. False
    /// if n is no longer np's child or now has two children.
    bool splice_out_nl(slot_view slots, node* np, node* n) noexcept {
        const auto reader = smr::reader_of(domain_, slots);
        side s;
        if (np->child[left].load(std::memory_order_relaxed) == n) {
            s = left;
        } else if (np->child[right].load(std::memory_order_relaxed) == n) {
            s = right;
        } else {
            return false;
        }
        node* l = reader.protect(reader.slot(slot_child_left), n->child[left]);
        node* r = reader.protect(reader.slot(slot_child_right), n->child[right]);
        if (l != nullptr && r != nullptr) return false;
        node* splice = l != nullptr ? l : r;
        // Erase's linearization point when n had a value; before the unlink,
        // so a node found with a value was linked when it was found.
        n->present.store(false, std::memory_order_relaxed);
        // release: pairs with searches' acquire of this slot (publishes
        // splice's fields along our acquire chain, and the cleared present).
        np->child[s].store(splice, std::memory_order_release);
        // release: pairs with the repair's acquire read of parent pointers.
        if (splice != nullptr) splice->parent.store(np, std::memory_order_release);
        // release: pairs with searches' acquire of n's version.
        n->version.store(n->version.load(std::memory_order_relaxed) | unlinked_bit,
                         std::memory_order_release);
        return true;
    }

    /// Bronson's rebalance_nl, np and n locked, np linked and n's parent:
    /// splice out a routing node with fewer than two children, rotate an
    /// unbalanced node, or fix n's height.
    repair rebalance_nl(slot_view slots, node* np, node* n, step_effects& fx) noexcept {
        const auto reader = smr::reader_of(domain_, slots);
        node* l = reader.protect(reader.slot(slot_child_left), n->child[left]);
        node* r = reader.protect(reader.slot(slot_child_right), n->child[right]);
        if ((l == nullptr || r == nullptr) && !n->present.load(std::memory_order_relaxed)) {
            if (!splice_out_nl(slots, np, n)) return damaged(n, false);
            fx.to_retire = n;
            return fix_height_nl(slots, np);
        }
        const int hn = n->height.load(std::memory_order_relaxed);
        const int hl = height_of(l);
        const int hr = height_of(r);
        if (hl - hr > 1) return rebalance_toward(slots, np, n, left, l, hr, fx);
        if (hr - hl > 1) return rebalance_toward(slots, np, n, right, r, hl, fx);
        const int h = 1 + (hl > hr ? hl : hr);
        if (h == hn) return {};
        set_height(n, h);
        return fix_height_nl(slots, np);  // np is locked too: try it right away
    }

    /// Bronson's rebalanceToRight_nl (d = left) and rebalanceToLeft_nl
    /// (d = right), as one function over the side d of n's taller child nc;
    /// `h_other` is the height of n's other child as n saw it. np and n
    /// locked; locks nc and maybe nc's inner child.
    ///
    /// One departure from the authors' code: SnapTree skips the double
    /// rotation when it would leave nc a routing node with a missing child,
    /// and rotates nc alone instead ("focus on nL"). But when nc is not
    /// itself unbalanced that rotation does nothing and the step ends at nc,
    /// which needs nothing: n stays unbalanced, with a stale height, for good
    /// (e.g. n's left child a routing node with a leaf on its left and, on its
    /// right, a node whose only child is a right leaf). Here the double
    /// rotation happens anyway and nc, now a routing node with one child, is
    /// spliced out in the same step (rotate_double); the fallback is left for
    /// the case Bronson's balance test `b` excludes.
    repair rebalance_toward(slot_view slots, node* np, node* n, side d, node* nc, int h_other,
                            step_effects& fx) noexcept {
        const auto reader = smr::reader_of(domain_, slots);
        const side o = other(d);
        nc->lock.lock();
        repair result;
        if (nc->height.load(std::memory_order_relaxed) - h_other <= 1) {
            result = damaged(n, false);  // heights moved since n's check: retry at n
        } else {
            node* inner = reader.protect(reader.slot(slot_grandchild), nc->child[o]);
            const int h_outer =
                height_of(reader.protect(reader.slot(slot_great_grandchild), nc->child[d]));
            const int h_inner_seen = height_of(inner);
            if (h_outer >= h_inner_seen) {
                result =
                    rotate_single(slots, np, n, d, nc, h_other, h_outer, inner, h_inner_seen, fx);
            } else {
                inner->lock.lock();  // non-null: it is taller than the outer side
                const int h_inner = inner->height.load(std::memory_order_relaxed);
                if (h_outer >= h_inner) {
                    result =
                        rotate_single(slots, np, n, d, nc, h_other, h_outer, inner, h_inner, fx);
                    inner->lock.unlock();
                } else {
                    // After a double rotation nc keeps its outer child and
                    // gets inner's d child: do it if that leaves nc balanced.
                    const int h_inner_d = height_of(
                        reader.protect(reader.slot(slot_great_grandchild), inner->child[d]));
                    const int b = h_outer - h_inner_d;
                    if (b >= -1 && b <= 1) {
                        result = rotate_double(slots, np, n, d, nc, h_other, h_outer, inner, fx);
                        inner->lock.unlock();
                    } else {
                        // First rotate inner up over nc; n is repaired later.
                        // (inner is then unbalanced itself, or its height is
                        // stale, so someone is responsible for it.)
                        inner->lock.unlock();
                        result = rebalance_toward(slots, n, nc, o, inner, h_outer, fx);
                    }
                }
            }
        }
        nc->lock.unlock();
        return result;
    }

    /// Single rotation at n toward side o = other(d): nc (n's d child)
    /// takes n's place, n becomes nc's o child, and nc's inner child (its o
    /// child) becomes n's d child. np, n and nc locked. Heights are the
    /// values the caller read under the locks that guard them.
    repair rotate_single(slot_view slots, node* np, node* n, side d, node* nc, int h_other,
                         int h_outer, node* inner, int h_inner, step_effects& fx) noexcept {
        const side o = other(d);
        const std::uint32_t v = n->version.load(std::memory_order_relaxed);
        const side s = np->child[left].load(std::memory_order_relaxed) == n ? left : right;

        // Relaxed: the release stores below order it before the new links.
        n->version.store(v | shrinking_bit, std::memory_order_relaxed);
        // Link order keeps concurrent searches correct for every node but n
        // (which they wait for): n first, then nc grows, then np.
        // release (each link): pairs with searches' acquire loads of child
        // and parent pointers.
        n->child[d].store(inner, std::memory_order_release);
        if (inner != nullptr) inner->parent.store(n, std::memory_order_release);
        nc->child[o].store(n, std::memory_order_release);
        n->parent.store(nc, std::memory_order_release);
        np->child[s].store(nc, std::memory_order_release);
        nc->parent.store(np, std::memory_order_release);

        const int hn = 1 + (h_inner > h_other ? h_inner : h_other);
        set_height(n, hn);
        set_height(nc, 1 + (h_outer > hn ? h_outer : hn));
        // release: ends the shrink; pairs with searches' acquire of n's version.
        n->version.store(v + shrink_count_step, std::memory_order_release);

        // What is still damaged, deepest first (only n and nc changed), and
        // np in any case.
        if (h_inner - h_other > 1 || h_other - h_inner > 1) return damaged_below(n, np, fx);
        if ((inner == nullptr || h_other == 0) && !n->present.load(std::memory_order_relaxed)) {
            return damaged_below(n, np, fx);  // a routing node with a missing child
        }
        if (h_outer - hn > 1 || hn - h_outer > 1) return damaged_below(nc, np, fx);
        if (h_outer == 0 && !nc->present.load(std::memory_order_relaxed)) {
            return damaged_below(nc, np, fx);
        }
        return fix_height_nl(slots, np);
    }

    /// Double rotation at n toward side o: nc's inner child takes n's place
    /// with nc as its d child and n as its o child; its own children go to
    /// nc (its d child) and n (its o child). np, n, nc and inner locked. If
    /// nc ends up a routing node with a missing child, it is spliced out
    /// here (see rebalance_toward) and handed back in `fx.to_retire`.
    repair rotate_double(slot_view slots, node* np, node* n, side d, node* nc, int h_other,
                         int h_outer, node* inner, step_effects& fx) noexcept {
        const auto reader = smr::reader_of(domain_, slots);
        const side o = other(d);
        const std::uint32_t vn = n->version.load(std::memory_order_relaxed);
        const std::uint32_t vc = nc->version.load(std::memory_order_relaxed);
        const side s = np->child[left].load(std::memory_order_relaxed) == n ? left : right;
        node* inner_d = reader.protect(reader.slot(slot_child_left), inner->child[d]);
        node* inner_o = reader.protect(reader.slot(slot_child_right), inner->child[o]);
        const int h_inner_d = height_of(inner_d);
        const int h_inner_o = height_of(inner_o);

        // Relaxed: the release stores below order them before the new links.
        n->version.store(vn | shrinking_bit, std::memory_order_relaxed);
        nc->version.store(vc | shrinking_bit, std::memory_order_relaxed);
        // The shrinking nodes first, then inner grows, then np. release
        // (each link): pairs with searches' and repairs' acquire loads.
        n->child[d].store(inner_o, std::memory_order_release);
        if (inner_o != nullptr) inner_o->parent.store(n, std::memory_order_release);
        nc->child[o].store(inner_d, std::memory_order_release);
        if (inner_d != nullptr) inner_d->parent.store(nc, std::memory_order_release);
        inner->child[d].store(nc, std::memory_order_release);
        nc->parent.store(inner, std::memory_order_release);
        inner->child[o].store(n, std::memory_order_release);
        n->parent.store(inner, std::memory_order_release);
        np->child[s].store(inner, std::memory_order_release);
        inner->parent.store(np, std::memory_order_release);

        const int hn = 1 + (h_inner_o > h_other ? h_inner_o : h_other);
        set_height(n, hn);
        int hc = 1 + (h_outer > h_inner_d ? h_outer : h_inner_d);
        set_height(nc, hc);
        // release: end the shrinks; pair with searches' acquire of versions.
        n->version.store(vn + shrink_count_step, std::memory_order_release);
        nc->version.store(vc + shrink_count_step, std::memory_order_release);
        if ((h_outer == 0 || h_inner_d == 0) && !nc->present.load(std::memory_order_relaxed)) {
            // inner (nc's parent now) and nc are locked: splice nc out. Its
            // remaining subtree is unchanged, hence undamaged.
            [[maybe_unused]] const bool spliced = splice_out_nl(slots, inner, nc);
            assert(spliced);
            fx.to_retire = nc;
            hc -= 1;
        }
        set_height(inner, 1 + (hc > hn ? hc : hn));

        // The caller made sure nc (or what replaced it) is balanced.
        if (h_inner_o - h_other > 1 || h_other - h_inner_o > 1) return damaged_below(n, np, fx);
        if ((inner_o == nullptr || h_other == 0) && !n->present.load(std::memory_order_relaxed)) {
            return damaged_below(n, np, fx);
        }
        if (hc - hn > 1 || hn - hc > 1) return damaged_below(inner, np, fx);
        return fix_height_nl(slots, np);
    }

    Domain& domain_;
    /// The root holder (the paper's rootHolder): a sentinel whose right
    /// child is the root. Never rotated, unlinked, retired or freed; on its
    /// own cache lines, since every operation starts there.
    alignas(core::false_sharing_range) node holder_;
};

}  // namespace smr::ds
