// Negative tests of every data structure's validate(). Each test builds a
// small valid instance on one thread (keys 1..20, DEBRA), corrupts one
// invariant through the structure's internals, expects validate() to fail
// (ok == false, not only a key sum or size that differs) naming the
// violation, then undoes the corruption exactly and expects validate() to
// hold again, so that the structure is destroyed normally (the test runs
// under AddressSanitizer and LeakSanitizer).
//
// Why: every stress test ends with validate(). One that always said yes would
// let all of them pass, so each check validate() makes must be seen to fire.
// (Issue: negative validation.)
//
// The internals are reached through smr::ds::testing::access, which every
// structure befriends (validation.hpp declares it) and only this file
// defines. Keys that a structure declares const (the lists', ms_queue's and
// occ_avl's nodes) are never written, which would be undefined behaviour: an
// order violation is made by relinking nodes instead. Nothing corrupted is
// ever freed, and no cycle is left for a destructor to follow.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <source_location>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "smr/ds/abtree.hpp"
#include "smr/ds/bucket_table.hpp"
#include "smr/ds/cr_hash_set.hpp"
#include "smr/ds/cr_list.hpp"
#include "smr/ds/dgt_bst.hpp"
#include "smr/ds/harris_list.hpp"
#include "smr/ds/hash_set.hpp"
#include "smr/ds/hm_list.hpp"
#include "smr/ds/lazylist.hpp"
#include "smr/ds/lock_list.hpp"
#include "smr/ds/marked_ptr.hpp"
#include "smr/ds/ms_queue.hpp"
#include "smr/ds/occ_avl.hpp"
#include "smr/ds/options.hpp"
#include "smr/ds/stm_hash_set.hpp"
#include "smr/ds/stm_list.hpp"
#include "smr/ds/stm_rbtree.hpp"
#include "smr/ds/stm_structure.hpp"
#include "smr/ds/validation.hpp"
#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/stm/orec_table.hpp"

namespace smr::ds::testing {

/// The private members validate() reads, for the tests below to corrupt.
struct access {
    /// The lists' sentinels (nodes; pointers to nodes for stm_list) and
    /// ms_queue's head and tail roots.
    template <class S>
    static auto& head(S& s) {
        return s.head_;
    }
    template <class S>
    static auto& tail(S& s) {
        return s.tail_;
    }

    /// cr_list's writer lock, lock_list's lock.
    template <class S>
    static auto& lock(S& s) {
        return s.lock_;
    }

    /// The buckets of hash_set and cr_hash_set (bucket_table's array, of
    /// bucket_count() lists).
    template <class Bucket>
    static Bucket* buckets(bucket_table<Bucket>& table) {
        return table.buckets_;
    }

    /// stm_hash_set's chains: bucket_count() pointers to first nodes.
    template <class Domain>
    static auto chains(stm_hash_set<Domain>& set) {
        return set.buckets_;
    }

    /// ms_queue's first dummy node (in the queue object).
    template <class S>
    static auto& dummy(S& s) {
        return s.dummy_;
    }

    /// dgt_bst's root sentinel (a node), stm_rbtree's root (a pointer).
    template <class S>
    static auto& root(S& s) {
        return s.root_;
    }

    /// abtree's entry node, whose one child is the root.
    template <class S>
    static auto& entry(S& s) {
        return s.entry_;
    }

    /// The state word of thread tid's SCX record (abtree).
    template <class S>
    static auto& scx_state(S& s, int tid) {
        return s.records_[static_cast<std::size_t>(tid)].state;
    }

    /// occ_avl's root holder, whose right child is the root.
    template <class S>
    static auto& holder(S& s) {
        return s.holder_;
    }

    /// stm_rbtree's colours.
    template <class S>
    static constexpr std::int64_t red() {
        return S::red;
    }
    template <class S>
    static constexpr std::int64_t black() {
        return S::black;
    }

    /// Entry `index` of a transactional structure's versioned-lock table.
    /// The table is the structure's own (not const); its STM offers only a
    /// read-only view of it.
    template <class Domain>
    static std::atomic_ref<std::uint64_t> versioned_lock(detail::stm_structure<Domain>& s,
                                                         std::size_t index) {
        return const_cast<::smr::stm::orec_table&>(s.stm_.orecs()).lock(index);
    }
};

}  // namespace smr::ds::testing

namespace {

using domain_t = smr::debra_domain;
using internals = smr::ds::testing::access;
using smr::ds::validation_result;

constexpr auto relaxed = std::memory_order_relaxed;

/// Every structure holds keys 1..kKeys before it is corrupted.
constexpr std::int64_t kKeys = 20;

/// validate() held.
::testing::AssertionResult holds(const validation_result& v) {
    if (v.ok) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "validate() failed: " << v.error;
}

/// validate() failed (ok, not only the key sum or size), and its error
/// contains `words`.
::testing::AssertionResult fails_with(const validation_result& v, std::string_view words) {
    if (v.ok) return ::testing::AssertionFailure() << "validate() accepted the corruption";
    if (v.error.find(words) == std::string::npos) {
        return ::testing::AssertionFailure()
               << "validate() failed with \"" << v.error << "\", not \"" << words << "\"";
    }
    return ::testing::AssertionSuccess();
}

/// A structure S on its own DEBRA domain, with this thread registered.
/// Members are built in declaration order and destroyed in reverse: the
/// domain exists before the structure and the handle and outlives both, and
/// the handle gives its slot back before the structure is destroyed.
template <class S>
struct filled {
    domain_t domain{smr::domain_config{}};
    S s;
    smr::context<domain_t> handle{domain};

