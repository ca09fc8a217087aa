// Transactional red-black tree: every operation one transaction of smrlab's
// word-based STM (smr/stm/). It is the red-black tree of Baldassin, Borin and
// Araujo's allocator study ("On the Impact of Memory Allocators on the
// Performance of Software Transactional Memory", TRANSACT 2014, Section 5.3),
// the tree of TinySTM's integer-set benchmark, which is STAMP's rbtree, which
// is java.util.TreeMap's algorithm (Cormen et al.'s red-black tree with
// parent pointers) with every field access transactional.
//
// ---- What it is for -----------------------------------------------------------
//
// Its nodes are the paper's 48 bytes: key, value, parent, left, right and
// colour, six words. No allocator has a 48-byte class in common: glibc and
// Hoard round it up to 64 bytes, jemalloc, tcmalloc, mimalloc and tbbmalloc
// have 48-byte classes, so consecutive nodes start 48 bytes apart and the
// last 16 bytes of one share a 32-byte stripe with the first 16 of the next
// (Section 5.3: a false conflict glibc's 64-byte blocks cannot have).
// Transactions are short (a root-to-leaf path, about 2 log n nodes, and a
// rebalancing that rotates near the leaf), but every update writes the
// parent and colour words of several nodes.
//
// ---- The algorithm -------------------------------------------------------------
//
// TreeMap's, as STAMP transcribes it, in stm_rb_core.hpp, which the STAMP
// applications' maps share: each operation here is one transaction over the
// tree's root word.
//
// Reclamation, progress and the rules for callers: as stm_list's (the STM's
// pointer blocks; a thread calls flush(self) before its context detaches).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

#include "smr/ds/key_range.hpp"
#include "smr/ds/options.hpp"
#include "smr/ds/stm_rb_core.hpp"
#include "smr/ds/stm_structure.hpp"
#include "smr/ds/validation.hpp"

namespace smr::ds {

/// The transactional red-black tree as a set of std::int64_t keys in
/// [min_key, max_key] with a value per key.
template <class Domain>
class stm_rbtree : public detail::stm_structure<Domain> {
    friend struct smr::ds::testing::access;  // tests corrupt internals

    using base = detail::stm_structure<Domain>;

    using node = stm_rb_node;
    static constexpr std::int64_t red = node::red;
    static constexpr std::int64_t black = node::black;

  public:
    using typename base::context_type;
    using key_type = std::int64_t;
    using value_type = std::int64_t;

    static constexpr std::string_view name = "stm_rbtree";
    static constexpr key_type min_key = std::numeric_limits<key_type>::min() + 1;
    static constexpr key_type max_key = std::numeric_limits<key_type>::max() - 1;
    static constexpr std::size_t node_size = sizeof(node);

    /// `domain` must outlive the tree; options.ort_bits and options.ort_shift
    /// map addresses to the STM's versioned locks.
    explicit stm_rbtree(Domain& domain, const ds_options& options = {}) : base(domain, options) {}

    /// Frees every node. No operation may be running.
    ~stm_rbtree() { free_stm_rb_tree(root_); }

    bool insert(smr::context_ref<Domain> self, key_type key, value_type value) {
        detail::check_key(key, min_key, max_key);
        return this->stm_.atomically(self, [&](stm::transaction& tx) {
            return stm_rb_view{root_, tx}.insert(key, value);
        });
    }

    bool erase(smr::context_ref<Domain> self, key_type key) {
        detail::check_key(key, min_key, max_key);
        return this->stm_.atomically(self, [&](stm::transaction& tx) {
            return stm_rb_view{root_, tx}.erase(key);
        });
    }

    bool contains(smr::context_ref<Domain> self, key_type key) {
        detail::check_key(key, min_key, max_key);
        return this->stm_.atomically(self, [&](stm::transaction& tx) {
            return stm_rb_view{root_, tx}.find(key) != nullptr;
        });
    }

    /// Quiescent only (no operation on the set runs): how many keys it
    /// holds, counted by a walk of the whole structure, O(n).
    std::size_t size() const { return validate().size; }

    /// Quiescent only. Checks: keys strictly ascending in order, every child's
    /// parent pointer, a black root, no red node with a red child, the same
    /// number of black nodes on every path from the root to a null child,
    /// and no versioned lock left held; sums keys and counts nodes.
    validation_result validate() const {
        validation_result result;
        check_stm_rb_tree(root_, result);
        this->check_locks_released(result);
        return result;
    }

  private:
    node* root_ = nullptr;  // a transactional word
};

}  // namespace smr::ds
