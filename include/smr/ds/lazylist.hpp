// Lazy list: Heller, Herlihy, Luchangco, Moir, Scherer, Shavit, "A Lazy
// Concurrent List-Based Set Algorithm" (OPODIS 2005).
//
// A sorted singly linked list between two sentinels. Removal is "lazy": erase
// first marks the node (logical delete, the linearization point), then
// unlinks it (physical delete). Because a node is marked before it leaves the
// list and marks are permanent, contains needs no lock and no validation: it
// walks the list, possibly through nodes that were already unlinked, and reads
// the mark of the node it stops at. Updates lock pred and curr (in list order,
// so they cannot deadlock) and validate that both are unmarked and still
// adjacent; if not, they restart from the head.
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
#include "smr/ds/spinlock.hpp"
#include "smr/ds/validation.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/reclaim/reader.hpp"
#include "smr/reclaim/unlink.hpp"

namespace smr::ds {

/// The lazy list of Heller et al. as a set of Key (with a Value per key).
///
/// Keys must lie in [min_key, max_key] = [numeric_limits<Key>::min() + 1,
/// numeric_limits<Key>::max() - 1]: the head and tail sentinels hold the two
/// extremes.
///
/// Progress: contains is wait-free (no lock, no restart; it walks at most the
/// keys between the head and its key). insert and erase are blocking: they
/// lock two adjacent nodes and restart when validation fails. Unsuccessful
/// updates (key present for insert, absent for erase) return after the
/// traversal without locking or writing, like contains (DGT's "ASCY 3").
///
/// Reclamation: traverses_unlinked_nodes, so a scheme that validates each
/// reservation against its source pointer (hazard pointers) cannot protect a
/// traversal; epoch, era and neutralization schemes can, and HP++ (hp_pp):
/// every step goes through smr::protect_from with the node it leaves and
/// erase names the erased node's successor as its unlink's frontier
/// (smr::begin_unlink). Under hp_pp a traversal that stands on an
/// invalidated node starts again from the head, so contains is lock-free
/// there, not wait-free. erase retires one node (the erased one); a
/// successful insert allocates one node.
///
/// Memory layout: a node is the domain's header + 32 bytes (key, value, next,
/// lock, mark); 48 bytes with the 16-byte header of the epoch-family and
/// leak domains.
template <class Domain, class Key = std::int64_t, class Value = std::int64_t>
class lazylist {
    friend struct smr::ds::testing::access;  // tests corrupt internals

    struct node final : Domain::node_base {
        node(Key k, Value v, node* successor) noexcept : key(k), value(v), next(successor) {}

        const Key key;
        const Value value;
        std::atomic<node*> next;
        detail::spinlock lock;
        /// Logically deleted. Written once (false -> true) under `lock`, never
        /// cleared. Relaxed everywhere: it carries no data; updaters read it
        /// under the lock (whose acquire orders it), and contains needs only
        /// the flag itself.
        std::atomic<bool> marked{false};
    };

    /// Result of the read phase: pred.key < key <= curr.key, curr == pred.next
    /// at the time curr was read.
    struct window {
        node* pred;
        node* curr;
    };
    /// A traversal's protect: the two slots its operation borrows from the guard.
    using slot_view = typename smr::slot_block<Domain, 2>::view;

  public:
    using domain_type = Domain;
    /// What every operation takes: the calling thread's attachment.
    using context_type = smr::context<Domain>;
    using key_type = Key;
    using value_type = Value;

    static constexpr std::string_view name = "lazylist";
    /// contains and the updates' traversal walk through unlinked nodes.
    static constexpr bool traverses_unlinked_nodes = true;
    /// Steps out of nodes with smr::protect_from, unlinks with a frontier
    /// (HP++): an unlinked node is marked and locked-out, so its next is
    /// frozen, and its successor cannot be unlinked while the eraser holds
    /// the node's lock.
    static constexpr bool names_frontiers = true;
    /// One read phase (the search) then one write phase (lock, validate,
    /// write) per attempt; the write phase touches only the reserved nodes.
    static constexpr bool has_read_write_phases = true;
    /// A failed validation restarts the attempt from the root.
    static constexpr bool read_phases_start_at_root = true;
    /// pred and curr, hand over hand.
    static constexpr int protect_slots = 2;
    static constexpr Key min_key = std::numeric_limits<Key>::min() + 1;
    static constexpr Key max_key = std::numeric_limits<Key>::max() - 1;
    /// Bytes of one node (for allocator studies).
    static constexpr std::size_t node_size = sizeof(node);

