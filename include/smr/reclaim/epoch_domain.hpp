// What the epoch family (ebr, nebr, debra, qsbr) shares: a global epoch, one
// announcement word per thread, three limbo bags (epoch_bags.hpp: why three),
// the fuzzy barrier's scan and advance, the retire that opens a region of its
// own when the thread is outside every region, and the online/offline
// protocol of the two schemes whose region is the thread's whole online
// stretch (nebr, qsbr). Each scheme's header keeps only its paper's lines:
// where a region begins and ends, when an advance is attempted, and how much
// of the barrier each attempt scans.
//
// The announcement is (epoch << 1) | quiescent, one word so that a scanner
// reads both at once: quiescent means outside every region (ebr, debra:
// between operations; nebr, qsbr: offline). A thread starts quiescent in
// epoch 0. An advance from epoch e needs every thread quiescent or
// announcing e.
//
// A scheme derives as
//     class ebr_domain : public epoch_domain<ebr_domain, detail::ebr_local>
// with a Local that extends detail::epoch_thread_state (the announcement,
// the owner's copy of its epoch, the bags) with its own counters,
// befriends its base, and supplies
//     void open_for_retire(int tid)     enter a region for a retire made
//     void close_after_retire(int tid)  outside one, and leave it again
#pragma once

#include <atomic>
#include <concepts>
#include <cstdint>

#include "smr/core/compiler.hpp"
#include "smr/core/limbo_bag.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/padded.hpp"
#include "smr/reclaim/domain_base.hpp"
#include "smr/reclaim/epoch_bags.hpp"

namespace smr {

namespace detail {

/// What every epoch scheme keeps per thread. A scheme's Local derives from
/// it and adds its counters, which land after the bags, on their line.
struct epoch_thread_state {
    /// (epoch << 1) | quiescent (the top of this file). Alone on its lines:
    /// scanners read it, only the owner writes it.
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> announce{1};
    /// The owner's copy of the epoch it last announced.
    alignas(core::false_sharing_range) std::uint64_t epoch = 0;
    epoch_bags bags;

    void drain_into(core::limbo_bag& out) noexcept { bags.drain_into(out); }
};

/// A thread's state that epoch_domain can run.
template <class Local>
concept epoch_local = requires(Local& local, core::limbo_bag& out) {
    { local.announce } -> std::same_as<std::atomic<std::uint64_t>&>;
    { local.epoch } -> std::same_as<std::uint64_t&>;
    { local.bags } -> std::same_as<epoch_bags&>;
    local.drain_into(out);
};

}  // namespace detail

template <class Derived, detail::epoch_local Local>
class epoch_domain : public domain_base<Derived, Local> {
    using base = domain_base<Derived, Local>;

  public:
    using base::base;

    /// Inside a region, or outside one: then in a region of its own
    /// (docs/design.md "Retire outside an operation").
    template <class T>
    void on_retire(int tid, T* node) noexcept {
        auto& s = this->slot_of(tid);
        this->count_retired(s, node);
        // relaxed: the thread's own announcement, written only by itself.
        if (is_quiescent(s.local.announce.load(std::memory_order_relaxed))) [[unlikely]] {
            return retire_outside(tid, core::entry_of(node));
        }
        s.local.bags.add(core::entry_of(node));
    }

    /// Orphans the bags, each labelled with its epoch (debra's, labelled by
    /// rotations, hides this).
    void hand_over_garbage(int tid) noexcept { this->local(tid).bags.orphan_into(this->orphans()); }

    std::uint64_t global_epoch() const noexcept {
        return global_epoch_.load(std::memory_order_relaxed);
    }

  protected:
    static constexpr std::uint64_t announcing(std::uint64_t epoch) noexcept { return epoch << 1; }
    static constexpr std::uint64_t quiescent_in(std::uint64_t epoch) noexcept {
        return (epoch << 1) | 1;
    }
    static constexpr bool is_quiescent(std::uint64_t seen) noexcept { return (seen & 1) != 0; }
    /// Whether a thread that announced `seen` keeps the epoch from leaving `epoch`.
    static constexpr bool holds_back(std::uint64_t seen, std::uint64_t epoch) noexcept {
        return !is_quiescent(seen) && (seen >> 1) != epoch;
    }

