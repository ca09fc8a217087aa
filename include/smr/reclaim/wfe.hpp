// wfe: Wait-Free Eras (Nikolaev and Ravindran, "Universal Wait-Free Memory
// Reclamation", PPoPP 2020).
//
// Hazard Eras (he.hpp) made wait-free. HE's protect loops until the global
// era stops moving while it reads the source; a thread that allocates in a
// tight loop (each `epoch_freq` x T allocations advance the era) can starve
// it.
// WFE bounds that loop:
//
//  - Fast path: HE's protect, at most `wfe_fast_attempts` times (16).
//  - Slow path: the reader publishes a help request for its slot -- the
//    source address and a result word {INVALID, tag} -- counts itself in
//    `counter_start`, and keeps trying on its own. Every reservation slot is
//    a pair {era, tag} updated with a double-width CAS, so a helper can
//    install an era in the requester's slot exactly once per request.
//  - Helping: a thread that is about to advance the global era first looks
//    for requests (only when counter_start != counter_end, one load each) and
//    completes each one: it reserves the eras that keep the source's node
//    alive, reads the source while announcing the current era in its own
//    help slot until the era is stable, then double-width-CASes the result
//    {pointer, era} into the request and {era, tag + 1} into the requester's
//    slot. The era can advance only after every pending request has been
//    helped, so a reader in the slow path waits for at most one era increment
//    per other thread: protect is wait-free, with a bound proportional to the
//    number of threads.
//  - Scan: as in HE, plus the helpers' slots, read in the order the paper's
//    proof needs (requesters' slots, then helpers' parent slots; and if a
//    slow path overlapped the scan, helpers' read slots and then the
//    requesters' slots again).
//
// Departure from the paper, and why it is equivalent. The paper's
// get_protected receives the *parent* block that holds the source, and a
// helper reserves the parent's birth era before dereferencing the source.
// smrlab's protect(tid, slot, source) has no parent argument (the data
// structures are shared with every other scheme). Instead the helper mirrors
// all of the requester's reservation eras into `max_protect_slots` mirror
// slots of its own, fences, and then checks that the request is still
// pending (the requester's tag is unchanged). The requester protects the
// parent in some other slot (HE already requires that: protect overwrites its
// own slot before re-reading the source) and does not touch its other slots
// while it waits, so one mirrored era lies in the parent's [birth, retire]:
// the same guarantee the parent's birth era gives, from the same fence-then-
// validate argument. The cost is a few more slots, written only while
// helping and read by scans. Everything else follows the paper: the fast
// path's attempt count, the {era, tag} reservation pairs, counter_start /
// counter_end, the result word, the helper's read slot, helping before every
// era increment (in on_allocate and in the scan, as the artifact does), and
// the two-pass scan.
//
// A consequence shared with the paper: a helper may read the source after
// the requester has moved on (it then discards what it read), so a source
// must be a field of a node or of the structure, not a stack variable that
// dies with the operation.
//
// Double-width CAS: x86-64 `lock cmpxchg16b` through GCC's __sync builtin in a
// function compiled with target("cx16") (ThreadSanitizer instruments it as a
// 128-bit atomic). Other 64-bit targets use the __atomic builtin, which may
// need libatomic.
//
// Trade-offs against he: the fast path is HE's plus a bounded counter; each
// era increment costs two extra loads (the counters) unless someone is in
// the slow path; nodes carry the same two stamps. Reservation slots are 16
// bytes instead of 8. Like HE, unsafe for traversals through unlinked nodes
// (lazylist, dgt_bst); those combinations compile but are refused.
//
// Progress: protect is wait-free; every other hook is wait-free (helping
// visits each slot once per era increment). Memory: as HE: bag_threshold per
// thread plus the nodes alive in reserved eras; a stalled thread pins at most
// the nodes alive during its `max_protect_slots` eras, plus, while it is a
// helper, the eras it mirrors.
#pragma once

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "smr/core/asymmetric_fence.hpp"
#include "smr/core/compiler.hpp"
#include "smr/core/limbo_bag.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/padded.hpp"
#include "smr/core/unrolled.hpp"
#include "smr/core/word_pair.hpp"
#include "smr/reclaim/era_domain.hpp"
#include "smr/reclaim/help_request.hpp"
#include "smr/reclaim/reservation_common.hpp"
#include "smr/reclaim/traits.hpp"

