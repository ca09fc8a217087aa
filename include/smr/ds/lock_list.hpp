// Lock-based list: a sorted singly linked list behind one spinlock that every
// operation, reads included, takes. The baseline Hart, McKenney, Demke Brown
// and Walpole set beside the lockless schemes in their base-cost figure (JPDC
// 2007, Figure 6: "simple spinlock-based alternatives"), to show what a
// reclamation scheme's overhead is worth against the lock it replaces.
//
// No thread can hold a node it did not reach under the lock, so an erased
// node is freed as soon as the lock is released: the structure needs no
// reclamation scheme, and with every scheme it runs the same code (the
// scheme's operations are never entered). Its meaningful pairing is `none`
// (smrbench --reclaimer none), which is how the experiments run it. Memory
// still comes from, and goes back to, the domain's allocator, counted (a
// removed node is retired and freed at once: domain_base::free_exclusive),
// so allocator and pool studies see its traffic.
//
// Progress: blocking, every operation. One lock means no parallelism at all:
// on more than one core it measures the lock's cost and its cache-line
// transfers, which is the point of the baseline.
//
// Memory layout: the domain's header + key, value and next (40 bytes with the
// 16-byte header of the epoch-family and leak domains), as hm_list and
// cr_list, with plain (non-atomic) links: only the lock holder reads them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>

#include "smr/core/padded.hpp"
#include "smr/ds/key_range.hpp"
#include "smr/ds/list_validation.hpp"
#include "smr/ds/spinlock.hpp"
#include "smr/ds/validation.hpp"
#include "smr/reclaim/context.hpp"

namespace smr::ds {

/// The spinlock-protected list as a set of Key (with a Value per key). Keys
/// must lie in [min_key, max_key] = [numeric_limits<Key>::min() + 1,
/// numeric_limits<Key>::max() - 1]: the sentinels hold the extremes.
template <class Domain, class Key = std::int64_t, class Value = std::int64_t>
class lock_list {
    friend struct smr::ds::testing::access;  // tests corrupt internals

    struct node final : Domain::node_base {
        node(Key k, Value v, node* successor) noexcept : key(k), value(v), next(successor) {}

        const Key key;
        const Value value;
        node* next;  // read and written under the lock only
    };

    struct window {
        node* pred;
        node* curr;
    };

  public:
    using domain_type = Domain;
    /// What every operation takes: the calling thread's attachment.
    using context_type = smr::context<Domain>;
    using key_type = Key;
    using value_type = Value;

    static constexpr std::string_view name = "lock_list";
    /// Every access, reads included, holds the one lock: no thread reaches
    /// a node that is unlinked, let alone freed (smr::check: safe with every
    /// scheme it can be built with).
    static constexpr bool locks_every_access = true;
    static constexpr bool traverses_unlinked_nodes = false;
    /// Links are plain, not counted: reference counting cannot run it.
    static constexpr bool counts_links = false;
    static constexpr int protect_slots = 0;
    static constexpr Key min_key = std::numeric_limits<Key>::min() + 1;
    static constexpr Key max_key = std::numeric_limits<Key>::max() - 1;
    static constexpr std::size_t node_size = sizeof(node);

    /// `domain` must outlive the list.
    explicit lock_list(Domain& domain)
        : domain_(domain),
          head_(std::numeric_limits<Key>::min(), Value{}, &tail_),
          tail_(std::numeric_limits<Key>::max(), Value{}, nullptr) {}

    lock_list(const lock_list&) = delete;
    lock_list& operator=(const lock_list&) = delete;

    /// Frees every node still linked. No operation may be running.
    ~lock_list() {
        node* curr = head_.next;
        while (curr != &tail_) {
            node* next = curr->next;
            domain_.free_unshared(curr);
            curr = next;
        }
    }

    bool insert(smr::context_ref<Domain> self, Key key, Value value) {
        detail::check_key(key, min_key, max_key);
        std::lock_guard hold(lock_);
        const window w = locate(key);
        if (w.curr->key == key) return false;
        // Outside an operation (there is none): a wait for memory runs idle
        // operations, so a pool that ran out refills under any scheme.
        w.pred->next = domain_.template allocate_outside_op<node>(self, key, value, w.curr);
        return true;
    }

    bool erase(smr::context_ref<Domain> self, Key key) {
        detail::check_key(key, min_key, max_key);
        node* removed = nullptr;
        {
            std::lock_guard hold(lock_);
            const window w = locate(key);
            if (w.curr->key != key) return false;
            w.pred->next = w.curr->next;
            removed = w.curr;
        }
        // Unreachable, and nobody holds it: every reader held the lock.
        domain_.free_exclusive(self, removed);
        return true;
    }

    bool contains(smr::context_ref<Domain>, Key key) {
        detail::check_key(key, min_key, max_key);
        std::lock_guard hold(lock_);
        return locate(key).curr->key == key;
    }

    /// Quiescent only (no operation on the set runs): how many keys it
    /// holds, counted by a walk of the whole structure, O(n).
    std::size_t size() const { return validate().size; }

    /// Quiescent only. Checks: sentinels intact, keys strictly ascending from
    /// head to tail, the lock free; sums keys and counts nodes between the
    /// sentinels.
    validation_result validate() const {
        validation_result result = detail::validate_sorted_list(
            head_, tail_, [](const node* n) -> const node* { return n->next; },
            [](const node*) { return std::string(); });
        if (lock_.is_locked()) result.fail("lock held");
        return result;
    }

  private:
    window locate(Key key) noexcept {
        node* pred = &head_;
        node* curr = head_.next;
        while (curr->key < key) {
            pred = curr;
            curr = curr->next;
        }
        return {pred, curr};
    }

    Domain& domain_;
    alignas(core::false_sharing_range) detail::spinlock lock_;
    node head_;
    node tail_;
};

}  // namespace smr::ds
