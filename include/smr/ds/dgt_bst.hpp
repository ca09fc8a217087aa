// BST-TK: David, Guerraoui, Trigonakis, "Asynchronized Concurrency: The
// Secret to Scaling Concurrent Search Data Structures" (ASPLOS 2015).
//
// An external (leaf-oriented) binary search tree: keys live in the leaves,
// internal nodes only route (a key k goes left if k < node.key, else right).
// Every internal node carries, per child pointer ("side"), a versioned
// try-lock. An update first *parses* (searches) without locks or writes,
// remembering the version of each side it followed, read before the child
// pointer itself. It then try-locks exactly those sides with exactly those
// versions: success proves that the pointers it followed have not changed
// since the parse, so no separate validation is needed; failure restarts the
// operation from the root. A removed internal node keeps both sides locked
// forever, which makes any later try-lock on it fail: that is its "deleted"
// mark. Searches never lock, never validate and never restart.
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

#include "smr/core/padded.hpp"
#include "smr/ds/key_range.hpp"
#include "smr/ds/validation.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/reclaim/reader.hpp"
#include "smr/reclaim/unlink.hpp"

namespace smr::ds {

/// BST-TK as a set of Key (with a Value per key).
///
/// Keys must lie in [min_key, max_key] = [numeric_limits<Key>::min() + 1,
/// numeric_limits<Key>::max() - 1]. The extremes belong to the sentinels: the
/// root routes with key max() and has a leaf max() on its right (reached by no
/// allowed key), and the leftmost leaf is a leaf min(), never removed. So
/// every real leaf has a parent and a grandparent, and the root is never
/// removed.
///
/// Progress: contains (the paper's search) is wait-free: one root-to-leaf
/// walk, no lock, no restart. insert and erase are blocking with fine-grained
/// locks: they never wait on a lock, but restart while a node they need is
/// locked, so a stopped lock holder stops them. After a few consecutive
/// restarts a thread yields (the benchmark oversubscribes cores: a preempted
/// holder must get to run). Unsuccessful updates return after the parse
/// without locking or writing (DGT's "ASCY 3").
///
/// Reclamation: traverses_unlinked_nodes (a parse may walk through removed
/// routing nodes), so hazard pointers cannot protect it; HP++ (hp_pp) can:
/// every step goes through smr::protect_from with the node it leaves, and
/// erase names the sibling as its unlink's frontier (smr::begin_unlink): the
/// removed parent stays locked on both sides for good, so its links are
/// frozen, and nobody removes the sibling while that lock is held. Under
/// hp_pp a parse or contains that stands on an invalidated node starts again
/// from the root (contains is lock-free there, not wait-free). A successful
/// insert allocates two nodes (leaf + routing node); a successful erase
/// retires two (the leaf and its parent).
///
/// Memory layout: one node type for leaves and routing nodes, as in the
/// paper's code: the domain's header (none for the epoch family, the leak
/// domain, hp and nbr) + key, two children, two 16-bit versioned locks, a
/// leaf flag and the value = 40 bytes, the paper's size (jemalloc's 48-byte
/// class). What a parse reads at every level (key, leaf flag, one version,
/// one child) is the first 29 bytes: in 48-byte regions a quarter of the
/// nodes straddle two cache lines there, where the value in the middle left
/// half of them straddling.
///
/// Deviations from the paper's code, both portability choices:
/// - Each side's lock is one 16-bit counter, even = free, odd = held; lock and
///   unlock each add 1 (the paper's 16-bit ticket and 16-bit version, with
///   ticket - version in {0, 1}, carry the same information in one word). A
///   stale version could only be mistaken for the current one after 2^15
///   updates of that side during one parse, as the paper's 16-bit version
///   after 2^16.
/// - The paper locks both sides of the parent in erase with one 64-bit CAS;
///   standard C++ cannot CAS a word whose halves other threads CAS
///   separately, so erase try-locks the two sides one after the other and
///   reverts on failure. Nothing is ever waited for, so this cannot deadlock.
template <class Domain, class Key = std::int64_t, class Value = std::int64_t>
class dgt_bst {
    friend struct smr::ds::testing::access;  // tests corrupt internals

    /// Word-sized: a side indexes child[] and version[] at every level,
    /// and an int would be widened there each time.
    enum side : std::size_t { left = 0, right = 1 };

    using version_t = std::uint16_t;

