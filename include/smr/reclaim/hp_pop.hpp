// hp_pop: HazardPtrPOP, hazard pointers published on ping (Singh and Brown,
// "Publish on Ping: A Better Way to Publish Reservations in Memory
// Reclamation for Concurrent Data Structures", PPoPP 2025,
// arXiv:2501.04250; the mechanism: publish_on_ping.hpp).
//
// A reader protects exactly as under hp (hazard_slot: announce, re-read until
// the source is stable), but into hazard cells of its own that no other
// thread reads: no fence, and no store that a scan's read turns into a
// cache miss on the reader's next protect. Its ping handler copies those
// cells to the thread's published cells. A retired node joins the retiring
// thread's list; the list's size drives NBR+'s watermarks (the artifact's
// reclaimer_ibr_popplushp.h, retire): at the high watermark the thread pings
// every other registered thread, waits for their publications, and frees
// every node of its list that no published cell (and none of its own
// private cells) names; past the low watermark it waits for another
// thread's ping round instead and then judges the nodes it bookmarked
// (signals.hpp, round_watcher), without sending a signal.
//
// Where we depart from the artifact (docs/design.md, fidelity table):
//   - the reclaimer waits until every pinged thread has published (the
//     artifact sends its signals and scans at once; publish_on_ping.hpp);
//   - the protect's re-read is seq_cst (the artifact's acquire): the
//     argument that a handler run before the private store needs no
//     publication rests on it (publish_on_ping.hpp); on x86 both are a load;
//   - the high watermark is bag_threshold (or nbr_high_watermark) like every
//     scheme's here, not the artifact's constant 24576: pass
//     --nbr-high-watermark 24576 for the artifact's; the low-watermark wait
//     looks at one thread per retire (as our nbrplus), where the artifact
//     looks at all of them every k-th retire for a random k;
//   - the signal is SIGUSR2 by default (domain_config::pop_signal), not
//     SIGQUIT, which would keep a run from being stopped (signal_problem).
//
// Trade-offs. Per node visited: a store and a re-read, like hp with the
// asymmetric fence, but the store stays in the reader's cache. Per reclaim:
// n-1 signals and a wait for each pinged thread to run its handler (a
// descheduled thread must be scheduled first: reclaims block on readers,
// where hp's membarrier does not). Like hp it cannot protect a traversal
// through unlinked nodes (the compatibility table refuses those
// structures). Garbage is bounded as under hp: a stalled thread pins at most
// its `max_protect_slots` nodes, and after a reclaim a list holds at most
// the H = threads x slots nodes reserved, so it stays below the high
// watermark plus H. Every registered thread must be able to take the
// signal: one that blocks it stalls every reclaimer.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "smr/core/asymmetric_fence.hpp"
#include "smr/core/limbo_bag.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/padded.hpp"
#include "smr/core/retired_node.hpp"
#include "smr/core/scan_buffer.hpp"
#include "smr/core/unrolled.hpp"
#include "smr/reclaim/domain_base.hpp"
#include "smr/reclaim/hp.hpp"
#include "smr/reclaim/publish_on_ping.hpp"
#include "smr/reclaim/reservation_common.hpp"
#include "smr/reclaim/signals.hpp"
#include "smr/reclaim/traits.hpp"

namespace smr {

namespace detail {

struct hp_pop_local : ping_subscriber {
    /// The thread's hazard pointers: its own and its handler's alone.
    alignas(core::false_sharing_range) std::atomic<const void*> hazards[max_protect_slots] = {};
    /// What the handler last copied from `hazards`: read by every reclaim.
    alignas(core::false_sharing_range) std::atomic<const void*> published[max_protect_slots] = {};

    // ---- owner only.
    alignas(core::false_sharing_range) core::limbo_bag retired;
    core::scan_buffer<const void*> scratch;  // the hazards a reclaim collected
    std::unique_ptr<std::uint64_t[]> seen;   // publication counts a ping saw
    round_watcher watch;                     // the low-watermark wait

    void drain_into(core::limbo_bag& out) noexcept { out.splice_back(retired); }

