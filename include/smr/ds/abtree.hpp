// Brown's lock-free relaxed (a,b)-tree: T. Brown, "Techniques for Constructing
// Efficient Lock-free Data Structures", PhD thesis, Toronto 2017, chapter 8
// (the ABtree of the Epochs and NBR papers' experiments).
//
// ---- The tree -------------------------------------------------------------------
//
// A leaf-oriented (external) search tree. A leaf holds up to b = 16 sorted
// keys (and their values); an internal node holds up to b children and one
// routing key fewer (child i holds the keys k with keys[i-1] <= k < keys[i]).
// Every node is immutable except an internal node's child pointers, which
// change only through SCX. An update never edits a node in place: it builds
// one or more new nodes and swings one child pointer of the node above from
// the old node(s) to the new one (copy-on-write), then retires the nodes it
// replaced.
//
// "Relaxed" means the balance invariants may be violated for a while:
//   - a tag (Brown's weight 0) on an internal node says its level does not
//     count toward depth: a leaf split creates a tagged internal node instead
//     of pushing a key up into the parent atomically;
//   - a degree violation is a non-root node with fewer than a = b/4 = 4
//     children (internal) or keys (leaf), after erases.
// The tree is an (a,b)-tree once no violation remains: every leaf at the same
// depth, every non-root node of degree in [a, b]. Violations are repaired by
// rebalancing steps, each one SCX replacing a small neighbourhood:
//   fix_tagged (tag at l, parent p):     absorb  (p and l merge into one node
//                                        of degree <= b) or split (too many:
//                                        two untagged halves under a new tagged
//                                        node, untagged if it becomes the root);
//   fix_degree (violation at l, sibling s): absorb sibling (l and s merge,
//                                        p loses a child; if p is the root of
//                                        degree 2 the merged node replaces it)
//                                        or distribute (l and s share their
//                                        children evenly, p gets a new key).
// As in Brown's code, an operation fixes the violations it creates before
// returning, and a fix that finds its node already replaced hands the
// responsibility to the step that replaced it (every step re-examines the
// nodes it creates). So when no operation is running no violation is left;
// validate() checks that (no quiescent fix_all() is needed).
//
// ---- LLX / SCX (Brown, Ellen, Ruppert, PODC 2013) ----------------------------------
//
// LLX(r) returns a snapshot of r (here: success, after which the caller reads
// r's child pointers) unless r is frozen for an SCX in progress or finalized
// (removed). SCX(V, R, fld, old, new) atomically, provided no node of V
// changed since its LLX: finalizes the nodes of R and swings fld from old to
// new. It freezes each node of V by CASing its `info` word from the value its
// LLX saw to this SCX, then marks R, CASes fld, and commits. Anyone who finds
// a node frozen for an SCX in progress helps it finish (lock-freedom).
// Leaves are immutable and never frozen; a leaf is replaced together with its
// frozen parent. Updates: V = {p} (insert, erase), V = {gp, p, l?} and R =
// {p, l?} (fix_tagged), V = {gp, p, l?, s?} and R = {p, l?, s?} (fix_degree);
// "?" = only if internal.
//
// SCX records are embedded, not allocated: each thread slot owns one record in
// the tree (`records_`), reused for each of its SCXs with a sequence number
// (Arbel-Raviv and Brown, "Reuse, don't recycle", DISC 2017 -- the provider
// the Epochs and NBR artifacts use). A node's `info` is a word (seq << 16 |
// slot), never a pointer, so no record is ever retired or freed and an SCX
// allocates nothing: an operation allocates exactly the new nodes (one for a
// simple insert or erase, three for a split or a distribute, one or two for
// an absorb) and retires the nodes it replaced (one for insert/erase, two or
// three for a rebalancing step). A word whose seq is no longer its record's
// belongs to a finished SCX; for LLX a finished SCX means "not frozen", and a
// marked node is finalized for good (only a committing SCX marks). Helpers
// copy the record like a seqlock reader (acquire loads, re-check the seq),
// and every state change of a record is a CAS that includes the seq, so a
// late helper can never change a later SCX of the same slot. A late helper's
// freeze CAS cannot succeed on a node another SCX touched (words are unique,
// no ABA), and its fld CAS cannot meet `old` again: see "Reclamation".
//
// ---- Reclamation, read and write phases -------------------------------------------
//
// Searches walk through nodes that may already be replaced (they never check
// `marked`), so the tree declares traverses_unlinked_nodes: HP, HE, IBR and
// WFE cannot protect it (smr/compatibility.hpp). Every search is a read phase
// from the root (the entry node), ended by read_phase_end with the nodes the
// write phase will touch -- at most gp, p, l and s -- and every LLX, SCX,
// allocation and retire happens after it, so NBR/NBR+ are safe (NBR paper,
// Section 5.2). Two details make that true:
//   - the sibling s of a degree fix is read in the read phase and reserved;
//     after LLX(p) the write phase only checks that p still points to it;
//   - after an SCX the operation never dereferences the nodes it created
//     (another thread may replace and free them at once under NBR): the
//     follow-up fixes get the facts they need (degree, tag, search key) from
//     locals and only compare the node's address with what their own read
//     phase found -- and re-check the violation on the node found, so an
//     address reused by a new node makes the fix a harmless no-op.
// Helping touches the nodes of another thread's SCX, which the helper has not
// reserved. Epoch-family schemes make that safe (the helped SCX's owner is
// still inside its operation, so nothing it will retire can be freed before
// the helper's operation ends either, and `old` cannot be freed and reused at
// fld while a late helper holds it). NBR cannot: the owner's reservations end
// with its operation. So with a reclaimer whose traits.uses_signals is set,
// LLX does not help; it fails and the caller retries (yielding after a few
// failures). The tree is then not lock-free but blocking in the way a lock is:
// a descheduled SCX owner delays the updates that conflict with it. With every
// other reclaimer, updates are lock-free and contains is wait-free (one
// root-to-leaf walk, no restarts).
//
// ---- Memory orders --------------------------------------------------------------
//
// Publication: a node's plain fields are written before the release (acq_rel)
// fld CAS of the SCX that links it; readers load child pointers with acquire
// (domain_.protect). Copies of child pointers into new nodes are made with
// acquire loads, so the copying thread's release CAS passes the children's
// initialization on to whoever acquires the new node. LLX: acquire loads of
// `marked` and `info` and of the record's state pair with the freeze CAS, the
// mark store and the record's commit CAS. The record: the owner stores the
// new seq, then the fields with release stores (seqlock writer); helpers read the
// fields with acquire loads, re-check the seq (seqlock reader).
//
// ---- Layout -----------------------------------------------------------------------
//
// Node = domain header (none for the epoch family) + info word 8 + flags
// 8 (leaf, tagged, marked, size) + search key 8 + 16 keys x 8 + 16 child
// pointers (values in leaves) x 8 = 280 bytes with 8-byte keys; Brown's node
// with 4-byte int keys, the papers' setting, is about 240 bytes.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "smr/core/padded.hpp"
#include "smr/ds/key_range.hpp"
#include "smr/ds/validation.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/reclaim/reader.hpp"