    struct node final : Domain::node_base {
        /// A leaf.
        node(Key k, Value v) noexcept : key(k), leaf(true), value(v) {}
        /// A routing node.
        node(Key k, node* l, node* r) noexcept : key(k), child{l, r}, leaf(false), value() {}

        /// Routing nodes: left subtree < key <= right subtree. Written only
        /// before the node is published (insert may re-target an unpublished
        /// routing node when it restarts). First, before the children: when
        /// a node straddles two cache lines, the key, which the child load
        /// waits for, is in the first line and the chosen child most often
        /// with it; children first put a quarter of the nodes' key in the
        /// second line and their children in the first, two misses in
        /// series (debra, 2 threads, 2M keys: 0.78x the throughput).
        Key key;
        std::atomic<node*> child[2]{nullptr, nullptr};
        /// Versioned try-lock of each side (routing nodes only): even = free,
        /// odd = held. child[s] changes only while version[s] is held.
        std::atomic<version_t> version[2]{0, 0};
        /// A flag, where the paper's code tests for a null left child: that
        /// test is an atomic load and a compare per level, where this is one
        /// compare with memory (one thread, 100K keys: 600.4 instructions per
        /// operation with the flag, 636.0 without). It fits in the padding
        /// after the 16-bit versions.
        const bool leaf;
        Value value;  // leaves only; last: a parse never reads it

        /// The lock must still be free with the version read in the parse
        /// (the paper's tl_trylock_version).
        bool try_lock(side s, version_t seen) noexcept {
            if ((seen & 1) != 0) return false;  // held (or removed) when parsed
            // acquire: pairs with the release of the last unlock/revert, so
            // the writes of the previous holder are visible to us.
            return version[s].compare_exchange_strong(seen, static_cast<version_t>(seen + 1),
                                                      std::memory_order_acquire,
                                                      std::memory_order_relaxed);
        }
        /// Locks a side if it is free now, whatever its version.
        bool try_lock_now(side s) noexcept {
            return try_lock(s, version[s].load(std::memory_order_relaxed));
        }
        /// Ends a hold that changed child[s]: the version moves on, so every
        /// parse that saw the old one fails its try-lock.
        void unlock(side s) noexcept {
            // release: publishes the new child[s]; pairs with the parse's
            // acquire load of the version and with the next try_lock.
            version[s].store(static_cast<version_t>(version[s].load(std::memory_order_relaxed) + 1),
                             std::memory_order_release);
        }
        /// Ends a hold that changed nothing (the paper's tl_revert): the old
        /// version is restored, so parses that saw it stay valid.
        void revert(side s, version_t seen) noexcept {
            // release: pairs with the next try_lock's acquire (a holder's
            // reads stay before the next holder's writes).
            version[s].store(seen, std::memory_order_release);
        }
    };

    /// What a parse found: the leaf where `key` is or would be, its parent
    /// and grandparent (the paper's curr, pred, ppred), the side taken at
    /// each, and the version of that side read before its child pointer.
    struct parse_result {
        node* gparent;  // nullptr when parent is the root
        node* parent;
        node* leaf;
        side gparent_side;
        side parent_side;
        version_t gparent_version;
        version_t parent_version;
    };
    /// A parse's protect: the three slots an update borrows from its guard.
    using slot_view = typename smr::slot_block<Domain, 3>::view;

  public:
    using domain_type = Domain;
    /// What every operation takes: the calling thread's attachment.
    using context_type = smr::context<Domain>;
    using key_type = Key;
    using value_type = Value;

    static constexpr std::string_view name = "dgt_bst";
    /// A parse may walk through routing nodes already removed from the tree.
    static constexpr bool traverses_unlinked_nodes = true;
    /// Steps out of nodes with smr::protect_from, unlinks with a frontier (HP++).
    static constexpr bool names_frontiers = true;
    /// One read phase (the parse) then one write phase (try-locks with the
    /// parse's versions, then the write) per attempt; the write phase touches
    /// only the reserved nodes.
    static constexpr bool has_read_write_phases = true;
    /// A failed try-lock restarts the attempt from the root.
    static constexpr bool read_phases_start_at_root = true;
    /// Grandparent, parent and child, rotating.
    static constexpr int protect_slots = 3;
    static constexpr Key min_key = std::numeric_limits<Key>::min() + 1;
    static constexpr Key max_key = std::numeric_limits<Key>::max() - 1;
    /// Bytes of one node (for allocator studies).
    static constexpr std::size_t node_size = sizeof(node);
    /// External tree: a leaf and an internal node per key (smrbench's memory
    /// estimate of a prefill).
    static constexpr std::size_t nodes_per_key = 2;

