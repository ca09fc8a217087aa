// What the schemes that judge retired nodes one by one share: hazard
// pointers (hp), the era family (he, ibr, wfe: era_domain) and the IBR
// benchmark's clocked epochs (rcu, qsbr_ibr). Each thread keeps one retire
// list; a retire appends the node and, once the list has grown by the scan
// threshold R since the last scan, scans: it reads every thread's
// reservations and frees what none of them covers. What survives a scan
// waits for a later one, so a list holds at most what the reservations pin
// plus R.
//
// The epoch family (ebr, nebr, debra, qsbr, token) instead frees whole bags
// by their epoch (epoch_bags.hpp) and never looks at a node alone.
//
// A scheme derives as
//     class hp_domain : public retire_list_domain<hp_domain, detail::hp_local>
// with a Local that has the retire list's members (detail::retire_list_local)
// and, in its retire, counts and stamps the node, then calls
//     append_retired<&hp_domain::scan>(tid, node);
// The scan is passed in rather than named so that it may stay private and
// take what the scheme needs (the era family's retire era). A scheme whose R
// is not bag_threshold hides scan_threshold (hp: R grows with the hazards).
#pragma once

#include <concepts>
#include <cstddef>

#include "smr/core/limbo_bag.hpp"
#include "smr/core/retired_node.hpp"
#include "smr/reclaim/domain_base.hpp"

namespace smr {

namespace detail {

/// A thread's state that retire_list_domain can run: its retire list, the
/// list length that triggers the next scan (0 before the first retire), and
/// the hand-over of the list when the thread leaves.
template <class Local>
concept retire_list_local = requires(Local& local, core::limbo_bag& out) {
    { local.retired } -> std::same_as<core::limbo_bag&>;
    { local.next_scan_at } -> std::same_as<std::size_t&>;
    local.drain_into(out);
};

}  // namespace detail

template <class Derived, detail::retire_list_local Local, class Header = core::retired_node>
class retire_list_domain : public domain_base<Derived, Local, Header> {
    using base = domain_base<Derived, Local, Header>;

  public:
    using base::base;

    /// R: the list grows by this many nodes between two scans.
    std::size_t scan_threshold() const noexcept { return this->config().bag_threshold; }

    /// Unregistering orphans the retire list: the next thread that retires
    /// adopts it into its own and judges it node by node in its next scan
    /// (the nodes carry what the judgement reads: their address or stamps).
    void hand_over_garbage(int tid) noexcept { this->orphans().give(this->local(tid).retired, 0); }

  protected:
    /// Appends `node`, counted and stamped by the caller, with any orphans
    /// waiting; when the list has reached the threshold, scans: calls the
    /// scheme's Scan(tid, scan_args...). A member pointer and arguments by
    /// value rather than a lambda: a closure capturing the retire era by
    /// reference cost he 85 instructions per operation on hm_list (GCC kept
    /// the search loop's values in other registers around it). Always
    /// inlined: as a call of its own it made GCC judge the structures'
    /// erase too large to inline into smrbench's worker (rcu on dgt_bst: +18
    /// instructions per operation).
    template <auto Scan, class T, class... ScanArgs>
    [[gnu::always_inline]] void append_retired(int tid, T* node, ScanArgs... scan_args) noexcept {
        Local& me = this->local(tid);
        this->adopt_orphans(tid, me.retired);
        me.retired.push_back(node);
        if (me.next_scan_at == 0) me.next_scan_at = self().scan_threshold();
        if (me.retired.size() >= me.next_scan_at) (derived().*Scan)(tid, scan_args...);
        this->hand_over_if_offline(tid);
    }

    /// Adopts every orphan now, for a barrier's round that scans next.
    void adopt_all_orphans(int tid) noexcept { this->adopt_orphans(tid, this->local(tid).retired); }

    /// After a scan, the next one comes R retires later.
    void schedule_next_scan(Local& me) noexcept {
        me.next_scan_at = me.retired.size() + self().scan_threshold();
    }

  private:
    const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }
    Derived& derived() noexcept { return static_cast<Derived&>(*this); }
};

}  // namespace smr
