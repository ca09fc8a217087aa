// hp: Michael's hazard pointers ("Hazard Pointers: Safe Memory Reclamation
// for Lock-Free Objects", IEEE TPDS 2004).
//
// Each thread owns `max_protect_slots` hazard pointers. Before dereferencing a
// shared pointer a reader announces it in a hazard slot, fences, and re-reads
// the source: if the source still holds the same pointer, the node was
// reachable after the announcement became visible, so every later scan sees
// the hazard and keeps the node. A retired node goes to the retiring thread's
// list; when the list reaches R nodes the thread scans: it collects every
// thread's hazards (sorted) and frees every node of its list that no hazard
// names.
//
// Fences (domain_config::fence). Michael's protect issues a full fence per
// protected pointer, and the scan one before it reads the hazards
// (`symmetric`). By default the pair is asymmetric (core/asymmetric_fence.hpp):
// the reader's side is a compiler barrier and the scan calls membarrier,
// which folly's hazptr and the Rust crates do too -- a system call of some
// microseconds per R retires instead of a locked instruction per node.
//
// Trade-offs. HP protects exactly the nodes in use, so garbage is bounded no
// matter what other threads do: after a scan at most H = (threads x slots)
// nodes stay in the list, and a thread stalled inside an operation pins at
// most its own `max_protect_slots` nodes. The price, with Michael's symmetric
// fences, is a full fence per protected pointer -- per node visited by a
// traversal -- which is why hp is among the slowest schemes in the Epochs
// paper's Figure 11 and Hart et al.'s traversal experiment; with asymmetric
// fences it is a store and a re-read per node.
// HP cannot protect a traversal that passes through already-unlinked nodes
// (lazylist, dgt_bst): the validation re-read succeeds on an unlinked node's
// frozen `next`, whose target may already be freed. Those combinations
// compile (smrbench instantiates them) but are unsafe; the compatibility
// table refuses them.
//
// Threshold. R = max(bag_threshold, hp_scan_factor x H + hp_scan_offset).
// Michael requires R = H + Omega(H) for O(1) amortized scan cost. The
// library's default bag_threshold is 1024, so by default R = 1024 until H
// passes 512 (64 registered threads of 8 slots), then 2H. smrbench's default
// is 2K nodes (32K, the Epochs paper's uniform batch, held up to 17 times
// the garbage and ran no faster: docs/reproductions.md), so there the factor
// matters only beyond 128 registered threads.
// `--bag-size 1 --hp-scan-factor 2` gives Michael's original R = 2H, and
// `--hp-scan-offset 100` Hart et al.'s R = 2H + 100.
//
// Progress: protect is lock-free (it retries only when the source changed);
// every other hook is wait-free (a scan reads each slot once). Memory:
// per thread, at most R + H retired nodes, whatever other threads do; a
// stalled thread costs `max_protect_slots` nodes.
#pragma once

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "smr/core/asymmetric_fence.hpp"
#include "smr/core/limbo_bag.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/padded.hpp"
#include "smr/core/retired_node.hpp"
#include "smr/core/scan_buffer.hpp"
#include "smr/core/unrolled.hpp"
#include "smr/reclaim/domain_config.hpp"
#include "smr/reclaim/reservation_common.hpp"
#include "smr/reclaim/retire_list.hpp"
#include "smr/reclaim/traits.hpp"