    /// `domain` must outlive the tree.
    explicit dgt_bst(Domain& domain)
        : domain_(domain),
          root_(std::numeric_limits<Key>::max(), &min_leaf_, &max_leaf_),
          min_leaf_(std::numeric_limits<Key>::min(), Value{}),
          max_leaf_(std::numeric_limits<Key>::max(), Value{}) {}

    dgt_bst(const dgt_bst&) = delete;
    dgt_bst& operator=(const dgt_bst&) = delete;

    /// Frees every node still in the tree. No operation may be running.
    /// Retired nodes belong to the domain, which frees them.
    ~dgt_bst() {
        std::vector<node*> stack{root_.child[left].load(std::memory_order_relaxed)};
        while (!stack.empty()) {
            node* n = stack.back();
            stack.pop_back();
            if (!n->leaf) {
                stack.push_back(n->child[left].load(std::memory_order_relaxed));
                stack.push_back(n->child[right].load(std::memory_order_relaxed));
            }
            if (n != &min_leaf_) domain_.free_unshared(n);
        }
    }

    bool insert(smr::context_ref<Domain> caller, Key key, Value value) {
        detail::check_key(key, min_key, max_key);
        const auto self = smr::local_copy(caller);
        smr::op_guard guard(domain_, self);
        const auto slots = smr::lend_slots<3>(guard);  // grandparent, parent, child
        // Allocated in a write phase, kept across restarts.
        node* new_leaf = nullptr;
        node* new_router = nullptr;
        unsigned failures = 0;
        for (;;) {
            SMR_READ_PHASE_BEGIN(domain_, self);
            const parse_result p = parse(slots.lent(), key);
            const Key leaf_key = p.leaf->key;
            domain_.read_phase_end(self, p.parent, p.leaf);

            if (leaf_key == key) {
                if (new_leaf != nullptr) {
                    domain_.discard(self, new_leaf);
                    domain_.discard(self, new_router);
                }
                return false;
            }
            if (new_leaf == nullptr) {
                // Both or neither: if the second allocation throws (a pool
                // that ran out), the insert gives up with nothing allocated.
                new_leaf = domain_.template allocate<node>(self, key, value);
                try {
                    new_router = domain_.template allocate<node>(self, key, nullptr, nullptr);
                } catch (...) {
                    domain_.discard(self, new_leaf);
                    throw;
                }
            }
            // The routing node replaces the leaf: both leaves under it, the
            // larger key routes. Not shared yet, so plain relaxed stores.
            const bool new_is_left = key < leaf_key;
            new_router->key = new_is_left ? leaf_key : key;
            new_router->child[left].store(new_is_left ? new_leaf : p.leaf,
                                          std::memory_order_relaxed);
            new_router->child[right].store(new_is_left ? p.leaf : new_leaf,
                                           std::memory_order_relaxed);

            if (!p.parent->try_lock(p.parent_side, p.parent_version)) {
                back_off(failures);
                continue;
            }
            // release: publishes both new nodes; pairs with the acquire load
            // of this pointer in every parse (protect).
            p.parent->child[p.parent_side].store(new_router, std::memory_order_release);
            p.parent->unlock(p.parent_side);
            return true;
        }
    }

