// Transactional sorted list: a sorted singly linked list each of whose
// operations is one transaction of smrlab's word-based STM (smr/stm/). It is
// the linked list of Baldassin, Borin and Araujo's allocator study ("On the
// Impact of Memory Allocators on the Performance of Software Transactional
// Memory", TRANSACT 2014, Section 5), itself the list of TinySTM's integer-set
// benchmark.
//
// ---- What it is for -----------------------------------------------------------
//
// Not speed: a lock-free list (hm_list) does the same with no read set, no
// lock table and no commit. It exists to show how the allocator meets the
// STM. Its nodes are the paper's 16 bytes (a 64-bit key and a next pointer),
// plain std::malloc blocks with no header, so the allocator alone decides
// where consecutive nodes land and therefore whether two of them share a
// versioned lock: 16-byte size classes put two nodes in one 32-byte stripe
// (shift 5), glibc's 32-byte chunks put one; two nodes sharing a lock make
// transactions on different keys conflict (counted as false aborts). The
// sentinels are allocated the same way, first the tail then the head, as the
// benchmark does.
//
// ---- The algorithm -------------------------------------------------------------
//
// The paper's benchmark: every operation walks from the head inside one
// transaction, loading each node's key and next transactionally (two
// read-set entries per node, as there). insert links a node made by the
// transaction (freed again if it aborts); erase links around the node and
// frees it with the transaction, which locks the node's words until the
// commit (TinySTM's stm_free) and defers the std::free past every
// transaction that may still read it. contains is read-only and commits
// without validation. Every value a transaction reads belongs to one
// committed state (the STM's opacity), so a walk never follows a torn or
// freed pointer; a conflict aborts and restarts the whole operation.
//
// ---- Reclamation -----------------------------------------------------------------
//
// Through the STM: a freed node waits in a pointer block that the domain
// retires (stm/deferred_free.hpp), so the domain's statistics count pointer
// blocks of 60 frees, not nodes. Only schemes that protect whole operations
// can serve (transactional: smr::check refuses the others, and they cannot be
// instantiated). A thread calls flush(self) before its context detaches, or
// its last frees wait for the slot's next user (or the destructor).
//
// Progress: the STM's. A transaction that runs alone commits; under
// contention none is guaranteed to (suicide contention management, with a
// short back-off).
//
// Values: a set of keys, like the paper's; the value argument of insert
// (the set interface smrbench and the tests drive) is not stored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>

#include "smr/ds/key_range.hpp"
#include "smr/ds/list_validation.hpp"
#include "smr/ds/options.hpp"
#include "smr/ds/stm_structure.hpp"
#include "smr/ds/validation.hpp"

namespace smr::ds {

/// The transactional list as a set of std::int64_t keys in [min_key, max_key]
/// (the sentinels hold the extremes).
template <class Domain>
class stm_list : public detail::stm_structure<Domain> {
    friend struct smr::ds::testing::access;  // tests corrupt internals

    using base = detail::stm_structure<Domain>;
    using node = detail::stm_node;

    struct window {
        node* pred;
        node* curr;
        std::int64_t curr_key;
    };

  public:
    using typename base::context_type;
    using key_type = std::int64_t;

    static constexpr std::string_view name = "stm_list";
    static constexpr key_type min_key = std::numeric_limits<key_type>::min() + 1;
    static constexpr key_type max_key = std::numeric_limits<key_type>::max() - 1;
    static constexpr std::size_t node_size = sizeof(node);

    /// `domain` must outlive the list; options.ort_bits and options.ort_shift
    /// map addresses to the STM's versioned locks (std::invalid_argument if
    /// out of range).
    explicit stm_list(Domain& domain, const ds_options& options = {}) : base(domain, options) {
        // Tail first, as the benchmark's new_node(VAL_MIN, new_node(VAL_MAX)).
        tail_ = detail::make_plain_node(std::numeric_limits<key_type>::max(), nullptr);
        try {
            head_ = detail::make_plain_node(std::numeric_limits<key_type>::min(), tail_);
        } catch (...) {
            std::free(tail_);
            throw;
        }
    }

    /// Frees every node still linked. No operation may be running.
    ~stm_list() {
        node* curr = head_;
        while (curr != nullptr) {
            node* next = curr->next;
            std::free(curr);
            curr = next;
        }
    }

    bool insert(smr::context_ref<Domain> self, key_type key,
                std::int64_t /*value: not stored*/ = 0) {
        detail::check_key(key, min_key, max_key);
        return this->stm_.atomically(self, [&](stm::transaction& tx) {
            const window w = locate(tx, key);
            if (w.curr_key == key) return false;
            tx.store(&w.pred->next, tx.make<node>(key, w.curr), {w.pred, sizeof(node)});
            return true;
        });
    }

    bool erase(smr::context_ref<Domain> self, key_type key) {
        detail::check_key(key, min_key, max_key);
        return this->stm_.atomically(self, [&](stm::transaction& tx) {
            const window w = locate(tx, key);
            if (w.curr_key != key) return false;
            tx.store(&w.pred->next, tx.load(&w.curr->next), {w.pred, sizeof(node)});
            tx.free(w.curr);
            return true;
        });
    }

    bool contains(smr::context_ref<Domain> self, key_type key) {
        detail::check_key(key, min_key, max_key);
        return this->stm_.atomically(
            self, [&](stm::transaction& tx) { return locate(tx, key).curr_key == key; });
    }

    /// Quiescent only (no operation on the set runs): how many keys it
    /// holds, counted by a walk of the whole structure, O(n).
    std::size_t size() const { return validate().size; }

    /// Quiescent only. Checks: sentinels intact, keys strictly ascending from
    /// head to tail, and no versioned lock left held; sums keys and counts
    /// nodes.
    validation_result validate() const {
        validation_result result = detail::validate_sorted_list(
            *head_, *tail_, [](const node* n) -> const node* { return n->next; },
            [](const node*) { return std::string(); });
        this->check_locks_released(result);
        return result;
    }

  private:
    /// The first node whose key is not below `key`, its predecessor and its
    /// key, all read in tx's snapshot.
    window locate(stm::transaction& tx, key_type key) const {
        node* pred = head_;  // the head never changes: not a transactional word
        node* curr = tx.load(&pred->next);
        for (;;) {
            const key_type curr_key = tx.load(&curr->key);
            if (curr_key >= key) return {pred, curr, curr_key};
            pred = curr;
            curr = tx.load(&curr->next);
        }
    }

    node* head_ = nullptr;
    node* tail_ = nullptr;
};

}  // namespace smr::ds