namespace smr {

namespace detail {

/// The order of a protect's re-read of its source: what `Announce` asks
/// for (hp_pop's seq_cst: publish_on_ping.hpp), else acquire.
template <class Announce>
constexpr std::memory_order reread_order() noexcept {
    if constexpr (requires { Announce::reread; }) {
        return Announce::reread;
    } else {
        return std::memory_order_acquire;
    }
}

/// One hazard pointer: the cell a scan reads, with the announce-and-validate
/// protocol that makes it safe. hp_domain::protect uses it for slot `index`
/// of a thread; the C++26 facade (smr/hazard_pointer.hpp) hands cells out one
/// at a time. A cell names the node header, which is what retire lists hold.
/// `Announce` orders the announcement before the re-read (`reader(cell,
/// source)`, `reader()`): the domain's fences (hp), or a compiler barrier
/// for a cell only its thread reads (hp_pop).
template <class Announce>
class basic_hazard_slot {
  public:
    basic_hazard_slot(std::atomic<const void*>& cell, Announce fences) noexcept
        : cell_(&cell), fences_(fences) {}
    std::atomic<const void*>& cell() const noexcept { return *cell_; }
    Announce fences() const noexcept { return fences_; }

    /// Announce, fence, re-read until the source is stable.
    template <class T>
    T* protect(const std::atomic<T*>& source) noexcept {
        // A copy the compiler keeps in registers: the cell pointer and the
        // fence mode are not reloaded after each atomic access.
        const basic_hazard_slot self = *this;
        // acquire: pairs with the release (or CAS) that published the node.
        T* ptr = source.load(std::memory_order_acquire);
        // The first round is apart from the retries and returns the re-read
        // value (equal to ptr), so the common path is straight-line and ptr
        // dies at the comparison: as one loop returning ptr, GCC kept both
        // live and copied them between registers twice per node visited.
        T* again = self.announce_and_reread(ptr, source);
        if (again == ptr) [[likely]] {
            return again;
        }
        for (;;) {
            if (SMR_MUTANT("hp_protect_skips_validation")) return ptr;
            ptr = again;
            again = self.announce_and_reread(ptr, source);
            if (again == ptr) return again;
        }
    }

    /// One attempt: true if `ptr` is what `source` holds after the
    /// announcement (now protected); otherwise `ptr` becomes the value read
    /// and the cell is cleared.
    template <class T>
    bool try_protect(T*& ptr, const std::atomic<T*>& source) noexcept {
        T* again = announce_and_reread(ptr, source);
        if (again == ptr || SMR_MUTANT("hp_protect_skips_validation")) return true;
        ptr = again;
        clear();
        return false;
    }

    /// Announces `ptr` without validating it against a source: the caller
    /// knows it cannot have been retired before this returns.
    template <class T>
    void announce(const T* ptr) noexcept {
        // release: as in announce_and_validate; the reader's fence: a scan
        // that starts after this returns sees the announcement (its
        // reclaimer fence is after our store).
        cell_->store(as_header(ptr), std::memory_order_release);
        fences_.reader();
    }

    void clear() noexcept {
        // release: the holder's reads of the node happen before a scan that
        // reads null (acquire) and frees it.
        cell_->store(nullptr, std::memory_order_release);
    }

  private:
    /// Michael's protect, one round: announces `ptr` and returns what the
    /// source holds after the announcement is visible; `ptr` is protected if
    /// that is `ptr`.
    template <class T>
    T* announce_and_reread(T* ptr, const std::atomic<T*>& source) const noexcept {
        // The Dekker pair with scan: we store the hazard, then re-read the
        // source; the scanner unlinked (stored), then loads the hazards. The
        // reader's fence here and the reclaimer's in scan exclude the
        // interleaving in which our re-read misses the unlink *and* the scan
        // misses the hazard (symmetric: both seq_cst fences; asymmetric: the
        // scan's membarrier cuts this thread before the store, so it sees the
        // hazard, or after it, so the re-read sees the unlink). Release
        // because this store may overwrite a hazard on a node read before: a
        // scan that reads the new value (acquire) then frees that node only
        // after our reads of it.
        cell_->store(as_header(ptr), std::memory_order_release);
        fences_.reader(*cell_, source);
        // acquire (hp_pop: seq_cst, publish_on_ping.hpp): as in protect;
        // seeing the same value validates the hazard.
        return source.load(reread_order<Announce>());
    }