namespace smr::ds {

template <class Domain, class Key = std::int64_t, class Value = std::int64_t>
class abtree {
    friend struct smr::ds::testing::access;  // tests corrupt internals

    static_assert(std::is_trivially_copyable_v<Value> && sizeof(Value) <= sizeof(void*),
                  "abtree stores a leaf's values in its child-pointer slots");

  public:
    /// Maximum degree (keys per leaf, children per internal node).
    static constexpr int b = 16;
    /// Minimum degree of a non-root node (Brown: max(b/4, 2)).
    static constexpr int a = std::max(b / 4, 2);

  private:
    struct node final : Domain::node_base {
        node() noexcept = default;
        /// SCX word of the last SCX that froze this node; 0: never frozen.
        std::atomic<std::uint64_t> info{0};
        /// Set (only) by a committing SCX that removes this node.
        std::atomic<bool> marked{false};
        bool leaf = true;
        /// Brown's weight 0 (internal nodes only).
        bool tagged = false;
        /// Leaf: number of keys. Internal: number of children.
        std::uint8_t size = 0;
        /// A key whose search reaches this node (used to find it again).
        Key search_key{};
        Key keys[b];
        /// Internal: children. Leaf: values (bit-copied).
        std::atomic<node*> ptrs[b];

        int key_count() const noexcept { return leaf ? size : size - 1; }
        /// Index of the child whose range holds `key`.
        int child_index(Key key) const noexcept {
            const int n = size - 1;
            int i = 0;
            while (i < n && !(key < keys[i])) ++i;
            return i;
        }
        /// Index of the first key >= `key` (leaves).
        int key_index(Key key) const noexcept {
            int i = 0;
            while (i < size && keys[i] < key) ++i;
            return i;
        }
    };

    // ---- SCX records ------------------------------------------------------------

    enum status : std::uint64_t { in_progress = 0, committed = 1, aborted = 2 };
    static constexpr int max_v = 4;

    /// Record state word: seq << 3 | all_frozen << 2 | status.
    static constexpr std::uint64_t make_state(std::uint64_t seq, bool frozen, status s) noexcept {
        return seq << 3 | (frozen ? 4u : 0u) | s;
    }
    static constexpr std::uint64_t seq_of_state(std::uint64_t st) noexcept { return st >> 3; }
    static constexpr status status_of(std::uint64_t st) noexcept { return status(st & 3); }
    static constexpr bool frozen_of(std::uint64_t st) noexcept { return (st & 4) != 0; }
    /// Node info word: seq << 16 | slot.
    static constexpr std::uint64_t make_word(std::uint64_t seq, int tid) noexcept {
        return seq << 16 | static_cast<std::uint64_t>(tid);
    }
    static constexpr std::uint64_t seq_of_word(std::uint64_t w) noexcept { return w >> 16; }
    static constexpr int tid_of_word(std::uint64_t w) noexcept { return int(w & 0xffff); }

    /// One per thread slot, reused for each of the slot's SCXs. Every field is
    /// an atomic because helpers copy it while the owner may be reusing it
    /// (they discard the copy if the seq moved).
    struct alignas(core::false_sharing_range) scx_record {
        std::atomic<std::uint64_t> state{make_state(0, false, aborted)};
        std::atomic<int> n_v{0};
        std::atomic<unsigned> finalize_mask{0};
        std::atomic<node*> v[max_v]{};
        std::atomic<std::uint64_t> seen[max_v]{};
        std::atomic<std::atomic<node*>*> fld{nullptr};
        std::atomic<node*> old{nullptr};
        std::atomic<node*> nu{nullptr};
    };
    /// Thread tid's SCX record (tid: a registered thread id).
    scx_record& record_of(int tid) const noexcept {
        return records_[static_cast<std::size_t>(tid)];
    }

    /// The arguments of one SCX, as the owner builds them and helpers copy them.
    struct scx_args {
        int n_v = 0;
        unsigned finalize_mask = 0;  // bit i: finalize v[i]
        node* v[max_v]{};
        std::uint64_t seen[max_v]{};
        std::atomic<node*>* fld = nullptr;
        node* old = nullptr;
        node* nu = nullptr;

        void add(node* n, std::uint64_t word, bool finalize) noexcept {
            assert(n_v < max_v);
            if (finalize) finalize_mask |= 1u << n_v;
            v[n_v] = n;
            seen[n_v] = word;
            ++n_v;
        }
    };

    enum class llx_result { ok, fail, finalized };

  public:
    using domain_type = Domain;
    /// What every operation takes: the calling thread's attachment.
    using context_type = smr::context<Domain>;
    using key_type = Key;
    using value_type = Value;

    static constexpr std::string_view name = "abtree";
    /// Searches walk through nodes already replaced by an SCX.
    static constexpr bool traverses_unlinked_nodes = true;
    /// Read phase = search from the entry; write phase = LLX/SCX on reserved nodes.
    static constexpr bool has_read_write_phases = true;
    static constexpr bool read_phases_start_at_root = true;
    /// gp, p, l, s of a degree fix.
    static constexpr int protect_slots = 4;
    static constexpr Key min_key = std::numeric_limits<Key>::min() + 1;
    static constexpr Key max_key = std::numeric_limits<Key>::max() - 1;
    static constexpr std::size_t node_size = sizeof(node);
    /// A leaf holds up to b keys (smrbench's memory estimate of a prefill).
    static constexpr std::size_t keys_per_node_at_most = b;