    /// `options` (none, or the structure's ds_options) go to S's constructor
    /// after the domain.
    template <class... Options>
    explicit filled(Options&&... options) : s(domain, std::forward<Options>(options)...) {}

    int tid() const { return handle.tid(); }

    /// Inserts keys 1..kKeys (enqueues them, for ms_queue); validate() must
    /// hold. Not done by the constructor, where ASSERT_* cannot be used: each
    /// test calls ASSERT_NO_FATAL_FAILURE(f.fill()).
    void fill() {
        for (std::int64_t k = 1; k <= kKeys; ++k) {
            ASSERT_TRUE(s.insert(handle, k, k)) << k;
        }
        ASSERT_TRUE(holds(s.validate()));
    }
};

/// hash_set, cr_hash_set and stm_hash_set are built with 4 buckets, so that
/// the 20 keys share buckets.
constexpr smr::ds::ds_options kFourBuckets{.buckets = 4};

/// corrupt() breaks one invariant: validate() must fail naming it (`words`).
/// restore() undoes the corruption exactly: validate() must hold again, so
/// that the structure is destroyed normally. A failure is also reported at
/// the caller's line.
template <class Validate, class Corrupt, class Restore>
void expect_caught_by(Validate validate, std::string_view words, Corrupt corrupt, Restore restore,
                      std::source_location where = std::source_location::current()) {
    const ::testing::ScopedTrace trace(where.file_name(), static_cast<int>(where.line()),
                                       "corruption made here");
    corrupt();
    EXPECT_TRUE(fails_with(validate(), words));
    restore();
    EXPECT_TRUE(holds(validate()));
}

/// The same with the structure's validate().
template <class S, class Corrupt, class Restore>
void expect_caught(const S& s, std::string_view words, Corrupt corrupt, Restore restore,
                   std::source_location where = std::source_location::current()) {
    expect_caught_by([&s] { return s.validate(); }, words, std::move(corrupt), std::move(restore),
                     where);
}

// ---- sorted lists -------------------------------------------------------------------

/// A sentinel as a pointer, whether the list keeps the node itself or a
/// pointer to it (stm_list).
template <class T>
auto* node_ptr(T& sentinel) {
    if constexpr (std::is_pointer_v<T>) {
        return sentinel;
    } else {
        return &sentinel;
    }
}

/// A node's successor, mark bit stripped, whether the link is atomic or a
/// plain pointer (lock_list, the STM nodes).
template <class Node>
Node* next_of(Node* n) {
    if constexpr (std::is_pointer_v<decltype(Node::next)>) {
        return n->next;
    } else {
        return smr::ds::detail::without_mark(n->next.load(relaxed));
    }
}

template <class Node>
void set_next(Node* n, std::type_identity_t<Node*> successor) {
    if constexpr (std::is_pointer_v<decltype(Node::next)>) {
        n->next = successor;
    } else {
        n->next.store(successor, relaxed);
    }
}

/// The node before the one holding `key` in the list from `head`, or null.
template <class Node>
Node* pred_of(Node* head, std::int64_t key) {
    for (Node* pred = head; next_of(pred) != nullptr; pred = next_of(pred)) {
        if (next_of(pred)->key == key) return pred;
    }
    return nullptr;
}

/// pred -> a -> b -> c becomes pred -> b -> a -> c: a and b trade places.
/// Applied again, it undoes itself.
template <class Node>
void swap_after(Node* pred) {
    Node* const a = next_of(pred);
    Node* const b = next_of(a);
    Node* const c = next_of(b);
    set_next(pred, b);
    set_next(b, a);
    set_next(a, c);
}

/// Order: nodes 1 and 2 trade places (head -> 2 -> 1 -> 3).
template <class List>
void expect_swapped_neighbours_detected() {
    filled<List> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const head = node_ptr(internals::head(f.s));
    expect_caught(
        f.s, "keys not strictly ascending: 2 then 1", [&] { swap_after(head); },
        [&] { swap_after(head); });
}

/// The lock-free lists' logical delete left reachable: node 5's own next
/// marked, as an erase that never unlinked it would leave it.
template <class List>
void expect_marked_node_detected(std::string_view defect) {
    filled<List> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const pred = pred_of(node_ptr(internals::head(f.s)), 5);
    ASSERT_NE(pred, nullptr);
    auto* const victim = next_of(pred);
    auto* const successor = next_of(victim);
    expect_caught(
        f.s, std::string(defect) + ", key 5",
        [&] { victim->next.store(smr::ds::detail::with_mark(successor), relaxed); },
        [&] { victim->next.store(successor, relaxed); });
}

/// The tail sentinel unlinked: the last node's next is null.
template <class List>
void expect_tail_unlinked_detected() {
    filled<List> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const tail = node_ptr(internals::tail(f.s));
    auto* const pred = pred_of(node_ptr(internals::head(f.s)), kKeys);
    ASSERT_NE(pred, nullptr);
    auto* const last = next_of(pred);
    ASSERT_EQ(next_of(last), tail);
    expect_caught(
        f.s, "list ends before the tail sentinel", [&] { set_next(last, nullptr); },
        [&] { set_next(last, tail); });
}

/// The tail sentinel points somewhere (to node 1): it must end the list.
template <class List>
void expect_tail_successor_detected() {
    filled<List> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const head = node_ptr(internals::head(f.s));
    auto* const tail = node_ptr(internals::tail(f.s));
    expect_caught(
        f.s, "tail sentinel has a successor", [&] { set_next(tail, next_of(head)); },
        [&] { set_next(tail, nullptr); });
}

using hm_list_t = smr::ds::hm_list<domain_t>;
using harris_list_t = smr::ds::harris_list<domain_t>;
using cr_list_t = smr::ds::cr_list<domain_t>;
using lazylist_t = smr::ds::lazylist<domain_t>;
using lock_list_t = smr::ds::lock_list<domain_t>;

// ---- hash sets ------------------------------------------------------------------------

/// The head sentinel of bucket i of a hash_set or cr_hash_set.
template <class Set>
auto* bucket_head(Set& set, std::size_t i) {
    return node_ptr(internals::head(internals::buckets(set)[i]));
}

template <class Set>
auto* bucket_tail(Set& set, std::size_t i) {
    return node_ptr(internals::tail(internals::buckets(set)[i]));
}

/// Key 1's node moves from its bucket to the next one, at its sorted place
/// there (first: 1 is the smallest key), so both buckets' lists stay valid
/// and only the hashing is violated.
template <class Set>
void expect_key_in_wrong_bucket_detected() {
    filled<Set> f(kFourBuckets);
    ASSERT_NO_FATAL_FAILURE(f.fill());
    const std::size_t home = f.s.bucket_of(1);
    const std::size_t away = (home + 1) % f.s.bucket_count();
    auto* const from = pred_of(bucket_head(f.s, home), 1);
    ASSERT_NE(from, nullptr);
    auto* const moved = next_of(from);
    auto* const after = next_of(moved);
    auto* const into = bucket_head(f.s, away);
    expect_caught(
        f.s,
        "key 1 in bucket " + std::to_string(away) + ", hashes to bucket " + std::to_string(home),
        [&] {
            set_next(from, after);
            set_next(moved, next_of(into));
            set_next(into, moved);
        },
        [&] {
            set_next(into, next_of(moved));
            set_next(moved, after);
            set_next(from, moved);
        });
}

using hash_set_t = smr::ds::hash_set<domain_t>;
using cr_hash_set_t = smr::ds::cr_hash_set<domain_t>;

// ---- trees ------------------------------------------------------------------------------

/// abtree's root (entry's one child). With 20 keys it is an internal node:
/// the 17th insert split the first leaf (b = 16).
template <class Tree>
auto* abtree_root(Tree& tree) {
    return internals::entry(tree).ptrs[0].load(relaxed);
}

/// occ_avl's root (the root holder's right child).
template <class Tree>
auto* avl_root(Tree& tree) {
    return internals::holder(tree).child[1].load(relaxed);
}

/// The first node without children below n (occ_avl).
template <class Node>
Node* avl_leaf_below(Node* n) {
    for (;;) {
        Node* c = n->child[0].load(relaxed);
        if (c == nullptr) c = n->child[1].load(relaxed);
        if (c == nullptr) return n;
        n = c;
    }
}

/// dgt_bst: the leaf a search for `key` ends at, and its parent.
template <class Node>
std::pair<Node*, Node*> dgt_leaf_and_parent(Node* root, std::int64_t key) {
    Node* parent = nullptr;
    Node* n = root;
    while (!n->leaf) {
        parent = n;
        n = n->child[key < n->key ? 0 : 1].load(relaxed);
    }
    return {n, parent};
}

/// stm_rbtree: a red node other than the root, or null.
template <class Node>
Node* red_below_root(Node* root, std::int64_t red) {
    std::vector<Node*> pending{root};
    while (!pending.empty()) {
        Node* n = pending.back();
        pending.pop_back();
        if (n != root && n->colour == red) return n;
        if (n->left != nullptr) pending.push_back(n->left);
        if (n->right != nullptr) pending.push_back(n->right);
    }
    return nullptr;
}

using abtree_t = smr::ds::abtree<domain_t>;
using occ_avl_t = smr::ds::occ_avl<domain_t>;
using dgt_bst_t = smr::ds::dgt_bst<domain_t>;

// ---- transactional structures ---------------------------------------------------------

/// Entry 0 of the STM's lock table left locked, as by a transaction that
/// ended without releasing it.
template <class S>
void expect_held_versioned_lock_detected() {
    filled<S> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    const auto lock = internals::versioned_lock(f.s, 0);
    const std::uint64_t before = lock.load(relaxed);
    ASSERT_FALSE(smr::stm::orec_table::is_locked(before));
    expect_caught(
        f.s, "1 versioned locks still held",
        [&] {
            lock.store(smr::stm::orec_table::locked_word(static_cast<std::uint32_t>(f.tid()), 0),
                       relaxed);
        },
        [&] { lock.store(before, relaxed); });
}

using stm_list_t = smr::ds::stm_list<domain_t>;
using stm_hash_set_t = smr::ds::stm_hash_set<domain_t>;
using stm_rbtree_t = smr::ds::stm_rbtree<domain_t>;

}  // namespace