    bool erase(smr::context_ref<Domain> caller, Key key) {
        detail::check_key(key, min_key, max_key);
        const auto self = smr::local_copy(caller);
        smr::op_guard guard(domain_, self);
        const auto slots = smr::lend_slots<3>(guard);  // grandparent, parent, child
        unsigned failures = 0;
        for (;;) {
            SMR_READ_PHASE_BEGIN(domain_, self);
            const parse_result p = parse(slots.lent(), key);
            const Key leaf_key = p.leaf->key;
            domain_.read_phase_end(self, p.gparent, p.parent, p.leaf);

            if (leaf_key != key) return false;
            // A real leaf is never the root's child (see the class comment).
            assert(p.gparent != nullptr);

            // Lock the grandparent's side that leads to the parent, then both
            // sides of the parent; the versions prove nothing changed since
            // the parse (gparent -> parent -> leaf still linked, neither
            // removed).
            if (!p.gparent->try_lock(p.gparent_side, p.gparent_version)) {
                back_off(failures);
                continue;
            }
            if (!p.parent->try_lock(p.parent_side, p.parent_version)) {
                p.gparent->revert(p.gparent_side, p.gparent_version);
                back_off(failures);
                continue;
            }
            const side sibling_side = p.parent_side == left ? right : left;
            if (!p.parent->try_lock_now(sibling_side)) {
                p.parent->revert(p.parent_side, p.parent_version);
                p.gparent->revert(p.gparent_side, p.gparent_version);
                back_off(failures);
                continue;
            }
            // Stable: we hold that side, and try_lock's acquire made the last
            // write to it visible.
            node* sibling = p.parent->child[sibling_side].load(std::memory_order_relaxed);
            // The sibling: where the parent's frozen links lead out (hp_pp).
            auto unlink = smr::begin_unlink(domain_, self, sibling);
            // release: pairs with the parses' acquire load of this pointer;
            // publishes the sibling's fields along the locks' acquire chain.
            p.gparent->child[p.gparent_side].store(sibling, std::memory_order_release);
            p.gparent->unlock(p.gparent_side);
            // The parent stays locked on both sides for good: any parse that
            // went through it will fail its try-lock on it and restart.
            unlink.retire(p.parent);
            unlink.retire(p.leaf);
            return true;
        }
    }

    bool contains(smr::context_ref<Domain> caller, Key key) {
        detail::check_key(key, min_key, max_key);
        const auto self = smr::local_copy(caller);
        smr::op_guard guard(domain_, self);
        const auto block = smr::lend_slots<2>(guard);  // parent and child
        // Restarts only when NBR neutralizes its read phase or hp_pp finds
        // the node it stands on invalidated.
        for (;;) {
            SMR_READ_PHASE_BEGIN(domain_, self);
            const auto reader = block.reader(domain_);
            const auto slots = smr::first_slots<2>(reader);
            smr::link_read<node> curr{&root_, true};
            for (std::size_t slot = 0; !curr.ptr->leaf; slot ^= 1) {
                const side s = key < curr.ptr->key ? left : right;
                curr = smr::protect_from(reader, slots[slot], curr.ptr->child[s], *curr.ptr);
                if (!curr.valid) break;
            }
            if (!curr.valid) continue;
            domain_.read_phase_end(self, curr.ptr);
            return curr.ptr->key == key;
        }
    }

    /// Quiescent only (no operation on the set runs): how many keys it
    /// holds, counted by a walk of the whole structure, O(n).
    std::size_t size() const { return validate().size; }