    /// The handler's copy. Release stores, although the publication's
    /// increment that follows releases them too: a reclaim may read the
    /// cells after a *later* publication than the one it waited for (another
    /// reclaimer's ping), and what the thread did with a node before that
    /// publication must happen before the free (the reclaim's acquire load
    /// of the cell synchronizes with this store; TSan reports the race
    /// without it).
    static void publish(ping_subscriber& subscriber) noexcept {
        auto& me = static_cast<hp_pop_local&>(subscriber);
        for (std::size_t i = 0; i < max_protect_slots; ++i) {
            me.published[i].store(me.hazards[i].load(std::memory_order_relaxed),
                                  std::memory_order_release);
        }
    }
};

}  // namespace detail

namespace detail {

/// What HazardPtrPOP and EpochPOP share (hp_pop_domain below, epoch_pop.hpp):
/// private hazard cells published on ping, a retire list judged by address,
/// NBR+'s watermarks. A scheme derives as
///     class hp_pop_domain : public detail::pop_hazards<hp_pop_domain, Local, Header>
/// with a Local derived from hp_pop_local, and in its on_retire counts (and
/// stamps) the node, then calls append_retired(tid, node).
template <class Derived, class Local, class Header>
class pop_hazards : public domain_base<Derived, Local, Header> {
    using base = domain_base<Derived, Local, Header>;

  protected:
    using base::adopt_orphans;
    using base::config;
    using base::count_signal;
    using base::dispose_safe;
    using base::hand_over_if_offline;
    using base::local;
    using base::orphans;
    using base::record_event;
    using base::threads;

    /// Thread i's rounds counter, for round_watcher.
    auto rounds_of() noexcept {
        return [this](int i) -> std::atomic<std::uint64_t>& { return local(i).rounds; };
    }

  public:
    /// `scheme` names the domain in the messages of a refused configuration.
    pop_hazards(const domain_config& cfg, const char* scheme)
        : base(cfg),
          signal_(cfg.pop_signal),
          marks_(make_watermarks(cfg.nbr_low_watermark, cfg.nbr_high_watermark, cfg.bag_threshold,
                                 scheme)) {
        install_ping_handler(signal_, scheme);
    }

    // ---- registration ---------------------------------------------------------

    /// Room for every hazard of every thread the domain can hold, so that
    /// a reclaim inside retire (noexcept) never allocates.
    void on_thread_enter(int tid) {
        auto& me = local(tid);
        const std::size_t n = config().max_threads;
        if (me.scratch.capacity() < n * max_protect_slots) {
            me.scratch.reserve(n * max_protect_slots);
            me.seen = std::make_unique<std::uint64_t[]>(n);
        }
        me.watch.reserve(n);
        me.watch.stop();  // a new owner re-bookmarks
        subscribe(me, signal_, &hp_pop_local::publish);
    }

    /// Clears the hazards and publishes them cleared: a reclaim waiting for
    /// this thread stops waiting, and no later one signals it.
    void on_thread_exit(int tid) noexcept {
        clear_hazards(tid);
        unsubscribe(local(tid));
    }

    /// Offline (between operations, its hazards cleared): publishes them and
    /// stops being pinged or waited for (publish_on_ping.hpp).
    void go_offline(int tid) noexcept { detail::go_offline(local(tid)); }
    void come_online(int tid) noexcept { detail::go_online(local(tid)); }

    /// Every node of the list was retired before any later ping: an adopter
    /// judges it with its own.
    void hand_over_garbage(int tid) noexcept {
        auto& me = local(tid);
        orphans().give(me.retired, 0);
        me.watch.stop();
    }

    /// A barrier's round: adopt every orphan, then a ping round and a
    /// reclaim of the whole list.
    void flush_step(int tid) noexcept {
        auto& me = local(tid);
        adopt_orphans(tid, me.retired);
        if (me.retired.empty()) return;
        begin_round(me.rounds);
        ping(tid);
        end_round(me.rounds);
        reclaim(tid, me.retired.size());
        me.watch.stop();
    }

    // ---- operations -------------------------------------------------------------

    /// Announce, re-read until the source is stable (hazard_slot), in the
    /// thread's private cells.
    template <class T>
    T* on_protect(int tid, int index, const std::atomic<T*>& source) noexcept {
        return make_reader(tid).protect(index, source);
    }
    basic_hazard_reader<ping_announcement> make_reader(int tid) noexcept {
        return {local(tid).hazards, {}};
    }

    void on_end_op(int tid) noexcept { clear_hazards(tid); }

    // ---- introspection (tests, smrbench) --------------------------------------

