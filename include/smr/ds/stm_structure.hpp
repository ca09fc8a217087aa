// What the transactional structures (stm_list, stm_hash_set) share: one STM
// instance over the caller's domain, built from ds_options' ORT mapping, the
// thread-exit flush and the statistics, the 16-byte node of the allocator
// study, and the validation that no versioned lock is left held. Each
// structure keeps only its own algorithm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>

#include "smr/ds/options.hpp"
#include "smr/ds/validation.hpp"
#include "smr/reclaim/context.hpp"
#include "smr/stm/stm.hpp"

namespace smr::ds::detail {

/// The allocator study's node: 16 bytes, no header, plain std::malloc memory
/// (its address is the allocator's choice, which is what the study
/// measures). The key is written before the node is published and never
/// again; next is a transactional word.
struct stm_node {
    std::int64_t key;
    stm_node* next;
};
static_assert(sizeof(stm_node) == 16);

/// A node made outside any transaction (sentinels, the prefill of a test).
inline stm_node* make_plain_node(std::int64_t key, stm_node* next) {
    void* block = std::malloc(sizeof(stm_node));
    if (block == nullptr) throw std::bad_alloc();
    return ::new (block) stm_node{key, next};
}

/// The STM a transactional structure runs on, and what it offers callers.
template <class Domain>
class stm_structure {
    friend struct smr::ds::testing::access;  // tests corrupt internals

  public:
    using domain_type = Domain;
    /// What every operation takes: the calling thread's attachment.
    using context_type = smr::context<Domain>;

    /// Runs on the STM (smr::check: only schemes that protect whole
    /// operations serve it; the others cannot be instantiated).
    static constexpr bool transactional = true;
    /// A doomed transaction may read a node another has already unlinked.
    static constexpr bool traverses_unlinked_nodes = true;
    static constexpr bool counts_links = false;

    /// Outside any operation of the thread: hands its pending frees to the
    /// domain. Call it before the thread's context detaches, or those frees
    /// wait for the slot's next user (or the structure's destruction).
    void flush(smr::context_ref<Domain> self) { stm_.flush(self); }

    /// Commits and aborts by cause, over all threads (exact once they are
    /// done).
    stm::stm_stats stm_stats() const noexcept { return stm_.stats(); }
    const stm::stm<Domain>& transactional_memory() const noexcept { return stm_; }

  protected:
    /// `domain` must outlive the structure; options.ort_bits and
    /// options.ort_shift map addresses to versioned locks
    /// (std::invalid_argument if out of range).
    stm_structure(Domain& domain, const ds_options& options)
        : stm_(domain, stm::stm_config{.ort_bits = options.ort_bits, .shift = options.ort_shift}) {
        static_assert(stm::serves_stm<Domain>,
                      "a transactional structure needs a reclaimer that protects whole "
                      "operations (smr::protects_whole_operation): an epoch scheme, none, or "
                      "liburcu");
    }

    ~stm_structure() = default;
    stm_structure(const stm_structure&) = delete;
    stm_structure& operator=(const stm_structure&) = delete;

    /// Quiescent only: a versioned lock still held means a transaction ended
    /// without releasing it (a walk over the whole table).
    void check_locks_released(validation_result& result) const {
        if (const std::size_t held = stm_.orecs().locked_entries(); held != 0) {
            result.fail(std::to_string(held) + " versioned locks still held");
        }
    }

    stm::stm<Domain> stm_;
};

}  // namespace smr::ds::detail
