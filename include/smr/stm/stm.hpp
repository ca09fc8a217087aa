// A word-based software transactional memory with TinySTM 1.0.4's default
// design, the STM of Baldassin, Borin and Araujo's allocator study (TRANSACT
// 2014, Section 4): a global version clock, a table of 2^20 versioned locks
// with 32-byte stripes (orec_table.hpp), encounter-time locking, write-back,
// and the "suicide" contention manager. Written from the published design,
// not from TinySTM's code.
//
// ---- The trade-offs ---------------------------------------------------------
//
// Word-based, through a lock table. Any 8-byte word can be transactional, and
// objects need no header -- which is why the allocator matters: the table
// maps *addresses*, so where malloc puts two nodes decides whether they share
// a lock (a false conflict, counted in stm_stats::false_aborts). An
// object-based STM would give each object its own lock and hide the
// allocator's layout; the study exists because TinySTM does not.
//
// Encounter-time locking (ETL) rather than commit-time locking (TL2's CTL):
// a store takes its lock at once, so a conflict between writers is found at
// the first conflicting store and the loser restarts before wasting the rest
// of its body; a transaction also finds its own writes through the lock word
// instead of searching its write set on every load. The cost: locks are held
// for the rest of the body, so readers of those stripes abort for longer.
//
// Write-back rather than write-through (TinySTM's default, WRITE_BACK_ETL):
// stores are buffered and memory is written at commit, under the locks. An
// aborting transaction has exposed no value, so there is no undo log, no
// reader ever sees a value that is later undone, an abort can restore each
// lock's previous version (nothing under it changed), and a block allocated
// by the aborted attempt can be std::freed at once (no other transaction can
// have seen its address). Write-through would make commits cheaper (the data
// is already in place) and aborts dearer, and would need a new version on
// every abort.
//
// Time-based validation (lazy snapshot): a transaction reads a consistent
// state at its snapshot, extending the snapshot when it meets a newer version
// if nothing it read has changed, so every value a body sees, even in an
// attempt that will abort, belongs to one committed state (opacity). A
// read-only transaction commits with no work at all.
//
// Suicide contention management: the transaction that meets a lock aborts
// itself and restarts at once. Cheap and simple; a transaction never waits
// for another, so a lock holder that is preempted stalls nobody, but two
// transactions can abort each other repeatedly. A few pause instructions
// after repeated aborts, and a yield every 64, keep that from becoming a
// livelock when threads outnumber cores. Progress: obstruction-free-ish --
// a transaction that runs alone commits (its lock acquisitions never wait),
// but none is guaranteed to commit under contention.
//
// ---- Reclamation ------------------------------------------------------------
//
// Each attempt runs inside an op_guard of the domain, so a node freed by a
// concurrent commit is not reclaimed while a doomed transaction may still
// read it: transaction::free only records the block, and at commit the blocks
// go into pointer blocks that the domain retires (deferred_free.hpp). Only
// domains whose protection spans the whole operation can do this (serves_stm).
//
// ---- Rules for callers --------------------------------------------------------
//
// - A thread attaches to the domain (smr::attach) and passes its context; at
//   most one transaction per context at a time (two contexts in one thread
//   may nest, as the tests do to hold a lock open). Calls flush(self) before
//   its context detaches, or its last frees wait for the slot's next user (or
//   the destructor).
// - Transactional words are 8-byte aligned and, while transactions may run,
//   accessed only through load and store (initialization before publication
//   excepted). A body must let the abort exception pass: no catch (...) that
//   swallows it. Exceptions of the body's own roll the attempt back and
//   propagate.
// - Schemes that need quiescent states (qsbr, urcu_qsbr) get them from the
//   caller between transactions, as with any data structure.
// - The stm must be destroyed before its domain, with no transaction running.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <utility>

#include "smr/core/compiler.hpp"
#include "smr/core/padded.hpp"
#include "smr/reclaim/context.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/reclaim/traits.hpp"
#include "smr/stm/deferred_free.hpp"
#include "smr/stm/orec_table.hpp"
#include "smr/stm/transaction.hpp"

namespace smr::stm {

/// Reclaimers whose protection spans the whole operation, with no per-load
/// protect: an epoch (grace period), no reclamation at all, or an external
/// library's read-side critical section. The others cannot serve: hazard
/// pointers and eras (reservation) would need a protect on every
/// transactional load, and a transaction reads arbitrary words, not links
/// it could validate; NBR's siglongjmp (neutralization) would land inside a
/// transaction that holds locks and owns allocations; reference counting
/// counts links, which the STM's untyped words do not expose.
template <class Domain>
inline constexpr bool serves_stm = protects_whole_operation(Domain::traits.family);

/// One STM instance (clock, lock table, descriptors), typically one per data
/// structure. `domain` must outlive it.
template <class Domain>
class stm {
  public:
    using domain_type = Domain;
    static constexpr std::size_t pointers_per_block = deferred_frees<Domain>::pointers_per_block;

