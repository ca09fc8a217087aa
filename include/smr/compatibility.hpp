// Which reclaimer may run with which data structure, derived from what each
// declares: the reclaimer's traits.family and the structure's
// traverses_unlinked_nodes, names_frontiers, passes_parents, has_read_write_phases,
// read_phases_start_at_root, counts_links, locks_every_access and transactional. The NBR paper's
// Table 1 (Singh, Brown, Mashtizadeh, PPoPP 2021) is the source, extended to every reclaimer here;
// docs/compatibility.md shows the resulting table (`smrbench --list
// --markdown` prints it, and tests/test_compatibility.cpp fails when the
// document and this code disagree).
//
//     constexpr auto c = smr::check<smr::ds::lazylist<smr::hp_domain>>();
//     static_assert(!c.safe);  // c.reason says why
//
// The rules look only at families and declarations, never at names, so a new
// reclaimer or structure is classified as soon as it declares its traits. A
// structure that does not declare the phase properties is assumed not to
// have them (unsafe with neutralization), and a family without a rule is
// unsafe, so nothing is called safe by omission.
#pragma once

#include <cstddef>
#include <string_view>

#include "smr/reclaim/traits.hpp"

namespace smr {

/// What a data structure declares about itself: what the rules below need
/// (the first eight properties), and what a program that runs it must know (the
/// rest: its operations, options and memory). The one description of a
/// structure; smrbench reads every capability from here.
struct ds_traits {
    std::string_view name;
    /// A reader may follow a pointer out of a node that is already unlinked
    /// (lazylist's and dgt_bst's searches, harris_list's runs of marked nodes).
    bool traverses_unlinked_nodes = true;
    /// Every step out of a node that may be unlinked goes through
    /// smr::protect_from with that node and restarts when it fails, and every
    /// unlink names its frontier (smr::begin_unlink) and leaves the unlinked
    /// nodes' links frozen: HP++'s conditions (reclaim/unlink.hpp).
    bool names_frontiers = false;
    /// Every protect whose source lies in a node names that node
    /// (smr::protect_in; guard.protect_in): a scheme whose helpers read on a
    /// stalled reader's behalf keeps it alive for them (Crystalline-W).
    bool passes_parents = false;
    /// Every operation is a sequence of read phases (SMR_READ_PHASE_BEGIN ...
    /// read_phase_end: no shared writes, locks, allocation or destructors) and
    /// write phases that touch only the nodes reserved at read_phase_end.
    bool has_read_write_phases = false;
    /// Every read phase starts from the root whenever the reclaimer's
    /// traits.needs_restart_from_root asks for it.
    bool read_phases_start_at_root = false;
    /// Every link update goes through the domain's link hooks and every node
    /// type lists its links (reclaim/lfrc.hpp): reference counting can count
    /// the references that links hold.
    bool counts_links = false;
    /// Every access, reads included, holds one lock (lock_list): no thread
    /// ever reaches an unlinked node, and the structure frees what it
    /// removes itself, so no scheme's protection is needed.
    bool locks_every_access = false;
    /// Every access goes through a word-based STM (smr/stm/) whose attempts
    /// each run inside one operation and read arbitrary words, not links:
    /// only schemes that protect a whole operation can serve it
    /// (protects_whole_operation), and the others cannot even be built.
    bool transactional = false;

