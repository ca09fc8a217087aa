// hyaline: Hyaline-1S, the robust single-slot-per-thread variant of Hyaline
// (Nikolaev and Ravindran, "Snapshot-Free, Transparent, and Robust Memory
// Reclamation for Lock-Free Data Structures", PLDI 2021, DOI
// 10.1145/3453483.3454090).
//
// ---- The idea ------------------------------------------------------------------
//
// Reclamation by reference counting, but of batches, not of nodes, and
// counted only by the threads that were inside an operation when the batch
// was retired. Each thread's slot is a list head whose low bit says "inside
// an operation". A thread retires into a private batch; once the batch has
// more nodes than there are slots it is sealed: one cell per active slot is
// pushed onto that slot's list (a CAS), and the batch's count is raised by
// the number of slots it reached. A thread that ends its operation swaps its
// head for zero and walks what was pushed meanwhile, dropping one reference
// per cell; whoever drops a batch's last reference frees its nodes. Nobody
// scans anybody's reservations: a retire touches each slot once per batch
// and an operation's end touches only the batches retired during it.
//
// ---- Robustness (the S) --------------------------------------------------------
//
// Plain Hyaline is an epoch scheme in disguise: a thread stalled inside an
// operation holds every batch retired after it entered. Hyaline-S adds
// birth eras, as HE and IBR do: every node is stamped with the global era
// at allocation, the era advances every epoch_freq x T allocations of a
// thread, and protect keeps the slot's `access` era equal to the global era
// (re-reading its source when it moves). A batch skips a slot whose access
// era is older than the batch's oldest node: that thread announced its era
// before each node it dereferenced, so it cannot hold a node born later.
// A stalled thread thus collects only the batches that hold a node born
// before it stalled, finitely many.
//
// ---- Why a reader is safe --------------------------------------------------------
//
// Reader R, of node n (born in era b, retired in batch B, min birth m <= b):
// R's begin_op stores its head's active bit and fences; each protect that
// returns n stored access = e, fenced, loaded n, and then loaded the global
// era and found e (so e >= b: n's birth era was read before n was published,
// and R's era load happens after its load of n). The sealer of B unlinked n,
// fences, and then loads R's access and head. These are two store-buffering
// pairs: if the sealer's load missed R's access or its active bit, R's fence
// follows the sealer's in the fences' total order, and R's later load of the
// link sees the unlink and cannot return n. Otherwise the sealer sees R
// active with access >= e >= m, and pushes B to R, which holds a reference
// until its operation ends. The fences are fence_mode's pair (a compiler
// barrier in each begin_op and era change against one membarrier per
// sealed batch, by default). A push that lands in a later operation of R
// (R left and came back between the sealer's loads and its CAS) only keeps
// B a little longer.
//
// Like ibr and he, an era cannot protect a traversal out of an unlinked node:
// its successor may be born after the reader's era and retired in a batch
// that skips the reader. Those structures are refused (compatibility.hpp).
//
// ---- Progress and memory -----------------------------------------------------------
//
// begin_op is one store and a compiler barrier: wait-free. end_op is one
// swap and a walk of the cells pushed during the operation: wait-free, in
// steps bounded by the batches retired meanwhile. protect is lock-free (it
// retries while the era moves, as he's). A seal is lock-free: its CAS on a
// slot fails only when another sealer pushed or the owner entered or left.
// The paper's Hyaline-1S is the same: wait-freedom of every call is what
// Crystalline adds. Memory: a thread's unsealed batch holds at most
// max(bag_threshold, T + 1) nodes; a sealed one is freed by the last active
// thread to leave, and a stalled thread pins only the batches holding a node
// born at or before its era.
//
// ---- Against the paper's artifact (lfsmr, lfbsmro.h) ----------------------------
//
// The artifact threads its lists through the nodes: each retired node
// carries a list link, a batch link and a count or batch link (three words),
// and the batch's first T nodes serve as the cells pushed to the slots. Here
// the nodes keep only their birth era; a sealed batch is one allocation
// holding the thread's limbo bag (core/limbo_bag.hpp: nodes and destroy
// functions, the layout every scheme of the library uses) and one cell per
// slot. The batch size (max(bag_threshold, T + 1)), the era clock, the
// robustness test and the counting are the paper's.
#pragma once

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <new>
#include <thread>

#include "smr/core/asymmetric_fence.hpp"
#include "smr/core/check.hpp"
#include "smr/core/compiler.hpp"
#include "smr/core/limbo_bag.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/padded.hpp"
#include "smr/reclaim/domain_base.hpp"
#include "smr/reclaim/slots.hpp"
#include "smr/reclaim/traits.hpp"

