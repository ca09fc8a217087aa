// Concurrently readable list: a sorted singly linked list whose updates are
// serialised by one lock and whose reads take no lock, the synchronization
// Hart, McKenney, Demke Brown and Walpole call "concurrently readable" (JPDC
// 2007, Sections 1 and 6.1: the Linux kernel's RCU-protected lists, "CR" in
// their Figures 15 and 16).
//
// ---- The trade-off ---------------------------------------------------------
//
// A lock-free list (hm_list) pays for its fault tolerance on every element:
// the reader checks each node's mark and helps unlink marked nodes, and an
// update is a CAS that may fail and retry. Here a writer holds the lock, so
// it sees a list nobody else changes: its traversal is plain loads, its
// update two plain stores, and nothing it touches can be retired under it.
// The reader walks the list with no lock and no check at all (Hart's Listing
// 2) under every scheme whose protection spans the operation: epoch, quiescent
// state, neutralization, liburcu. What it gives up is progress: a preempted
// writer holds up every other writer (never a reader), and Hart's point is
// that which of the two wins depends on the scheme and the update fraction
// (their Figure 15: CR-QSBR beats LF-QSBR below about 75% updates on a
// 10-element list; Figure 16: above about 20% on single-element buckets).
//
// ---- Readers under reservation schemes (Hart's Listing 3) ------------------
//
// A hazard pointer (or a reserved era) protects a node only if the reader
// can show, after the reservation is visible, that the node was still
// reachable. So with a reservation scheme, and only then, erase marks the
// removed node's own next (bit 0, as Michael's list does) before unlinking
// it, and the reader restarts from the head when it reads a marked next:
// reading curr.next unmarked at protect's re-read means curr was not yet
// removed, so its successor was still linked and not yet retired. A node's
// next is marked only under the lock and never changes after, so the
// validation is Michael's (hm_list.hpp). The other schemes need neither the
// mark nor the check, and get neither (traverses_unlinked_nodes says which).
//
// ---- Writers and reclamation ------------------------------------------------
//
// Only a lock holder unlinks and only the unlinker retires, so every node a
// lock holder reaches is linked and not retired: writers need no protection
// and run outside any operation. Not being in an operation while waiting for
// the lock matters: a waiter inside one would hold up the grace period that a
// lock holder waiting on an exhausted pool needs (allocate_outside_op lets
// that holder wait as an idle thread would). erase retires its node after
// unlocking, inside an operation of its own (an epoch scheme labels a retired
// node with the epoch of the operation it is retired in).
//
// Progress: contains is wait-free with every scheme but the reservation
// schemes, where it is lock-free (it restarts when a writer removes the node
// it stands on). insert and erase are blocking (the lock).
//
// Memory layout: the domain's header + key, value and next (40 bytes with the
// 16-byte header of the epoch-family and leak domains), the same node as
// hm_list's, so the two lists differ only in their synchronization.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>

#include "smr/core/padded.hpp"
#include "smr/ds/key_range.hpp"
#include "smr/ds/list_validation.hpp"
#include "smr/ds/marked_ptr.hpp"
#include "smr/ds/sentinel_layout.hpp"
#include "smr/ds/spinlock.hpp"
#include "smr/ds/validation.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/reclaim/reader.hpp"
#include "smr/reclaim/traits.hpp"

namespace smr::ds {

/// The concurrently readable list as a set of Key (with a Value per key).
/// Keys must lie in [min_key, max_key] = [numeric_limits<Key>::min() + 1,
/// numeric_limits<Key>::max() - 1]: the sentinels hold the extremes.
template <class Domain, class Key = std::int64_t, class Value = std::int64_t,
          class SentinelLayout = padded_sentinels>
class cr_list {
    friend struct smr::ds::testing::access;  // tests corrupt internals

    struct node final : Domain::node_base {
        node(Key k, Value v, node* successor) noexcept : key(k), value(v), next(successor) {}

