// he: Hazard Eras (Ramalhete and Correia, "Brief Announcement: Hazard Eras -
// Non-Blocking Memory Reclamation", SPAA 2017).
//
// Hazard pointers with eras in place of addresses. A global era counter
// advances every `epoch_freq` x T allocations of a thread, T the threads
// registered (the IBR benchmark's epochFreq x task_num) and whenever a thread scans (as the IBR
// benchmark's HE does, so a retire-only phase still moves eras). Every node carries the era it was
// allocated in (birth, stamped in on_allocate) and the era read after its
// unlink (retire). protect(tid, slot, src) announces the current era in the
// slot and re-reads the era until it is stable, so the node it returns was
// reachable while the announced era was current. A thread scans its retire
// list when it reaches `bag_threshold` nodes and frees every node whose
// [birth, retire] interval contains no announced era.
//
// Trade-offs. Against HP: protect writes and fences only when the era has
// changed since the slot's last announcement, which with `epoch_freq` = 150
// is rare, so traversals cost almost as little as under epochs. That fence is
// hp's pair (domain_config::fence): asymmetric by default, a compiler barrier
// on the reader's side and a membarrier per scan. Against
// epochs: a stalled thread pins only the nodes alive at the eras it
// announced (at most `max_protect_slots` eras), not everything retired after
// it stalled, so garbage stays bounded. The cost is two 8-byte stamps per
// node and a scan that tests every retired node. Like HP it cannot protect a
// traversal through already-unlinked nodes (lazylist, dgt_bst): the unlinked
// node's successor may have been retired in an era the reader never
// announced. Those combinations compile but are unsafe.
//
// Progress: protect is lock-free (it retries only when the era moves; a
// thread that allocates in a tight loop can starve it, which is what WFE
// fixes); every other hook is wait-free. Memory: per thread, bag_threshold
// plus the nodes whose lifetimes contain an announced era; a stalled thread
// pins at most the nodes alive during the `max_protect_slots` eras it holds.
//
// he_pop: HazardEraPOP (Singh and Brown, "Publish on Ping", PPoPP 2025,
// arXiv:2501.04250; the mechanism: publish_on_ping.hpp). The same scheme
// with each thread's eras in cells only it reads: protect stores an era
// there behind a compiler barrier, and a scan, in place of the fence,
// pings every other registered thread, waits for their handlers to copy
// their eras to published cells, and reads those (its own private ones
// directly). One template, two schemes: what differs is the reservations'
// cells, the announcement's order and the scan's first step. Where we
// depart from the artifact (reclaimer_nbr_popplushe.h; docs/design.md,
// fidelity table): the scan waits for the publications (the artifact does
// not); a scan runs every bag_threshold retires, as he's, where the
// artifact's high-watermark counter (retires_since_HiWm % 512) stops
// counting after its first reclaim; the signal is SIGUSR2, not SIGQUIT.
// Against he: no fence or membarrier, and no store other threads read, per
// era change; n-1 signals and a wait per scan, which blocks on a
// descheduled reader.
#pragma once

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "smr/core/asymmetric_fence.hpp"
#include "smr/core/limbo_bag.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/padded.hpp"
#include "smr/core/unrolled.hpp"
#include "smr/reclaim/era_domain.hpp"
#include "smr/reclaim/publish_on_ping.hpp"
#include "smr/reclaim/reservation_common.hpp"
#include "smr/reclaim/traits.hpp"

namespace smr {

namespace detail {

/// A thread's hazard eras for one traversal (domain_base::reader): its era
/// slots, the global era and the announcement's order (he: the domain's
/// fence pair; he_pop: ping_announcement), read once.
template <class Announce>
class basic_era_reader : public indexed_slots {
  public:
    basic_era_reader(std::atomic<std::uint64_t>* eras, const std::atomic<std::uint64_t>& global_era,
                     Announce fences) noexcept
        : eras_(eras), global_era_(&global_era), fences_(fences) {}

    /// The same reader with era slot `first` as its slot 0 (block_reader).
    basic_era_reader shifted(int first) const noexcept {
        basic_era_reader moved = *this;
        moved.eras_ += first;
        return moved;
    }