// ---- hm_list ----------------------------------------------------------------------------

TEST(NegativeValidation, HmListSwappedNeighbours) {
    expect_swapped_neighbours_detected<hm_list_t>();
}

TEST(NegativeValidation, HmListMarkedNodeReachable) {
    expect_marked_node_detected<hm_list_t>("reachable marked node");
}

TEST(NegativeValidation, HmListTailSentinelHasSuccessor) {
    expect_tail_successor_detected<hm_list_t>();
}

// ---- harris_list ------------------------------------------------------------------------

TEST(NegativeValidation, HarrisListSwappedNeighbours) {
    expect_swapped_neighbours_detected<harris_list_t>();
}

TEST(NegativeValidation, HarrisListMarkedNodeReachable) {
    expect_marked_node_detected<harris_list_t>("reachable marked node");
}

TEST(NegativeValidation, HarrisListTailSentinelUnlinked) {
    expect_tail_unlinked_detected<harris_list_t>();
}

// ---- cr_list ----------------------------------------------------------------------------

TEST(NegativeValidation, CrListSwappedNeighbours) {
    expect_swapped_neighbours_detected<cr_list_t>();
}

TEST(NegativeValidation, CrListRemovedNodeReachable) {
    // The removal mark (bit 0 of next) is checked whatever the reclaimer.
    expect_marked_node_detected<cr_list_t>("reachable removed node");
}