    /// `domain` must outlive the tree.
    explicit abtree(Domain& domain)
        : domain_(domain),
          n_records_(slot_count(domain)),
          records_(std::make_unique<scx_record[]>(n_records_)) {
        assert(n_records_ <= 0xffff);
        // The entry: an internal node with one child (the root) and no keys,
        // never replaced. The first root is an empty leaf owned by the tree.
        entry_.leaf = false;
        entry_.size = 1;
        entry_.ptrs[0].store(&initial_leaf_, std::memory_order_relaxed);
    }

    abtree(const abtree&) = delete;
    abtree& operator=(const abtree&) = delete;

    /// Frees every node still in the tree. No operation may be running.
    ~abtree() {
        std::vector<node*> stack{entry_.ptrs[0].load(std::memory_order_relaxed)};
        while (!stack.empty()) {
            node* n = stack.back();
            stack.pop_back();
            if (!n->leaf) {
                for (int i = 0; i < n->size; ++i) {
                    stack.push_back(n->ptrs[i].load(std::memory_order_relaxed));
                }
            }
            if (n != &initial_leaf_) domain_.free_unshared(n);
        }
    }

    bool contains(smr::context_ref<Domain> self, Key key) {
        detail::check_key(key, min_key, max_key);
        smr::op_guard guard(domain_, self);
        const auto block = smr::lend_slots<2>(guard);  // parent and child
        for (;;) {  // never restarts by itself; NBR may neutralize the read phase
            SMR_READ_PHASE_BEGIN(domain_, self);
            const auto reader = block.reader(domain_);
            const auto slots = smr::first_slots<2>(reader);
            node* l = reader.protect(slots[0], entry_.ptrs[0]);
            for (std::size_t slot = 1; !l->leaf; slot ^= 1) {
                l = reader.protect(slots[slot], l->ptrs[l->child_index(key)]);
            }
            domain_.read_phase_end(self, l);
            const int i = l->key_index(key);
            return i < l->size && l->keys[i] == key;
        }
    }

    bool insert(smr::context_ref<Domain> self, Key key, Value value) {
        detail::check_key(key, min_key, max_key);
        smr::op_guard guard(domain_, self);
        const auto slots = smr::lend_slots<4>(guard);  // a search's three, and a sibling
        // volatile: kept across the read-phase checkpoint (sigsetjmp).
        volatile unsigned failures = 0;
        for (;;) {
            SMR_READ_PHASE_BEGIN(domain_, self);
            const path f = search(slots.lent(), key, nullptr);
            domain_.read_phase_end(self, f.p, f.l);
            node* const p = f.p;
            node* const l = f.l;
            const int i = l->key_index(key);
            if (i < l->size && l->keys[i] == key) return false;

            scx_args args;
            std::uint64_t word = 0;
            if (llx(self, p, word) != llx_result::ok ||
                p->ptrs[f.ix_l].load(std::memory_order_acquire) != l) {
                back_off(failures);
                continue;
            }
            args.add(p, word, false);  // l is a leaf: immutable, not frozen
            args.fld = &p->ptrs[f.ix_l];
            args.old = l;

            if (l->size < b) {
                // One new leaf: l's keys plus `key`.
                node* n = domain_.template allocate<node>(self);
                n->leaf = true;
                n->size = static_cast<std::uint8_t>(l->size + 1);
                n->search_key = l->size > 0 ? l->search_key : key;
                copy_leaf(l, 0, i, n, 0);
                n->keys[i] = key;
                n->ptrs[i].store(encode(value), std::memory_order_relaxed);
                copy_leaf(l, i, l->size, n, i + 1);
                args.nu = n;
                const int n_size = n->size;
                const Key n_search = n->search_key;
                if (!scx(self, args)) {
                    domain_.discard(self, n);
                    back_off(failures);
                    continue;
                }
                retire_replaced(self, l);
                // l may have had a degree violation whose fixer handed it to us.
                if (n_size < a && p != &entry_) {
                    rebalance_owed([&] { fix_degree(slots.lent(), n, n_search); });
                }
                return true;
            }

            // Overflow: b + 1 keys, split over two new leaves under a new
            // internal node, tagged unless it becomes the root (Brown's
            // Overflow combined with Root-Zero).
            Key keys[b + 1];
            node* vals[b + 1];
            for (int j = 0, k = 0; j <= b; ++j) {
                if (j == i) {
                    keys[j] = key;
                    vals[j] = encode(value);
                } else {
                    keys[j] = l->keys[k];
                    vals[j] = l->ptrs[k].load(std::memory_order_relaxed);
                    ++k;
                }
            }
            constexpr int size1 = (b + 1) / 2;
            constexpr int size2 = b + 1 - size1;
            fresh_nodes made(domain_, self);
            node* left = made.add(make_node(self, true, false, keys, vals, size1, keys[0]));
            node* right = made.add(
                make_node(self, true, false, keys + size1, vals + size1, size2, keys[size1]));
            node* children[2] = {left, right};
            node* n = made.add(
                make_node(self, false, p != &entry_, keys + size1, children, 2, keys[size1]));
            args.nu = n;
            const bool n_tagged = n->tagged;
            const Key n_search = n->search_key;
            if (!scx(self, args)) {
                made.discard();
                back_off(failures);
                continue;
            }
            made.published();
            retire_replaced(self, l);
            if (n_tagged) rebalance_owed([&] { fix_tagged(slots.lent(), n, n_search); });
            return true;
        }
    }

