// What a domain is, as concepts: the calls a data structure or a program
// makes (smr::reclamation_domain), and one concept per capability a scheme
// can have (protecting pointers, read phases, neutralization, quiescent
// states, going offline, holding garbage, an allocation clock, counted links).
//
// A scheme is written by hiding domain_base's hooks (domain_base.hpp), and a
// hook it does not hide is domain_base's empty or generic default. That makes
// a misspelt hook (`on_thread_exti`) a silent bug: the scheme compiles and
// inherits the default. So a capability here is the set of hooks the scheme
// must have written itself, judged by the class that declares each hook
// (`&D::on_end_op` names domain_base's when the scheme has none; domain_base::
// written_hooks() reads them all), and detail::hooks_follow_traits holds
// every scheme to what its reclaimer_traits claim: a reservation scheme
// writes its own on_protect, a neutralization scheme its read phases, a scheme
// that needs quiescent states its quiescent, and so on. domain_base's
// constructor asserts it, so every scheme, present or future, is checked
// where it is first built.
#pragma once

#include <atomic>
#include <concepts>
#include <cstdint>

#include "smr/reclaim/traits.hpp"

namespace smr {

template <class Derived, class Local, class NodeHeader>
class domain_base;
struct reclaimer_stats;

namespace detail {

/// The class that declares the member a pointer to member names (only in
/// unevaluated operands: never defined).
template <class Class, class Member>
Class hook_owner(Member Class::*);

template <class>
inline constexpr bool is_domain_base = false;
template <class Derived, class Local, class NodeHeader>
inline constexpr bool is_domain_base<domain_base<Derived, Local, NodeHeader>> = true;

/// Whether the hook `&D::hook` names was written by the scheme (or a family
/// template between it and domain_base), not inherited as domain_base's default.
template <auto Hook>
inline constexpr bool own_hook = !is_domain_base<decltype(hook_owner(Hook))>;

/// A node of the domain's kind, to name a hook that is a template over the
/// node type (protect, the link hooks); never made.
template <class Header>
struct probe_node final : Header {};
template <class D>
using probe = probe_node<typename D::node_base>;

/// Which of domain_base's hooks a scheme wrote itself. domain_base::
/// written_hooks() fills it where a scheme's private hooks are visible (a
/// scheme that keeps hooks from its users befriends domain_base, which calls
/// them), and the concepts below read it.
struct hook_set {
    bool begin_op, end_op, protect, reader, read_phase_begin, read_phase_end, quiescent;
    bool come_online, go_offline, hand_over_garbage, on_thread_exit, tick_clock, on_allocate;
    bool compare_exchange_link, store_private_link;
};

}  // namespace detail

/// What data structures, facades and programs call on a domain: threads,
/// operations, protection, retirement, allocation, barriers and statistics.
/// Every scheme of the library models it (through domain_base).
template <class D>
concept reclamation_domain = requires(D& d, const D& cd, int tid, typename D::lent self,
                                      detail::probe<D>* node,
                                      std::atomic<detail::probe<D>*>& link) {
    { D::traits } -> std::convertible_to<reclaimer_traits>;
    { D::written_hooks() } -> std::same_as<detail::hook_set>;
    typename D::node_base;
    { d.register_thread() } -> std::same_as<int>;
    d.unregister_thread(tid);
    d.begin_op(self);
    d.end_op(self);
    { d.protect(self, 0, link) } -> std::same_as<detail::probe<D>*>;
    d.reader(self);
    d.read_phase_begin(self);
    d.read_phase_end(self, node);
    d.quiescent(self);
    d.retire(self, node);
    d.discard(self, node);
    d.free_unshared(node);
    { d.template allocate<detail::probe<D>>(self) } -> std::same_as<detail::probe<D>*>;
    { d.compare_exchange_link(self, link, node, node) } -> std::same_as<bool>;
    d.store_private_link(self, link, node);
    d.barrier(self);
    d.thread_online(self);
    d.thread_offline(self);
    { cd.garbage() } -> std::same_as<std::uint64_t>;
    { cd.stats() } -> std::same_as<reclaimer_stats>;
};

/// on_protect(tid, slot, source) is the scheme's own: it reserves what it reads
/// (hp, he, ibr, wfe; lfrc counts a reference).
template <class D>
concept protects_pointers = reclamation_domain<D> && D::written_hooks()
.protect;

/// Operations split into a read phase, which may be restarted, and a write
/// phase that holds its reservations (NBR's on_read_phase_begin and
/// on_read_phase_end hooks, behind read_phase_begin and read_phase_end).
template <class D>
concept splits_read_phases = reclamation_domain<D> && D::written_hooks()
.read_phase_begin&& D::written_hooks().read_phase_end;

/// Readers are neutralized: a reclaimer signals them, and a reader in its
/// read phase restarts from the root (nbr, nbrplus).
template <class D>
concept neutralizes =
    splits_read_phases<D> && D::traits.uses_signals&& D::traits.needs_restart_from_root;

/// The program's quiescent(self) calls are what ends a grace period (qsbr,
/// qsbr_ibr, urcu_qsbr).
template <class D>
concept declares_quiescent_states = reclamation_domain<D> && D::written_hooks()
.quiescent;

/// Coming online and going offline change what the scheme's grace periods
/// wait for (nebr, qsbr, rcu, token, the liburcu adapters).
template <class D>
concept goes_offline = reclamation_domain<D> && D::written_hooks()
.come_online&& D::written_hooks().go_offline;

/// Retired nodes wait in the scheme's own lists, which a leaving thread, an
/// offline one and a barrier hand over to the orphanage.
template <class D>
concept holds_garbage = reclamation_domain<D> && D::written_hooks()
.hand_over_garbage&& D::written_hooks().on_thread_exit;

/// A global clock (epoch or era) that allocations advance (rcu, he, ibr,
/// wfe: domain_config::epoch_freq), ticked for objects the domain did not allocate.
template <class D>
concept keeps_allocation_clock = reclamation_domain<D> && D::written_hooks()
.tick_clock&& D::written_hooks().on_allocate;

/// Links carry reference counts: publishing or unlinking a node moves a count (lfrc).
template <class D>
concept counts_links = reclamation_domain<D> && D::written_hooks()
.compare_exchange_link&& D::written_hooks().store_private_link;

namespace detail {

/// Holds a scheme to its reclaimer_traits: each capability the traits claim
/// has its hooks written by the scheme, and no hook is written for a
/// capability the traits deny. A failure names the hook to look for.
template <class D>
struct hooks_follow_traits {
    static constexpr reclaimer_traits traits = D::traits;
    static constexpr hook_set written = D::written_hooks();
    static constexpr bool leak = traits.family == reclaimer_family::leak;
    static constexpr bool counted = traits.family == reclaimer_family::reference_count;