TEST(NegativeValidation, CrListWriterLockHeld) {
    filled<cr_list_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    expect_caught(
        f.s, "writer lock held",
        [&] { internals::lock(f.s).lock(); },  // a writer that never unlocked
        [&] { internals::lock(f.s).unlock(); });
}

// ---- lazylist ---------------------------------------------------------------------------

TEST(NegativeValidation, LazylistSwappedNeighbours) {
    expect_swapped_neighbours_detected<lazylist_t>();
}

TEST(NegativeValidation, LazylistMarkedNodeReachable) {
    // An erase that set the mark and never unlinked the node.
    filled<lazylist_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const pred = pred_of(node_ptr(internals::head(f.s)), 5);
    ASSERT_NE(pred, nullptr);
    auto* const victim = next_of(pred);
    expect_caught(
        f.s, "reachable marked node, key 5", [&] { victim->marked.store(true, relaxed); },
        [&] { victim->marked.store(false, relaxed); });
}

TEST(NegativeValidation, LazylistLockedNodeReachable) {
    // An update that returned without unlocking its node.
    filled<lazylist_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const pred = pred_of(node_ptr(internals::head(f.s)), 5);
    ASSERT_NE(pred, nullptr);
    auto* const victim = next_of(pred);
    expect_caught(
        f.s, "reachable locked node, key 5", [&] { victim->lock.lock(); },
        [&] { victim->lock.unlock(); });
}

TEST(NegativeValidation, LazylistTailSentinelUnlinked) {
    expect_tail_unlinked_detected<lazylist_t>();
}

// ---- lock_list --------------------------------------------------------------------------

TEST(NegativeValidation, LockListSwappedNeighbours) {
    expect_swapped_neighbours_detected<lock_list_t>();
}

TEST(NegativeValidation, LockListLockHeld) {
    filled<lock_list_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    expect_caught(
        f.s, "lock held", [&] { internals::lock(f.s).lock(); },
        [&] { internals::lock(f.s).unlock(); });
}

TEST(NegativeValidation, LockListTailSentinelUnlinked) {
    expect_tail_unlinked_detected<lock_list_t>();
}

TEST(NegativeValidation, LockListTailSentinelHasSuccessor) {
    expect_tail_successor_detected<lock_list_t>();
}

// ---- hash_set ---------------------------------------------------------------------------

TEST(NegativeValidation, HashSetKeyInWrongBucket) {
    expect_key_in_wrong_bucket_detected<hash_set_t>();
}

TEST(NegativeValidation, HashSetMarkedNodeInBucket) {
    // A bucket's own check, reported with the bucket's index.
    filled<hash_set_t> f(kFourBuckets);
    ASSERT_NO_FATAL_FAILURE(f.fill());
    const std::size_t bucket = f.s.bucket_of(5);
    auto* const pred = pred_of(bucket_head(f.s, bucket), 5);
    ASSERT_NE(pred, nullptr);
    auto* const victim = next_of(pred);
    auto* const successor = next_of(victim);
    expect_caught(
        f.s, "bucket " + std::to_string(bucket) + ": reachable marked node, key 5",
        [&] { victim->next.store(smr::ds::detail::with_mark(successor), relaxed); },
        [&] { victim->next.store(successor, relaxed); });
}

TEST(NegativeValidation, HashSetSwappedNeighboursInBucket) {
    filled<hash_set_t> f(kFourBuckets);
    ASSERT_NO_FATAL_FAILURE(f.fill());
    // A bucket with at least two keys (20 keys in 4 buckets: some bucket has 5).
    const auto has_two_keys = [&f](std::size_t i) {
        auto* const first = next_of(bucket_head(f.s, i));
        return first != bucket_tail(f.s, i) && next_of(first) != bucket_tail(f.s, i);
    };
    std::size_t bucket = 0;
    while (bucket < f.s.bucket_count() && !has_two_keys(bucket)) ++bucket;
    ASSERT_LT(bucket, f.s.bucket_count());
    auto* const head = bucket_head(f.s, bucket);
    const std::int64_t first = next_of(head)->key;
    const std::int64_t second = next_of(next_of(head))->key;
    expect_caught(
        f.s,
        "bucket " + std::to_string(bucket) + ": keys not strictly ascending: " +
            std::to_string(second) + " then " + std::to_string(first),
        [&] { swap_after(head); }, [&] { swap_after(head); });
}