    bool erase(smr::context_ref<Domain> self, Key key) {
        detail::check_key(key, min_key, max_key);
        smr::op_guard guard(domain_, self);
        const auto slots = smr::lend_slots<4>(guard);  // a search's three, and a sibling
        // volatile: kept across the read-phase checkpoint (sigsetjmp).
        volatile unsigned failures = 0;
        for (;;) {
            SMR_READ_PHASE_BEGIN(domain_, self);
            const path f = search(slots.lent(), key, nullptr);
            domain_.read_phase_end(self, f.p, f.l);
            node* const p = f.p;
            node* const l = f.l;
            const int i = l->key_index(key);
            if (i == l->size || l->keys[i] != key) return false;

            scx_args args;
            std::uint64_t word = 0;
            if (llx(self, p, word) != llx_result::ok ||
                p->ptrs[f.ix_l].load(std::memory_order_acquire) != l) {
                back_off(failures);
                continue;
            }
            args.add(p, word, false);
            args.fld = &p->ptrs[f.ix_l];
            args.old = l;
            node* n = domain_.template allocate<node>(self);
            n->leaf = true;
            n->size = static_cast<std::uint8_t>(l->size - 1);
            // If `key` was l's only key, n is empty, but a search for it still
            // reaches n (Brown's note).
            n->search_key = l->keys[0];
            copy_leaf(l, 0, i, n, 0);
            copy_leaf(l, i + 1, l->size, n, i);
            args.nu = n;
            const int n_size = n->size;
            const Key n_search = n->search_key;
            if (!scx(self, args)) {
                domain_.discard(self, n);
                back_off(failures);
                continue;
            }
            retire_replaced(self, l);
            if (n_size < a && p != &entry_) {
                rebalance_owed([&] { fix_degree(slots.lent(), n, n_search); });
            }
            return true;
        }
    }

    /// Rebalancing steps abandoned because an allocation failed (see
    /// rebalance_owed); validate() accepts balance violations once there is one.
    std::uint64_t abandoned_fixes() const noexcept {
        return abandoned_fixes_.load(std::memory_order_relaxed);
    }

    /// Quiescent only (no operation on the set runs): how many keys it
    /// holds, counted by a walk of the whole structure, O(n).
    std::size_t size() const { return validate().size; }

    /// Quiescent only. Checks: the entry intact; every reachable node
    /// unmarked, untagged, of degree in [a, b] (the root: a leaf of 0..b keys
    /// or an internal node of 2..b children), keys strictly ascending within
    /// each node and within the range its ancestors route to it, all leaves
    /// at the same depth, leaves ascending left to right, no SCX in progress.
    /// After an abandoned rebalancing step (abandoned_fixes() > 0) the
    /// balance checks relax to what the relaxed tree always keeps: tags and
    /// degree violations may remain, and leaves are at the same depth
    /// counting untagged nodes only (a tag's level does not count, Brown's
    /// weight 0). Sums keys and counts them.
    validation_result validate() const {
        validation_result result;
        const bool relaxed = abandoned_fixes() != 0;
        if (entry_.leaf || entry_.size != 1 || entry_.tagged) result.fail("entry changed");
        for (std::size_t t = 0; t < n_records_; ++t) {
            if (status_of(records_[t].state.load(std::memory_order_relaxed)) == in_progress) {
                result.fail("an SCX is still in progress");
            }
        }
        struct frame {
            const node* n;
            Key lo;
            Key hi;
            bool has_lo;
            bool has_hi;
            int depth;
        };
        const node* root = entry_.ptrs[0].load(std::memory_order_relaxed);
        std::vector<frame> stack{{root, Key{}, Key{}, false, false, 0}};
        std::uint64_t sum = 0;  // wraps, like the benchmark's sums
        int leaf_depth = -1;
        bool have_previous = false;
        Key previous{};
        while (!stack.empty() && result.ok) {
            const frame f = stack.back();
            stack.pop_back();
            const node* n = f.n;
            const std::string where = std::string(n->leaf ? "leaf" : "internal node") +
                                      " at depth " + std::to_string(f.depth);
            if (n->marked.load(std::memory_order_relaxed)) result.fail(where + " is marked");
            if (n->tagged && !relaxed) result.fail(where + " is tagged (a tag violation is left)");
            const bool is_root = n == root;
            const int min_degree =
                n->leaf ? (is_root || relaxed ? 0 : a) : (is_root ? 2 : (relaxed ? 1 : a));
            if (n->size < min_degree) {
                result.fail(where + " has degree " + std::to_string(n->size) +
                            " (a degree violation is left)");
            }
            if (n->size > b) result.fail(where + " has degree over b");
            const int nkeys = n->key_count();
            for (int i = 0; i < nkeys; ++i) {
                const Key k = n->keys[i];
                if (i > 0 && !(n->keys[i - 1] < k)) result.fail(where + ": keys not ascending");
                if ((f.has_lo && k < f.lo) || (f.has_hi && !(k < f.hi))) {
                    result.fail(where + ": key " + std::to_string(k) + " outside its range");
                }
            }
            if (n->leaf) {
                if (leaf_depth < 0) leaf_depth = f.depth;
                if (f.depth != leaf_depth) result.fail("leaves at different depths");
                for (int i = 0; i < nkeys; ++i) {
                    if (have_previous && !(previous < n->keys[i])) {
                        result.fail("leaves not ascending at key " + std::to_string(n->keys[i]));
                    }
                    previous = n->keys[i];
                    have_previous = true;
                    sum += static_cast<std::uint64_t>(n->keys[i]);
                    ++result.size;
                }
                continue;
            }
            // Push right to left so the leftmost subtree is popped first.
            for (int i = n->size - 1; i >= 0; --i) {
                const node* c = n->ptrs[i].load(std::memory_order_relaxed);
                if (c == nullptr) {
                    result.fail(where + " lacks a child");
                    break;
                }
                // Depth in untagged levels: a tag's level does not count.
                frame cf{c, f.lo, f.hi, f.has_lo, f.has_hi, f.depth + (c->tagged ? 0 : 1)};
                if (i > 0) {
                    cf.lo = n->keys[i - 1];
                    cf.has_lo = true;
                }
                if (i < n->size - 1) {
                    cf.hi = n->keys[i];
                    cf.has_hi = true;
                }
                stack.push_back(cf);
            }
        }
        result.key_sum = static_cast<std::int64_t>(sum);
        return result;
    }