    template <class T>
    static const void* as_header(T* ptr) noexcept {
        if constexpr (std::is_base_of_v<core::retired_node, std::remove_cv_t<T>>) {
            return static_cast<const core::retired_node*>(ptr);
        } else {
            return ptr;
        }
    }

    std::atomic<const void*>* cell_;
    Announce fences_;
};
using hazard_slot = basic_hazard_slot<core::fence_pair>;

/// A thread's hazard pointers for one traversal (domain_base::reader): the
/// slot array and the fence mode, read once. Its slots are the hazard cells
/// themselves (reader.hpp): a traversal that protects through slots it asked
/// for once stores each node's hazard with no index check and no address
/// arithmetic.
template <class Announce>
class basic_hazard_reader {
  public:
    /// Hazard pointer `index` of the reader's thread, for repeated protects.
    class slot_type {
      public:
        friend bool operator==(slot_type, slot_type) = default;

      private:
        friend basic_hazard_reader;
        explicit slot_type(std::atomic<const void*>* cell) noexcept : cell_(cell) {}
        std::atomic<const void*>* cell_;
    };

    basic_hazard_reader(std::atomic<const void*>* hazards, Announce fences) noexcept
        : hazards_(hazards), fences_(fences) {}

    /// The same reader with hazard pointer `first` as its slot 0 (block_reader).
    basic_hazard_reader shifted(int first) const noexcept { return {hazards_ + first, fences_}; }

    /// Checked here, in every build: protect through the slot checks nothing.
    slot_type slot(int index) const noexcept {
        check_slot(index);
        return slot_type(hazards_ + (SMR_MUTANT("hp_reader_slots_share_one_cell") ? 0 : index));
    }
    int index(slot_type slot) const noexcept { return static_cast<int>(slot.cell_ - hazards_); }

    template <class T>
    T* protect(slot_type slot, const std::atomic<T*>& source) const noexcept {
        return basic_hazard_slot<Announce>(*slot.cell_, fences_).protect(source);
    }
    template <class T>
    T* protect(int index, const std::atomic<T*>& source) const noexcept {
        return protect(slot(index), source);
    }

  protected:
    /// For a reader that adds a protect of its own (hp_pp's protect_from).
    static std::atomic<const void*>& cell_of(slot_type slot) noexcept { return *slot.cell_; }
    Announce fences() const noexcept { return fences_; }

  private:
    std::atomic<const void*>* hazards_;
    [[no_unique_address]] Announce fences_;
};
using hazard_reader = basic_hazard_reader<core::fence_pair>;

/// Michael's R = H + Omega(H) in Hart et al.'s form, over the hazard slots
/// of the threads registered (`registered`): max(bag_threshold, factor x H
/// + offset), at least 1 (hp, hp_pp).
inline std::size_t hazard_scan_threshold(const domain_config& config, int registered) noexcept {
    const std::size_t hazards = static_cast<std::size_t>(registered) * max_protect_slots;
    const std::size_t hart =
        std::size_t{config.hp_scan_factor} * hazards + std::size_t{config.hp_scan_offset};
    return std::max<std::size_t>({config.bag_threshold, hart, 1});
}

/// The end of a hazard scheme's operation: every slot cleared, eight stores
/// to one line (unrolled, core/unrolled.hpp), where tracking the slots used
/// costs every protect a load, a compare and a store.
inline void clear_hazard_cells(std::atomic<const void*> (&hazards)[max_protect_slots]) noexcept {
    core::for_each_unrolled(hazards, [](std::atomic<const void*>& hazard) {
        // release: the operation's reads of the node happen before a scan
        // that reads null (acquire) and frees it.
        hazard.store(nullptr, std::memory_order_release);
    });
}

struct hp_local {
    /// The thread's hazard pointers. Read by every scan; alone on their lines.
    alignas(core::false_sharing_range) std::atomic<const void*> hazards[max_protect_slots] = {};
    alignas(core::false_sharing_range) core::limbo_bag retired;
    std::size_t next_scan_at = 0;            // retire-list length that triggers the next scan
    core::scan_buffer<const void*> scratch;  // the scan's sorted hazards (sized at registration)

