// Harris list: Timothy L. Harris, "A Pragmatic Implementation of Non-Blocking
// Linked-Lists" (DISC 2001).
//
// A sorted singly linked list between two sentinels, lock-free. erase first
// *marks* the node (sets bit 0 of its own `next`, smr/ds/marked_ptr.hpp: the
// logical delete and linearization point; a marked `next` never changes
// again), then tries to unlink it. Every update begins with search(key),
// which finds the window (left, right) with left.key < key <= right.key,
// left unmarked, right unmarked, and -- the heart of Harris's algorithm --
// *every node between them marked*: a run of logically deleted nodes that it
// unlinks with one CAS on left.next. When that CAS fails, or right turns out
// marked, search starts again from the head.
//
// ---- Read and write phases (NBR; docs/design.md, "Restarts") ----------------
//
// Harris's search writes (the run's unlink), so it does not fit one read
// phase followed by one write phase. We split it as the NBR paper does
// (Section 5.2, Algorithm 3): each attempt of search is
//
//   SMR_READ_PHASE_BEGIN            -- checkpoint; a neutralized reader comes back here
//   find(key)                       -- read phase: walk from the head, no writes
//   read_phase_end(left, right)     -- reserve the two nodes the write phase touches
//   CAS(left.next, left_next, right); retire the run; read right.next
//                                   -- write phase (left and right are reserved)
//   on failure: continue            -- a new read phase, *from the head*
//
// so every read phase starts from the root, which NBR needs (Section 5.2:
// "Limitation: restarting from the root"), and Harris's search already does.
// The write phase touches only left, right and the run. The run's nodes are
// not reserved (a run has no length bound) and need not be: they are
// reachable from left until our CAS succeeds, so nobody else has unlinked
// them, and after it only the thread whose CAS unlinked them -- this one --
// retires them. Until it does, no reclaimer holds them, so walking the run
// after the CAS is safe under every scheme. Each node is retired exactly once:
// only marked nodes are ever unlinked, an unmarked node is always reachable,
// and a node leaves the list through exactly one successful CAS.
//
// insert and erase call search, then do their own write (link the new node /
// mark right and try to unlink it) in search's write phase; on failure they
// call search again, which opens a new read phase from the head. erase, once
// its mark succeeded, must not restart the whole operation (it has
// linearized); if its own unlink CAS fails it calls search(key) once more,
// which unlinks the marked node as part of a run, as in Harris's paper, so no
// marked node stays reachable once operations are over.
//
// contains does not help: it walks from the head through marked nodes
// (possibly already unlinked ones), stops at the first key >= its key and
// reads that node's mark: a read-only, wait-free operation (the usual
// companion of Harris's list, e.g. Herlihy and Shavit's LockFreeList).
//
// ---- Reclamation ---------------------------------------------------------------
//
// traverses_unlinked_nodes: both find and contains follow `next` out of
// marked nodes that another thread may already have unlinked and retired,
// and the node after one may be retired too. Hazard pointers cannot protect
// that: the validating re-read of a frozen (marked) `next` always succeeds,
// whether or not its target is already freed. This is why Michael designed
// the Harris-Michael list (hm_list.hpp) for hazard pointers. The NBR paper's
// Table 1 lists HL01 as compatible with HP-like schemes, presumably for a
// variant that validates like Michael's; the original search here does not,
// and the compatibility table (smr/compatibility.hpp) refuses hp, he, ibr
// and the like with it. HP++ (hp_pp.hpp) protects it: every step out of a
// node goes through smr::protect_from with that node (a failed one, on an
// invalidated node, starts the read phase again from the head), and each
// unlink names its frontier (smr::begin_unlink): the node right after the
// run of marked nodes, whose frozen links lead only inside the run or to it
// (names_frontiers; every other scheme compiles both calls away). Epoch
// schemes protect everything an operation read, and NBR protects it through
// the phase discipline above.
//
// Progress: contains is wait-free; insert and erase are lock-free (a failed
// CAS means another operation's CAS succeeded). A successful insert allocates
// one node; each node is retired once, by the thread that unlinked it.
//
// Memory layout: the domain's header + key, value and next: 40 bytes with the
// 16-byte header of the epoch-family and leak domains.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "smr/core/padded.hpp"
#include "smr/ds/key_range.hpp"
#include "smr/ds/list_validation.hpp"
#include "smr/ds/marked_ptr.hpp"
#include "smr/ds/slot_rotation.hpp"
#include "smr/ds/validation.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/reclaim/reader.hpp"
#include "smr/reclaim/unlink.hpp"

namespace smr::ds {

/// Harris's lock-free list as a set of Key (with a Value per key). Keys must
/// lie in [min_key, max_key] = [numeric_limits<Key>::min() + 1,
/// numeric_limits<Key>::max() - 1]: the sentinels hold the extremes.
template <class Domain, class Key = std::int64_t, class Value = std::int64_t>
class harris_list {
    friend struct smr::ds::testing::access;  // tests corrupt internals