  private:
    /// Thread slots of the domain: one SCX record each.
    static std::size_t slot_count(const Domain& domain) noexcept {
        if constexpr (requires { domain.registry().capacity(); }) {
            return domain.registry().capacity();
        } else {
            return domain.config().max_threads;
        }
    }

    /// Consecutive failed attempts of one operation before it yields.
    static constexpr unsigned failures_before_yield = 8;

    /// What a search found: l (a leaf, or `target`), its parent p and
    /// grandparent gp (nullptr when p is the entry), and the child indices.
    struct path {
        node* gp;
        node* p;
        node* l;
        int ix_p;  // index of p in gp
        int ix_l;  // index of l in p
    };
    /// The four slots an update borrows from its guard (a search's three,
    /// then a sibling's; smr::lend_slots), as its rebalancing steps take them.
    using slot_view = typename smr::slot_block<Domain, 4>::view;

    /// The read phase: from the entry down to a leaf, or until `target` is
    /// reached. Writes nothing shared.
    path search(slot_view block, Key key, const node* target) noexcept {
        path f{nullptr, &entry_, nullptr, -1, 0};
        const auto reader = smr::reader_of(domain_, block);
        const auto slots = smr::first_slots<3>(reader);
        f.l = reader.protect(slots[0], entry_.ptrs[0]);
        for (std::size_t slot = 1; !f.l->leaf && f.l != target; slot = slot == 2 ? 0 : slot + 1) {
            f.gp = f.p;
            f.ix_p = f.ix_l;
            f.p = f.l;
            f.ix_l = f.p->child_index(key);
            f.l = reader.protect(slots[slot], f.p->ptrs[f.ix_l]);
        }
        return f;
    }

    static node* encode(Value v) noexcept {
        std::uintptr_t bits = 0;
        std::memcpy(&bits, &v, sizeof(Value));
        return reinterpret_cast<node*>(bits);
    }

    /// Copies keys and values [from, to) of leaf `src` to `dst` at `at`.
    static void copy_leaf(const node* src, int from, int to, node* dst, int at) noexcept {
        for (int j = from; j < to; ++j, ++at) {
            dst->keys[at] = src->keys[j];
            dst->ptrs[at].store(src->ptrs[j].load(std::memory_order_relaxed),
                                std::memory_order_relaxed);
        }
    }

    /// A new node with `size` children/values and the matching keys (size
    /// keys for a leaf, size - 1 for an internal node).
    node* make_node(smr::context_ref<Domain> self, bool leaf, bool tagged, const Key* keys,
                    node* const* ptrs, int size, Key search_key) {
        node* n = domain_.template allocate<node>(self);
        n->leaf = leaf;
        n->tagged = tagged;
        n->size = static_cast<std::uint8_t>(size);
        n->search_key = search_key;
        const int nkeys = leaf ? size : size - 1;
        for (int j = 0; j < nkeys; ++j) n->keys[j] = keys[j];
        for (int j = 0; j < size; ++j) n->ptrs[j].store(ptrs[j], std::memory_order_relaxed);
        return n;
    }

    void retire_replaced(smr::context_ref<Domain> self, node* n) noexcept {
        if (n != &initial_leaf_) domain_.retire(self, n);
    }

    /// Reads child pointer i of an LLX'd node. Acquire: the children's
    /// initialization must happen before whatever node we copy them into is
    /// published (see "Memory orders").
    static node* child(const node* n, int i) noexcept {
        return n->ptrs[i].load(std::memory_order_acquire);
    }

    // ---- LLX / SCX ----------------------------------------------------------------

    /// Brown's LLX, with the snapshot left to the caller (it reads the child
    /// pointers afterwards; the SCX's freeze CAS fails if they changed).
    llx_result llx(smr::context_ref<Domain> self, node* r, std::uint64_t& seen) noexcept {
        (void)self;
        // acquire (all three): pair with the mark store and the freeze CAS of
        // the SCX that last touched r, and with its record's state changes.
        const bool marked1 = r->marked.load(std::memory_order_acquire);
        const std::uint64_t w = r->info.load(std::memory_order_acquire);
        bool done = true;  // the SCX in w has finished (or w == 0)
        status st = aborted;
        if (w != 0) {
            const std::uint64_t s = record_of(tid_of_word(w)).state.load(std::memory_order_acquire);
            if (seq_of_state(s) == seq_of_word(w)) {
                st = status_of(s);
                done = st != in_progress;
            }
        }
        const bool marked2 = r->marked.load(std::memory_order_acquire);
        if (done && !marked2) {
            // acquire: re-check that no SCX froze r meanwhile.
            if (r->info.load(std::memory_order_acquire) == w) {
                seen = w;
                return llx_result::ok;
            }
            return llx_result::fail;
        }
        if (!done) help_other(w);
        // A marked node was marked by a committing SCX: finalized for good.
        return (marked1 || marked2) ? llx_result::finalized : llx_result::fail;
    }

    /// Runs an SCX owned by this thread. True if it committed.
    bool scx(smr::context_ref<Domain> self, const scx_args& args) noexcept {
        const int tid = smr::tid_of(self);
        assert(tid >= 0 && static_cast<std::size_t>(tid) < n_records_);
        scx_record& rec = record_of(tid);
        const std::uint64_t seq = seq_of_state(rec.state.load(std::memory_order_relaxed)) + 1;
        // Seqlock writer: the new seq first, then the fields with release
        // stores, so a helper whose acquire load reads any new field also
        // sees the new seq when it re-checks (and drops its mixed copy).
        // (Release stores rather than a release fence: same cost on x86,
        // and ThreadSanitizer does not support fences.)
        rec.state.store(make_state(seq, false, in_progress), std::memory_order_relaxed);
        constexpr auto rel = std::memory_order_release;
        rec.n_v.store(args.n_v, rel);
        rec.finalize_mask.store(args.finalize_mask, rel);
        for (int i = 0; i < args.n_v; ++i) {
            rec.v[i].store(args.v[i], rel);
            rec.seen[i].store(args.seen[i], rel);
        }
        rec.fld.store(args.fld, rel);
        rec.old.store(args.old, rel);
        rec.nu.store(args.nu, rel);
        help(args, make_word(seq, tid), rec, seq);
        // Only this thread advances this record's seq, so the state is ours.
        return status_of(rec.state.load(std::memory_order_acquire)) == committed;
    }