namespace smr {

namespace detail {

/// One slot's help request.
struct wfe_request {
    /// {pointer, era} once answered; {help_pending, tag} while pending.
    core::word_pair result;
    /// The source the requester reads and how to load it (type-erased T*).
    std::atomic<const void*> source{nullptr};
    std::atomic<source_loader> loader{nullptr};
};

struct wfe_reservations {
    /// Reservations {era, tag}: era no_era when unused; the tag counts this
    /// slot's finished slow paths. Read by every scan.
    alignas(core::false_sharing_range) core::word_pair slots[max_protect_slots];
    /// Helper slots: the requester's eras mirrored while helping it (the
    /// paper's parent-era slot), and the era of the helper's own read.
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> mirror[max_protect_slots] = {};
    std::atomic<std::uint64_t> help_era{no_era};
    /// Help requests, read by every thread that advances the era while
    /// counter_start != counter_end.
    alignas(core::false_sharing_range) wfe_request requests[max_protect_slots];
};
using wfe_local = era_thread_state<wfe_reservations, era_set>;

}  // namespace detail

/// Wait-Free Eras; see the comment at the top of this file.
class wfe_domain : public era_domain<wfe_domain, detail::wfe_local> {
    using base = era_domain<wfe_domain, detail::wfe_local>;
    friend base;
    using pair_value = core::word_pair_value;

  public:
    static constexpr reclaimer_traits traits{
        .name = "wfe",
        .family = reclaimer_family::reservation,
        .garbage_bounded = true,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = false,
        .protect_uses_slots = true,
        .nests = false,
        .reads = {.bag_threshold = true,
                  .epoch_freq = true,
                  .wfe_fast_attempts = true,
                  .fence = true},
    };

    using base::base;

    /// Room for what a scan collects from every thread the domain can hold
    /// (slots, mirrors, help eras, slots again), so that the scan inside
    /// retire (noexcept) never allocates.
    void on_thread_enter(int tid) {
        local(tid).scratch.reserve(config().max_threads * (3 * max_protect_slots + 1));
    }

    /// Thread tid's protect for one traversal (domain_base::reader): the
    /// fast path with the thread's slots, the attempt limit and the fence mode
    /// read once; the slow path is the domain's.
    class fast_reader : public detail::indexed_slots {
      public:
        template <class T>
        T* protect(int index, const std::atomic<T*>& source) const noexcept {
            detail::check_slot(index);
            auto& reserved = slots_[index].first;
            std::uint64_t prev = reserved.load(std::memory_order_relaxed);  // our own slot
            for (std::uint32_t attempt = 0; attempt < attempts_; ++attempt) {
                // seq_cst: pairs with the release (or CAS) that published
                // the node, and is the reader's half of the stamp argument
                // (era_domain.hpp).
                T* ptr = source.load(std::memory_order_seq_cst);
                // seq_cst: as in he.hpp.
                const std::uint64_t era = domain_->global_era_.load(std::memory_order_seq_cst);
                if (era == prev || SMR_MUTANT("wfe_protect_skips_validation")) return ptr;
                // The reader's side of the pair with scan (he.hpp),
                // asymmetric by default; release because it overwrites the
                // era that protected earlier reads. The slow path keeps full
                // fences in either mode: they pair with the scan's, whose
                // heavy side begins with one, and the slow path is rare.
                reserved.store(era, std::memory_order_release);
                fences_.reader(reserved, source);
                prev = era;
            }
            return domain_->slow_path(tid_, first_ + index, source);
        }
        /// The same reader with slot `first` as its slot 0 (block_reader).
        fast_reader shifted(int first) const noexcept {
            fast_reader moved = *this;
            moved.slots_ += first;
            moved.first_ += first;
            return moved;
        }

      private:
        friend wfe_domain;
        fast_reader(wfe_domain& domain, int tid) noexcept
            : domain_(&domain),
              slots_(domain.local(tid).slots),
              tid_(tid),
              attempts_(domain.config().wfe_fast_attempts),
              fences_(domain.fences_) {}

        wfe_domain* domain_;
        core::word_pair* slots_;
        int tid_;
        std::uint32_t attempts_;
        core::fence_pair fences_;
        int first_ = 0;  // where slot 0 is (shifted), for the slow path
    };

    /// wfe_fast_attempts rounds of he's protect, then the wait-free slow
    /// path (fast_reader).
    template <class T>
    T* on_protect(int tid, int index, const std::atomic<T*>& source) noexcept {
        return make_reader(tid).protect(index, source);
    }
    fast_reader make_reader(int tid) noexcept { return {*this, tid}; }

    /// Clears every slot (as hp's end_op: cheaper than tracking the used ones).
    void on_end_op(int tid) noexcept {
        core::for_each_unrolled(local(tid).slots, [](auto& reservation) {
            // release: the operation's reads happen before a scan that reads
            // no_era (acquire) and frees what they read.
            reservation.first.store(detail::no_era, std::memory_order_release);
        });
    }

