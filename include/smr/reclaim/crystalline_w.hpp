// crystalline: Crystalline-W, the wait-free Crystalline (Nikolaev and
// Ravindran, "Crystalline: Fast and Memory Efficient Wait-Free
// Reclamation", DISC 2021, DOI 10.4230/LIPIcs.DISC.2021.60).
//
// Crystalline-L's batches and per-slot eras (crystalline.hpp,
// batch_counting.hpp), with every call made wait-free:
//
//  - protect tries wfe_fast_attempts era changes, as -L does, then asks
//    for help (a request per slot: the source, how to load it, the node the
//    source lies in). A thread that is about to move the global era first
//    answers every pending request, so a requester waits for at most two
//    era changes after its request is seen (T + 1 in all, T the threads).
//  - a seal pushes its batch with one swap per slot instead of a CAS loop.
//    A slot's list head (its `list` word) is `inactive` while released, 0
//    while held and empty, else the last entry pushed: a cell (a batch's
//    entry for this slot) or a terminal reference `batch | 1`. A pusher
//    swaps its cell in and then links the cell to what it swapped out; the
//    owner's walk swaps each cell's link to `inactive` as it passes, so a
//    pusher whose link comes too late finds it taken and walks the rest
//    itself. A push that swaps out `inactive` swaps it back unless the
//    owner took the slot meanwhile (then the owner's walk counts it).
//
// Helping (the paper's Figure 4). A helper reads the source with a slot of
// its own (the read slot) and answers {pointer, era} with a double-width
// CAS on the request. It must also keep alive the node the source lies in
// (the parent, smr::protect_in): it holds its parent slot at the parent's
// birth era, which every batch sealed afterwards with the parent reaches,
// and advertises the parent; a requester whose parent was retired before
// then hands each advertising helper a reference on the parent's batch
// before it returns (and so before it can let the parent go). The answer's
// pointer must then be covered by the requester's slot before the helper
// lets go of its read slot: the helper moves the slot, tagged so that
// neither side acts on a stale request, through
//     era tag odd (seals skip the slot) -> list swapped out (what the slot
//     covered before is released) -> answer's era installed, era tag even
//     -> list tag even, with a reference to the pointer's batch in the list
//     if the pointer was retired already.
// A node retired between that check and the list tag becoming even may
// have been sealed while seals skipped the slot: the helper checks again
// after the tag is even and, if so, pushes a reference it allocates (the
// artifact checks only before, which can free the pointer under its
// requester; we add the second check). A requester that closes a request
// (its next protect or release of the slot) moves both tags past it, which
// makes every later step of a late helper fail.
//
// Against the artifact (github rusnikola/wfsmr, WFRTracker.hpp): its
// slot's era change swaps the list to `inactive` and then stores 0, which
// can lose a push made in between (a leak); here one swap to 0. Its
// retired nodes carry the lists (three words each); here a node carries
// its birth era and a link to its batch (two words), and a batch is one
// allocation with its cells. Its batch links are set at retire, as ours.
//
// Progress: protect, retire, the end of an operation and every helper's
// step are wait-free: every loop is bounded by the number of threads (a
// CAS on a slot's list fails only for a push begun before the slot's tags
// went odd, one per sealing thread) or by two era changes (a request).
// Memory: as -L's, plus two helper slots per thread; a stalled thread, a
// stalled helper included, holds only batches with a node born at or before
// its slots' eras.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <new>
#include <thread>
#include <type_traits>

#include "smr/core/asymmetric_fence.hpp"
#include "smr/core/check.hpp"
#include "smr/core/compiler.hpp"
#include "smr/core/limbo_bag.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/padded.hpp"
#include "smr/core/word_pair.hpp"
#include "smr/reclaim/batch_counting.hpp"
#include "smr/reclaim/domain_base.hpp"
#include "smr/reclaim/help_request.hpp"
#include "smr/reclaim/slots.hpp"
#include "smr/reclaim/traits.hpp"

namespace smr {

namespace detail {
struct wf_batch;
}  // namespace detail
namespace testing {
struct crystalline_access;  // tests step through a request (test_crystalline_w.cpp)
}  // namespace testing

/// What a node of crystalline carries: its birth era, and once retired the
/// batch it went into (read by helpers and requesters, below).
struct crystalline_header : birth_era_header {
    std::atomic<detail::wf_batch*> batch{nullptr};
};

namespace detail {

/// A slot list's word: released, held and empty, or an entry.
inline constexpr std::uintptr_t wf_inactive = ~std::uintptr_t{0};
/// An entry's low bit: a terminal reference to a batch (no cell).
inline constexpr std::uintptr_t wf_reference = 1;

/// One entry of a slot's list (trivially destructible: freed with free).
struct wf_cell {
    /// What the pusher found (0 at the end); wf_inactive once walked.
    std::atomic<std::uintptr_t> next{0};
    wf_batch* batch = nullptr;
    /// The batch's hand-off cells (wf_batch::extras), freed with it.
    wf_cell* extra_next = nullptr;
};

static_assert(std::is_trivially_destructible_v<wf_cell>);

/// A batch, opened at its first retire: every node links to it from then.
struct wf_batch {
    /// While open (and while its seal pushes) a bias keeps it above zero:
    /// references handed out before the seal are counted on top of it.
    static constexpr std::int64_t open_bias = std::int64_t{1} << 62;
    static constexpr std::int64_t hand_off_bias = std::int64_t{1} << 61;
    static constexpr std::uint64_t no_birth = std::numeric_limits<std::uint64_t>::max();