        const Key key;
        const Value value;
        /// Successor. With a reservation scheme, bit 0 set = this node was
        /// removed (written under the lock, never changed after).
        std::atomic<node*> next;
    };

    /// The reader validates (and erase marks) only when protect needs it.
    static constexpr bool readers_validate = Domain::traits.family == reclaimer_family::reservation;

    /// Where a writer works: pred.key < key <= curr.key, pred.next == curr.
    struct window {
        node* pred;
        node* curr;
    };
    /// A reader's protect: the two slots contains borrows from its guard.
    using slot_view = typename smr::slot_block<Domain, 2>::view;

  public:
    using domain_type = Domain;
    /// What every operation takes: the calling thread's attachment.
    using context_type = smr::context<Domain>;
    using key_type = Key;
    using value_type = Value;

    static constexpr std::string_view name = "cr_list";
    /// Readers walk through unlinked nodes unless they validate.
    static constexpr bool traverses_unlinked_nodes = !readers_validate;
    /// Every protect out of a node names it (smr::protect_in).
    static constexpr bool passes_parents = true;
    /// contains is one read phase starting at the head. The updates have no
    /// read phase: they hold the lock, so the nodes they touch are linked and
    /// cannot have been retired, reserved or not.
    static constexpr bool has_read_write_phases = true;
    static constexpr bool read_phases_start_at_root = true;
    /// Links are plain stores under the lock, not counted.
    static constexpr bool counts_links = false;
    /// curr and its successor, hand over hand.
    static constexpr int protect_slots = 2;
    static constexpr Key min_key = std::numeric_limits<Key>::min() + 1;
    static constexpr Key max_key = std::numeric_limits<Key>::max() - 1;
    static constexpr std::size_t node_size = sizeof(node);

    /// `domain` must outlive the list.
    explicit cr_list(Domain& domain)
        : domain_(domain),
          head_(std::numeric_limits<Key>::min(), Value{}, &tail_),
          tail_(std::numeric_limits<Key>::max(), Value{}, nullptr) {}

    cr_list(const cr_list&) = delete;
    cr_list& operator=(const cr_list&) = delete;

    /// Frees every node still linked. No operation may be running.
    ~cr_list() {
        node* curr = head_.next.load(std::memory_order_relaxed);
        while (curr != &tail_) {
            node* next = detail::without_mark(curr->next.load(std::memory_order_relaxed));
            domain_.free_unshared(curr);
            curr = next;
        }
    }

    bool insert(smr::context_ref<Domain> self, Key key, Value value) {
        detail::check_key(key, min_key, max_key);
        std::lock_guard hold(lock_);
        const window w = locate(key);
        if (w.curr->key == key) return false;
        // Outside an operation: a wait for memory runs idle operations.
        node* fresh = domain_.template allocate_outside_op<node>(self, key, value, w.curr);
        // release: publishes fresh's fields to the readers' acquire of pred.next.
        w.pred->next.store(fresh, std::memory_order_release);
        return true;
    }

    bool erase(smr::context_ref<Domain> self, Key key) {
        detail::check_key(key, min_key, max_key);
        node* removed = nullptr;
        {
            std::lock_guard hold(lock_);
            const window w = locate(key);
            if (w.curr->key != key) return false;
            node* succ = w.curr->next.load(std::memory_order_relaxed);
            if constexpr (readers_validate) {
                // Before the unlink: a reader standing on curr that re-reads
                // curr.next after its reservation either sees the mark and
                // restarts, or read it before the unlink, while succ (and
                // curr) were linked. Relaxed: the retire below scans the
                // reservations after a seq_cst fence, which this store precedes.
                w.curr->next.store(detail::with_mark(succ), std::memory_order_relaxed);
            }
            // release: readers reaching succ through pred see its fields (a
            // lock holder's earlier publication, which our lock ordered).
            w.pred->next.store(succ, std::memory_order_release);
            removed = w.curr;
        }
        smr::op_guard guard(domain_, self);
        domain_.retire(self, removed);
        return true;
    }