    /// Helps the SCX named by word `w` if it is still in progress. Never
    /// with a neutralization reclaimer (see "Reclamation").
    void help_other(std::uint64_t w) noexcept {
        if constexpr (Domain::traits.uses_signals) {
            (void)w;
            return;
        } else {
            scx_record& rec = record_of(tid_of_word(w));
            const std::uint64_t seq = seq_of_word(w);
            // acquire: pairs with the owner's field writes through the freeze
            // CAS that put w in a node (read with acquire by the caller).
            const std::uint64_t s = rec.state.load(std::memory_order_acquire);
            if (seq_of_state(s) != seq || status_of(s) != in_progress) return;
            // Seqlock reader: acquire loads (each pairs with the owner's
            // release store of that field), then the seq must be unchanged
            // for the copy to be whole.
            constexpr auto acq = std::memory_order_acquire;
            scx_args args;
            args.n_v = std::min(rec.n_v.load(acq), max_v);
            args.finalize_mask = rec.finalize_mask.load(acq);
            for (int i = 0; i < args.n_v; ++i) {
                args.v[i] = rec.v[i].load(acq);
                args.seen[i] = rec.seen[i].load(acq);
            }
            args.fld = rec.fld.load(acq);
            args.old = rec.old.load(acq);
            args.nu = rec.nu.load(acq);
            if (seq_of_state(rec.state.load(std::memory_order_relaxed)) != seq) return;
            help(args, w, rec, seq);
        }
    }

    /// Brown's help(U): freeze V, mark R, swing fld, commit.
    void help(const scx_args& args, std::uint64_t word, scx_record& rec,
              std::uint64_t seq) noexcept {
        for (int i = 0; i < args.n_v; ++i) {
            std::uint64_t expected = args.seen[i];
            // acq_rel: release publishes this SCX's record (and, for helpers,
            // the copy's provenance) to whoever reads the word; acquire
            // orders it after the previous SCX on this node.
            if (!args.v[i]->info.compare_exchange_strong(expected, word, std::memory_order_acq_rel,
                                                         std::memory_order_acquire) &&
                expected != word) {
                // Someone else froze v[i]: unless every node was already frozen
                // (and the SCX moved on), this SCX can never finish: abort.
                std::uint64_t s = rec.state.load(std::memory_order_acquire);
                if (seq_of_state(s) != seq || frozen_of(s)) return;
                // acq_rel: the abort pairs with the owner's acquire load in scx().
                rec.state.compare_exchange_strong(s, make_state(seq, false, aborted),
                                                  std::memory_order_acq_rel,
                                                  std::memory_order_relaxed);
                return;
            }
        }
        // All frozen: from here the SCX commits.
        std::uint64_t s = rec.state.load(std::memory_order_acquire);
        while (seq_of_state(s) == seq && status_of(s) == in_progress && !frozen_of(s)) {
            // acq_rel: orders the freezes before the marks and the fld CAS.
            if (rec.state.compare_exchange_weak(s, make_state(seq, true, in_progress),
                                                std::memory_order_acq_rel,
                                                std::memory_order_acquire)) {
                break;
            }
        }
        if (seq_of_state(s) != seq || status_of(s) == aborted) return;
        for (int i = 0; i < args.n_v; ++i) {
            // release: pairs with LLX's acquire loads of `marked`.
            if ((args.finalize_mask >> i) & 1u)
                args.v[i]->marked.store(true, std::memory_order_release);
        }
        node* expected = args.old;
        // acq_rel: release publishes the new nodes' fields (pairs with the
        // searches' acquire loads); acquire on failure orders a helper's
        // successful CAS before our commit.
        args.fld->compare_exchange_strong(expected, args.nu, std::memory_order_acq_rel,
                                          std::memory_order_acquire);
        s = make_state(seq, true, in_progress);
        // acq_rel: the commit pairs with LLX's acquire load of the state (a
        // node whose SCX committed shows the new pointer).
        rec.state.compare_exchange_strong(s, make_state(seq, true, committed),
                                          std::memory_order_acq_rel, std::memory_order_relaxed);
    }

    // ---- rebalancing ---------------------------------------------------------------