    template <class T>
    T* protect(int index, const std::atomic<T*>& source) const noexcept {
        check_slot(index);
        auto& reserved = eras_[index];
        std::uint64_t prev = reserved.load(std::memory_order_relaxed);  // our own slot
        for (;;) {
            // seq_cst (acquire on every target, a plain load on x86): pairs
            // with the release (or CAS) that published the node, and is the
            // reader's half of the stamp argument (era_domain.hpp).
            T* ptr = source.load(std::memory_order_seq_cst);
            // seq_cst: the increment that wrote this era precedes in S every
            // later seq_cst load of ours (the stamp argument). Read after the
            // pointer, it also bounds the node's birth era from above.
            const std::uint64_t era = global_era_->load(std::memory_order_seq_cst);
            if (era == prev || SMR_MUTANT("he_protect_skips_validation")) return ptr;
            // The Dekker pair with scan, as in hp.hpp: the reader's fence
            // orders the announcement before the next source load, the
            // scan's after its unlinks, so the re-read misses the unlink
            // only if the scan sees the era. Release because the store
            // overwrites the era that protected earlier reads (a scan
            // reading it, acquire, may free their nodes).
            reserved.store(era, std::memory_order_release);
            fences_.reader(reserved, source);
            prev = era;
        }
    }

  private:
    std::atomic<std::uint64_t>* eras_;
    const std::atomic<std::uint64_t>* global_era_;
    [[no_unique_address]] Announce fences_;
};
using era_reader = basic_era_reader<core::fence_pair>;

struct he_reservations {
    /// Announced eras, no_era when unused. Read by every scan; alone on their lines.
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> eras[max_protect_slots] = {};
};
using he_local = era_thread_state<he_reservations, era_set>;

struct he_pop_reservations : ping_subscriber {
    /// Announced eras, no_era when unused: the thread's own and its handler's.
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> eras[max_protect_slots] = {};
    /// What the handler last copied from `eras`: read by every scan.
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> published[max_protect_slots] = {};
    /// The owner's: publication counts its last ping saw (sized at registration).
    std::unique_ptr<std::uint64_t[]> seen;