    struct node final : Domain::node_base {
        node(Key k, Value v, node* successor) noexcept : key(k), value(v), next(successor) {}

        const Key key;
        const Value value;
        /// Successor, with bit 0 = this node is logically deleted. Once
        /// marked, never written again.
        std::atomic<node*> next;
    };

    /// What find returns: left.key < key <= right.key (right may be the
    /// tail); left_next is the (unmarked) value of left.next that find read;
    /// every node from left_next up to, not including, right was marked.
    struct window {
        node* left;
        node* left_next;
        node* right;
    };
    /// The three slots an update borrows from its guard for its searches,
    /// and their reader (smr::lend_slots).
    using slot_view = typename smr::slot_block<Domain, 3>::view;

  public:
    using domain_type = Domain;
    /// What every operation takes: the calling thread's attachment.
    using context_type = smr::context<Domain>;
    using key_type = Key;
    using value_type = Value;

    static constexpr std::string_view name = "harris_list";
    /// find and contains walk out of marked nodes that may be unlinked.
    static constexpr bool traverses_unlinked_nodes = true;
    /// Steps out of nodes with smr::protect_from, unlinks with a frontier (HP++).
    static constexpr bool names_frontiers = true;
    /// Every operation is a sequence of (read phase, write phase) pairs: the
    /// read phases write nothing shared, and the write phases touch only the
    /// nodes reserved at read_phase_end (and the run they unlinked).
    static constexpr bool has_read_write_phases = true;
    /// Every read phase starts from the head, whatever the reclaimer.
    static constexpr bool read_phases_start_at_root = true;
    /// left, the current node and the next one (reservation schemes only).
    static constexpr int protect_slots = 3;
    static constexpr Key min_key = std::numeric_limits<Key>::min() + 1;
    static constexpr Key max_key = std::numeric_limits<Key>::max() - 1;
    static constexpr std::size_t node_size = sizeof(node);

    /// `domain` must outlive the list.
    explicit harris_list(Domain& domain)
        : domain_(domain),
          head_(std::numeric_limits<Key>::min(), Value{}, &tail_),
          tail_(std::numeric_limits<Key>::max(), Value{}, nullptr) {}

    harris_list(const harris_list&) = delete;
    harris_list& operator=(const harris_list&) = delete;

    /// Frees every node still linked (marked or not: a linked node was never
    /// retired). No operation may be running.
    ~harris_list() {
        node* curr = detail::without_mark(head_.next.load(std::memory_order_relaxed));
        while (curr != &tail_) {
            node* next = detail::without_mark(curr->next.load(std::memory_order_relaxed));
            domain_.free_unshared(curr);
            curr = next;
        }
    }

    bool insert(smr::context_ref<Domain> self, Key key, Value value) {
        detail::check_key(key, min_key, max_key);
        smr::op_guard guard(domain_, self);
        const auto slots = smr::lend_slots<3>(guard);  // left, t, t's successor
        node* fresh = nullptr;  // allocated in a write phase, kept across attempts
        for (;;) {
            const window w = search(slots.lent(), key);  // returns in a write phase
            if (w.right->key == key) {
                if (fresh != nullptr) domain_.discard(self, fresh);
                return false;  // right was unmarked when search checked it
            }
            if (fresh == nullptr)
                fresh = domain_.template allocate<node>(self, key, value, w.right);
            fresh->next.store(w.right, std::memory_order_relaxed);  // not yet shared
            node* expected = w.right;
            // release: publishes fresh's fields to the acquire loads of left.next.
            if (w.left->next.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel,
                                                     std::memory_order_acquire)) {
                return true;
            }
        }
    }

    bool erase(smr::context_ref<Domain> self, Key key) {
        detail::check_key(key, min_key, max_key);
        smr::op_guard guard(domain_, self);
        const auto slots = smr::lend_slots<3>(guard);  // left, t, t's successor
        for (;;) {
            const window w = search(slots.lent(), key);  // returns in a write phase
            if (w.right->key != key) return false;
            node* succ = w.right->next.load(std::memory_order_acquire);
            if (detail::is_marked(succ)) continue;  // another erase won; search unlinks it
            // The logical delete, and our linearization point.
            if (!w.right->next.compare_exchange_strong(succ, detail::with_mark(succ),
                                                       std::memory_order_acq_rel,
                                                       std::memory_order_acquire)) {
                continue;  // right.next changed (insert after it, or marked): retry
            }
            bool unlinked = false;
            {
                // succ: right's frozen successor, which nobody unlinks before
                // right is (its only predecessor is right).
                auto unlink = smr::begin_unlink(domain_, self, succ);
                node* expected = w.right;
                unlinked = w.left->next.compare_exchange_strong(
                    expected, succ, std::memory_order_acq_rel, std::memory_order_acquire);
                if (unlinked) unlink.retire(w.right);
            }
            if (!unlinked) {
                // Someone changed left.next: let a search unlink right (with
                // whatever run it is in). Harris: "right_node = search(...)".
                (void)search(slots.lent(), key);
            }
            return true;
        }
    }

