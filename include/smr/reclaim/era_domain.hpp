// What the era schemes (he, ibr, wfe) share: a global era clock and the two
// stamps every node carries, over the retire list and its orphan hand-over
// that hp and rcu use too (retire_list.hpp). Each scheme's header keeps only what its paper adds:
// how a reader reserves eras (he's and wfe's slots, ibr's interval), how a scan reads the
// reservations, and what moves the era besides allocation.
//
// The clock. The global era advances every `epoch_freq` x T allocations of a
// thread, T the threads registered (the IBR benchmark's epochFreq x
// task_num). A node's birth era is read at allocation and its retire era
// after its unlink; it may be freed once no reservation falls in
// [birth_era, retire_era].
//
// The stamp argument (why the retire era is late enough). Every era
// increment is a seq_cst RMW and every reader loads the source and then the
// era with seq_cst loads. retire fences (seq_cst) between the caller's unlink
// and its load of the era. If that load missed the increment to era e, the
// fence precedes the increment in S, and so precedes every reader's later
// seq_cst load that returns e or more: such a reader's source load then sees
// the unlink and cannot reach the node. So a reader that reached the node
// validated an era no later than its retire era. The reader's side is its
// seq_cst loads, not its fence, which may be a compiler barrier (fence_mode
// asymmetric).
//
// A scheme derives as
//     class he_domain : public era_domain<he_domain, detail::he_local>
// with a Local that has detail::era_thread_state's members (detail::era_local),
// befriends its base, and supplies
//     void on_end_op(int tid)                  clears its reservations
//     void scan(int tid, std::uint64_t era)    frees what no reservation covers;
//                                              `era` is the retire era of the
//                                              node that triggered it, or the
//                                              current era in a barrier's round
// and may hide advance_era (wfe helps pending requests first) and
// flush_step (ibr moves the era before it scans).
#pragma once

#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>

#include "smr/core/asymmetric_fence.hpp"
#include "smr/core/fence.hpp"
#include "smr/core/limbo_bag.hpp"
#include "smr/core/padded.hpp"
#include "smr/reclaim/reservation_common.hpp"
#include "smr/reclaim/retire_list.hpp"

namespace smr {

namespace detail {

/// A thread of an era scheme: its Reservations, which every scan reads,
/// first, then on a line of its own what only the thread uses (the orphanage
/// hands a retire list over): the clock's count of its allocations, its
/// retire list and the scan's scratch space.
template <class Reservations, class Scratch>
struct era_thread_state : Reservations {
    alignas(core::false_sharing_range) std::uint32_t allocations = 0;
    core::limbo_bag retired;
    std::size_t next_scan_at = 0;
    Scratch scratch;  // sized at registration (on_thread_enter)

    void drain_into(core::limbo_bag& out) noexcept { out.splice_back(retired); }
};

/// A thread's state that era_domain can run: the members of era_thread_state
/// (ibr's keeps them on its own reservation-free line).
template <class Local>
concept era_local = retire_list_local<Local> && requires(Local& local) {
    { local.allocations } -> std::same_as<std::uint32_t&>;
};

}  // namespace detail

template <class Derived, detail::era_local Local>
class era_domain : public retire_list_domain<Derived, Local, era_node_header> {
    using base = retire_list_domain<Derived, Local, era_node_header>;

  public:
    using node_header = era_node_header;

    using base::base;

    /// Every `epoch_freq` x T allocations of this thread advance the era
    /// (domain_config::epoch_freq).
    void tick_clock(int tid) noexcept {
        if (this->clock_due(this->local(tid).allocations)) self().advance_era(tid);
    }

    void on_allocate(int tid, era_node_header& node) noexcept {
        tick_clock(tid);
        // relaxed: a reader reaches the node only through its publication,
        // which happens after this load, so the reader's later era loads
        // return this era or a later one (coherence).
        node.birth_era = global_era_.load(std::memory_order_relaxed);
    }

    template <class T>
    void on_retire(int tid, T* node) noexcept {
        this->count_retired(tid, node);
        // seq_cst fence, in either fence mode: the unlink (the caller's last
        // write, maybe a plain store under a lock) precedes the stamp load
        // (the stamp argument at the top of this file).
        core::fence();
        const std::uint64_t era = global_era_.load(std::memory_order_relaxed);
        node->retire_era = era;
        this->template append_retired<&Derived::scan>(tid, node, era);
    }

    /// Clears every reservation; the retire list is orphaned (judged node by
    /// node, by its eras, in the adopter's scan: retire_list.hpp).
    void on_thread_exit(int tid) noexcept { self().on_end_op(tid); }

    /// A barrier's round: adopt every orphan and scan now.
    void flush_step(int tid) {
        this->adopt_all_orphans(tid);
        self().scan(tid, global_era());
    }

    std::uint64_t global_era() const noexcept {
        return global_era_.load(std::memory_order_relaxed);
    }

    /// The fences this domain's readers and scans use (config().fence, or
    /// symmetric where asymmetric is unavailable).
    fence_mode fence() const noexcept { return fences_.mode(); }

  protected:
    /// Moves the global era on by one.
    void advance_era(int tid) noexcept {
        // seq_cst: era increments are in S, which the stamp argument needs.
        const std::uint64_t era = global_era_.fetch_add(1, std::memory_order_seq_cst) + 1;
        this->note_epoch_advanced(tid, era);
    }

    alignas(core::false_sharing_range) std::atomic<std::uint64_t> global_era_{1};
    /// Read by every protect; on a line of its own (global_era_'s is
    /// written at every era increment).
    alignas(core::false_sharing_range) core::fence_pair fences_{this->config().fence};

  private:
    Derived& self() noexcept { return static_cast<Derived&>(*this); }
};

}  // namespace smr
