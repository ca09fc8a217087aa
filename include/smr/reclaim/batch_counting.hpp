// What Hyaline and Crystalline share (Nikolaev and Ravindran, PLDI 2021 and
// DISC 2021): reclamation by counting references to batches of retired
// nodes, held only by the reservations that were active, with an era not
// older than the batch's oldest node, when the batch was sealed.
//
// A thread has K reservation slots (Hyaline-1S: one; Crystalline: one per
// protect index). A slot is a list head whose low bit says "held" and the
// era its owner announced. A thread retires into a private batch; at
// batch_size() nodes the batch is sealed: a cell is pushed (a CAS) onto the
// list of every held slot whose era is not older than the batch's oldest
// node, and the batch's count is raised by the number of slots reached. A
// slot's owner releases it (the end of an operation; in Crystalline also an
// era change of that slot) by swapping its head and walking the cells
// pushed meanwhile, dropping one reference each; whoever drops the last
// frees the batch.
//
// Why a reader is safe. Reader R, of node n (born in era b, sealed in batch
// B, oldest birth m <= b), through slot s: R made s held and stored its era
// e, fenced, loaded n, and then found the global era still e (so e >= b:
// n's birth era was read before n was published, and R's era load follows
// its load of n). The sealer of B unlinked n, fences, and then loads s's era
// and head. Two store-buffering pairs: if the sealer missed R's era or its
// held bit, R's fence follows the sealer's in the fences' order and R's
// load of the link sees the unlink, so it cannot return n. Otherwise the
// sealer sees s held with era >= e >= m and pushes B, which keeps a
// reference until s is released. The fences are fence_mode's pair (by
// default a compiler barrier on R's side against one membarrier per sealed
// batch). A push that lands after R released s and held it again only
// keeps B a little longer. Like ibr's and he's, an era says nothing about a
// successor born after it that a reader reaches out of an unlinked node:
// such structures are refused (compatibility.hpp).
//
// Robustness: a stalled thread's slots keep their eras, so they collect
// only the batches that hold a node born at or before those eras.
//
// Against the artifacts (github rusnikola/lfsmr, rusnikola/wfsmr): they
// thread the lists through the retired nodes (three words per node, the
// batch's first nodes serving as the cells). Here a node keeps only its
// birth era; a sealed batch is one allocation holding the thread's limbo
// bag (the layout of every scheme here) and one cell per slot it may reach.
//
// A barrier cannot wait for a sealed batch through the orphanage alone: the
// batch lives in other threads' lists. Its round seals every orphan as one
// barrier batch, counted in the domain; whoever drops such a batch's last
// reference gives its nodes back to the orphanage as safe, and the barrier
// waits for the count to fall and frees them itself.
//
// A scheme derives as
//     class hyaline_domain : public batch_counting_domain<hyaline_domain, detail::hyaline_local>
// with a Local that derives detail::counted_slots<K> (and holds
// detail::counted_thread_state's members), befriends its base, and writes
// how its slots are held and released: on_begin_op, on_protect, on_end_op.
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

namespace smr {

/// What a node of hyaline or crystalline carries: the era it was allocated in.
struct birth_era_header : core::retired_node {
    std::uint64_t birth_era = 0;
};

namespace detail {

struct counted_batch;

/// One entry of a slot's list: a batch sealed while the slot was held.
struct counted_cell {
    counted_cell* next;
    counted_batch* batch;
};

/// A sealed batch: its nodes, the references the slots it reached still
/// hold, and room for one cell per slot, allocated behind it.
struct counted_batch {
    /// Raised once, by the number of slots reached, after the pushes; each
    /// release drops one, possibly first, so it may be negative until the
    /// raise. Zero after both: free.
    std::atomic<std::int64_t> refs{0};
    core::limbo_bag nodes;
    /// Sealed by a barrier, which waits for it (batch_counting_domain::flush_step).
    bool for_barrier;

    counted_batch(core::limbo_bag& taken, bool barrier) noexcept
        : nodes(std::move(taken)), for_barrier(barrier) {}

    counted_cell* cell(std::size_t i) noexcept {
        return reinterpret_cast<counted_cell*>(this + 1) + i;
    }

    /// Out of memory stops the program, as a limbo bag's block does: a
    /// retire cannot fail.
    static counted_batch* make(core::limbo_bag& nodes, std::size_t cells, bool barrier) noexcept {
        static_assert(sizeof(counted_batch) % alignof(counted_cell) == 0);
        void* memory = std::malloc(sizeof(counted_batch) + cells * sizeof(counted_cell));
        SMR_CHECK(memory != nullptr, "out of memory for a batch of retired nodes");
        return ::new (memory) counted_batch(nodes, barrier);
    }
    static void destroy(counted_batch* batch) noexcept {
        batch->~counted_batch();
        std::free(batch);
    }
};

/// A thread's K reservation slots, which every seal reads: the list heads
/// (bit 0 `held`; 0 while released) on one line, CASed by sealers and
/// swapped by the owner, and the eras announced on another.
template <std::size_t K>
struct counted_slots {
    static constexpr int slot_count = static_cast<int>(K);
    static constexpr std::uintptr_t held = 1;