    bool contains(smr::context_ref<Domain> self, Key key) {
        detail::check_key(key, min_key, max_key);
        smr::op_guard guard(domain_, self);
        const auto block = smr::lend_slots<2>(guard);  // hand over hand
        // Restarts only when NBR neutralizes its read phase or hp_pp finds
        // the node it stands on invalidated.
        for (;;) {
            SMR_READ_PHASE_BEGIN(domain_, self);
            const auto reader = block.reader(domain_);
            const auto slots = smr::first_slots<2>(reader);
            node* curr = reader.protect(slots[0], head_.next);  // head is never marked
            smr::link_read<node> succ = smr::protect_from(reader, slots[1], curr->next, *curr);
            for (std::size_t slot = 0; succ.valid && curr->key < key; slot ^= 1) {
                curr = detail::without_mark(succ.ptr);
                succ = smr::protect_from(reader, slots[slot], curr->next, *curr);
            }
            if (!succ.valid) continue;
            const bool found = curr->key == key && !detail::is_marked(succ.ptr);
            domain_.read_phase_end(self);
            return found;
        }
    }

    /// Quiescent only (no operation on the set runs): how many keys it
    /// holds, counted by a walk of the whole structure, O(n).
    std::size_t size() const { return validate().size; }

    /// Quiescent only. Checks: sentinels intact, keys strictly ascending from
    /// head to tail, no reachable node marked; sums keys and counts nodes
    /// between the sentinels.
    validation_result validate() const {
        return detail::validate_marked_list(head_, tail_, "reachable marked node");
    }

  private:
    /// Harris's search. Returns a window whose left and right were both
    /// unmarked and adjacent after it unlinked the run between them, in the
    /// write phase (left and right reserved). Every attempt is a read phase
    /// from the head; the checkpoint lives in this frame, which is active for
    /// the whole read phase.
    window search(slot_view slots, Key key) {
        const auto self = smr::context_of(slots);
        for (;;) {
            SMR_READ_PHASE_BEGIN(domain_, self);
            // Not const: so GCC builds w in the return slot (NRVO). A const w
            // was copied out with 16-byte loads that cannot forward from its
            // field stores, two store-forwarding stalls per search.
            window w = find(slots, key);
            domain_.read_phase_end(self, w.left, w.right);

            if (w.left_next != w.right) {
                bool unlinked = false;
                {
                    // right: where the run's frozen links lead (find protected it).
                    auto unlink = smr::begin_unlink(domain_, self, w.right);
                    node* expected = w.left_next;
                    unlinked = w.left->next.compare_exchange_strong(
                        expected, w.right, std::memory_order_acq_rel, std::memory_order_acquire);
                    if (unlinked) retire_run(unlink, w.left_next, w.right);
                }
                if (!unlinked) continue;  // left changed or was marked: from the head
            }
            if (w.right != &tail_ &&
                detail::is_marked(w.right->next.load(std::memory_order_acquire))) {
                continue;  // right was deleted meanwhile: from the head
            }
            return w;
        }
    }

    /// The read phase of search: writes nothing shared, allocates nothing,
    /// and every local is initialized here, so a neutralization may abandon it
    /// anywhere. Three protect slots, chosen so that left's stays untouched
    /// while the walk goes on past it.
    window find(slot_view slots, Key key) noexcept {
        const auto reader = smr::reader_of(domain_, slots);
        for (;;) {                // again from the head when hp_pp finds t invalidated
            node* left = &head_;  // sentinels need no protection
            int left_slot = detail::sentinel_slot;
            node* left_next = reader.protect(reader.slot(0), head_.next);  // head is never marked
            node* t = left_next;
            int t_slot = 0;
            bool invalidated = false;
            while (t != &tail_) {
                const int slot = detail::next_slot_for<Domain>(left_slot, t_slot);
                // Named per node; a constant 0 where slots are unused, so the
                // check folds away where it would cost.
                const smr::link_read<node> step =
                    smr::protect_from(reader, reader.slot(slot), t->next, *t);
                if (!step.valid) {
                    invalidated = true;
                    break;
                }
                node* t_next = step.ptr;
                if (!detail::is_marked(t_next)) {
                    if (!(t->key < key)) break;  // t is right
                    left = t;
                    left_slot = t_slot;
                    left_next = t_next;
                }
                t = detail::without_mark(t_next);
                t_slot = slot;
            }
            if (!invalidated) return {left, left_next, t};
        }
    }

    /// Retires the run [first, last) this thread's CAS just unlinked, through
    /// its unlink. Each node's next is read before the node is retired
    /// (retire may free it).
    template <class Unlink>
    static void retire_run(Unlink& unlink, node* first, node* last) noexcept {
        while (first != last) {
            node* next = detail::without_mark(first->next.load(std::memory_order_acquire));
            unlink.retire(first);
            first = next;
        }
    }

    Domain& domain_;
    /// Sentinels live in the list object (never allocated, retired or freed),
    /// each on its own cache lines.
    alignas(core::false_sharing_range) node head_;
    alignas(core::false_sharing_range) node tail_;
};

}  // namespace smr::ds