    std::atomic<std::int64_t> refs{open_bias};
    core::limbo_bag nodes;
    std::uint64_t min_birth = no_birth;  // the owner's, until sealed
    wf_cell* cells = nullptr;            // one per slot the seal may reach
    std::atomic<wf_cell*> extras{nullptr};
    bool for_barrier = false;

    // Out of memory stops the program, as a limbo bag's block does: a
    // retire cannot fail. malloc, not operator new: the retire path
    // allocates nothing through operator new (test_honest_signatures).
    static wf_batch* make() noexcept { return ::new (allocate(sizeof(wf_batch))) wf_batch; }
    static void destroy(wf_batch* batch) noexcept {
        batch->~wf_batch();
        std::free(batch);
    }
    static wf_cell* make_cells(std::size_t count) noexcept {
        auto* cells = static_cast<wf_cell*>(allocate(count * sizeof(wf_cell)));
        for (std::size_t i = 0; i < count; ++i) ::new (cells + i) wf_cell;
        return cells;
    }
    static wf_cell* make_cell() noexcept { return ::new (allocate(sizeof(wf_cell))) wf_cell; }

  private:
    static void* allocate(std::size_t bytes) noexcept {
        void* memory = std::malloc(bytes);
        SMR_CHECK(memory != nullptr, "out of memory for a batch of retired nodes");
        return memory;
    }
    ~wf_batch() {
        std::free(cells);  // wf_cell is trivially destructible
        for (wf_cell* c = extras.load(std::memory_order_relaxed); c != nullptr;) {
            wf_cell* const next = c->extra_next;
            std::free(c);
            c = next;
        }
    }
};

/// Reads a request's answer's batch link (type-erased T*).
using wf_batch_of = wf_batch* (*)(std::uint64_t pointer) noexcept;
template <class T>
wf_batch* wf_batch_of_as(std::uint64_t pointer) noexcept {
    // Mark bits (hm_list's bit 0) below the node's alignment name the node.
    constexpr std::uint64_t mask = ~std::uint64_t{alignof(T) - 1};
    const auto* node = reinterpret_cast<const T*>(pointer & mask);
    // seq_cst: one side of the store-buffering pair with on_retire's link
    // store and the seal's tag loads (finish says which interleaving).
    return static_cast<const crystalline_header*>(node)->batch.load(std::memory_order_seq_cst);
}

/// One protect slot's help request.
struct wf_request {
    /// {pointer, era} once answered; {help_pending, tag} while pending.
    core::word_pair result;
    std::atomic<const void*> source{nullptr};
    std::atomic<source_loader> loader{nullptr};
    std::atomic<wf_batch_of> batch_of{nullptr};
    std::atomic<const crystalline_header*> parent{nullptr};
    /// The parent's birth era, which a helper holds (read here, not in the
    /// parent: a helper may see a later request's parent, already gone).
    std::atomic<std::uint64_t> parent_era{0};
};

struct crystalline_w_local {
    static constexpr int protect_slots = max_protect_slots;
    static constexpr int parent_slot = protect_slots;    // a helper's hold on a parent
    static constexpr int read_slot = protect_slots + 1;  // a helper's own read
    static constexpr int slot_count = protect_slots + 2;

    crystalline_w_local() noexcept {
        for (auto& head : heads) head.first.store(wf_inactive, std::memory_order_relaxed);
    }

    /// {list word, list tag} and {era, era tag} per slot, read by every
    /// seal; the tags (protect slots only) are even outside a request's
    /// final transition (file comment).
    alignas(core::false_sharing_range) core::word_pair heads[slot_count];
    alignas(core::false_sharing_range) core::word_pair eras[slot_count];
    alignas(core::false_sharing_range) wf_request requests[protect_slots];
    /// The parent this thread's help reads through, until a requester
    /// steals it (handing over a reference) or the help ends.
    std::atomic<const crystalline_header*> helping{nullptr};