    /// A scheme written before the calls moved to domain_base hides them
    /// (its retire(int, T*) hides retire(lent, T*)): named before the
    /// concept's failure, which would not say why.
    static_assert(
        requires(D & d, typename D::lent self, probe<D>* node, std::atomic<probe<D>*>& link) {
            d.begin_op(self);
            d.end_op(self);
            d.protect(self, 0, link);
            d.reader(self);
            d.retire(self, node);
            d.read_phase_end(self, node);
            d.compare_exchange_link(self, link, node, node);
            d.quiescent(self);
        },
        "begin_op, end_op, protect, reader, retire, read_phase_begin/end, quiescent and the "
        "link calls are domain_base's: a scheme writes their hooks, on_begin_op(tid), "
        "on_end_op(tid), on_protect(tid, index, source), make_reader(tid), on_retire(tid, "
        "node), on_read_phase_begin/end, on_quiescent and "
        "on_compare_exchange_link/on_store_private_link; is one named as the call?");
    static_assert(reclamation_domain<D>, "a domain must model smr::reclamation_domain");
    static_assert(written.protect == (traits.family == reclaimer_family::reservation || counted),
                  "a reservation or reference-counting scheme writes its own on_protect(tid, "
                  "slot, source), and no other scheme does: is on_protect misspelt, or the "
                  "family wrong?");
    static_assert(!written.reader || written.protect,
                  "a scheme with its own make_reader(tid) writes its own on_protect as well");
    static_assert(!traits.protect_uses_slots || written.protect,
                  "protect_uses_slots: only a scheme's own protect can use its slots");
    static_assert((written.read_phase_begin && written.read_phase_end) ==
                      (traits.family == reclaimer_family::neutralization),
                  "a neutralization scheme writes on_read_phase_begin and on_read_phase_end, and "
                  "no other scheme does: is one misspelt, or the family wrong?");
    static_assert(written.read_phase_begin == written.read_phase_end,
                  "on_read_phase_begin and on_read_phase_end come in a pair: is one misspelt?");
    static_assert(traits.family != reclaimer_family::neutralization ||
                      (traits.uses_signals && traits.needs_restart_from_root),
                  "a neutralization scheme uses signals and restarts from the root");
    static_assert(!traits.needs_quiescent_states || written.quiescent,
                  "needs_quiescent_states: the scheme writes its own on_quiescent(tid)");
    static_assert(written.come_online == written.go_offline,
                  "come_online and go_offline come in a pair: is one misspelt?");
    static_assert((written.hand_over_garbage && written.on_thread_exit) == (!leak && !counted),
                  "a scheme that keeps retired nodes writes hand_over_garbage and on_thread_exit "
                  "(and a leak or reference-counting one does not): is one misspelt?");
    static_assert(leak || traits.needs_quiescent_states || written.end_op,
                  "a scheme that reclaims, and whose grace periods are not made of quiescent "
                  "states, writes its own on_end_op: is it misspelt?");
    static_assert(!written.begin_op || written.end_op,
                  "a scheme with its own on_begin_op writes its own on_end_op");
    static_assert((written.tick_clock && written.on_allocate) == traits.reads.epoch_freq,
                  "a scheme that reads epoch_freq writes tick_clock and on_allocate, and no "
                  "other scheme does: is one misspelt?");
    static_assert((written.compare_exchange_link && written.store_private_link) == counted,
                  "a reference-counting scheme writes on_compare_exchange_link and "
                  "on_store_private_link, and no other scheme does");

    static constexpr bool value = true;
};

}  // namespace detail
}  // namespace smr
