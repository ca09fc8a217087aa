// What a reclaimer promises, declared next to its code.
#pragma once

#include <cstdint>
#include <string_view>

namespace smr {

/// The families of the literature. A data structure's safety depends mostly on
/// the family: reservation schemes cannot protect a traversal that passes
/// through already-unlinked nodes, neutralization schemes need the
/// structure's operations split into read and write phases.
enum class reclaimer_family : std::uint8_t {
    leak,             ///< never frees while running
    epoch,            ///< grace periods: EBR, DEBRA, QSBR, RCU, token
    reservation,      ///< per-pointer or per-era reservations: HP, HE, IBR, WFE
    neutralization,   ///< signals restart readers: NBR, NBR+
    reference_count,  ///< LFRC
    external,         ///< adapters over another library (liburcu)
};

inline constexpr std::string_view to_string(reclaimer_family family) noexcept {
    switch (family) {
        case reclaimer_family::leak:
            return "leak";
        case reclaimer_family::epoch:
            return "epoch";
        case reclaimer_family::reservation:
            return "reservation";
        case reclaimer_family::neutralization:
            return "neutralization";
        case reclaimer_family::reference_count:
            return "reference_count";
        case reclaimer_family::external:
            return "external";
    }
    return "unknown";
}

/// Whether a family's protection spans a whole operation with no per-access
/// step: an epoch's grace period, no reclamation at all, or an external
/// library's read-side critical section. Such a scheme protects whatever an
/// operation reads, links or not -- what a transactional memory, reading
/// arbitrary words, needs (smr::stm::serves_stm).
inline constexpr bool protects_whole_operation(reclaimer_family family) noexcept {
    return family == reclaimer_family::epoch || family == reclaimer_family::leak ||
           family == reclaimer_family::external;
}

/// The members of smr::domain_config a scheme reads besides those every
/// scheme reads (max_threads, memory, free, time_frees): a tuning set for a
/// scheme that does not read it changes nothing, so smrbench refuses it and
/// smrlab gives a grid's tunings only to the runs of the schemes that read
/// them. One flag per member, named after it.
struct tunings_read {
    bool bag_threshold = false;
    bool advance_every = false;
    bool check_every = false;
    bool epoch_freq = false;
    bool hp_scan_factor = false;
    bool hp_scan_offset = false;
    bool wfe_fast_attempts = false;
    bool token_check_every = false;
    bool nbr_signal = false;
    bool nbr_low_watermark = false;
    bool nbr_high_watermark = false;
    bool pop_signal = false;
    bool fence = false;
    bool min_epoch_us = false;
};

struct reclaimer_traits {
    std::string_view name;
    reclaimer_family family;
    /// Garbage stays bounded even if a thread stalls inside an operation.
    bool garbage_bounded;
    /// A failed protect or a neutralization restarts the operation from the
    /// root (NBR) rather than from the last safe node.
    bool needs_restart_from_root;
    /// Neutralizes readers with POSIX signals: a signalled read phase
    /// restarts (NBR family; its read phases sigsetjmp).
    bool uses_signals;
    /// Pings registered threads with a POSIX signal whose handler publishes
    /// their reservations (Publish-on-Ping); readers never restart. Like
    /// uses_signals, interrupts registered threads' system calls (restarted:
    /// SA_RESTART).
    bool pings = false;
    /// Needs quiescent(tid) calls from the application to make progress (QSBR).
    bool needs_quiescent_states;
    /// protect(tid, slot, src) publishes per slot (hp, he, wfe), so a
    /// traversal must keep the slots of the nodes it still holds apart. When
    /// false the slot argument is ignored and a structure may skip computing
    /// it: in a function the compiler cannot inline into its caller (one
    /// that calls sigsetjmp, under nbr) that bookkeeping is not optimized
    /// away (callgrind, hm_list contains, 1K keys: nbr 5,731 instructions
    /// with the bookkeeping, 3,440 without; debra 2,623).
    bool protect_uses_slots = false;
    /// op_guards of one thread nest: an inner guard neither begins nor ends
    /// an operation, so the outer one stays protected until the outermost
    /// guard ends, as C++26 rcu read-side locks nest. False where a thread's
    /// protection belongs to one operation at a time: hazard slots that the
    /// structures number from 0 (hp, he, wfe, lfrc's held references) and
    /// NBR's one checkpoint; a nested guard then fails a debug-build
    /// assertion (docs/design.md, "Nested operations").
    bool nests = true;
    /// Protects a traversal out of a node that may be unlinked where the
    /// structure names the node it steps out of and each unlink's frontier
    /// (smr::protect_from, smr::begin_unlink: reclaim/unlink.hpp; HP++):
    /// safe with a structure that declares names_frontiers.
    bool invalidates_unlinked = false;
    /// protect reads the node that holds its source (smr::protect_in,
    /// reader.hpp): helpers that read on a reader's behalf keep that node
    /// alive (crystalline's wait-free protect). Elsewhere the parent costs
    /// nothing: protect_in is protect.
    bool protect_takes_parents = false;
    /// Each thread begins epochs of its own: it moves to a new limbo bag when
    /// it sees the epoch change (debra, ebr, nebr, qsbr) or receives the token
    /// (token_*), and tells the domain (note_epoch_begun). The Epochs paper's
    /// Figure 4 is measured at those moments (smrbench --garbage-series).
    /// False for schemes whose threads only read a global clock (rcu and the
    /// era schemes), and for those without epochs.
    bool threads_begin_epochs = false;
    /// The tunings of domain_config the scheme reads.
    tunings_read reads{};
};

}  // namespace smr