namespace smr {

/// What a hyaline node carries: the era it was allocated in.
struct hyaline_node_header : core::retired_node {
    std::uint64_t birth_era = 0;
};

namespace detail {

struct hyaline_batch;

/// One entry of a slot's list: a batch sealed while the slot's owner was
/// inside an operation.
struct hyaline_cell {
    hyaline_cell* next;
    hyaline_batch* batch;
};

/// A sealed batch: its nodes, the references the slots it reached still
/// hold, and room for one cell per slot, allocated behind it.
struct hyaline_batch {
    /// Pushes raise it once, by the number of slots reached, after the
    /// pushes; each leaving reader drops one, possibly first: it may be
    /// negative until the raise. Zero after both: free.
    std::atomic<std::int64_t> refs{0};
    core::limbo_bag nodes;
    /// Sealed by a barrier (the barrier waits for it: hyaline_domain::flush_step).
    bool for_barrier;

    hyaline_batch(core::limbo_bag& taken, bool barrier) noexcept
        : nodes(std::move(taken)), for_barrier(barrier) {}

    hyaline_cell* cell(std::size_t i) noexcept {
        return reinterpret_cast<hyaline_cell*>(this + 1) + i;
    }

    /// Out of memory stops the program, as a limbo bag's block does: a
    /// retire cannot fail.
    static hyaline_batch* make(core::limbo_bag& nodes, std::size_t cells, bool barrier) noexcept {
        static_assert(sizeof(hyaline_batch) % alignof(hyaline_cell) == 0);
        void* memory = std::malloc(sizeof(hyaline_batch) + cells * sizeof(hyaline_cell));
        SMR_CHECK(memory != nullptr, "out of memory for a hyaline batch");
        return ::new (memory) hyaline_batch(nodes, barrier);
    }
    static void destroy(hyaline_batch* batch) noexcept {
        batch->~hyaline_batch();
        std::free(batch);
    }
};

/// A thread of hyaline: its slot, which every seal reads, then its own state.
struct hyaline_local {
    static constexpr std::uintptr_t active = 1;
    static constexpr std::uint64_t no_birth = std::numeric_limits<std::uint64_t>::max();

    /// The cells pushed during the current operation, tagged `active`; 0
    /// between operations. Sealers CAS it, the owner stores and swaps it.
    alignas(core::false_sharing_range) std::atomic<std::uintptr_t> head{0};
    /// The era the owner last announced (the paper's `access`): raised by
    /// protect, read by every seal. A line of its own: the head's is
    /// written at every operation.
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> access{0};
    /// Our own: the announced era, the clock's count, the unsealed batch.
    alignas(core::false_sharing_range) std::uint64_t access_cache = 0;
    std::uint32_t allocations = 0;
    core::limbo_bag batch;
    std::uint64_t batch_min_birth = no_birth;