    /// `domain` must outlive the list.
    explicit lazylist(Domain& domain)
        : domain_(domain),
          head_(std::numeric_limits<Key>::min(), Value{}, &tail_),
          tail_(std::numeric_limits<Key>::max(), Value{}, nullptr) {}

    lazylist(const lazylist&) = delete;
    lazylist& operator=(const lazylist&) = delete;

    /// Frees every node still in the list. No operation may be running.
    /// Retired nodes belong to the domain, which frees them.
    ~lazylist() {
        node* curr = head_.next.load(std::memory_order_relaxed);
        while (curr != &tail_) {
            node* next = curr->next.load(std::memory_order_relaxed);
            domain_.free_unshared(curr);
            curr = next;
        }
    }

    bool insert(smr::context_ref<Domain> caller, Key key, Value value) {
        detail::check_key(key, min_key, max_key);
        const auto self = smr::local_copy(caller);
        smr::op_guard guard(domain_, self);
        const auto slots = smr::lend_slots<2>(guard);  // pred and curr, hand over hand
        node* fresh = nullptr;  // allocated in a write phase, kept across restarts
        for (;;) {
            SMR_READ_PHASE_BEGIN(domain_, self);
            const window w = search(slots.lent(), key);
            domain_.read_phase_end(self, w.pred, w.curr);

            const bool present = w.curr->key == key;
            if (present && !w.curr->marked.load(std::memory_order_relaxed)) {
                // Linearized like a successful contains: curr was in the list.
                if (fresh != nullptr) domain_.discard(self, fresh);
                return false;
            }
            // A present but marked curr is being erased: locking it waits for
            // the eraser, then validation fails and we restart.
            if (!present && fresh == nullptr) {
                fresh = domain_.template allocate<node>(self, key, value, nullptr);
            }
            w.pred->lock.lock();
            w.curr->lock.lock();
            if (validate(w.pred, w.curr)) {
                // Here curr.key != key: a node with our key that is not marked
                // made us return above, and a marked one fails validation.
                fresh->next.store(w.curr, std::memory_order_relaxed);  // not yet shared
                // release: publishes fresh's fields; pairs with the acquire
                // load of pred.next in every traversal (protect).
                w.pred->next.store(fresh, std::memory_order_release);
                w.curr->lock.unlock();
                w.pred->lock.unlock();
                return true;
            }
            w.curr->lock.unlock();
            w.pred->lock.unlock();
        }
    }

    bool erase(smr::context_ref<Domain> caller, Key key) {
        detail::check_key(key, min_key, max_key);
        const auto self = smr::local_copy(caller);
        smr::op_guard guard(domain_, self);
        const auto slots = smr::lend_slots<2>(guard);  // pred and curr, hand over hand
        for (;;) {
            SMR_READ_PHASE_BEGIN(domain_, self);
            const window w = search(slots.lent(), key);
            domain_.read_phase_end(self, w.pred, w.curr);

            // Key absent, or already logically deleted by another erase:
            // linearized like an unsuccessful contains; nothing is written.
            if (w.curr->key != key || w.curr->marked.load(std::memory_order_relaxed)) {
                return false;
            }
            w.pred->lock.lock();
            w.curr->lock.lock();
            if (validate(w.pred, w.curr)) {
                // Logical delete: the linearization point. Ordered before the
                // unlink by the release store below.
                w.curr->marked.store(true, std::memory_order_relaxed);
                // curr.next is stable: we hold curr's lock, and every writer
                // of it held that lock, whose acquire made its write visible.
                node* succ = w.curr->next.load(std::memory_order_relaxed);
                // succ: curr's frozen successor (hp_pp), which nobody
                // unlinks while we hold curr's lock.
                auto unlink = smr::begin_unlink(domain_, self, succ);
                // release: pairs with traversals' acquire of pred.next (which
                // then see curr marked) and publishes succ's fields, known to
                // us through the locks' acquire chain.
                w.pred->next.store(succ, std::memory_order_release);
                w.curr->lock.unlock();
                w.pred->lock.unlock();
                unlink.retire(w.curr);
                return true;
            }
            w.curr->lock.unlock();
            w.pred->lock.unlock();
        }
    }