    // The owner's alone, on a line of their own.
    /// The era each protect slot announced; 0 while released, or after a
    /// helped request, until the slot's next protect closes it.
    alignas(core::false_sharing_range) std::uint64_t announced[protect_slots] = {};
    /// Tag + 1 of a helped request not closed yet, else 0.
    std::uint64_t open_request[protect_slots] = {};
    std::uint32_t allocations = 0;
    wf_batch* open = nullptr;
};

}  // namespace detail

/// Crystalline-W; see the comment at the top of this file.
class crystalline_domain
    : public domain_base<crystalline_domain, detail::crystalline_w_local, crystalline_header> {
    using base = domain_base<crystalline_domain, detail::crystalline_w_local, crystalline_header>;
    using local_type = detail::crystalline_w_local;
    using pair_value = core::word_pair_value;
    using batch = detail::wf_batch;
    static constexpr int protect_slots = local_type::protect_slots;
    static constexpr int slot_count = local_type::slot_count;
    static constexpr std::uintptr_t inactive = detail::wf_inactive;

  public:
    static constexpr reclaimer_traits traits{
        .name = "crystalline",
        .family = reclaimer_family::reservation,
        .garbage_bounded = true,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = false,
        .protect_uses_slots = true,
        .nests = false,
        .protect_takes_parents = true,
        .reads = {.bag_threshold = true,
                  .epoch_freq = true,
                  .wfe_fast_attempts = true,
                  .fence = true},
    };

    using base::base;

    ~crystalline_domain() {
        // Every thread left: each sealed its batch and released its slots.
        assert(barrier_batches_.load(std::memory_order_relaxed) == 0);
    }

    /// A thread's protect for one traversal: -L's, with an attempt limit
    /// and the slow path behind it.
    class reader_type : public detail::indexed_slots {
      public:
        reader_type(crystalline_domain& domain, int tid) noexcept
            : domain_(&domain),
              global_era_(&domain.global_era_),
              me_(&domain.local(tid)),
              tid_(tid) {}

        reader_type shifted(int first) const noexcept {
            reader_type moved = *this;
            moved.first_ += first;
            return moved;
        }

        /// A source outside every node the domain frees (a root).
        template <class T>
        T* protect(int index, const std::atomic<T*>& source) const noexcept {
            return protect_in(index, source, static_cast<const crystalline_header*>(nullptr));
        }
        template <class T, class Parent>
        T* protect_in(int index, const std::atomic<T*>& source,
                      const Parent* parent) const noexcept {
            const int slot = first_ + index;
            detail::check_slot(slot);
            // acquire: as -L's (crystalline.hpp).
            T* ptr = source.load(std::memory_order_acquire);
            // relaxed: as -L's.
            const std::uint64_t era = global_era_->load(std::memory_order_relaxed);
            if (era == me_->announced[slot]) [[likely]]
                return ptr;
            // Everything else out of line, the attempt count included: in
            // the traversal's loop, -L's retry loop with a count and the
            // parent kept for the slow path cost hm_list 1,700 instructions
            // per operation (GCC spilled the traversal's registers).
            return domain_->protect_moved(tid_, slot, source,
                                          static_cast<const crystalline_header*>(parent));
        }

      private:
        crystalline_domain* domain_;
        const std::atomic<std::uint64_t>* global_era_;
        detail::crystalline_w_local* me_;
        int tid_;
        int first_ = 0;
    };

    template <class T>
    T* on_protect(int tid, int index, const std::atomic<T*>& source) noexcept {
        return make_reader(tid).protect(index, source);
    }
    template <class T, class Parent>
    T* on_protect_in(int tid, int index, const std::atomic<T*>& source,
                     const Parent* parent) noexcept {
        return make_reader(tid).protect_in(index, source, parent);
    }
    reader_type make_reader(int tid) noexcept { return {*this, tid}; }

    /// Releases every protect slot the operation held.
    void on_end_op(int tid) noexcept {
        auto& me = local(tid);
        for (int s = 0; s < protect_slots; ++s) {
            if (me.announced[s] == 0 && me.open_request[s] == 0) continue;
            close_request(me, s);
            me.announced[s] = 0;
            take_list(tid, me.heads[s], inactive);
        }
    }

    template <class T>
    void on_retire(int tid, T* node) noexcept {
        count_retired(tid, node);
        auto& me = local(tid);
        if (!orphans().empty()) [[unlikely]]
            dispose_safe_orphans(tid);
        if (me.open == nullptr) me.open = batch::make();
        me.open->nodes.push_back(node);
        me.open->min_birth = std::min(me.open->min_birth, node->birth_era);
        // seq_cst: the store-buffering pair with finish's list tag and
        // recheck (there): a seal that follows it sees the tag even, or
        // the helper's recheck sees this link.
        node->batch.store(me.open, std::memory_order_seq_cst);
        if (me.open->nodes.size() >= batch_size()) {
            seal(tid, me.open);
            me.open = nullptr;
        }
        hand_over_if_offline(tid);
    }

    /// Every `epoch_freq` x T allocations of this thread advance the era,
    /// after answering every pending request (which bounds a requester's
    /// wait: publish_request).
    void tick_clock(int tid) noexcept {
        if (clock_due(local(tid).allocations)) {
            // seq_cst: a load that follows a requester's increment
            // (publish_request) in the single total order sees it, and the
            // request it published before.
            if (slow_paths_open_.load(std::memory_order_seq_cst) != 0 &&
                !SMR_MUTANT("crystalline_era_moves_without_helping")) {
                help_all(tid);
            }
            // seq_cst: as the era schemes' increments.
            const std::uint64_t era = global_era_.fetch_add(1, std::memory_order_seq_cst) + 1;
            note_epoch_advanced(tid, era);
        }
    }
    void on_allocate(int tid, crystalline_header& node) noexcept {
        tick_clock(tid);
        // relaxed: as batch_counting.hpp's.
        node.birth_era = global_era_.load(std::memory_order_relaxed);
    }

    void on_thread_exit(int tid) noexcept { on_end_op(tid); }
    /// The open batch is sealed as a barrier batch: when its last
    /// reference drops, its nodes go back to the orphanage, safe.
    void hand_over_garbage(int tid) noexcept {
        auto& me = local(tid);
        if (me.open == nullptr) return;
        me.open->for_barrier = true;
        barrier_batches_.fetch_add(1, std::memory_order_relaxed);
        seal(tid, me.open);
        me.open = nullptr;
    }
    /// A barrier's round: waits for the barrier batches, then frees what
    /// their last holders gave back.
    void flush_step(int tid) {
        // acquire: pairs with free_batch's release, after its give.
        while (barrier_batches_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
        dispose_safe_orphans(tid);
    }

    std::uint64_t global_era() const noexcept {
        return global_era_.load(std::memory_order_relaxed);
    }
    fence_mode fence() const noexcept { return fences_.mode(); }
    /// As -L's (batch_counting.hpp), over the protect slots.
    std::size_t batch_size() const noexcept {
        const auto slots = static_cast<std::size_t>(registry().scan_limit()) * protect_slots;
        return std::max<std::size_t>(config().bag_threshold, slots + 1);
    }
    /// Slow paths entered, and requests answered by a helper.
    std::uint64_t slow_paths() const noexcept {
        return slow_paths_.load(std::memory_order_relaxed);
    }
    std::uint64_t helped() const noexcept { return helped_.load(std::memory_order_relaxed); }

  private:
    friend struct testing::crystalline_access;

    // ---- slots ---------------------------------------------------------------

    /// The owner takes its slot's list, leaving `keep` (0: held and empty;
    /// inactive: released), and drops what was pushed to it: one swap, so
    /// a push in between lands in what it takes (the artifact's
    /// swap-then-store could lose one).
    void take_list(int tid, core::word_pair& head, std::uintptr_t keep) noexcept {
        // acq_rel: acquire, the pushers' cells; release, our reads under
        // the slot before the frees the walk may cause.
        const std::uintptr_t list = head.first.exchange(keep, std::memory_order_acq_rel);
        if (list != inactive) walk(tid, list);
    }

    /// Drops the reference of every entry from `list` on, tainting each
    /// cell's link so that a late pusher walks the rest itself.
    void walk(int tid, std::uintptr_t list) noexcept {
        while (list != 0) {
            if ((list & detail::wf_reference) != 0) {
                drop(tid, reinterpret_cast<batch*>(list & ~detail::wf_reference));
                return;
            }
            auto* cell = reinterpret_cast<detail::wf_cell*>(list);
            // acq_rel: acquire, the pusher's link; release, as take_list's.
            // Read before the drop, which may free the cell with its batch.
            list = cell->next.exchange(inactive, std::memory_order_acq_rel);
            batch* const b = cell->batch;
            drop(tid, b);
        }
    }

    void drop(int tid, batch* b) noexcept {
        // acq_rel: every holder's reads happen before the free by whoever
        // drops the last reference.
        if (b->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) free_batch(tid, b);
    }

    /// Pushes `cell` (for `b`) onto `head`: true if the slot's owner will
    /// drop it, false if the slot was released (nothing of `b` read).
    bool push(int tid, core::word_pair& head, batch* b, detail::wf_cell* cell) noexcept {
        cell->batch = b;
        cell->next.store(0, std::memory_order_relaxed);
        const auto mine = reinterpret_cast<std::uintptr_t>(cell);
        // acq_rel: release, the cell's fields before the owner's take
        // (acquire) reads them; acquire, what we link to.
        const std::uintptr_t prev = head.first.exchange(mine, std::memory_order_acq_rel);
        if (prev == inactive) {
            std::uintptr_t expected = mine;
            // Released: put it back, unless the owner took the slot since
            // (then its walk drops our cell).
            return !head.first.compare_exchange_strong(expected, inactive,
                                                       std::memory_order_acq_rel);
        }
        if (prev != 0) {
            std::uintptr_t expected = 0;
            // release: what we link to, before the owner's walk (acquire)
            // follows it. Failure: the owner walked past our cell already
            // (tainted); the rest is ours to drop.
            if (!cell->next.compare_exchange_strong(expected, prev, std::memory_order_acq_rel))
                walk(tid, prev);
        }
        return true;
    }

    /// Moves both tags of slot `s` past a helped request, so that a late
    /// helper's steps fail (their CASes expect the request's tags).
    static void close_request(local_type& me, int s) noexcept {
        if (me.open_request[s] == 0 || SMR_MUTANT("crystalline_close_leaves_tags")) return;
        const std::uint64_t closed = me.open_request[s] + 1;  // the request's tag + 2
        me.open_request[s] = 0;
        for (auto* tag : {&me.eras[s].second, &me.heads[s].second}) {
            // acq_rel: after a helper's tag steps, which it may race (at
            // most two per tag: bounded).
            std::uint64_t seen = tag->load(std::memory_order_acquire);
            while (seen < closed &&
                   !tag->compare_exchange_weak(seen, closed, std::memory_order_acq_rel)) {
            }
        }
    }

    /// Slot `s` takes era `era` (its first protect in an operation, or an
    /// era change): the list swapped for an empty one, the era stored, the
    /// reader's fence (as -L's announce).
    SMR_SLOW_PATH void announce(int tid, int s, std::uint64_t era) noexcept {
        auto& me = local(tid);
        close_request(me, s);
        take_list(tid, me.heads[s], 0);
        me.announced[s] = era;
        // relaxed: the fence orders it before the re-read.
        me.eras[s].first.store(era, std::memory_order_relaxed);
        fences_.reader();
    }

    /// The era moved since slot `s` announced: wfe_fast_attempts rounds of
    /// -L's protect (announce, re-read), then the slow path.
    template <class T>
    [[gnu::noinline]] T* protect_moved(int tid, int s, const std::atomic<T*>& source,
                                       const crystalline_header* parent) noexcept {
        auto& me = local(tid);
        const std::uint32_t attempts = config().wfe_fast_attempts;
        for (std::uint32_t attempt = 0; attempt < attempts; ++attempt) {
            announce(tid, s, global_era_.load(std::memory_order_relaxed));
            // acquire and relaxed: as the fast path.
            T* ptr = source.load(std::memory_order_acquire);
            if (global_era_.load(std::memory_order_relaxed) == me.announced[s]) return ptr;
        }
        return slow_path(tid, s, source, parent);
    }

    // ---- requests ------------------------------------------------------------

    template <class T>
    [[gnu::noinline]] T* slow_path(int tid, int s, const std::atomic<T*>& source,
                                   const crystalline_header* parent) noexcept {
        const std::uint64_t tag = publish_request(tid, s, source, parent);
        auto& me = local(tid);
        std::uint64_t prev = me.eras[s].first.load(std::memory_order_relaxed);  // ours
        T* result = nullptr;
        for (;;) {
            // acquire: as the fast path.
            T* ptr = source.load(std::memory_order_acquire);
            // seq_cst: the era after the read, as the fast path.
            const std::uint64_t era = global_era_.load(std::memory_order_seq_cst);
            if (era == prev) {
                if (answer_own(me, s, tag, era)) {
                    result = ptr;
                    break;
                }
            } else {
                move_own_era(tid, s, tag, prev, era);
                prev = era;
            }
            // acquire: pairs with the helper's CAS of the result.
            if (me.requests[s].result.first.load(std::memory_order_acquire) !=
                detail::help_pending) {
                result = reinterpret_cast<T*>(static_cast<std::uintptr_t>(take_answer(me, s, tag)));
                break;
            }
        }
        end_request(tid, parent);
        return result;
    }

    /// The request is answered: helpers stop being sought for it, and the
    /// ones that hold its parent get their references.
    void end_request(int tid, const crystalline_header* parent) noexcept {
        slow_paths_open_.fetch_sub(1, std::memory_order_relaxed);
        hand_parent_off(tid, parent);
    }

    /// Holds slot `s` and asks for help reading `source`: the request's tag.
    template <class T>
    std::uint64_t publish_request(int tid, int s, const std::atomic<T*>& source,
                                  const crystalline_header* parent) noexcept {
        auto& me = local(tid);
        auto& request = me.requests[s];
        close_request(me, s);
        take_list(tid, me.heads[s], 0);  // held; what it held before let go
        const std::uint64_t tag = me.eras[s].second.load(std::memory_order_relaxed);  // ours
        slow_paths_.fetch_add(1, std::memory_order_relaxed);
        // release (all): a helper that reads the pending result (full
        // barrier) reads these after it.
        request.source.store(&source, std::memory_order_release);
        request.loader.store(&detail::load_source_as<T>, std::memory_order_release);
        request.batch_of.store(&detail::wf_batch_of_as<T>, std::memory_order_release);
        request.parent.store(parent, std::memory_order_release);
        request.parent_era.store(parent != nullptr ? parent->birth_era : 0,
                                 std::memory_order_release);
        // Full barrier. Only we move the result off a non-pending value.
        const pair_value pending{detail::help_pending, tag};
        while (!core::dcas(request.result, core::dload(request.result), pending)) {
        }
        // seq_cst: a thread whose check of the count (tick_clock) follows
        // this sees the request. One whose check came before may still move
        // the era once without helping: a request waits for at most T + 1
        // era changes.
        slow_paths_open_.fetch_add(1, std::memory_order_seq_cst);
        return tag;
    }

    /// Our own read under our own era answers the request, unless a helper
    /// did first: no helper moved the slot (one moves it only after
    /// answering), so we end the request's tags ourselves.
    static bool answer_own(local_type& me, int s, std::uint64_t tag, std::uint64_t era) noexcept {
        if (!core::dcas(me.requests[s].result, {detail::help_pending, tag}, {0, 0})) return false;
        // release: a helper that reads a tag (acquire) knows it is over.
        me.eras[s].second.store(tag + 2, std::memory_order_release);
        me.heads[s].second.store(tag + 2, std::memory_order_release);
        me.announced[s] = era;
        return true;
    }

    /// A new era while the request waits: the list dropped (tagged, so that
    /// a helper's move wins; a push in between leaves it for later) and the
    /// era announced (tagged; full barrier before the re-read).
    void move_own_era(int tid, int s, std::uint64_t tag, std::uint64_t prev,
                      std::uint64_t era) noexcept {
        auto& me = local(tid);
        const pair_value list{me.heads[s].first.load(std::memory_order_acquire), tag};
        if (list.first != 0 && core::dcas(me.heads[s], list, {0, tag})) walk(tid, list.first);
        core::dcas(me.eras[s], {prev, tag}, {era, tag});
    }

    /// A helper's answer: it moves the slot to cover the pointer (finish)
    /// and holds it in its read slot until then. The slot's next protect
    /// or release closes the request.
    static std::uint64_t take_answer(local_type& me, int s, std::uint64_t tag) noexcept {
        const pair_value answer = core::dload(me.requests[s].result);
        me.announced[s] = 0;
        me.open_request[s] = tag + 1;
        return answer.first;
    }

    /// Before the requester can let its parent go: each helper that holds
    /// the parent in its parent slot since after the parent's batch was
    /// sealed gets a reference on that batch (it drops it when done).
    void hand_parent_off(int tid, const crystalline_header* parent) noexcept {
        if (parent == nullptr || SMR_MUTANT("crystalline_no_parent_hand_off")) return;
        // seq_cst: after our request was answered (the helpers' advertising
        // precedes their check that it was pending).
        batch* const b = parent->batch.load(std::memory_order_seq_cst);
        if (b == nullptr) return;  // sealed later: the helpers' parent slots take it
        // We hold the parent (another slot of ours), so `b` lives; the bias
        // keeps it alive while we count.
        b->refs.fetch_add(batch::hand_off_bias, std::memory_order_relaxed);
        std::int64_t handed = 0;
        const int limit = registry().scan_limit();
        for (int i = 0; i < limit; ++i) {
            const crystalline_header* expected = parent;
            // seq_cst: the other side of the helper's advertisement.
            if (local(i).helping.compare_exchange_strong(expected, nullptr,
                                                         std::memory_order_seq_cst)) {
                ++handed;
            }
        }
        const std::int64_t delta = handed - batch::hand_off_bias;
        if (b->refs.fetch_add(delta, std::memory_order_acq_rel) == -delta) free_batch(tid, b);
    }

    /// Answers every pending request (before an era increment).
    SMR_SLOW_PATH void help_all(int tid) noexcept {
        const int limit = registry().scan_limit();
        for (int i = 0; i < limit; ++i) {
            for (int s = 0; s < protect_slots; ++s) {
                // acquire: pairs with the requester's publication.
                if (local(i).requests[s].result.first.load(std::memory_order_acquire) ==
                    detail::help_pending) {
                    help_thread(tid, i, s);
                }
            }
        }
    }

    /// What a helper learnt of a request when it began: `pending` false if
    /// there is nothing to read.
    struct help_job {
        bool pending = false;
        pair_value last{};
        const void* source = nullptr;
        detail::source_loader loader = nullptr;
        detail::wf_batch_of batch_of = nullptr;
        const crystalline_header* parent = nullptr;
    };

    void help_thread(int tid, int other, int s) noexcept {
        const help_job job = begin_help(tid, other, s);
        if (job.pending) {
            std::uint64_t prev = global_era_.load(std::memory_order_seq_cst);
            for (;;) {
                const pair_value read = help_read(tid, job, prev);
                if (read.second == prev) {
                    answer(tid, other, s, job, read);
                    break;
                }
                prev = read.second;
                if (!(core::dload(local(other).requests[s].result) == job.last)) break;
            }
        }
        end_help(tid, job);
    }

    /// Holds the parent (every batch with it sealed from now on reaches
    /// our parent slot), advertises it, and checks the request still
    /// pends: a requester answered after that check hands us a reference
    /// on the parent's batch if it was sealed before (hand_parent_off).
    help_job begin_help(int tid, int other, int s) noexcept {
        auto& me = local(tid);
        auto& request = local(other).requests[s];
        help_job job;
        job.last = core::dload(request.result);  // full barrier
        if (job.last.first != detail::help_pending) return job;
        // acquire: the requester's release stores; a later request's values
        // make the pending check below fail.
        job.source = request.source.load(std::memory_order_acquire);
        job.loader = request.loader.load(std::memory_order_acquire);
        job.batch_of = request.batch_of.load(std::memory_order_acquire);
        job.parent = request.parent.load(std::memory_order_acquire);
        const std::uint64_t parent_era = request.parent_era.load(std::memory_order_acquire);
        if (job.parent != nullptr) {
            take_list(tid, me.heads[local_type::parent_slot], 0);
            // seq_cst: before the pending check (store-buffering with the
            // seal's loads, as a reader's announcement).
            me.eras[local_type::parent_slot].first.store(parent_era, std::memory_order_seq_cst);
        }
        // seq_cst: before the pending check, against hand_parent_off's steal.
        me.helping.store(job.parent, std::memory_order_seq_cst);
        job.pending = core::dload(request.result) == job.last && job.loader != nullptr;
        return job;
    }

    /// Reads the source under our read slot at era `prev`: {pointer, era
    /// after the read}; the read is safe to answer if the era is `prev`.
    pair_value help_read(int tid, const help_job& job, std::uint64_t prev) noexcept {
        auto& me = local(tid);
        take_list(tid, me.heads[local_type::read_slot], 0);
        // seq_cst, then a fence: announced before the read.
        me.eras[local_type::read_slot].first.store(prev, std::memory_order_seq_cst);
        core::fence();
        const std::uint64_t ptr = job.loader(job.source);
        return {ptr, global_era_.load(std::memory_order_seq_cst)};
    }

    /// Answers with `read` ({pointer, era}) unless someone answered first;
    /// then moves the requester's slot to cover it.
    void answer(int tid, int other, int s, const help_job& job, pair_value read) noexcept {
        if (!core::dcas(local(other).requests[s].result, job.last, read)) return;
        helped_.fetch_add(1, std::memory_order_relaxed);
        finish(tid, local(other), s, job.last.second, read.first, read.second, job.batch_of);
    }

    /// Lets go of the read and parent slots, and of the reference a
    /// requester handed us.
    void end_help(int tid, const help_job& job) noexcept {
        auto& me = local(tid);
        take_list(tid, me.heads[local_type::read_slot], inactive);
        // seq_cst: the other side of hand_parent_off's steal.
        if (me.helping.exchange(nullptr, std::memory_order_seq_cst) != job.parent) {
            drop(tid, job.parent->batch.load(std::memory_order_acquire));  // handed to us
        }
        if (job.parent != nullptr) take_list(tid, me.heads[local_type::parent_slot], inactive);
    }

    /// Moves the requester's slot `s` to cover the answer `ptr` (born at
    /// or before `era`) while our read slot still does; each step expects
    /// the request's tags, so a closed request stops it.
    void finish(int tid, local_type& them, int s, std::uint64_t tag, std::uint64_t ptr,
                std::uint64_t era, detail::wf_batch_of batch_of) noexcept {
        auto& eras = them.eras[s];
        auto& head = them.heads[s];
        // 1. Seals skip the slot from now on.
        std::uint64_t expected = tag;
        if (!eras.second.compare_exchange_strong(expected, tag + 1, std::memory_order_acq_rel))
            return;
        // 2. What the slot covered before is let go (the requester gave it up).
        for (pair_value old = core::dload(head); old.second == tag; old = core::dload(head)) {
            if (core::dcas(head, old, {0, tag + 1})) {
                if (old.first != inactive) walk(tid, old.first);
                break;
            }
        }
        // 3. The answer's era, and the era tag even.
        for (pair_value old = core::dload(eras); old.second == tag + 1; old = core::dload(eras)) {
            if (core::dcas(eras, old, {era, tag + 2})) break;
        }
        // 4. The list tag even, holding a reference to the answer's batch
        // if it was retired already.
        const bool hold = !SMR_MUTANT("crystalline_answer_holds_no_reference");
        batch* const retired = ptr != 0 ? batch_of(ptr) : nullptr;
        if (retired != nullptr && hold) {
            // Our read slot covers ptr: its batch lives.
            retired->refs.fetch_add(1, std::memory_order_relaxed);
            const auto reference = reinterpret_cast<std::uintptr_t>(retired) | detail::wf_reference;
            for (pair_value old = core::dload(head); old.second == tag + 1;
                 old = core::dload(head)) {
                if (core::dcas(head, old, {reference, tag + 2})) {
                    walk(tid, old.first);
                    return;
                }
            }
            drop(tid, retired);  // closed: the requester moved on from ptr
            return;
        }
        bool opened = false;
        for (pair_value old = core::dload(head); old.second == tag + 1; old = core::dload(head)) {
            if (core::dcas(head, old, {old.first, tag + 2})) {
                opened = true;
                break;
            }
        }
        if (!opened || ptr == 0 || !hold) return;
        // Store-buffering with on_retire: our CAS made the tag even, then we
        // read the link; the retire stored the link, then its seal reads
        // the tag. Either the seal saw the tag even (and pushed to the slot,
        // whose era covers ptr) or we see the link here, and the batch may
        // have skipped the slot: hand the requester a reference.
        batch* const late = batch_of(ptr);
        if (late == nullptr) return;
        detail::wf_cell* const cell = batch::make_cell();
        // acq_rel: the batch's free (after every drop) sees the cell.
        cell->extra_next = late->extras.exchange(cell, std::memory_order_acq_rel);
        late->refs.fetch_add(1, std::memory_order_relaxed);
        if (!push(tid, head, late, cell)) drop(tid, late);
    }

    // ---- batches -------------------------------------------------------------

    /// Pushes `b` to every held slot that may have read one of its nodes
    /// (not released, era not older than its nodes, tags even), then
    /// trades the open bias for the number of pushes.
    void seal(int tid, batch* b) noexcept {
        const int limit = registry().scan_limit();
        b->cells = batch::make_cells(static_cast<std::size_t>(limit) * slot_count);
        // The sealer's side of the pairs with the readers' fences (the
        // batch's unlinks precede the slot loads).
        if (fences_.reclaimer()) count_heavy_barrier(tid);
        std::int64_t pushed = 0;
        for (int i = 0; i < limit; ++i) {
            auto& other = local(i);
            for (int s = 0; s < slot_count; ++s) {
                // seq_cst (all four): the tag loads are the seal's side of
                // finish's store-buffering pair; the order is the paper's.
                if (other.heads[s].first.load(std::memory_order_seq_cst) == inactive) continue;
                const bool tagged = s < protect_slots;
                if (tagged && (other.heads[s].second.load(std::memory_order_seq_cst) & 1) != 0)
                    continue;  // in a request's final move
                if (other.eras[s].first.load(std::memory_order_seq_cst) < b->min_birth &&
                    !SMR_MUTANT("batch_counting_pushes_to_older_eras")) {
                    continue;  // announced before every node of the batch was born
                }
                if (tagged && (other.eras[s].second.load(std::memory_order_seq_cst) & 1) != 0)
                    continue;
                if (push(tid, other.heads[s], b, &b->cells[pushed])) ++pushed;
            }
        }
        const std::int64_t delta = pushed - batch::open_bias;
        // acq_rel: as drop's.
        if (b->refs.fetch_add(delta, std::memory_order_acq_rel) == -delta) free_batch(tid, b);
    }

    void free_batch(int tid, batch* b) noexcept {
        if (b->for_barrier) {
            if (!orphans().give_safe(b->nodes)) dispose_safe(tid, b->nodes);
            // release: the give before the barrier's load that sees the fall.
            barrier_batches_.fetch_sub(1, std::memory_order_release);
        } else {
            dispose_safe(tid, b->nodes);
        }
        batch::destroy(b);
    }

    /// What barrier batches gave back: safe, freed by whoever finds it.
    void dispose_safe_orphans(int tid) noexcept {
        core::limbo_bag safe;
        orphans().take_safe(
            safe, [](std::uint64_t) { return false; }, adopter(tid));
        dispose_safe(tid, safe);
    }

    alignas(core::false_sharing_range) std::atomic<std::uint64_t> global_era_{1};
    alignas(core::false_sharing_range) core::fence_pair fences_{config().fence};
    /// Requests between publication and answer: a helper scans only if any.
    alignas(core::false_sharing_range) std::atomic<std::int64_t> slow_paths_open_{0};
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> slow_paths_{0};
    std::atomic<std::uint64_t> helped_{0};
    alignas(core::false_sharing_range) std::atomic<std::int64_t> barrier_batches_{0};
};

}  // namespace smr
