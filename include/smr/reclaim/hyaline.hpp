// hyaline: Hyaline-1S, the robust single-slot-per-thread variant of Hyaline
// (Nikolaev and Ravindran, "Snapshot-Free, Transparent, and Robust Memory
// Reclamation for Lock-Free Data Structures", PLDI 2021, DOI
// 10.1145/3453483.3454090).
//
// Reclamation by reference counting, but of batches, not of nodes, and
// counted only by the threads that were inside an operation when the batch
// was sealed (batch_counting.hpp: the batches, the seal, why a reader is
// safe, the barrier). Each thread has one slot: begin_op holds it, end_op
// releases it, and nobody ever scans anybody's reservations to decide a
// node: a seal reads each slot once per batch, and an operation's end
// touches only the batches sealed while it ran.
//
// Robustness (the S): plain Hyaline is an epoch scheme in disguise, a thread
// stalled inside an operation holding every batch sealed after it entered.
// Hyaline-S adds birth eras, as HE and IBR do: protect keeps the slot's era
// (the paper's `access`) equal to the global era, re-reading its source
// when the era moves, and a batch skips a slot whose era is older than the
// batch's oldest node. A stalled thread thus holds only the batches with a
// node born before it stalled.
//
// Progress: begin_op is one store and a compiler barrier, end_op one swap
// and a walk of the batches sealed during the operation: both wait-free.
// protect is lock-free (it retries while the era moves, as he's), and so is
// a seal (its CAS on a slot fails only when another sealer pushed or the
// owner entered or left). This is the paper's Hyaline-1S; making every call
// wait-free is what Crystalline adds. Memory: max(bag_threshold, T + 1)
// unsealed nodes per thread; a sealed batch is freed by the last of the
// threads it reached to leave.
//
// Against the artifact (github rusnikola/lfsmr, hyaline/lfbsmro.h): the
// layout (batch_counting.hpp), and fences by fence_mode (by default a
// compiler barrier at each operation's start and era change against one
// membarrier per sealed batch) where the artifact's enter and era
// announcement are seq_cst stores (fence = "symmetric" is the paper's).
#pragma once

#include <atomic>
#include <cstdint>

#include "smr/reclaim/batch_counting.hpp"
#include "smr/reclaim/slots.hpp"
#include "smr/reclaim/traits.hpp"

namespace smr {

namespace detail {

struct hyaline_local : counted_slots<1>, counted_thread_state {
    /// The era the slot announced: the owner's copy of eras[0].
    std::uint64_t access_cache = 0;
};

}  // namespace detail

/// Hyaline-1S; see the comment at the top of this file.
class hyaline_domain : public batch_counting_domain<hyaline_domain, detail::hyaline_local> {
    using base = batch_counting_domain<hyaline_domain, detail::hyaline_local>;

  public:
    static constexpr reclaimer_traits traits{
        .name = "hyaline",
        .family = reclaimer_family::reservation,
        .garbage_bounded = true,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = false,
        .reads = {.bag_threshold = true, .epoch_freq = true, .fence = true},
    };

    using base::base;

    void on_begin_op(int tid) noexcept {
        amortized_step(tid);
        // relaxed, then the reader's fence: the pair with a seal
        // (batch_counting.hpp). Between operations the head is 0, so no
        // cell is overwritten.
        local(tid).heads[0].store(held, std::memory_order_relaxed);
        fences_.reader();
    }

    /// A thread's era for one traversal (domain_base::reader): the slot's
    /// era, the owner's copy of it and the global era, read once.
    class reader_type : public detail::unused_slots {
      public:
        reader_type(hyaline_domain& domain, int tid) noexcept
            : global_era_(&domain.global_era_),
              era_(&domain.local(tid).eras[0]),
              announced_(&domain.local(tid).access_cache),
              fences_(domain.fences_) {}

        template <class T>
        T* protect(detail::unused_slot /*slot*/, const std::atomic<T*>& source) const noexcept {
            for (;;) {
                // acquire: pairs with the release (or CAS) that published
                // the node, so its fields and its birth era's load come
                // before ours.
                T* ptr = source.load(std::memory_order_acquire);
                // relaxed: after the acquire above, so not older than the
                // node's birth era (coherence).
                const std::uint64_t era = global_era_->load(std::memory_order_relaxed);
                if (era == *announced_) return ptr;
                *announced_ = era;
                // relaxed, then the reader's fence: the pair with a seal's
                // era load; the loop re-reads the source after it.
                era_->store(era, std::memory_order_relaxed);
                fences_.reader(*era_, source);
            }
        }

      private:
        const std::atomic<std::uint64_t>* global_era_;
        std::atomic<std::uint64_t>* era_;
        std::uint64_t* announced_;
        core::fence_pair fences_;
    };

    template <class T>
    T* on_protect(int tid, int index, const std::atomic<T*>& source) noexcept {
        detail::check_slot(index);  // one era per thread, but hp's slots would index
        return make_reader(tid).protect(detail::unused_slot{}, source);
    }
    reader_type make_reader(int tid) noexcept { return {*this, tid}; }

    /// Leaves: releases the slot, dropping a reference to each batch sealed
    /// during the operation.
    void on_end_op(int tid) noexcept { release(tid, 0, 0); }
};

}  // namespace smr