    /// The handler's copy; release stores, as hp_pop's (hp_pop.hpp).
    static void publish(ping_subscriber& subscriber) noexcept {
        auto& me = static_cast<he_pop_reservations&>(subscriber);
        for (std::size_t i = 0; i < max_protect_slots; ++i) {
            me.published[i].store(me.eras[i].load(std::memory_order_relaxed),
                                  std::memory_order_release);
        }
    }
};
using he_pop_local = era_thread_state<he_pop_reservations, era_set>;

}  // namespace detail

/// Hazard Eras (`he`), and HazardEraPOP (`he_pop`) when `Ping`; see the
/// comments at the top of this file.
template <bool Ping>
class basic_he_domain
    : public era_domain<basic_he_domain<Ping>,
                        std::conditional_t<Ping, detail::he_pop_local, detail::he_local>> {
    using base = era_domain<basic_he_domain<Ping>,
                            std::conditional_t<Ping, detail::he_pop_local, detail::he_local>>;
    friend base;
    using base::config;
    using base::count_heavy_barrier;
    using base::dispose_safe;
    using base::fences_;
    using base::global_era_;
    using base::local;
    using base::threads;

  public:
    static constexpr reclaimer_traits traits{
        .name = Ping ? "he_pop" : "he",
        .family = reclaimer_family::reservation,
        .garbage_bounded = true,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .pings = Ping,
        .needs_quiescent_states = false,
        .protect_uses_slots = true,
        .nests = false,
        .reads = {.bag_threshold = true, .epoch_freq = true, .pop_signal = Ping, .fence = !Ping},
    };

    explicit basic_he_domain(const domain_config& cfg)
        : base(cfg), signal_(Ping ? cfg.pop_signal : 0) {
        if constexpr (Ping) detail::install_ping_handler(signal_, "he_pop");
    }

    /// Room for every era of every thread the domain can hold, so that the
    /// scan inside retire (noexcept) never allocates.
    void on_thread_enter(int tid) {
        auto& me = local(tid);
        me.scratch.reserve(config().max_threads * max_protect_slots);
        if constexpr (Ping) {
            if (me.seen == nullptr)
                me.seen = std::make_unique<std::uint64_t[]>(config().max_threads);
            detail::subscribe(me, signal_, &detail::he_pop_reservations::publish);
        }
    }

    /// he_pop's ping signal (0 for he).
    int signal() const noexcept { return signal_; }

    /// he_pop offline (between operations, its eras cleared): publishes
    /// them and stops being pinged or waited for (publish_on_ping.hpp).
    void go_offline(int tid) noexcept {
        if constexpr (Ping) detail::go_offline(local(tid));
    }
    void come_online(int tid) noexcept {
        if constexpr (Ping) detail::go_online(local(tid));
    }

    /// Clears every slot; he_pop publishes them cleared and stops taking
    /// pings. The retire list is orphaned (era_domain).
    void on_thread_exit(int tid) noexcept {
        on_end_op(tid);
        if constexpr (Ping) detail::unsubscribe(local(tid));
    }

    /// Reads the source and the era until the era is the one reserved
    /// (detail::era_reader).
    template <class T>
    T* on_protect(int tid, int index, const std::atomic<T*>& source) noexcept {
        return make_reader(tid).protect(index, source);
    }
    auto make_reader(int tid) noexcept {
        if constexpr (Ping) {
            return detail::basic_era_reader<detail::ping_announcement>(local(tid).eras, global_era_,
                                                                       {});
        } else {
            return detail::era_reader(local(tid).eras, global_era_, fences_);
        }
    }

    /// Clears every slot (as hp's end_op: cheaper than tracking the used ones).
    void on_end_op(int tid) noexcept {
        core::for_each_unrolled(local(tid).eras, [](std::atomic<std::uint64_t>& era) {
            // release: the operation's reads happen before a scan that reads
            // no_era (acquire) and frees what they read (he_pop: the
            // handler's release store of the cleared era carries the edge;
            // this one costs nothing more on x86).
            era.store(detail::no_era, std::memory_order_release);
        });
    }

  private:
    void scan(int tid, std::uint64_t last_retire_era) {
        auto& me = local(tid);
        // As the IBR benchmark's HE: move the era on (unless another thread
        // just did), so readers that start now do not pin our list.
        if (global_era_.load(std::memory_order_relaxed) == last_retire_era) {
            this->advance_era(tid);
        }
        // The reclaimer's side of protect's pair: the unlinks of our list
        // (ours, or an orphan's, which reach us through the orphanage's
        // release and acquire) precede the slot loads. he_pop: every other
        // thread publishes its eras (publish_on_ping.hpp).
        if constexpr (Ping) {
            ping(tid);
        } else if (!SMR_MUTANT("era_scan_skips_reclaimer_fence") && fences_.reclaimer()) {
            count_heavy_barrier(tid);
        }
        me.scratch.clear();
        const int limit = threads().scan_limit();
        for (int i = 0; i < limit; ++i) {
            for (const auto& entry : reservations_of(i, tid)) {
                // acquire: pairs with end_op's release of the slot.
                const std::uint64_t era = entry.load(std::memory_order_acquire);
                if (!SMR_MUTANT("he_scan_ignores_reservations")) me.scratch.add(era);
            }
        }
        me.scratch.seal();
        core::limbo_bag safe = me.retired.extract_unless([&](core::retired_node* n) {
            const auto* node = static_cast<const era_node_header*>(n);
            return me.scratch.any_in(node->birth_era, node->retire_era);
        });
        this->schedule_next_scan(me);
        dispose_safe(tid, safe);
    }

    /// The cells a scan of thread `self` reads for thread i: he's eras;
    /// he_pop's published ones, but the scanner's own private ones.
    const auto& reservations_of(int i, int self) noexcept {
        if constexpr (Ping) {
            return i == self ? local(i).eras : local(i).published;
        } else {
            (void)self;
            return local(i).eras;
        }
    }

    /// he_pop: every other registered thread publishes its eras.
    void ping(int tid) noexcept {
        if (SMR_MUTANT("he_pop_reclaims_without_ping")) return;
        detail::ping_all(
            tid, threads().scan_limit(), signal_, local(tid).seen.get(),
            [this](int i) -> detail::ping_subscriber& { return local(i); },
            [this, tid](int i) {
                this->count_signal(tid);
                this->record_event(tid, trace::event_kind::signal_sent,
                                   static_cast<std::uint64_t>(i));
            },
            !SMR_MUTANT("he_pop_ping_skips_wait"));
    }

    int signal_;
};

using he_domain = basic_he_domain<false>;
using he_pop_domain = basic_he_domain<true>;

}  // namespace smr