    /// Slow paths entered, and requests this domain's helpers answered.
    std::uint64_t slow_paths() const noexcept {
        return counter_start_.load(std::memory_order_relaxed);
    }
    std::uint64_t helped() const noexcept { return helped_.load(std::memory_order_relaxed); }

  private:
    template <class T>
    [[gnu::noinline]] T* slow_path(int tid, int index, const std::atomic<T*>& source) noexcept {
        auto& me = local(tid);
        auto& reservation = me.slots[index];
        auto& request = me.requests[index];
        std::uint64_t prev = reservation.first.load(std::memory_order_relaxed);
        // seq_cst RMW: a scanner that reads counter_end before its first
        // pass and counter_start after it sees us if we overlap it.
        counter_start_.fetch_add(1, std::memory_order_seq_cst);
        // release (both): a helper that reads these (acquire) after seeing
        // a later value also sees our tag change (see help_thread).
        request.source.store(&source, std::memory_order_release);
        request.loader.store(&detail::load_source_as<T>, std::memory_order_release);
        const std::uint64_t tag = reservation.second.load(std::memory_order_relaxed);  // ours
        // Publish the request. Only we move result away from a non-pending
        // value, so the CAS against its current value succeeds at once.
        // Full barrier: pairs with the helper's atomic load of result, which
        // then sees source, loader and our slots.
        const pair_value pending{detail::help_pending, tag};
        while (!core::dcas(request.result, core::dload(request.result), pending)) {
        }
        for (;;) {
            // acquire: as in the fast path.
            T* ptr = source.load(std::memory_order_acquire);
            // seq_cst: as in the fast path.
            const std::uint64_t era = global_era_.load(std::memory_order_seq_cst);
            if (era == prev) {
                // Our slot holds `era` and was fenced before this read: the
                // fast path's success, provided no helper answered first.
                if (core::dcas(request.result, pending, {0, 0})) {
                    // release: a helper that still reads tag (acquire) after
                    // this knows the request is over.
                    reservation.second.store(tag + 1, std::memory_order_release);
                    // seq_cst RMW: ends our overlap for scanners (above).
                    counter_end_.fetch_add(1, std::memory_order_seq_cst);
                    return ptr;
                }
                break;  // answered by a helper
            }
            // Announce the new era unless a helper already installed one
            // (then the tag is tag + 1 and this CAS fails). Full barrier: the
            // announcement precedes the next source load.
            core::dcas(reservation, {prev, tag}, {era, tag});
            prev = era;
            // acquire: pairs with the helper's CAS of the result.
            if (request.result.first.load(std::memory_order_acquire) != detail::help_pending) break;
        }
        // A helper answered {pointer, era}; it reserved that era in its help
        // slot until it installed it in ours (or saw our tag move).
        const pair_value answer = core::dload(request.result);
        // seq_cst: the era is announced before our tag says "done", so a
        // helper still holding its help slot keeps covering the pointer
        // until then.
        reservation.first.store(answer.second, std::memory_order_seq_cst);
        // release: ends the request for helpers (their tag check is acquire).
        reservation.second.store(tag + 1, std::memory_order_release);
        // seq_cst RMW: ends our overlap for scanners.
        counter_end_.fetch_add(1, std::memory_order_seq_cst);
        return reinterpret_cast<T*>(static_cast<std::uintptr_t>(answer.first));
    }

    /// Helps every pending request, then increments the global era.
    void advance_era(int tid) noexcept {
        // seq_cst loads: end first, then start (a difference means someone is
        // or was in the slow path since; helping a finished request is a
        // no-op).
        const std::uint64_t end = counter_end_.load(std::memory_order_seq_cst);
        const std::uint64_t start = counter_start_.load(std::memory_order_seq_cst);
        if (start != end) {
            const int limit = threads().scan_limit();
            for (int i = 0; i < limit; ++i) {
                for (int j = 0; j < max_protect_slots; ++j) {
                    // acquire: pairs with the requester's publication.
                    if (local(i).requests[j].result.first.load(std::memory_order_acquire) ==
                        detail::help_pending) {
                        help_thread(i, j, tid);
                    }
                }
            }
        }
        base::advance_era(tid);  // after the helping above
    }