    /// Quiescent only. Checks: sentinels intact; every routing node has two
    /// children and no held lock; routing invariant (left subtree < key <=
    /// right subtree) along every path, which also excludes cycles; leaves
    /// strictly ascending from the min sentinel to the max sentinel. Sums
    /// keys and counts leaves other than the sentinels.
    validation_result validate() const {
        validation_result result;
        constexpr Key lowest = std::numeric_limits<Key>::min();
        constexpr Key highest = std::numeric_limits<Key>::max();
        if (root_.leaf || root_.key != highest) result.fail("root sentinel changed");
        if (root_.child[right].load(std::memory_order_relaxed) != &max_leaf_) {
            result.fail("root's right child is not the max sentinel leaf");
        }
        if (!min_leaf_.leaf || min_leaf_.key != lowest || !max_leaf_.leaf ||
            max_leaf_.key != highest) {
            result.fail("sentinel leaf changed");
        }

        // Iterative in-order walk (an external BST can be as deep as it is
        // large). Every node carries its key bounds [lo, hi); hi is absent
        // on the root's right spine.
        struct frame {
            const node* n;
            Key lo;
            Key hi;
            bool has_hi;
        };
        std::vector<frame> stack{{&root_, lowest, highest, false}};
        std::uint64_t sum = 0;  // wraps: the sum of arbitrary keys may overflow
        const node* previous_leaf = nullptr;
        while (!stack.empty() && result.ok) {
            const frame f = stack.back();
            stack.pop_back();
            const node* n = f.n;
            if (n->leaf) {
                if (n->key < f.lo || (f.has_hi && !(n->key < f.hi))) {
                    result.fail("leaf " + std::to_string(n->key) + " outside its routing range");
                }
                if (n->child[left].load(std::memory_order_relaxed) != nullptr ||
                    n->child[right].load(std::memory_order_relaxed) != nullptr) {
                    result.fail("leaf " + std::to_string(n->key) + " has children");
                }
                if (previous_leaf == nullptr ? n != &min_leaf_ : !(previous_leaf->key < n->key)) {
                    result.fail("leaves not strictly ascending from the min sentinel at leaf " +
                                std::to_string(n->key));
                }
                if (n != &min_leaf_ && n != &max_leaf_) {
                    sum += static_cast<std::uint64_t>(n->key);
                    ++result.size;
                }
                previous_leaf = n;
                continue;
            }
            // Both subtrees hold a leaf, so lo < key (left non-empty) and
            // key < hi (right non-empty).
            if (!(f.lo < n->key) || (f.has_hi && !(n->key < f.hi))) {
                result.fail("routing node " + std::to_string(n->key) + " outside its range");
            }
            const node* l = n->child[left].load(std::memory_order_relaxed);
            const node* r = n->child[right].load(std::memory_order_relaxed);
            if (l == nullptr || r == nullptr) {
                result.fail("routing node " + std::to_string(n->key) + " lacks a child");
                break;
            }
            if ((n->version[left].load(std::memory_order_relaxed) & 1) != 0 ||
                (n->version[right].load(std::memory_order_relaxed) & 1) != 0) {
                result.fail("routing node " + std::to_string(n->key) + " is locked or removed");
            }
            stack.push_back({r, n->key, f.hi, f.has_hi});  // popped after the left subtree
            stack.push_back({l, f.lo, n->key, true});
        }
        if (result.ok && previous_leaf != &max_leaf_) {
            result.fail("the last leaf is not the max sentinel");
        }
        result.key_sum = static_cast<std::int64_t>(sum);
        return result;
    }

  private:
    /// Consecutive failed try-locks of one operation before it yields.
    static constexpr unsigned restarts_before_yield = 8;

    /// The paper's parse: the read phase of insert and erase. From the root
    /// down to a leaf, reading each side's version before its child pointer;
    /// protect slots rotate over grandparent, parent and child. Writes
    /// nothing shared and keeps no state across a neutralization restart.
    parse_result parse(slot_view slots, Key key) noexcept {
        // Locals, not the result's fields: GCC keeps a struct that is
        // returned in memory there, two stores per level. With the word-sized
        // side, insert's parse is 11 instructions per level where it was 15.
        const auto reader = smr::reader_of(domain_, slots);
        const auto rotation = smr::first_slots<3>(reader);
        for (;;) {  // again from the root when hp_pp finds a node invalidated
            node* gparent = nullptr;
            node* parent = nullptr;
            smr::link_read<node> curr{&root_, true};
            side gparent_side = left;
            side parent_side = left;
            version_t gparent_version = 0;
            version_t parent_version = 0;
            for (std::size_t slot = 0; !curr.ptr->leaf; slot = slot == 2 ? 0 : slot + 1) {
                const side s = key < curr.ptr->key ? left : right;
                // acquire: pairs with unlock's release, so the child read next
                // is at least as new as this version (and is not read before it).
                const version_t v = curr.ptr->version[s].load(std::memory_order_acquire);
                gparent = parent;
                gparent_side = parent_side;
                gparent_version = parent_version;
                parent = curr.ptr;
                parent_side = s;
                parent_version = v;
                curr = smr::protect_from(reader, rotation[slot], parent->child[s], *parent);
                if (!curr.valid) break;
            }
            if (curr.valid) {
                return {gparent,     parent,          curr.ptr,      gparent_side,
                        parent_side, gparent_version, parent_version};
            }
        }
    }

    /// Called after a failed try-lock: the holder is usually running and
    /// done in a moment, so retry at once; but if it keeps failing, the
    /// holder may be preempted (more threads than cores), so let it run.
    static void back_off(unsigned& failures) noexcept {
        if (++failures == restarts_before_yield) {
            failures = 0;
            std::this_thread::yield();
        }
    }

    Domain& domain_;
    /// Sentinels live in the tree object (never allocated, retired or
    /// freed). The root is read by every operation and written rarely; the
    /// sentinel leaves are read-only.
    alignas(core::false_sharing_range) node root_;
    alignas(core::false_sharing_range) node min_leaf_;
    node max_leaf_;
};

}  // namespace smr::ds