    explicit stm(Domain& domain, const stm_config& config = {})
        : domain_(domain),
          orecs_(config),
          max_threads_(checked_max_threads(domain)),
          descriptors_(new transaction[max_threads_]),
          frees_(domain, max_threads_) {
        // In the constructor, not the class: a structure over stm<Domain> can
        // still be named with any Domain, for smr::check's verdict.
        static_assert(
            serves_stm<Domain>,
            "the STM needs a reclaimer whose protection spans the operation (serves_stm)");
        for (std::size_t i = 0; i != max_threads_; ++i) {
            descriptors_[i].bind(orecs_, *clock_, static_cast<int>(i));
        }
    }

    stm(const stm&) = delete;
    stm& operator=(const stm&) = delete;

    /// No transaction may be running. Pointers still waiting in partly filled
    /// blocks are freed at once (deferred_frees' destructor); retired blocks
    /// are the domain's.
    ~stm() = default;

    /// Runs body(transaction&) as a transaction until an attempt commits and
    /// returns its result. An exception of the body rolls the attempt back and
    /// propagates (nothing committed).
    template <class F>
    auto atomically(context_ref<Domain> self, F&& body) -> std::invoke_result_t<F&, transaction&> {
        using result = std::invoke_result_t<F&, transaction&>;
        smr::op_guard guard(domain_, self);  // nothing read by any attempt is freed before it ends
        transaction& tx = descriptor(self);
        for (std::uint32_t failures = 0;; ++failures) {
            tx.begin();
            try {
                if constexpr (std::is_void_v<result>) {
                    body(tx);
                    finish(self, tx);
                    return;
                } else {
                    result value = body(tx);
                    finish(self, tx);
                    return value;
                }
            } catch (const transaction::abort_signal&) {
                tx.rollback();
            } catch (...) {
                tx.rollback();
                throw;
            }
            back_off(failures);
        }
    }

    /// Outside any transaction of self: hands self's pending frees to the
    /// domain now. Call it before the context detaches.
    void flush(context_ref<Domain> self) { frees_.flush(self); }

    /// Totals over all threads: relaxed reads, exact once threads are done.
    stm_stats stats() const noexcept {
        stm_stats out;
        for (std::size_t i = 0; i != max_threads_; ++i) descriptors_[i].add_stats_to(out);
        return out;
    }

    const orec_table& orecs() const noexcept { return orecs_; }
    /// The global version clock (relaxed: a recent value).
    std::uint64_t clock() const noexcept { return clock_->load(std::memory_order_relaxed); }
    Domain& domain() const noexcept { return domain_; }

  private:
    static std::size_t checked_max_threads(const Domain& domain) {
        const std::size_t n = domain.config().max_threads;
        if (n > orec_table::max_owners) {
            throw std::invalid_argument(
                "stm: domain_config::max_threads exceeds orec_table::max_owners");
        }
        return n;
    }

    transaction& descriptor(context_ref<Domain> self) noexcept {
        return descriptors_[static_cast<std::size_t>(tid_of(self))];
    }

    /// The attempt's commit, with its frees handed to reclamation. Room for
    /// them is made first: bad_alloc there still rolls back cleanly.
    void finish(context_ref<Domain> self, transaction& tx) {
        frees_.reserve(self, tx.deferred_frees().size());
        tx.commit();  // throws abort_signal if validation fails
        frees_.append(self, tx.deferred_frees());
        tx.end_committed();
    }

    /// After `failures` + 1 aborts in a row. Suicide: the first restart is
    /// immediate; then a few pauses (up to 16) give the lock holder time to
    /// commit, and every 64th restart yields, for a holder that was preempted
    /// on an oversubscribed machine.
    static void back_off(std::uint32_t failures) noexcept {
        if ((failures + 1) % 64 == 0) {
            std::this_thread::yield();
            return;
        }
        for (std::uint32_t i = std::min<std::uint32_t>(failures, 16); i != 0; --i)
            core::cpu_relax();
    }

    Domain& domain_;
    core::padded<std::atomic<std::uint64_t>> clock_;  // alone on its lines: every commit writes it
    orec_table orecs_;
    std::size_t max_threads_;
    std::unique_ptr<transaction[]> descriptors_;  // per slot, each on its own cache lines
    deferred_frees<Domain> frees_;
};

}  // namespace smr::stm