// ---- cr_hash_set ------------------------------------------------------------------------

TEST(NegativeValidation, CrHashSetKeyInWrongBucket) {
    expect_key_in_wrong_bucket_detected<cr_hash_set_t>();
}

TEST(NegativeValidation, CrHashSetBucketWriterLockHeld) {
    filled<cr_hash_set_t> f(kFourBuckets);
    ASSERT_NO_FATAL_FAILURE(f.fill());
    const std::size_t bucket = f.s.bucket_of(5);
    auto& lock = internals::lock(internals::buckets(f.s)[bucket]);
    expect_caught(
        f.s, "bucket " + std::to_string(bucket) + ": writer lock held", [&] { lock.lock(); },
        [&] { lock.unlock(); });
}

// ---- ms_queue ---------------------------------------------------------------------------

TEST(NegativeValidation, MsQueueTailLagging) {
    // Tail back at the dummy, 20 nodes behind the last one; it may lag by
    // one node at most (an enqueue between its two CASes).
    filled<smr::ds::ms_queue<domain_t>> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto& head = internals::head(f.s);
    auto& tail = internals::tail(f.s);
    auto* const last = tail.load(relaxed);
    expect_caught(
        f.s, "tail lags more than one node behind the last node",
        [&] { tail.store(head.load(relaxed), relaxed); }, [&] { tail.store(last, relaxed); });
}

TEST(NegativeValidation, MsQueueCycle) {
    // The last node links back to the first item.
    filled<smr::ds::ms_queue<domain_t>> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const first = internals::head(f.s).load(relaxed)->next.load(relaxed);
    auto* const last = internals::tail(f.s).load(relaxed);
    ASSERT_NE(first, nullptr);
    ASSERT_EQ(last->next.load(relaxed), nullptr);
    expect_caught(
        f.s, "cycle in the list from head", [&] { last->next.store(first, relaxed); },
        [&] { last->next.store(nullptr, relaxed); });
}

TEST(NegativeValidation, MsQueueTailUnreachable) {
    // After a dequeue the in-object dummy has left the list: tail pointing
    // there points behind head.
    filled<smr::ds::ms_queue<domain_t>> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    ASSERT_TRUE(f.s.dequeue(f.handle).has_value());
    ASSERT_TRUE(holds(f.s.validate()));
    auto& tail = internals::tail(f.s);
    auto* const last = tail.load(relaxed);
    expect_caught(
        f.s, "tail is not reachable from head",
        [&] { tail.store(&internals::dummy(f.s), relaxed); }, [&] { tail.store(last, relaxed); });
}

// ---- abtree -----------------------------------------------------------------------------

TEST(NegativeValidation, AbtreeKeysSwappedInLeaf) {
    filled<abtree_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const root = abtree_root(f.s);
    ASSERT_FALSE(root->leaf);
    auto* const leaf = root->ptrs[0].load(relaxed);
    ASSERT_TRUE(leaf->leaf);
    ASSERT_GE(static_cast<int>(leaf->size), 2);
    expect_caught(
        f.s, "leaf at depth 1: keys not ascending",
        [&] { std::swap(leaf->keys[0], leaf->keys[1]); },
        [&] { std::swap(leaf->keys[0], leaf->keys[1]); });
}

TEST(NegativeValidation, AbtreeRoutingKeyChanged) {
    // The root's routing key lowered to the left leaf's smallest key: that
    // key is now outside the range the root routes to the leaf.
    filled<abtree_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const root = abtree_root(f.s);
    ASSERT_FALSE(root->leaf);
    auto* const leaf = root->ptrs[0].load(relaxed);
    ASSERT_TRUE(leaf->leaf);
    const std::int64_t routing = root->keys[0];
    const std::int64_t smallest = leaf->keys[0];
    expect_caught(
        f.s, "leaf at depth 1: key " + std::to_string(smallest) + " outside its range",
        [&] { root->keys[0] = smallest; }, [&] { root->keys[0] = routing; });
}

TEST(NegativeValidation, AbtreeDegreeViolation) {
    // A non-root leaf with a - 1 keys: erases left it for a fix that never ran.
    filled<abtree_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const root = abtree_root(f.s);
    ASSERT_FALSE(root->leaf);
    auto* const leaf = root->ptrs[0].load(relaxed);
    ASSERT_TRUE(leaf->leaf);
    ASSERT_GE(static_cast<int>(leaf->size), abtree_t::a);
    const auto size = leaf->size;
    expect_caught(
        f.s,
        "leaf at depth 1 has degree " + std::to_string(abtree_t::a - 1) +
            " (a degree violation is left)",
        [&] { leaf->size = static_cast<std::uint8_t>(abtree_t::a - 1); },
        [&] { leaf->size = size; });
}

TEST(NegativeValidation, AbtreeTagLeft) {
    // A tag (Brown's weight 0) that no fix_tagged removed.
    filled<abtree_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const root = abtree_root(f.s);
    ASSERT_FALSE(root->leaf);
    ASSERT_FALSE(root->tagged);
    expect_caught(
        f.s, "internal node at depth 0 is tagged (a tag violation is left)",
        [&] { root->tagged = true; }, [&] { root->tagged = false; });
}