    void drain_into(core::limbo_bag& out) noexcept { out.splice_back(retired); }
};

}  // namespace detail

/// Michael's hazard pointers; see the comment at the top of this file.
class hp_domain : public retire_list_domain<hp_domain, detail::hp_local> {
    using base = retire_list_domain<hp_domain, detail::hp_local>;

  public:
    static constexpr reclaimer_traits traits{
        .name = "hp",
        .family = reclaimer_family::reservation,
        .garbage_bounded = true,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = false,
        .protect_uses_slots = true,
        .nests = false,
        .reads = {.bag_threshold = true,
                  .hp_scan_factor = true,
                  .hp_scan_offset = true,
                  .fence = true},
    };

    using base::base;

    /// Announce, fence, re-read until the source is stable (hazard_slot).
    template <class T>
    T* on_protect(int tid, int index, const std::atomic<T*>& source) noexcept {
        return make_reader(tid).protect(index, source);
    }
    detail::hazard_reader make_reader(int tid) noexcept { return {local(tid).hazards, fences_}; }

    /// Hazard pointer `index` of thread tid as a cell of its own, for code
    /// that hands hazard pointers out one at a time (smr/hazard_pointer.hpp).
    /// Such a thread must not run operations of this domain: end_op clears
    /// every cell of the thread. Unregistering the thread clears them too.
    detail::hazard_slot hazard(int tid, int index) noexcept {
        detail::check_slot(index);
        return detail::hazard_slot(local(tid).hazards[index], fences_);
    }

    /// Room for every hazard of every thread the domain can hold, so that
    /// the scan inside retire (noexcept) never allocates.
    void on_thread_enter(int tid) {
        local(tid).scratch.reserve(config().max_threads * max_protect_slots);
    }

    void on_end_op(int tid) noexcept { detail::clear_hazard_cells(local(tid).hazards); }

    template <class T>
    void on_retire(int tid, T* node) noexcept {
        count_retired(tid, node);
        append_retired<&hp_domain::scan>(tid, node);
    }

    /// Clears every hazard; the retire list is orphaned (retire_list.hpp).
    void on_thread_exit(int tid) noexcept { on_end_op(tid); }
    /// A barrier's round: adopt every orphan and scan now.
    void flush_step(int tid) {
        adopt_all_orphans(tid);
        scan(tid);
    }

    /// The fences this domain's readers and scans use (config().fence, or
    /// symmetric where asymmetric is unavailable).
    fence_mode fence() const noexcept { return fences_.mode(); }

    /// R for the threads registered now.
    std::size_t scan_threshold() const noexcept {
        return detail::hazard_scan_threshold(config(), registry().scan_limit());
    }

  private:
    void scan(int tid) {
        auto& me = local(tid);
        // The reclaimer's side of the pair in hazard_slot: the unlinks of
        // every node in our list (our earlier stores) are ordered before the
        // hazard loads below.
        if (!SMR_MUTANT("hp_scan_skips_reclaimer_fence") && fences_.reclaimer()) {
            count_heavy_barrier(tid);
        }
        // Acquire loads: they pair with end_op's release (null), so a
        // finished reader's reads happen before our free.
        detail::collect_reserved(
            me.scratch,
            threads().scan_limit(), [this](int i) -> const auto& { return local(i).hazards; },
            !SMR_MUTANT("hp_scan_ignores_hazards"));
        core::limbo_bag safe = me.retired.extract_unless([&](core::retired_node* node) {
            return me.scratch.contains(static_cast<const void*>(node));
        });
        schedule_next_scan(me);
        dispose_safe(tid, safe);
    }

    /// Read by every protect; on a line of its own, away from the counters
    /// and eras other threads write.
    alignas(core::false_sharing_range) core::fence_pair fences_{config().fence};
};

}  // namespace smr