    bool contains(smr::context_ref<Domain> self, Key key) {
        detail::check_key(key, min_key, max_key);
        smr::op_guard guard(domain_, self);
        const auto slots = smr::lend_slots<2>(guard);  // hand over hand
        for (;;) {  // restarts only when NBR neutralizes the read phase
            SMR_READ_PHASE_BEGIN(domain_, self);
            const bool found = search(slots.lent(), key);
            domain_.read_phase_end(self);
            return found;
        }
    }

    /// For a stalled reader (smrbench --stall-hold): inside one operation,
    /// holds the first node after the head, as a reader preempted there
    /// would, and calls wait() until it returns. wait() must only read and
    /// sleep (it runs inside a read phase).
    template <class Wait>
    void hold_first(smr::context_ref<Domain> self, Wait&& wait) {
        smr::op_guard guard(domain_, self);
        SMR_READ_PHASE_BEGIN(domain_, self);
        [[maybe_unused]] const auto first = guard.protect(head_.next);  // held while waiting
        wait();
        domain_.read_phase_end(self);
    }

    /// Quiescent only (no operation on the set runs): how many keys it
    /// holds, counted by a walk of the whole structure, O(n).
    std::size_t size() const { return validate().size; }

    /// Quiescent only. Checks: sentinels intact, keys strictly ascending from
    /// head to tail, no reachable node marked, the lock free; sums keys and
    /// counts nodes between the sentinels.
    validation_result validate() const {
        validation_result result =
            detail::validate_marked_list(head_, tail_, "reachable removed node");
        if (lock_.is_locked()) result.fail("writer lock held");
        return result;
    }

    /// Quiescent only (after validate() held): calls f(key) for every key
    /// between the sentinels, in order.
    template <class F>
    void for_each_key(F&& f) const {
        const node* curr = head_.next.load(std::memory_order_relaxed);
        for (; curr != &tail_ && curr != nullptr;
             curr = detail::without_mark(curr->next.load(std::memory_order_relaxed))) {
            f(curr->key);
        }
    }

  private:
    /// The reader (Hart's Listing 2, or Listing 3 with a reservation scheme):
    /// writes nothing shared, so a neutralization may abandon it anywhere.
    bool search(slot_view block, Key key) noexcept {
        const auto reader = smr::reader_of(domain_, block);
        const auto slots = smr::first_slots<2>(reader);
        for (;;) {                                              // Listing 3's try_again
            node* curr = reader.protect(slots[0], head_.next);  // head is never removed
            std::size_t slot = 1;
            bool removed_under_us = false;
            while (curr->key < key) {
                node* next = smr::protect_in(reader, slots[slot], curr->next, curr);
                if constexpr (readers_validate) {
                    if (detail::is_marked(next)) {  // curr was removed: its next is no guide
                        removed_under_us = true;
                        break;
                    }
                }
                // curr was linked when next was read (validated, or protected
                // for the whole operation): next is safe to read.
                curr = next;
                slot ^= 1;
            }
            if (!removed_under_us) return curr->key == key;
        }
    }

    /// A writer's traversal, under the lock: every node it meets is linked,
    /// and every write to a link was made by a lock holder, so relaxed loads
    /// see the latest values.
    window locate(Key key) noexcept {
        node* pred = &head_;
        node* curr = head_.next.load(std::memory_order_relaxed);
        while (curr->key < key) {
            pred = curr;
            curr = curr->next.load(std::memory_order_relaxed);
        }
        return {pred, curr};
    }

    Domain& domain_;
    detail::spinlock lock_;
    /// Sentinels live in the list object (never allocated, retired or freed),
    /// each on its own cache lines unless SentinelLayout packs them.
    alignas(node) alignas(SentinelLayout::alignment) node head_;
    alignas(node) alignas(SentinelLayout::alignment) node tail_;
};

}  // namespace smr::ds