TEST(NegativeValidation, AbtreeMarkedNodeReachable) {
    // Finalized by an SCX, yet still linked.
    filled<abtree_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const root = abtree_root(f.s);
    ASSERT_FALSE(root->leaf);
    auto* const leaf = root->ptrs[0].load(relaxed);
    expect_caught(
        f.s, "leaf at depth 1 is marked", [&] { leaf->marked.store(true, relaxed); },
        [&] { leaf->marked.store(false, relaxed); });
}

TEST(NegativeValidation, AbtreeScxInProgress) {
    // This thread's SCX record back in progress (status bits 0), seq kept.
    filled<abtree_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto& state = internals::scx_state(f.s, f.tid());
    const std::uint64_t before = state.load(relaxed);
    expect_caught(
        f.s, "an SCX is still in progress",
        [&] { state.store(before & ~std::uint64_t{3}, relaxed); },
        [&] { state.store(before, relaxed); });
}

TEST(NegativeValidation, AbtreeEntryChanged) {
    // The entry sentinel is never replaced, so never tagged.
    filled<abtree_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto& entry = internals::entry(f.s);
    expect_caught(
        f.s, "entry changed", [&] { entry.tagged = true; }, [&] { entry.tagged = false; });
}

// ---- occ_avl ----------------------------------------------------------------------------

TEST(NegativeValidation, OccAvlChildrenSwapped) {
    // The root's subtrees trade sides: the right one's keys are now to the
    // left of the root (keys are const, so the links move instead).
    filled<occ_avl_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const root = avl_root(f.s);
    ASSERT_NE(root, nullptr);
    auto* const left = root->child[0].load(relaxed);
    auto* const right = root->child[1].load(relaxed);
    ASSERT_NE(left, nullptr);
    ASSERT_NE(right, nullptr);
    expect_caught(
        f.s, "node " + std::to_string(right->key) + " outside the key range of its position",
        [&] {
            root->child[0].store(right, relaxed);
            root->child[1].store(left, relaxed);
        },
        [&] {
            root->child[0].store(left, relaxed);
            root->child[1].store(right, relaxed);
        });
}

TEST(NegativeValidation, OccAvlNodeLeftLocked) {
    filled<occ_avl_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const root = avl_root(f.s);
    ASSERT_NE(root, nullptr);
    auto* const left = root->child[0].load(relaxed);
    ASSERT_NE(left, nullptr);
    expect_caught(
        f.s, "node " + std::to_string(left->key) + " is locked", [&] { left->lock.lock(); },
        [&] { left->lock.unlock(); });
}

TEST(NegativeValidation, OccAvlUnlinkedNodeReachable) {
    // The version's unlinked bit set on a linked node.
    filled<occ_avl_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const root = avl_root(f.s);
    ASSERT_NE(root, nullptr);
    auto* const left = root->child[0].load(relaxed);
    ASSERT_NE(left, nullptr);
    const std::uint32_t version = left->version.load(relaxed);
    expect_caught(
        f.s, "node " + std::to_string(left->key) + " is reachable but unlinked",
        [&] { left->version.store(version | 1u, relaxed); },
        [&] { left->version.store(version, relaxed); });
}

TEST(NegativeValidation, OccAvlWrongParentPointer) {
    // The root's left child names its sibling as its parent.
    filled<occ_avl_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const root = avl_root(f.s);
    ASSERT_NE(root, nullptr);
    auto* const left = root->child[0].load(relaxed);
    auto* const right = root->child[1].load(relaxed);
    ASSERT_NE(left, nullptr);
    ASSERT_NE(right, nullptr);
    expect_caught(
        f.s, "node " + std::to_string(left->key) + " has a wrong parent pointer",
        [&] { left->parent.store(right, relaxed); }, [&] { left->parent.store(root, relaxed); });
}

TEST(NegativeValidation, OccAvlRoutingNodeWithoutChildren) {
    // A leaf that lost its value: a routing node the repair should have
    // spliced out.
    filled<occ_avl_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const root = avl_root(f.s);
    ASSERT_NE(root, nullptr);
    auto* const leaf = avl_leaf_below(root);
    ASSERT_TRUE(leaf->present.load(relaxed));
    expect_caught(
        f.s,
        "node " + std::to_string(leaf->key) + " is a routing node with fewer than two children",
        [&] { leaf->present.store(false, relaxed); }, [&] { leaf->present.store(true, relaxed); });
}

TEST(NegativeValidation, OccAvlZeroHeight) {
    // validate() checks every stored height is at least 1 (a leaf's).
    filled<occ_avl_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const root = avl_root(f.s);
    ASSERT_NE(root, nullptr);
    auto* const left = root->child[0].load(relaxed);
    ASSERT_NE(left, nullptr);
    const std::int16_t height = left->height.load(relaxed);
    expect_caught(
        f.s, "node " + std::to_string(left->key) + " stores height 0",
        [&] { left->height.store(0, relaxed); }, [&] { left->height.store(height, relaxed); });
}

TEST(NegativeValidation, OccAvlStaleHeight) {
    // Exact heights are validate_balance()'s check (validate() treats them
    // as hints); it holds after any single-threaded history.
    filled<occ_avl_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    ASSERT_TRUE(holds(f.s.validate_balance()));
    auto* const root = avl_root(f.s);
    ASSERT_NE(root, nullptr);
    const std::int16_t height = root->height.load(relaxed);
    expect_caught_by([&] { return f.s.validate_balance(); },
                     "node " + std::to_string(root->key) + " stores height " +
                         std::to_string(height + 1) + ", actual " + std::to_string(height),
                     [&] { root->height.store(static_cast<std::int16_t>(height + 1), relaxed); },
                     [&] { root->height.store(height, relaxed); });
}