    alignas(core::false_sharing_range) std::atomic<std::uintptr_t> heads[K] = {};
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> eras[K] = {};
};

/// What batch_counting_domain keeps of a thread besides its slots, on a line
/// of its own: the clock's count and the unsealed batch.
struct counted_thread_state {
    static constexpr std::uint64_t no_birth = std::numeric_limits<std::uint64_t>::max();

    alignas(core::false_sharing_range) std::uint32_t allocations = 0;
    core::limbo_bag batch;
    std::uint64_t batch_min_birth = no_birth;

    void drain_into(core::limbo_bag& out) noexcept {
        out.splice_back(batch);
        batch_min_birth = no_birth;
    }
};

}  // namespace detail

template <class Derived, class Local>
class batch_counting_domain : public domain_base<Derived, Local, birth_era_header> {
    using base = domain_base<Derived, Local, birth_era_header>;

  protected:
    static constexpr std::uintptr_t held = Local::held;
    static constexpr int slot_count = Local::slot_count;
    static constexpr std::uint64_t no_birth = detail::counted_thread_state::no_birth;

  public:
    using base::base;

    ~batch_counting_domain() {
        // Every thread left, so every sealed batch reached zero (a leaving
        // thread releases its slots, and the walk drops their references).
        assert(barrier_batches_.load(std::memory_order_relaxed) == 0);
    }

    template <class T>
    void on_retire(int tid, T* node) noexcept {
        this->count_retired(tid, node);
        auto& me = this->local(tid);
        if (!this->orphans().empty()) [[unlikely]]
            adopt_orphans_into_batch(tid);
        me.batch.push_back(node);
        me.batch_min_birth = std::min(me.batch_min_birth, node->birth_era);
        if (me.batch.size() >= batch_size()) seal_own(tid);
        this->hand_over_if_offline(tid);
    }

    /// Every `epoch_freq` x T allocations of this thread advance the era
    /// (domain_config::epoch_freq; era_domain.hpp's clock, without the
    /// retire stamp, which these schemes do not need).
    void tick_clock(int tid) noexcept {
        if (this->clock_due(this->local(tid).allocations)) {
            // seq_cst: as the era schemes' increments (any RMW would do).
            const std::uint64_t era = global_era_.fetch_add(1, std::memory_order_seq_cst) + 1;
            this->note_epoch_advanced(tid, era);
        }
    }
    void on_allocate(int tid, birth_era_header& node) noexcept {
        tick_clock(tid);
        // relaxed: a reader reaches the node only through its publication,
        // after this load, so its later era loads return this era or later.
        node.birth_era = global_era_.load(std::memory_order_relaxed);
    }

    /// Releases every slot still held (an operation still open).
    void on_thread_exit(int tid) noexcept { derived().on_end_op(tid); }
    /// The unsealed batch goes to the orphanage, labelled with its oldest
    /// birth era; a retiring thread adopts it into its own batch, a barrier
    /// seals it.
    void hand_over_garbage(int tid) noexcept {
        auto& me = this->local(tid);
        if (me.batch.empty()) return;
        if (this->orphans().give(me.batch, me.batch_min_birth)) me.batch_min_birth = no_birth;
    }