    /// Removes the tag at `viol` (an internal node whose search key is `k`),
    /// if viol is still in the tree and still tagged.
    void fix_tagged(slot_view slots, node* viol, Key k) {
        const auto self = smr::context_of(slots);
        // volatile: kept across the read-phase checkpoint (sigsetjmp).
        volatile unsigned failures = 0;
        for (;;) {
            SMR_READ_PHASE_BEGIN(domain_, self);
            const path f = search(slots, k, viol);
            if (f.l != viol || f.gp == nullptr) {
                // Replaced: whoever replaced it took over the violation. (The
                // root is never tagged, so gp == nullptr means replaced too.)
                domain_.read_phase_end(self);
                return;
            }
            node* const gp = f.gp;
            node* const p = f.p;
            node* const l = f.l;
            if (!l->tagged) {  // an address reused by a new node (NBR only)
                domain_.read_phase_end(self);
                return;
            }
            if (p->tagged) {
                // Fix the parent first.
                const Key pk = p->search_key;
                domain_.read_phase_end(self);
                fix_tagged(slots, p, pk);
                continue;
            }
            domain_.read_phase_end(self, gp, p, l);

            scx_args args;
            std::uint64_t word = 0;
            if (llx(self, gp, word) != llx_result::ok || child(gp, f.ix_p) != p) {
                back_off(failures);
                continue;
            }
            args.add(gp, word, false);
            if (llx(self, p, word) != llx_result::ok || child(p, f.ix_l) != l) {
                back_off(failures);
                continue;
            }
            args.add(p, word, true);
            if (llx(self, l, word) != llx_result::ok) {
                back_off(failures);
                continue;
            }
            args.add(l, word, true);
            args.fld = &gp->ptrs[f.ix_p];
            args.old = p;

            // p's children with l replaced by l's children, and the keys.
            const int ix = f.ix_l;
            const int size = p->size + l->size - 1;
            Key keys[2 * b];
            node* ptrs[2 * b];
            merge_into_parent(p, l, ix, keys, ptrs);

            if (size <= b) {
                // Absorb: one node replaces p and l.
                node* n = make_node(self, false, false, keys, ptrs, size, keys[0]);
                args.nu = n;
                const Key n_search = n->search_key;
                if (!scx(self, args)) {
                    domain_.discard(self, n);
                    back_off(failures);
                    continue;
                }
                domain_.retire(self, p);
                domain_.retire(self, l);
                if (size < a && gp != &entry_) fix_degree(slots, n, n_search);
                return;
            }
            // Split: two halves under a new node, tagged unless it is the root.
            const int size1 = size / 2;
            const int size2 = size - size1;
            fresh_nodes made(domain_, self);
            node* left = made.add(make_node(self, false, false, keys, ptrs, size1, keys[0]));
            node* right = made.add(
                make_node(self, false, false, keys + size1, ptrs + size1, size2, keys[size1]));
            node* children[2] = {left, right};
            node* n = made.add(make_node(self, false, gp != &entry_, keys + size1 - 1, children, 2,
                                         keys[size1 - 1]));
            args.nu = n;
            const bool n_tagged = n->tagged;
            const Key n_search = n->search_key;
            if (!scx(self, args)) {
                made.discard();
                back_off(failures);
                continue;
            }
            made.published();
            domain_.retire(self, p);
            domain_.retire(self, l);
            // n (degree 2) replaces p: a tag moved up, and p's own degree
            // violation, if any, is gone (n is either the root or tagged, and
            // the tag's fix merges it into its parent).
            if (n_tagged) fix_tagged(slots, n, n_search);
            return;
        }
    }

    /// Keys and children of p with child ix replaced by the contents of the
    /// internal node l (Brown's "Absorb"/"Split" arrays).
    static void merge_into_parent(const node* p, const node* l, int ix, Key* keys,
                                  node** ptrs) noexcept {
        int k = 0;
        int c = 0;
        for (int j = 0; j < ix; ++j) ptrs[c++] = child(p, j);
        for (int j = 0; j < l->size; ++j) ptrs[c++] = child(l, j);
        for (int j = ix + 1; j < p->size; ++j) ptrs[c++] = child(p, j);
        for (int j = 0; j < ix; ++j) keys[k++] = p->keys[j];
        for (int j = 0; j < l->size - 1; ++j) keys[k++] = l->keys[j];
        for (int j = ix; j < p->size - 1; ++j) keys[k++] = p->keys[j];
    }