TEST(NegativeValidation, OccAvlUnbalanced) {
    // The root's left subtree detached and the root's height set to what it
    // then is: every height exact, only the AVL balance broken.
    filled<occ_avl_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    ASSERT_TRUE(holds(f.s.validate_balance()));
    auto* const root = avl_root(f.s);
    ASSERT_NE(root, nullptr);
    auto* const left = root->child[0].load(relaxed);
    auto* const right = root->child[1].load(relaxed);
    ASSERT_NE(left, nullptr);
    ASSERT_NE(right, nullptr);
    const std::int16_t height = root->height.load(relaxed);
    const std::int16_t right_height = right->height.load(relaxed);
    ASSERT_GE(right_height, 2);  // so that 0 against it is out of balance
    expect_caught_by([&] { return f.s.validate_balance(); },
                     "node " + std::to_string(root->key) +
                         " is not AVL balanced: left height 0, right height " +
                         std::to_string(right_height),
                     [&] {
                         root->child[0].store(nullptr, relaxed);
                         root->height.store(static_cast<std::int16_t>(right_height + 1), relaxed);
                     },
                     [&] {
                         root->child[0].store(left, relaxed);
                         root->height.store(height, relaxed);
                     });
}

// ---- dgt_bst ----------------------------------------------------------------------------

TEST(NegativeValidation, DgtBstSwappedLeafKeys) {
    // Leaves 1 and 2 trade keys: each is now on the wrong side of a router.
    filled<dgt_bst_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const root = node_ptr(internals::root(f.s));
    auto* const one = dgt_leaf_and_parent(root, 1).first;
    auto* const two = dgt_leaf_and_parent(root, 2).first;
    ASSERT_EQ(one->key, 1);
    ASSERT_EQ(two->key, 2);
    expect_caught(
        f.s, "outside its routing range", [&] { std::swap(one->key, two->key); },
        [&] { std::swap(one->key, two->key); });
}

TEST(NegativeValidation, DgtBstRoutingNodeLocked) {
    // A side's versioned lock left odd (held), as by an update that never
    // unlocked it.
    filled<dgt_bst_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const parent = dgt_leaf_and_parent(node_ptr(internals::root(f.s)), 5).second;
    ASSERT_NE(parent, nullptr);
    const std::uint16_t version = parent->version[0].load(relaxed);
    ASSERT_EQ(version & 1u, 0u);
    expect_caught(
        f.s, "routing node " + std::to_string(parent->key) + " is locked or removed",
        [&] { parent->version[0].store(static_cast<std::uint16_t>(version + 1), relaxed); },
        [&] { parent->version[0].store(version, relaxed); });
}

TEST(NegativeValidation, DgtBstLeafWithChild) {
    // Leaf-oriented shape: a leaf never has children.
    filled<dgt_bst_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const root = node_ptr(internals::root(f.s));
    auto* const leaf = dgt_leaf_and_parent(root, 5).first;
    auto* const other = dgt_leaf_and_parent(root, 1).first;
    ASSERT_EQ(leaf->key, 5);
    expect_caught(
        f.s, "leaf 5 has children", [&] { leaf->child[0].store(other, relaxed); },
        [&] { leaf->child[0].store(nullptr, relaxed); });
}

TEST(NegativeValidation, DgtBstRoutingNodeLacksChild) {
    // Leaf-oriented shape: every routing node has two children.
    filled<dgt_bst_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const parent = dgt_leaf_and_parent(node_ptr(internals::root(f.s)), 5).second;
    ASSERT_NE(parent, nullptr);
    auto* const right = parent->child[1].load(relaxed);
    expect_caught(
        f.s, "routing node " + std::to_string(parent->key) + " lacks a child",
        [&] { parent->child[1].store(nullptr, relaxed); },
        [&] { parent->child[1].store(right, relaxed); });
}

TEST(NegativeValidation, DgtBstMaxSentinelUnlinked) {
    // The root's right child must stay the max sentinel leaf.
    filled<dgt_bst_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const root = node_ptr(internals::root(f.s));
    auto* const max_leaf = root->child[1].load(relaxed);
    expect_caught(
        f.s, "root's right child is not the max sentinel leaf",
        [&] { root->child[1].store(nullptr, relaxed); },
        [&] { root->child[1].store(max_leaf, relaxed); });
}

// ---- stm_list ---------------------------------------------------------------------------

TEST(NegativeValidation, StmListSwappedKeys) {
    // STM nodes' keys are plain words: nodes 1 and 2 trade keys.
    filled<stm_list_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const first = next_of(internals::head(f.s));
    auto* const second = next_of(first);
    ASSERT_EQ(first->key, 1);
    ASSERT_EQ(second->key, 2);
    expect_caught(
        f.s, "keys not strictly ascending: 2 then 1", [&] { std::swap(first->key, second->key); },
        [&] { std::swap(first->key, second->key); });
}

TEST(NegativeValidation, StmListHeadSentinelKeyChanged) {
    filled<stm_list_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const head = internals::head(f.s);
    const std::int64_t key = head->key;
    expect_caught(
        f.s, "head sentinel key changed",
        [&] { head->key = 0; },  // still below every key: only the sentinel check can see it
        [&] { head->key = key; });
}

