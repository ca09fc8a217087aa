// crystalline_l: Crystalline-L, the lock-free Crystalline (Nikolaev and
// Ravindran, "Crystalline: Fast and Memory Efficient Wait-Free
// Reclamation", DISC 2021, DOI 10.4230/LIPIcs.DISC.2021.60).
//
// Hyaline's batches (batch_counting.hpp: the counting, the seal, why a
// reader is safe), with Hazard Eras' reservations: each thread has one slot
// per protect index (max_protect_slots), each with an era of its own, and
// a slot whose era changes *releases its list at once*: the batches pushed
// to it under the old era protected what the index held before, which the
// protect that moves it gives up. Hyaline-1S keeps one era per thread and
// releases only at the end of an operation, so a long operation holds every
// batch sealed while it runs; here a slot holds only the batches sealed
// since its last era change, the bound of Hazard Eras with the cost of
// Hyaline: no scan of everyone's reservations per node, one pass over the
// slots per batch.
//
// A slot is held from its first protect in an operation (an era is
// announced, then the reader's fence) until the operation ends; between
// operations it is released and its era forgotten by its owner, so the
// next operation's first protect announces again. The artifact's tracker
// (github rusnikola/wfsmr, HRTracker.hpp) keeps a released slot's era and
// lets the next operation's protect return without re-announcing when the
// era has not moved, while sealers skip released slots; we did not find
// what protects that read, and announce.
//
// Progress: protect is lock-free (it retries while the era moves, as he's),
// and so is a seal (a CAS per held slot fails only when another sealer
// pushed or the owner released the slot); the end of an operation is
// wait-free (one swap per held slot and a walk of what was pushed).
// Crystalline-W, the paper's wait-free variant, adds helping to protect and
// a swap-based push: crystalline_w.hpp. Memory: max(bag_threshold, 8T + 1)
// unsealed nodes per thread; a stalled thread's slots hold only the batches
// with a node born at or before their eras.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "smr/core/compiler.hpp"
#include "smr/core/mutant.hpp"
#include "smr/reclaim/batch_counting.hpp"
#include "smr/reclaim/slots.hpp"
#include "smr/reclaim/traits.hpp"

namespace smr {

namespace detail {

struct crystalline_local : counted_slots<static_cast<std::size_t>(max_protect_slots)>,
                           counted_thread_state {
    /// The era each slot announced, 0 while it is released: the owner's copy.
    std::uint64_t announced[max_protect_slots] = {};
};

}  // namespace detail

/// Crystalline-L; see the comment at the top of this file.
class crystalline_l_domain
    : public batch_counting_domain<crystalline_l_domain, detail::crystalline_local> {
    using base = batch_counting_domain<crystalline_l_domain, detail::crystalline_local>;

  public:
    static constexpr reclaimer_traits traits{
        .name = "crystalline_l",
        .family = reclaimer_family::reservation,
        .garbage_bounded = true,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = false,
        .protect_uses_slots = true,
        .nests = false,
        .reads = {.bag_threshold = true, .epoch_freq = true, .fence = true},
    };

    using base::base;

    /// A thread's slots for one traversal (domain_base::reader): the owner's
    /// copy of its eras and the global era, read once, as he's reader.
    class reader_type : public detail::indexed_slots {
      public:
        reader_type(crystalline_l_domain& domain, int tid) noexcept
            : domain_(&domain),
              global_era_(&domain.global_era_),
              me_(&domain.local(tid)),
              tid_(tid) {}

        /// The same reader with slot `first` as its slot 0 (block_reader).
        reader_type shifted(int first) const noexcept {
            reader_type moved = *this;
            moved.first_ += first;
            return moved;
        }

        template <class T>
        T* protect(int index, const std::atomic<T*>& source) const noexcept {
            const int slot = first_ + index;
            detail::check_slot(slot);
            for (;;) {
                // acquire: pairs with the release (or CAS) that published
                // the node, so its fields and its birth era's load come
                // before ours.
                T* ptr = source.load(std::memory_order_acquire);
                // relaxed: after the acquire above, so not older than the
                // node's birth era (coherence).
                const std::uint64_t era = global_era_->load(std::memory_order_relaxed);
                if (era == me_->announced[slot]) return ptr;
                // Out of line (a held slot's first protect in an operation,
                // or an era change), with the reader's fence: the loop
                // re-reads the source after it. Inline, it made GCC keep
                // hm_list's traversal in fewer registers: +1,100
                // instructions per operation (callgrind, 1K keys).
                domain_->announce(tid_, slot, era);
            }
        }

      private:
        crystalline_l_domain* domain_;
        const std::atomic<std::uint64_t>* global_era_;
        detail::crystalline_local* me_;
        int tid_;
        int first_ = 0;
    };

    template <class T>
    T* on_protect(int tid, int index, const std::atomic<T*>& source) noexcept {
        return make_reader(tid).protect(index, source);
    }
    reader_type make_reader(int tid) noexcept { return {*this, tid}; }

    /// Releases every slot the operation held.
    void on_end_op(int tid) noexcept {
        auto& me = local(tid);
        for (int s = 0; s < slot_count; ++s) {
            if (me.announced[s] == 0) continue;
            me.announced[s] = 0;
            release(tid, s, 0);
        }
    }

  private:
    /// Slot `index` takes era `era`: held from its first announcement in an
    /// operation; an era change releases what was pushed under the old one.
    /// Then the reader's fence: the pairs with seal (batch_counting.hpp).
    SMR_SLOW_PATH void announce(int tid, int index, std::uint64_t era) noexcept {
        auto& me = local(tid);
        if (me.announced[index] == 0) {
            // relaxed: the fence below orders it before the re-read.
            me.heads[index].store(held, std::memory_order_relaxed);
        } else if (!SMR_MUTANT("crystalline_keeps_list_on_era_change")) {
            release(tid, index, held);
        }
        me.announced[index] = era;
        // relaxed: as the head.
        me.eras[index].store(era, std::memory_order_relaxed);
        fences_.reader();
    }
};

}  // namespace smr