    std::size_t retired_count(int tid) const noexcept { return local(tid).retired.size(); }
    detail::watermarks watermarks() const noexcept { return marks_; }
    int signal() const noexcept { return signal_; }

  protected:
    /// Clears every private cell. Relaxed: only this thread and its handler
    /// read them; a reclaimer learns of the clear through a publication
    /// (its seq_cst increment releases what the operation did before).
    void clear_hazards(int tid) noexcept {
        core::for_each_unrolled(local(tid).hazards, [](std::atomic<const void*>& hazard) {
            hazard.store(nullptr, std::memory_order_relaxed);
        });
    }

    /// Appends `node`, counted (and stamped) by the caller, and takes NBR+'s
    /// watermark step. `high_round()` runs at the high watermark before the
    /// round: true if it freed enough that no round is needed (EpochPOP's
    /// epoch sweep).
    template <class T, class HighRound>
    [[gnu::always_inline]] void append_retired(int tid, T* node, HighRound&& high_round) noexcept {
        auto& me = local(tid);
        adopt_orphans(tid, me.retired);
        // Appended first, as the artifact does (NBR's Algorithm 1 appends
        // after its reclaim): unlinked before this call, the node is judged
        // with the rest.
        me.retired.push_back(node);
        if (me.retired.size() >= marks_.high && high_round()) {
            me.watch.stop();
        } else {
            watermark_step(
                marks_, me.retired.size(), tid, [this] { return threads().scan_limit(); },
                me.rounds, me.watch, rounds_of(), [this, tid] { ping(tid); },
                [this, tid](std::size_t count) { reclaim(tid, count); });
        }
        hand_over_if_offline(tid);
    }

    /// Every other registered thread publishes its hazards (a round's
    /// signals and wait).
    void ping(int tid) noexcept {
        if (SMR_MUTANT(Derived::mutant_reclaims_without_ping)) return;
        ping_all(
            tid, threads().scan_limit(), signal_, local(tid).seen.get(),
            [this](int i) -> ping_subscriber& { return local(i); },
            [this, tid](int i) {
                count_signal(tid);
                record_event(tid, trace::event_kind::signal_sent, static_cast<std::uint64_t>(i));
            },
            !SMR_MUTANT(Derived::mutant_ping_skips_wait));
    }

    /// Frees every node among the first `count` of the list that no hazard
    /// names: the others' published cells and the caller's own private ones.
    /// Out of line, once per reclaim.
    SMR_SLOW_PATH void reclaim(int tid, std::size_t count) noexcept {
        auto& me = local(tid);
        // Acquire loads; what they must see was released by the publication
        // the ping (or the round the watcher saw) acquired.
        collect_reserved(
            me.scratch, threads().scan_limit(), [ this, tid ](int i) -> const auto& {
                return i == tid ? local(i).hazards : local(i).published;
            },
            true);
        const auto& hazards = me.scratch;
        core::limbo_bag safe =
            take_unreserved(me.retired, count, [&hazards](const core::retired_node* node) {
                return !hazards.contains(static_cast<const void*>(node));
            });
        dispose_safe(tid, safe);
    }

  private:
    int signal_;
    detail::watermarks marks_;
};

}  // namespace detail

/// HazardPtrPOP; see the comment at the top of this file. Parameters:
/// bag_threshold (the default high watermark), nbr_low_watermark,
/// nbr_high_watermark, pop_signal.
class hp_pop_domain
    : public detail::pop_hazards<hp_pop_domain, detail::hp_pop_local, core::retired_node> {
  public:
    static constexpr reclaimer_traits traits{
        .name = "hp_pop",
        .family = reclaimer_family::reservation,
        .garbage_bounded = true,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .pings = true,
        .needs_quiescent_states = false,
        .protect_uses_slots = true,
        .nests = false,
        .reads = {.bag_threshold = true,
                  .nbr_low_watermark = true,
                  .nbr_high_watermark = true,
                  .pop_signal = true},
    };
    static constexpr const char* mutant_ping_skips_wait = "hp_pop_ping_skips_wait";
    static constexpr const char* mutant_reclaims_without_ping = "hp_pop_reclaims_without_ping";

    explicit hp_pop_domain(const domain_config& cfg) : pop_hazards(cfg, "hp_pop") {}

    template <class T>
    void on_retire(int tid, T* node) noexcept {
        count_retired(tid, node);
        append_retired(tid, node, [] { return false; });
    }
};

}  // namespace smr