    void help_thread(int other, int index, int tid) noexcept {
        auto& me = local(tid);
        auto& them = local(other);
        auto& request = them.requests[index];
        const pair_value last = core::dload(request.result);  // full barrier
        if (last.first != detail::help_pending) return;
        const std::uint64_t tag = last.second;
        // acquire: pair with the requester's release stores; if we see a
        // later request's values, the tag check below fails.
        const void* source = request.source.load(std::memory_order_acquire);
        const detail::source_loader loader = request.loader.load(std::memory_order_acquire);
        // Keep the node that holds `source` alive: mirror the requester's
        // eras (one of them covers it while the request is pending).
        for (int s = 0; s < max_protect_slots; ++s) {
            // acquire: the requester's slot values published before its
            // request (the dload above already ordered them).
            me.mirror[s].store(them.slots[s].first.load(std::memory_order_acquire),
                               std::memory_order_release);  // as help_era below
        }
        // seq_cst fence: mirrors visible before we check the request is
        // still pending, against the scanner's fence (requesters' slots are
        // scanned before mirrors).
        core::fence();
        // acquire: pairs with the requester's release of tag + 1.
        if (them.slots[index].second.load(std::memory_order_acquire) == tag && loader != nullptr) {
            std::uint64_t prev = global_era_.load(std::memory_order_seq_cst);
            do {
                // release + fence: our read slot is announced before we read
                // the source, and overwrites the previous attempt's era
                // after that attempt's read, as in protect.
                me.help_era.store(prev, std::memory_order_release);
                core::fence();
                const std::uint64_t ptr = loader(source);
                // seq_cst: as in protect.
                const std::uint64_t era = global_era_.load(std::memory_order_seq_cst);
                if (era == prev) {
                    if (core::dcas(request.result, last, {ptr, era})) {
                        helped_.fetch_add(1, std::memory_order_relaxed);
                        // Install the era in the requester's slot unless it
                        // finished on its own (then its tag moved on).
                        pair_value old{them.slots[index].first.load(std::memory_order_acquire),
                                       them.slots[index].second.load(std::memory_order_acquire)};
                        while (old.second == tag &&
                               !core::dcas(them.slots[index], old, {era, tag + 1})) {
                            old = core::dload(them.slots[index]);
                        }
                    }
                    break;
                }
                prev = era;
            } while (core::dload(request.result) == last);
            // release: our reads end before a scan that sees the slot free.
            me.help_era.store(detail::no_era, std::memory_order_release);
        }
        for (auto& mirror : me.mirror) {
            // release: as above.
            mirror.store(detail::no_era, std::memory_order_release);
        }
    }

    void scan(int tid, std::uint64_t last_retire_era) {
        auto& me = local(tid);
        // As the artifact: move the era on (helping first) unless another
        // thread just did.
        if (global_era_.load(std::memory_order_relaxed) == last_retire_era) advance_era(tid);
        // The reclaimer's side of the readers' pairs (he.hpp): the unlinks
        // of our list precede every slot load.
        if (!SMR_MUTANT("era_scan_skips_reclaimer_fence") && fences_.reclaimer()) {
            count_heavy_barrier(tid);
        }
        auto& eras = me.scratch;
        eras.clear();
        const int limit = threads().scan_limit();
        // Every load below is seq_cst: the paper's proof reads the slots in
        // this order (requesters, then mirrors; then, if a slow path may
        // have overlapped, help slots, then requesters again) and they also
        // acquire-pair with the release stores that clear the slots.
        const std::uint64_t end = counter_end_.load(std::memory_order_seq_cst);
        for (int i = 0; i < limit; ++i) {
            for (const auto& entry : local(i).slots) {
                const std::uint64_t era = entry.first.load(std::memory_order_seq_cst);
                if (!SMR_MUTANT("wfe_scan_ignores_reservations")) eras.add(era);
            }
        }
        for (int i = 0; i < limit; ++i) {
            for (const auto& mirror : local(i).mirror) {
                eras.add(mirror.load(std::memory_order_seq_cst));
            }
        }
        if (counter_start_.load(std::memory_order_seq_cst) != end) {
            for (int i = 0; i < limit; ++i) {
                eras.add(local(i).help_era.load(std::memory_order_seq_cst));
            }
            for (int i = 0; i < limit; ++i) {
                for (const auto& entry : local(i).slots) {
                    eras.add(entry.first.load(std::memory_order_seq_cst));
                }
            }
        }
        eras.seal();
        core::limbo_bag safe = me.retired.extract_unless([&](core::retired_node* n) {
            const auto* node = static_cast<const era_node_header*>(n);
            return eras.any_in(node->birth_era, node->retire_era);
        });
        schedule_next_scan(me);
        dispose_safe(tid, safe);
    }

    alignas(core::false_sharing_range) std::atomic<std::uint64_t> counter_start_{0};
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> counter_end_{0};
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> helped_{0};
};

}  // namespace smr