    /// The fuzzy barrier's scan: whether every registered thread but `skip`
    /// is quiescent or announces `epoch`.
    bool all_announced(std::uint64_t epoch, int skip = -1) noexcept {
        const int limit = this->threads().scan_limit();
        for (int i = 0; i < limit; ++i) {
            if (i == skip) continue;
            // seq_cst: the advancer's half of the Dekker pair with each
            // scheme's announcement (its comment names the interleaving);
            // its acquire half pairs with the release of the announcements
            // that end regions, so the regions seen finished happen before
            // the CAS and the frees it allows.
            const std::uint64_t seen = this->local(i).announce.load(std::memory_order_seq_cst);
            if (holds_back(seen, epoch) && !SMR_MUTANT("epoch_scan_ignores_laggards")) {
                return false;  // i lags: try again later
            }
        }
        return true;
    }

    /// Moves the global epoch from `epoch` to epoch + 1, unless another
    /// thread already did.
    void advance_from(int tid, std::uint64_t epoch) noexcept {
        std::uint64_t expected = epoch;
        // seq_cst: in S after the announcement loads that allowed it (the
        // Dekker argument needs it); release publishes what they saw to every
        // thread that reads epoch + 1.
        if (global_epoch_.compare_exchange_strong(expected, epoch + 1, std::memory_order_seq_cst,
                                                  std::memory_order_relaxed)) {
            this->note_epoch_advanced(tid, epoch + 1);
        }
    }

    /// Takes `epoch` as the local epoch; adds what it makes safe to `safe`.
    void enter_epoch(int tid, std::uint64_t epoch, core::limbo_bag& safe) noexcept {
        auto& me = this->local(tid);
        me.epoch = epoch;
        this->note_epoch_begun(tid, epoch, me.bags.size());
        me.bags.advance(epoch, safe, this->orphans(), this->adopter(tid));
    }

    /// nebr and qsbr: leaves quiescence for an online stretch, with the
    /// fence its operations then do without, and the re-read: a thread that
    /// read epoch e while offline must not announce e after the global epoch
    /// moved to e + 2 (its retirements would be labelled two epochs stale and
    /// freed one epoch early).
    void announce_online(int tid) noexcept {
        auto& me = this->local(tid);
        // acquire: pairs with the CAS that advanced the epoch, which happened
        // after the advancer saw every thread's earlier regions end.
        std::uint64_t epoch = global_epoch_.load(std::memory_order_acquire);
        core::limbo_bag safe;
        if (epoch != me.epoch) enter_epoch(tid, epoch, safe);
        for (;;) {
            // seq_cst store + seq_cst re-read: a Dekker pair with the
            // advancer's seq_cst announcement loads and CAS; either the
            // advancer sees us online, or we see its new epoch.
            me.announce.store(announcing(epoch), std::memory_order_seq_cst);
            const std::uint64_t now = global_epoch_.load(std::memory_order_seq_cst);
            if (now == epoch) break;
            epoch = now;
            enter_epoch(tid, epoch, safe);
        }
        this->dispose_safe(tid, safe);  // after the announcement, as in announce_epoch
    }

    /// nebr and qsbr: enters quiescence (thread_offline; never blocks).
    void announce_offline(int tid) noexcept {
        auto& me = this->local(tid);
        // release: the online stretch's reads of shared nodes happen before
        // an advancer that sees us quiescent moves the epoch on.
        me.announce.store(quiescent_in(me.epoch), std::memory_order_release);
    }

    /// nebr and qsbr: an online thread found a new epoch. Enter it, announce
    /// it, and only then free what became safe: while this thread frees, the
    /// others may already advance; freeing first would hold the epoch (and
    /// so every bag) for as long as the batch takes, the very cost the
    /// batch-against-amortized comparison measures.
    SMR_SLOW_PATH void announce_epoch(int tid, std::uint64_t epoch) noexcept {
        auto& me = this->local(tid);
        core::limbo_bag safe;
        enter_epoch(tid, epoch, safe);
        // release: this thread's reads of shared nodes so far happen before
        // an advancer that sees the announcement lets the epoch move on. No
        // fence: the scheme's class comment says why none is needed.
        me.announce.store(announcing(epoch), std::memory_order_release);
        this->dispose_safe(tid, safe);
    }

    alignas(core::false_sharing_range) std::atomic<std::uint64_t> global_epoch_{0};

  private:
    /// Outside every region the local epoch may be any number of epochs
    /// behind the global one: labelled with it, the node would be freed while
    /// readers that entered later epochs still hold it. In a region of its
    /// own the thread has caught up and announced the current epoch.
    SMR_SLOW_PATH void retire_outside(int tid, core::retired_entry entry) noexcept {
        self().open_for_retire(tid);
        this->local(tid).bags.add(entry);
        self().close_after_retire(tid);
        this->hand_over_if_offline(tid);
    }

    Derived& self() noexcept { return static_cast<Derived&>(*this); }
};

}  // namespace smr