    bool contains(smr::context_ref<Domain> caller, Key key) {
        detail::check_key(key, min_key, max_key);
        const auto self = smr::local_copy(caller);
        smr::op_guard guard(domain_, self);
        const auto block = smr::lend_slots<2>(guard);
        // Restarts only when NBR neutralizes its read phase or hp_pp finds
        // the node it stands on invalidated.
        for (;;) {
            SMR_READ_PHASE_BEGIN(domain_, self);
            // The whole traversal is the read phase.
            const auto reader = block.reader(domain_);
            const auto slots = smr::first_slots<2>(reader);
            smr::link_read<node> curr{reader.protect(slots[0], head_.next), true};
            for (std::size_t slot = 1; curr.ptr->key < key; slot ^= 1) {
                curr = smr::protect_from(reader, slots[slot], curr.ptr->next, *curr.ptr);
                if (!curr.valid) break;
            }
            if (!curr.valid) continue;
            domain_.read_phase_end(self, curr.ptr);
            return curr.ptr->key == key && !curr.ptr->marked.load(std::memory_order_relaxed);
        }
    }

    /// Quiescent only (no operation on the set runs): how many keys it
    /// holds, counted by a walk of the whole structure, O(n).
    std::size_t size() const { return validate().size; }

    /// Quiescent only. Checks: sentinels intact, keys strictly ascending from
    /// head to tail, no reachable node marked or locked; sums keys and counts
    /// nodes between the sentinels.
    validation_result validate() const {
        return detail::validate_sorted_list(
            head_, tail_,
            [](const node* n) -> const node* { return n->next.load(std::memory_order_relaxed); },
            [](const node* n) -> std::string {
                if (n->marked.load(std::memory_order_relaxed)) return "reachable marked node";
                if (n->lock.is_locked()) return "reachable locked node";
                return "";
            });
    }

  private:
    /// The read phase of insert and erase: the wait-free traversal of the
    /// paper, hand over hand in two protect slots. Writes nothing shared and
    /// keeps no state across a neutralization restart.
    window search(slot_view block, Key key) noexcept {
        const auto reader = smr::reader_of(domain_, block);
        const auto slots = smr::first_slots<2>(reader);
        for (;;) {                // again from the head when hp_pp finds pred invalidated
            node* pred = &head_;  // sentinels are never freed: no slot needed
            smr::link_read<node> curr{reader.protect(slots[0], head_.next), true};
            for (std::size_t slot = 1; curr.ptr->key < key; slot ^= 1) {
                pred = curr.ptr;  // stays protected in slot `slot ^ 1`
                curr = smr::protect_from(reader, slots[slot], pred->next, *pred);
                if (!curr.valid) break;
            }
            if (curr.valid) return {pred, curr.ptr};
        }
    }

    /// The paper's validate: called with both locks held, so relaxed loads
    /// see the latest values (every writer of these fields held the lock).
    static bool validate(const node* pred, const node* curr) noexcept {
        return !pred->marked.load(std::memory_order_relaxed) &&
               !curr->marked.load(std::memory_order_relaxed) &&
               pred->next.load(std::memory_order_relaxed) == curr;
    }

    Domain& domain_;
    /// Sentinels live in the list object (never allocated, retired or freed),
    /// each on its own cache lines: head is written by every update at the
    /// front of the list, tail is only read.
    alignas(core::false_sharing_range) node head_;
    alignas(core::false_sharing_range) node tail_;
};

}  // namespace smr::ds