TEST(NegativeValidation, StmListTailSentinelHasSuccessor) {
    expect_tail_successor_detected<stm_list_t>();
}

TEST(NegativeValidation, StmListVersionedLockHeld) {
    expect_held_versioned_lock_detected<stm_list_t>();
}

// ---- stm_hash_set -----------------------------------------------------------------------

TEST(NegativeValidation, StmHashSetKeyInWrongBucket) {
    // The first node of key 1's chain moves to the front of the next chain.
    filled<stm_hash_set_t> f(kFourBuckets);
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const chains = internals::chains(f.s);
    const std::size_t home = f.s.bucket_of(1);
    const std::size_t away = (home + 1) % f.s.bucket_count();
    auto* const moved = chains[home];
    ASSERT_NE(moved, nullptr);
    expect_caught(
        f.s,
        "key " + std::to_string(moved->key) + " in bucket " + std::to_string(away) +
            ", hashes to " + std::to_string(home),
        [&] {
            chains[home] = moved->next;
            moved->next = chains[away];
            chains[away] = moved;
        },
        [&] {
            chains[away] = moved->next;
            moved->next = chains[home];
            chains[home] = moved;
        });
}

TEST(NegativeValidation, StmHashSetCycleInBucket) {
    // The last node of key 1's chain links back to its first.
    filled<stm_hash_set_t> f(kFourBuckets);
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const first = internals::chains(f.s)[f.s.bucket_of(1)];
    ASSERT_NE(first, nullptr);
    auto* last = first;
    while (last->next != nullptr) last = last->next;
    expect_caught(
        f.s, "key " + std::to_string(first->key) + " twice (or a cycle)",
        [&] { last->next = first; }, [&] { last->next = nullptr; });
}

TEST(NegativeValidation, StmHashSetVersionedLockHeld) {
    expect_held_versioned_lock_detected<stm_hash_set_t>();
}

// ---- stm_rbtree -------------------------------------------------------------------------

TEST(NegativeValidation, StmRbtreeRedNodeWithRedChild) {
    // The root's left child and one of its children both red (the root is
    // black, so the first red-red pair met is this one).
    filled<stm_rbtree_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    constexpr std::int64_t red = internals::red<stm_rbtree_t>();
    auto* const root = internals::root(f.s);
    ASSERT_NE(root, nullptr);
    auto* const upper = root->left;
    ASSERT_NE(upper, nullptr);
    auto* const lower = upper->left != nullptr ? upper->left : upper->right;
    ASSERT_NE(lower, nullptr);
    const std::int64_t upper_colour = upper->colour;
    const std::int64_t lower_colour = lower->colour;
    expect_caught(
        f.s, "red key " + std::to_string(upper->key) + " has a red child",
        [&] {
            upper->colour = red;
            lower->colour = red;
        },
        [&] {
            upper->colour = upper_colour;
            lower->colour = lower_colour;
        });
}

TEST(NegativeValidation, StmRbtreeBlackHeightChanged) {
    // A red node turned black: one more black node on the paths through it
    // than on those through its sibling.
    filled<stm_rbtree_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const root = internals::root(f.s);
    ASSERT_NE(root, nullptr);
    auto* const flipped = red_below_root(root, internals::red<stm_rbtree_t>());
    ASSERT_NE(flipped, nullptr);
    ASSERT_NE(flipped->parent, nullptr);
    expect_caught(
        f.s, "black heights differ below key " + std::to_string(flipped->parent->key),
        [&] { flipped->colour = internals::black<stm_rbtree_t>(); },
        [&] { flipped->colour = internals::red<stm_rbtree_t>(); });
}

TEST(NegativeValidation, StmRbtreeKeysSwapped) {
    // The root and its left child trade keys: in-order no longer ascends.
    filled<stm_rbtree_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const root = internals::root(f.s);
    ASSERT_NE(root, nullptr);
    auto* const left = root->left;
    ASSERT_NE(left, nullptr);
    expect_caught(
        f.s, "keys not ascending in order", [&] { std::swap(root->key, left->key); },
        [&] { std::swap(root->key, left->key); });
}

TEST(NegativeValidation, StmRbtreeWrongParentPointer) {
    filled<stm_rbtree_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const root = internals::root(f.s);
    ASSERT_NE(root, nullptr);
    auto* const left = root->left;
    ASSERT_NE(left, nullptr);
    expect_caught(
        f.s, "key " + std::to_string(left->key) + ": parent pointer is wrong",
        [&] { left->parent = left; }, [&] { left->parent = root; });
}

TEST(NegativeValidation, StmRbtreeRootRed) {
    filled<stm_rbtree_t> f;
    ASSERT_NO_FATAL_FAILURE(f.fill());
    auto* const root = internals::root(f.s);
    ASSERT_NE(root, nullptr);
    ASSERT_EQ(root->colour, internals::black<stm_rbtree_t>());
    expect_caught(
        f.s, "root is red", [&] { root->colour = internals::red<stm_rbtree_t>(); },
        [&] { root->colour = internals::black<stm_rbtree_t>(); });
}

TEST(NegativeValidation, StmRbtreeVersionedLockHeld) {
    expect_held_versioned_lock_detected<stm_rbtree_t>();
}