    /// Fixes a degree violation at `viol` (search key `k`), if it is still in
    /// the tree, not the root, and still under-full.
    void fix_degree(slot_view slots, node* viol, Key k) {
        const auto self = smr::context_of(slots);
        // volatile: kept across the read-phase checkpoint (sigsetjmp).
        volatile unsigned failures = 0;
        for (;;) {
            SMR_READ_PHASE_BEGIN(domain_, self);
            const path f = search(slots, k, viol);
            if (f.l != viol || f.gp == nullptr || f.l->size >= a) {
                // Replaced (the replacer took over), the root, or no
                // violation (an address reused by a new node, NBR only).
                domain_.read_phase_end(self);
                return;
            }
            node* const gp = f.gp;
            node* const p = f.p;
            node* const l = f.l;
            const int ix_l = f.ix_l;
            const int ix_s = ix_l > 0 ? ix_l - 1 : 1;
            if (p->size < 2) {
                // l has no sibling: p has a degree violation of its own (an
                // AbsorbSibling left it one child). Fix p first (it is not the
                // root: the root keeps >= 2 children), then look again.
                const Key pk = p->search_key;
                domain_.read_phase_end(self);
                fix_degree(slots, p, pk);
                continue;
            }
            const auto reader = smr::reader_of(domain_, slots);
            node* const s = reader.protect(reader.slot(3), p->ptrs[ix_s]);  // after the search's
            if (p->tagged || l->tagged || s->tagged) {
                // Brown: fix the tags first, then look again.
                const bool tp = p->tagged, tl = l->tagged, ts = s->tagged;
                const Key kp = p->search_key, kl = l->search_key, ks = s->search_key;
                domain_.read_phase_end(self);
                if (tp) fix_tagged(slots, p, kp);
                if (tl) fix_tagged(slots, l, kl);
                if (ts) fix_tagged(slots, s, ks);
                continue;
            }
            domain_.read_phase_end(self, gp, p, l, s);

            scx_args args;
            std::uint64_t word = 0;
            if (llx(self, gp, word) != llx_result::ok || child(gp, f.ix_p) != p) {
                back_off(failures);
                continue;
            }
            args.add(gp, word, false);
            if (llx(self, p, word) != llx_result::ok || child(p, ix_l) != l ||
                child(p, ix_s) != s) {
                back_off(failures);
                continue;
            }
            args.add(p, word, true);
            // No tags below p: l and s are both leaves or both internal.
            node* const left = ix_l < ix_s ? l : s;
            node* const right = ix_l < ix_s ? s : l;
            const int left_ix = std::min(ix_l, ix_s);
            const int right_ix = std::max(ix_l, ix_s);
            const bool leaves = left->leaf;
            if (left->leaf != right->leaf) {  // cannot happen without tags
                back_off(failures);
                continue;
            }
            if (!leaves) {
                if (llx(self, left, word) != llx_result::ok) {
                    back_off(failures);
                    continue;
                }
                args.add(left, word, true);
                if (llx(self, right, word) != llx_result::ok) {
                    back_off(failures);
                    continue;
                }
                args.add(right, word, true);
            }
            args.fld = &gp->ptrs[f.ix_p];
            args.old = p;

            // left's and right's contents, with p's separating key between
            // them when they are internal.
            const int sz = left->size + right->size;
            Key keys[2 * b];
            node* ptrs[2 * b];
            int nk = 0;
            int np = 0;
            for (int j = 0; j < left->key_count(); ++j) keys[nk++] = left->keys[j];
            for (int j = 0; j < left->size; ++j) ptrs[np++] = child(left, j);
            if (!leaves) keys[nk++] = p->keys[left_ix];
            for (int j = 0; j < right->key_count(); ++j) keys[nk++] = right->keys[j];
            for (int j = 0; j < right->size; ++j) ptrs[np++] = child(right, j);

            if (sz < 2 * a) {
                // AbsorbSibling: l and s merge into one node.
                fresh_nodes made(domain_, self);
                node* newl =
                    made.add(make_node(self, leaves, false, keys, ptrs, sz, l->search_key));
                const Key newl_search = newl->search_key;
                if (gp == &entry_ && p->size == 2) {
                    // RootAbsorb: the merged node becomes the root.
                    args.nu = newl;
                    if (!scx(self, args)) {
                        made.discard();
                        back_off(failures);
                        continue;
                    }
                    made.published();
                    retire_rebalanced(self, p, l, s);
                    return;  // the root has no degree violation
                }
                // p without s's pointer and the key between l and s.
                Key pkeys[b];
                node* pptrs[b];
                int pk = 0;
                int pp = 0;
                for (int j = 0; j < p->size - 1; ++j) {
                    if (j != left_ix) pkeys[pk++] = p->keys[j];
                }
                for (int j = 0; j < p->size; ++j) {
                    if (j == right_ix) continue;
                    pptrs[pp++] = j == left_ix ? newl : child(p, j);
                }
                node* n = made.add(
                    make_node(self, false, false, pkeys, pptrs, p->size - 1, p->search_key));
                args.nu = n;
                const int n_size = n->size;
                const Key n_search = n->search_key;
                if (!scx(self, args)) {
                    made.discard();
                    back_off(failures);
                    continue;
                }
                made.published();
                retire_rebalanced(self, p, l, s);
                if (sz < a) fix_degree(slots, newl, newl_search);
                if (n_size < a && gp != &entry_) fix_degree(slots, n, n_search);
                return;
            }
            // Distribute: l and s share their contents evenly; p gets a new
            // separating key.
            const int left_size = sz / 2;
            const int right_size = sz - left_size;
            const int left_keys = leaves ? left_size : left_size - 1;
            const Key separator = keys[left_keys];
            const int right_key_start = leaves ? left_keys : left_keys + 1;
            fresh_nodes made(domain_, self);
            node* new_left =
                made.add(make_node(self, leaves, false, keys, ptrs, left_size, keys[0]));
            node* new_right =
                made.add(make_node(self, leaves, false, keys + right_key_start, ptrs + left_size,
                                   right_size, keys[right_key_start]));
            Key pkeys[b];
            node* pptrs[b];
            for (int j = 0; j < p->size - 1; ++j) pkeys[j] = p->keys[j];
            for (int j = 0; j < p->size; ++j) pptrs[j] = child(p, j);
            pkeys[left_ix] = separator;
            pptrs[left_ix] = new_left;
            pptrs[right_ix] = new_right;
            node* n = made.add(make_node(self, false, false, pkeys, pptrs, p->size, p->search_key));
            args.nu = n;
            const int n_size = n->size;
            const Key n_search = n->search_key;
            if (!scx(self, args)) {
                made.discard();
                back_off(failures);
                continue;
            }
            made.published();
            retire_rebalanced(self, p, l, s);
            if (n_size < a && gp != &entry_) fix_degree(slots, n, n_search);
            return;
        }
    }

    /// The nodes one step has made and not yet published (at most three). A
    /// step that cannot make them all (an allocation threw: a pool ran out)
    /// leaves with none, discarded by the destructor; after a failed SCX the
    /// step discards them and retries; after a successful one they are the
    /// tree's.
    class fresh_nodes {
      public:
        fresh_nodes(Domain& domain, smr::context_ref<Domain> self) noexcept
            : domain_(domain), self_(self) {}
        ~fresh_nodes() { discard(); }
        fresh_nodes(const fresh_nodes&) = delete;
        fresh_nodes& operator=(const fresh_nodes&) = delete;

        node* add(node* n) noexcept {
            nodes_[count_++] = n;
            return n;
        }
        void discard() noexcept {
            while (count_ != 0) domain_.discard(self_, nodes_[--count_]);
        }
        void published() noexcept { count_ = 0; }

      private:
        Domain& domain_;
        smr::context_ref<Domain> self_;
        node* nodes_[3] = {};
        int count_ = 0;
    };

    /// Runs the rebalancing an update owes after it took effect. A step that
    /// cannot allocate leaves its violation in place: the tree is still a
    /// correct set, only less balanced, and the update must not report the
    /// failure (it has happened). Counted, so validate() knows.
    template <class Fix>
    void rebalance_owed(Fix&& fix) noexcept {
        try {
            fix();
        } catch (const std::bad_alloc&) {
            abandoned_fixes_.fetch_add(1, std::memory_order_relaxed);
        }
    }

    void retire_rebalanced(smr::context_ref<Domain> self, node* p, node* l, node* s) noexcept {
        domain_.retire(self, p);
        domain_.retire(self, l);
        domain_.retire(self, s);
    }

    /// After a failed attempt: retry at once, but yield now and then (the
    /// thread that holds up the attempt may be descheduled).
    static void back_off(volatile unsigned& failures) noexcept {
        failures = failures + 1;
        if (failures == failures_before_yield) {
            failures = 0;
            std::this_thread::yield();
        }
    }

    Domain& domain_;
    const std::size_t n_records_;
    std::unique_ptr<scx_record[]> records_;
    std::atomic<std::uint64_t> abandoned_fixes_{0};
    /// Never replaced: the search starts here. Its single child is the root.
    alignas(core::false_sharing_range) node entry_;
    /// The first root: an empty leaf, replaced by the first insert and never
    /// retired (it belongs to the tree).
    alignas(core::false_sharing_range) node initial_leaf_;
};

}  // namespace smr::ds