    void drain_into(core::limbo_bag& out) noexcept {
        out.splice_back(batch);
        batch_min_birth = no_birth;
    }
};

}  // namespace detail

/// Hyaline-1S; see the comment at the top of this file.
class hyaline_domain
    : public domain_base<hyaline_domain, detail::hyaline_local, hyaline_node_header> {
    using base = domain_base<hyaline_domain, detail::hyaline_local, hyaline_node_header>;
    friend base;
    using local_type = detail::hyaline_local;
    static constexpr std::uintptr_t active = local_type::active;

  public:
    static constexpr reclaimer_traits traits{
        .name = "hyaline",
        .family = reclaimer_family::reservation,
        .garbage_bounded = true,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = false,
        .reads = {.bag_threshold = true, .epoch_freq = true, .fence = true},
    };

    using base::base;

    ~hyaline_domain() {
        // Every thread left, so every sealed batch reached zero (a leaving
        // thread ends its operation, and its walk drops its references).
        assert(barrier_batches_.load(std::memory_order_relaxed) == 0);
    }

    void on_begin_op(int tid) noexcept {
        amortized_step(tid);
        auto& me = local(tid);
        // relaxed, then the reader's fence: the store-buffering pair with a
        // seal (top of file). Between operations the head is 0, so no cell
        // is overwritten.
        me.head.store(active, std::memory_order_relaxed);
        fences_.reader();
    }

    template <class T>
    T* on_protect(int tid, int index, const std::atomic<T*>& source) noexcept {
        detail::check_slot(index);  // one era per thread, but hp's slots would index
        auto& me = local(tid);
        for (;;) {
            // acquire: pairs with the release (or CAS) that published the
            // node, so its fields and its birth era's load come before ours.
            T* ptr = source.load(std::memory_order_acquire);
            // relaxed: after the acquire above, so not older than the
            // node's birth era (coherence).
            const std::uint64_t era = global_era_.load(std::memory_order_relaxed);
            if (era == me.access_cache) return ptr;
            me.access_cache = era;
            // relaxed, then the reader's fence: the pair with a seal's era
            // load (top of file); the loop re-reads the source after it.
            me.access.store(era, std::memory_order_relaxed);
            fences_.reader(me.access, source);
        }
    }

    /// Leaves: takes the cells pushed during the operation and drops one
    /// reference to each batch.
    void on_end_op(int tid) noexcept {
        // acq_rel: acquire, so the cells the sealers' release CAS pushed are
        // visible; release, with the walk's RMWs, orders the operation's
        // reads before the free of each batch it held.
        const std::uintptr_t head = local(tid).head.exchange(0, std::memory_order_acq_rel);
        auto* cell = reinterpret_cast<detail::hyaline_cell*>(head & ~active);
        while (cell != nullptr) {
            // Both read before the drop: once it is dropped, another thread
            // may free the batch and its cells.
            detail::hyaline_cell* const next = cell->next;
            detail::hyaline_batch* const batch = cell->batch;
            // acq_rel: our reads of the batch's nodes happen before the free
            // by whoever drops the last reference, and if that is us, theirs
            // happen before ours.
            if (batch->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) free_batch(tid, batch);
            cell = next;
        }
    }

    template <class T>
    void on_retire(int tid, T* node) noexcept {
        count_retired(tid, node);
        auto& me = local(tid);
        if (!orphans().empty()) [[unlikely]]
            adopt_orphans_into_batch(tid);
        me.batch.push_back(node);
        me.batch_min_birth = std::min(me.batch_min_birth, node->birth_era);
        if (me.batch.size() >= batch_size()) seal_own(tid);
        hand_over_if_offline(tid);
    }

    /// Every `epoch_freq` x T allocations of this thread advance the era
    /// (domain_config::epoch_freq; era_domain.hpp's clock, without the
    /// retire stamp, which Hyaline does not need).
    void tick_clock(int tid) noexcept {
        if (clock_due(local(tid).allocations)) {
            // seq_cst: increments in one order (any RMW would do; kept as
            // the era schemes' clock).
            const std::uint64_t era = global_era_.fetch_add(1, std::memory_order_seq_cst) + 1;
            note_epoch_advanced(tid, era);
        }
    }
    void on_allocate(int tid, hyaline_node_header& node) noexcept {
        tick_clock(tid);
        // relaxed: a reader reaches the node only through its publication,
        // after this load, so its later era loads return this era or later.
        node.birth_era = global_era_.load(std::memory_order_relaxed);
    }

    /// Ends an operation still open, so the batches pushed to us are released.
    void on_thread_exit(int tid) noexcept { on_end_op(tid); }
    /// The unsealed batch goes to the orphanage, labelled with its oldest
    /// birth era; a retiring thread adopts it into its own batch, a barrier
    /// seals it.
    void hand_over_garbage(int tid) noexcept {
        auto& me = local(tid);
        if (me.batch.empty()) return;
        if (orphans().give(me.batch, me.batch_min_birth)) me.batch_min_birth = local_type::no_birth;
    }

    /// A barrier's round (the caller is outside any operation): seals every
    /// orphan as one batch and waits until the slots it reached have left,
    /// then frees what came back. The threads that drop such a batch's last
    /// reference give its nodes back to the orphanage instead of freeing
    /// them: the barrier frees them itself, in any free policy.
    void flush_step(int tid) {
        core::limbo_bag held;
        std::uint64_t min_birth = local_type::no_birth;
        take_orphans(tid, held, min_birth);
        if (!held.empty()) {
            barrier_batches_.fetch_add(1, std::memory_order_relaxed);
            seal(tid, held, min_birth, true);
        }
        // acquire: pairs with free_batch's release, after its give.
        while (barrier_batches_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
        core::limbo_bag safe;
        orphans().take_safe(
            safe, [](std::uint64_t) { return false; }, tid);
        dispose_safe(tid, safe);
    }

    std::uint64_t global_era() const noexcept {
        return global_era_.load(std::memory_order_relaxed);
    }
    fence_mode fence() const noexcept { return fences_.mode(); }

    /// A batch is sealed at max(bag_threshold, T + 1) nodes, T the slots in
    /// use: the paper's size (its cells are the batch's first nodes).
    std::size_t batch_size() const noexcept {
        return std::max<std::size_t>(config().bag_threshold,
                                     static_cast<std::size_t>(registry().scan_limit()) + 1);
    }

  private:
    void seal_own(int tid) noexcept {
        auto& me = local(tid);
        const std::uint64_t min_birth = me.batch_min_birth;
        me.batch_min_birth = local_type::no_birth;
        seal(tid, me.batch, min_birth, false);
    }

    /// Pushes `nodes` (emptied) as one batch to every slot inside an
    /// operation whose era is not older than `min_birth`, then adds the
    /// references; frees it at once if no slot took it.
    void seal(int tid, core::limbo_bag& nodes, std::uint64_t min_birth, bool for_barrier) noexcept {
        const int limit = registry().scan_limit();
        detail::hyaline_batch* batch =
            detail::hyaline_batch::make(nodes, static_cast<std::size_t>(limit), for_barrier);
        // The sealer's side of the pairs with begin_op and protect: the
        // batch's unlinks precede the slots' loads below.
        if (fences_.reclaimer()) count_heavy_barrier(tid);
        std::int64_t pushed = 0;
        for (int i = 0; i < limit; ++i) {
            auto& other = local(i);
            // relaxed, after the fence (either mode orders it after it): a
            // slot skipped for its era never read a node of the batch.
            if (other.access.load(std::memory_order_relaxed) < min_birth &&
                !SMR_MUTANT("hyaline_pushes_to_older_eras")) {
                continue;  // announced before every node of the batch was born
            }
            // acquire (and the CAS's on failure): a slot skipped because
            // its owner left may have read the batch's nodes before it left;
            // its swap's release orders those reads before our free.
            std::uintptr_t head = other.head.load(std::memory_order_acquire);
            detail::hyaline_cell* const cell = batch->cell(static_cast<std::size_t>(pushed));
            bool taken = false;
            while ((head & active) != 0 && !SMR_MUTANT("hyaline_skips_active_slots")) {
                cell->next = reinterpret_cast<detail::hyaline_cell*>(head & ~active);
                cell->batch = batch;
                // release: the cell's fields before the owner's swap
                // (acquire) reads them. A failure reloads the head: another
                // push, or the owner left (then it holds nothing of ours).
                if (other.head.compare_exchange_weak(
                        head, reinterpret_cast<std::uintptr_t>(cell) | active,
                        std::memory_order_release, std::memory_order_acquire)) {
                    taken = true;
                    break;
                }
            }
            if (taken) ++pushed;
        }
        // acq_rel: as the drops in end_op; the value before ours is minus
        // the drops that came first, so zero after ours means all are in.
        if (batch->refs.fetch_add(pushed, std::memory_order_acq_rel) == -pushed)
            free_batch(tid, batch);
    }

    void free_batch(int tid, detail::hyaline_batch* batch) noexcept {
        if (batch->for_barrier) {
            if (!orphans().give_safe(batch->nodes)) dispose_safe(tid, batch->nodes);
            // release: the give happens before the barrier's load that sees
            // the count fall.
            barrier_batches_.fetch_sub(1, std::memory_order_release);
        } else {
            dispose_safe(tid, batch->nodes);
        }
        detail::hyaline_batch::destroy(batch);
    }

    /// A retiring thread's adoption: the orphans join its unsealed batch.
    SMR_SLOW_PATH void adopt_orphans_into_batch(int tid) noexcept {
        auto& me = local(tid);
        take_orphans(adopter(tid), me.batch, me.batch_min_birth);
    }

    /// Every orphan into `out`, lowering `min_birth` to their labels (bags
    /// given back safe carry none, and are safe under any).
    void take_orphans(int taker, core::limbo_bag& out, std::uint64_t& min_birth) noexcept {
        orphans().take_safe(
            out,
            [&min_birth](std::uint64_t label) {
                min_birth = std::min(min_birth, label);
                return true;
            },
            taker);
    }

    alignas(core::false_sharing_range) std::atomic<std::uint64_t> global_era_{1};
    /// Read by every protect and begin_op; on a line of its own.
    alignas(core::false_sharing_range) core::fence_pair fences_{config().fence};
    /// Batches a barrier sealed and the slots still hold (one barrier at a time).
    alignas(core::false_sharing_range) std::atomic<std::int64_t> barrier_batches_{0};
};

}  // namespace smr