    /// A FIFO queue (DS::is_queue): insert enqueues, erase dequeues, and
    /// there is no contains.
    bool is_queue = false;
    /// Reads ds::ds_options::restart_from_head (DS::has_restart_from_head_option).
    bool restart_from_head_option = false;
    /// Reads ds::ds_options::buckets: a table of fixed size (DS::has_buckets_option).
    bool buckets_option = false;
    /// Can hold its first node for a stalled reader (DS::hold_first(tid, wait)).
    bool holds_first = false;
    /// sizeof the structure's node, with the header its reclaimer's node_base
    /// adds (DS::node_size; every structure has one node type; 0 if undeclared).
    std::size_t node_size = 0;
    /// Nodes it holds per key (DS::nodes_per_key), and keys a node holds at
    /// most (DS::keys_per_node_at_most); one each unless declared.
    std::size_t nodes_per_key = 1;
    std::size_t keys_per_node_at_most = 1;
};

/// The declarations of structure DS (an instantiated type, e.g.
/// lazylist<debra_domain>); what it leaves undeclared takes the default above.
template <class DS>
constexpr ds_traits ds_traits_of() noexcept {
    ds_traits t;
    t.name = DS::name;
    t.traverses_unlinked_nodes = DS::traverses_unlinked_nodes;
    if constexpr (requires { DS::names_frontiers; }) t.names_frontiers = DS::names_frontiers;
    if constexpr (requires { DS::passes_parents; }) t.passes_parents = DS::passes_parents;
    if constexpr (requires { DS::has_read_write_phases; }) {
        t.has_read_write_phases = DS::has_read_write_phases;
    }
    if constexpr (requires { DS::read_phases_start_at_root; }) {
        t.read_phases_start_at_root = DS::read_phases_start_at_root;
    }
    if constexpr (requires { DS::counts_links; }) {
        t.counts_links = DS::counts_links;
    }
    if constexpr (requires { DS::locks_every_access; }) {
        t.locks_every_access = DS::locks_every_access;
    }
    if constexpr (requires { DS::transactional; }) {
        t.transactional = DS::transactional;
    }
    if constexpr (requires { DS::is_queue; }) t.is_queue = DS::is_queue;
    if constexpr (requires { DS::has_restart_from_head_option; }) {
        t.restart_from_head_option = DS::has_restart_from_head_option;
    }
    if constexpr (requires { DS::has_buckets_option; }) t.buckets_option = DS::has_buckets_option;
    if constexpr (requires { typename DS::context_type; }) {
        t.holds_first = requires(DS & ds, typename DS::context_type & self, void (*wait)()) {
            ds.hold_first(self, wait);
        };
    }
    if constexpr (requires { DS::node_size; }) t.node_size = DS::node_size;
    if constexpr (requires { DS::nodes_per_key; }) t.nodes_per_key = DS::nodes_per_key;
    if constexpr (requires { DS::keys_per_node_at_most; }) {
        t.keys_per_node_at_most = DS::keys_per_node_at_most;
    }
    return t;
}

/// The verdict for one reclaimer x structure: safe or not, and one sentence
/// (no line breaks) saying why, citing the literature.
struct compatibility {
    bool safe = false;
    std::string_view reason;
};

namespace compatibility_reasons {

inline constexpr std::string_view leak =
    "never frees a node while threads run, so no pointer can dangle.";
inline constexpr std::string_view epoch =
    "a node retired during an operation is freed only after a grace period in which every "
    "thread has passed a quiescent point (between operations), so every pointer an operation "
    "read stays valid until it ends, even through unlinked nodes (NBR paper, Table 1: EBR is "
    "compatible with every structure).";
inline constexpr std::string_view external =
    "an adapter over liburcu: its grace periods outlast every read-side critical section, "
    "which here spans the whole operation, so it protects like an epoch scheme.";
inline constexpr std::string_view reservation_unlinked =
    "its readers follow next pointers out of nodes that may already be unlinked, and a "
    "reservation cannot protect such a successor: the validating re-read of an unlinked node's "
    "frozen pointer succeeds even when its target is already retired and freed, and an era "
    "reserved there may postdate that target's retirement (NBR paper, Section 2 and Table 1: "
    "HP, HE, IBR and WFE are not compatible with the lazy list or DGT; Michael 2002 changed "
    "Harris's list into HM04 for this reason).";
inline constexpr std::string_view reservation_frontier =
    "its readers follow links out of nodes that may be unlinked, and the structure names the "
    "node each step leaves and each unlink's frontier: the unlinker protects the frontier until "
    "the unlinked nodes are invalidated, and a reader that finds the node it left invalidated "
    "restarts, so every successor it keeps was protected when its hazard became visible (HP++: "
    "Jung, Lee, Kim, Kang, SPAA 2023).";
inline constexpr std::string_view reservation_no_frontier =
    "its readers follow links out of nodes that may be unlinked, and the structure does not name "
    "the node each step leaves or its unlinks' frontiers (names_frontiers), which HP++ needs to "
    "invalidate unlinked nodes and protect what they lead to (Jung, Lee, Kim, Kang, SPAA 2023).";
inline constexpr std::string_view reservation_no_parents =
    "its helpers read a stalled reader's source on the reader's behalf and must keep alive the "
    "node that holds it, which the structure does not name (passes_parents: smr::protect_in) "
    "(Crystalline-W: Nikolaev and Ravindran, DISC 2021).";
inline constexpr std::string_view reservation_safe =
    "every node is dereferenced only after a validation showed it still reachable once the "
    "reservation was visible (protect's re-read of an unmarked predecessor in Michael's list, "
    "the re-read of head in Michael and Scott's queue), so it cannot have been retired before "
    "(NBR paper, Table 1: HM04 is compatible with HP, HE, IBR and WFE).";
inline constexpr std::string_view neutralization_safe =
    "every operation is a sequence of read phases that write nothing and may be restarted "
    "from their checkpoint, each starting from the root, and write phases that touch only the "
    "nodes reserved when the read phase ended (NBR paper, Sections 4.1 and 5.2).";
inline constexpr std::string_view neutralization_no_phases =
    "the structure does not declare the read/write-phase form NBR requires: a neutralized "
    "reader would restart in the middle of a write, or a writer would touch unreserved nodes "
    "(NBR paper, Section 4.1).";
inline constexpr std::string_view neutralization_no_root_restart =
    "a read phase after an auxiliary write resumes from a node kept from the previous phase, "
    "whose successors are not reserved and may be freed (NBR paper, Section 5.2, 'Limitation: "
    "restarting from the root'; Table 1: HM04 is not compatible with NBR).";
inline constexpr std::string_view reference_count_safe =
    "a node is freed only when no link and no thread counts it: a reader counts a node before "
    "following it and re-reads the link (Valois's SafeRead), every link update moves a count, "
    "and memory is type-stable so a count touched after the free stays a count (Valois, PODC "
    "1995, with Michael and Scott's correction; Hart et al., JPDC 2007, Section 2.4).";
inline constexpr std::string_view reference_count_uncounted =
    "the structure's links are not counted (it does not declare counts_links: its node types do "
    "not list their links and its link updates bypass the domain), so a reference count would "
    "free nodes that are still linked; smrbench cannot build this pair.";
inline constexpr std::string_view locked =
    "every access, reads included, holds the structure's one lock, so no thread can reach a "
    "node once it is unlinked, and the structure frees it itself; the scheme protects nothing "
    "and is never entered (Hart et al., JPDC 2007, Figure 6's spinlock baseline).";
inline constexpr std::string_view transactional_epoch =
    "a block freed by a committed transaction reaches the scheme (in a pointer block) and is "
    "freed only after a grace period, and every transaction attempt runs inside one operation, "
    "so no attempt, not even one that will abort, reads freed memory (TinySTM's epoch-based "
    "reclamation; Felber, Fetzer, Riegel, PPoPP 2008).";
inline constexpr std::string_view transactional_reservation =
    "a transaction reads arbitrary words, not links it could validate, so hazard pointers or "
    "eras would need a protect and a validation on every transactional load; smrbench cannot "
    "build this pair.";
inline constexpr std::string_view transactional_neutralization =
    "a neutralizing signal would siglongjmp out of a transaction that holds versioned locks "
    "and owns allocations, leaving both behind; smrbench cannot build this pair.";
inline constexpr std::string_view transactional_reference_count =
    "the STM's words are untyped, so no link it writes can be counted; smrbench cannot build "
    "this pair.";
inline constexpr std::string_view unknown_family =
    "no compatibility rule exists for this reclaimer family; add one in smr/compatibility.hpp.";

}  // namespace compatibility_reasons

/// The rules for a structure that runs on the STM: one case per family.
constexpr compatibility check_transactional(reclaimer_family family) noexcept {
    namespace why = compatibility_reasons;
    switch (family) {
        case reclaimer_family::leak:
            return {true, why::leak};
        case reclaimer_family::epoch:
            return {true, why::transactional_epoch};
        case reclaimer_family::external:
            return {true, why::external};
        case reclaimer_family::reservation:
            return {false, why::transactional_reservation};
        case reclaimer_family::neutralization:
            return {false, why::transactional_neutralization};
        case reclaimer_family::reference_count:
            return {false, why::transactional_reference_count};
    }
    return {false, why::unknown_family};
}

/// The rule table: one case per family.
constexpr compatibility check(const ds_traits& ds, const reclaimer_traits& reclaimer) noexcept {
    namespace why = compatibility_reasons;
    if (ds.transactional) return check_transactional(reclaimer.family);
    if (ds.locks_every_access && reclaimer.family != reclaimer_family::reference_count) {
        return {true, why::locked};
    }
    switch (reclaimer.family) {
        case reclaimer_family::leak:
            return {true, why::leak};
        case reclaimer_family::epoch:
            return {true, why::epoch};
        case reclaimer_family::external:
            return {true, why::external};
        case reclaimer_family::reservation:
            if (reclaimer.protect_takes_parents && !ds.passes_parents) {
                return {false, why::reservation_no_parents};
            }
            if (!ds.traverses_unlinked_nodes) return {true, why::reservation_safe};
            if (!reclaimer.invalidates_unlinked) return {false, why::reservation_unlinked};
            if (!ds.names_frontiers) return {false, why::reservation_no_frontier};
            return {true, why::reservation_frontier};
        case reclaimer_family::neutralization:
            if (!ds.has_read_write_phases) return {false, why::neutralization_no_phases};
            if (!ds.read_phases_start_at_root) return {false, why::neutralization_no_root_restart};
            return {true, why::neutralization_safe};
        case reclaimer_family::reference_count:
            if (!ds.counts_links) return {false, why::reference_count_uncounted};
            return {true, why::reference_count_safe};
    }
    return {false, why::unknown_family};
}

/// Whether the pair can be built at all: reference counting needs node types
/// that list their links, the STM a scheme that protects whole operations
/// (everything else compiles, safe or not).
template <class DS, class Domain = typename DS::domain_type>
constexpr bool buildable() noexcept {
    constexpr ds_traits ds = ds_traits_of<DS>();
    if (ds.transactional) return protects_whole_operation(Domain::traits.family);
    return Domain::traits.family != reclaimer_family::reference_count || ds.counts_links;
}

/// The verdict for structure DS (an instantiated type) with reclaimer Domain
/// (by default the structure's own domain_type).
template <class DS, class Domain = typename DS::domain_type>
constexpr compatibility check() noexcept {
    return check(ds_traits_of<DS>(), Domain::traits);
}

}  // namespace smr