    /// A barrier's round (the caller holds no slot): seals every orphan as one
    /// barrier batch, waits until the slots it reached are released, and
    /// frees what their releasers gave back.
    void flush_step(int tid) {
        core::limbo_bag orphaned;
        std::uint64_t min_birth = no_birth;
        take_orphans(tid, orphaned, min_birth);
        if (!orphaned.empty()) {
            barrier_batches_.fetch_add(1, std::memory_order_relaxed);
            seal(tid, orphaned, min_birth, true);
        }
        // acquire: pairs with free_batch's release, after its give.
        while (barrier_batches_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
        core::limbo_bag safe;
        this->orphans().take_safe(
            safe, [](std::uint64_t) { return false; }, tid);
        this->dispose_safe(tid, safe);
    }

    std::uint64_t global_era() const noexcept {
        return global_era_.load(std::memory_order_relaxed);
    }
    fence_mode fence() const noexcept { return fences_.mode(); }

    /// A batch is sealed at max(bag_threshold, S + 1) nodes, S the slots of
    /// the threads in use: the artifacts' size (their cells are the batch's
    /// first nodes, their count the last), which keeps a seal's pass over
    /// the slots O(1) per node.
    std::size_t batch_size() const noexcept {
        const auto slots = static_cast<std::size_t>(this->registry().scan_limit()) * slot_count;
        return std::max<std::size_t>(this->config().bag_threshold, slots + 1);
    }

  protected:
    /// Swaps slot `index`'s list for `keep` (0: released; `held`: held and
    /// empty) and drops a reference to each batch that was pushed to it.
    void release(int tid, int index, std::uintptr_t keep) noexcept {
        // acq_rel: acquire, so the cells the sealers' release CAS pushed are
        // visible; release, with the walk's RMWs, orders the reads made
        // under the slot before the free of each batch it held.
        const std::uintptr_t head =
            this->local(tid).heads[index].exchange(keep, std::memory_order_acq_rel);
        auto* cell = reinterpret_cast<detail::counted_cell*>(head & ~held);
        while (cell != nullptr) {
            // Both read before the drop: once it is dropped, another thread
            // may free the batch and its cells.
            detail::counted_cell* const next = cell->next;
            detail::counted_batch* const batch = cell->batch;
            // acq_rel: our reads of the batch's nodes happen before the free
            // by whoever drops the last reference, and if that is us, theirs
            // happen before ours.
            if (batch->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) free_batch(tid, batch);
            cell = next;
        }
    }

    alignas(core::false_sharing_range) std::atomic<std::uint64_t> global_era_{1};
    /// Read by every protect; on a line of its own.
    alignas(core::false_sharing_range) core::fence_pair fences_{this->config().fence};

  private:
    Derived& derived() noexcept { return static_cast<Derived&>(*this); }

    void seal_own(int tid) noexcept {
        auto& me = this->local(tid);
        const std::uint64_t min_birth = me.batch_min_birth;
        me.batch_min_birth = no_birth;
        seal(tid, me.batch, min_birth, false);
    }

    /// Pushes `nodes` (emptied) as one batch to every held slot whose era is
    /// not older than `min_birth`, then adds the references; frees the batch
    /// at once if no slot took it.
    void seal(int tid, core::limbo_bag& nodes, std::uint64_t min_birth, bool for_barrier) noexcept {
        const int limit = this->registry().scan_limit();
        detail::counted_batch* batch = detail::counted_batch::make(
            nodes, static_cast<std::size_t>(limit) * slot_count, for_barrier);
        // The sealer's side of the pairs with the readers' fences: the batch's unlinks
        // precede the slots' loads below.
        if (fences_.reclaimer()) this->count_heavy_barrier(tid);
        std::int64_t pushed = 0;
        for (int i = 0; i < limit; ++i) {
            auto& other = this->local(i);
            for (int s = 0; s < slot_count; ++s) {
                // relaxed, after the fence (either mode orders it after it):
                // a slot skipped for its era never read a node of the batch.
                if (other.eras[s].load(std::memory_order_relaxed) < min_birth &&
                    !SMR_MUTANT("batch_counting_pushes_to_older_eras")) {
                    continue;  // announced before every node of the batch was born
                }
                if (push(other.heads[s], batch, batch->cell(static_cast<std::size_t>(pushed))))
                    ++pushed;
            }
        }
        // acq_rel: as the drops in release; the value before ours is minus
        // the drops that came first, so zero after ours means all are in.
        if (batch->refs.fetch_add(pushed, std::memory_order_acq_rel) == -pushed)
            free_batch(tid, batch);
    }

    /// Pushes `cell` for `batch` onto `head` if the slot is held.
    static bool push(std::atomic<std::uintptr_t>& head, detail::counted_batch* batch,
                     detail::counted_cell* cell) noexcept {
        // acquire (and the CAS's on failure): a slot skipped because its
        // owner released it may have been read through before; the
        // release's swap orders those reads before our free.
        std::uintptr_t seen = head.load(std::memory_order_acquire);
        while ((seen & held) != 0 && !SMR_MUTANT("batch_counting_skips_held_slots")) {
            cell->next = reinterpret_cast<detail::counted_cell*>(seen & ~held);
            cell->batch = batch;
            // release: the cell's fields before the owner's swap (acquire)
            // reads them. A failure reloads the head: another push, or the
            // owner released the slot (then it holds nothing of ours).
            if (head.compare_exchange_weak(seen, reinterpret_cast<std::uintptr_t>(cell) | held,
                                           std::memory_order_release, std::memory_order_acquire))
                return true;
        }
        return false;
    }

    void free_batch(int tid, detail::counted_batch* batch) noexcept {
        if (batch->for_barrier) {
            if (!this->orphans().give_safe(batch->nodes)) this->dispose_safe(tid, batch->nodes);
            // release: the give happens before the barrier's load that sees
            // the count fall.
            barrier_batches_.fetch_sub(1, std::memory_order_release);
        } else {
            this->dispose_safe(tid, batch->nodes);
        }
        detail::counted_batch::destroy(batch);
    }

    /// A retiring thread's adoption: the orphans join its unsealed batch.
    SMR_SLOW_PATH void adopt_orphans_into_batch(int tid) noexcept {
        auto& me = this->local(tid);
        take_orphans(this->adopter(tid), me.batch, me.batch_min_birth);
    }

    /// Every orphan into `out`, lowering `min_birth` to their labels (bags
    /// given back safe carry none, and are safe under any).
    void take_orphans(int taker, core::limbo_bag& out, std::uint64_t& min_birth) noexcept {
        this->orphans().take_safe(
            out,
            [&min_birth](std::uint64_t label) {
                min_birth = std::min(min_birth, label);
                return true;
            },
            taker);
    }

    /// Batches a barrier sealed that slots still hold (one barrier at a time).
    alignas(core::false_sharing_range) std::atomic<std::int64_t> barrier_batches_{0};
};

}  // namespace smr
