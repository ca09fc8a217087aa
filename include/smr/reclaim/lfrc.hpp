// lfrc: lock-free reference counting on type-stable memory. J. D. Valois,
// "Lock-Free Linked Lists Using Compare-and-Swap" (PODC 1995,
// doi:10.1145/224964.224988), with the correction of M. M. Michael and M. L.
// Scott, "Correction of a Memory Management Method for Lock-Free Data
// Structures" (TR 599, University of Rochester, 1995); the scheme Hart,
// McKenney, Demke Brown and Walpole measure as LFRC ("Performance of memory
// reclamation for lockless synchronization", JPDC 67(12), 2007,
// doi:10.1016/j.jpdc.2007.04.010, Section 2.4).
//
// Every node carries a count of the references to it: one per link (a node
// field or a structure root) that points to it, one per protect slot of a
// thread that holds it, one per node a thread allocated and has not yet
// finished with. A node whose count falls to zero is unreachable and held by
// no one: the thread whose decrement took it there frees it, and releases the
// counts the node's own links hold on their targets, iteratively (a worklist
// threaded through the freed nodes), so freeing a long chain needs no stack.
//
// Acquiring (Valois's SafeRead, protect here): read the link, increment the
// target's count, re-read the link; if it changed, decrement and retry. The
// increment may land on a node that was freed in between, so memory must be
// type-stable: a freed node's count word stays a count word, in memory that
// stays mapped, until the pool is destroyed. lfrc therefore runs on an
// smr::alloc::pool_resource whose shared_word_offset is count_offset (the
// pool zeroes that word once and never writes it again), its own when
// domain_config::memory is null. The count word is never written by a
// constructor: allocate adds to it (a stray increment that lands between
// the free and the reuse is still decremented later, and the sum stays right).
//
// The word (Michael and Scott's correction, with the claim bit inverted so
// that a freshly carved zero word means "free"): bit 0 `live` is set while
// the node is allocated, bit 1 `retired` once it was unlinked, and the count
// is in units of 4. A decrement that leaves `live` with a count of zero tries
// to claim the node with a CAS to 0; of several threads racing there (a stray
// increment and decrement in between) exactly one CAS succeeds, and a stray
// decrement of a free node never sees `live`.
//
// Memory orders. protect's increment and re-read, and every link update and
// decrement, are seq_cst: they form a store-buffering pattern (we increment
// the count, then read the link; an unlinker writes the link, then
// decrements the count), and only a single total order guarantees that one
// of the two sees the other. A decrement that frees synchronizes (release
// sequence of the count word) with every earlier decrement, so every
// thread's use of the node happens before its free.
//
// Trade-offs (Hart, Section 5): two atomic read-modify-writes per node a
// traversal passes, on counts that every traversing thread writes, so the
// cost grows with traversal length and with threads: the slowest scheme in
// Hart's Figures 6, 8 and 9. In exchange a held node keeps its successors
// valid even after they are unlinked, and nothing waits for a grace period.
// Garbage is not bounded: a node held by a stalled thread keeps alive every
// node reachable from it through links, including nodes unlinked later
// (docs/design.md, "LFRC: what a held reference keeps alive"). Cycles of
// unlinked nodes would never be freed; the structures lfrc runs with link
// only forward.
//
// What a structure must do to run on lfrc (and declares counts_links):
//   - its node type lists its links: `static constexpr auto counted_links()`
//     returning an array of member pointers to std::atomic<node*> fields
//     (whose low three bits may carry marks);
//   - every CAS that makes a shared link point to another node goes through
//     compare_exchange_link, and every store into a not-yet-shared node's
//     link through store_private_link (marking a link, which keeps its
//     target, may stay a plain CAS);
//   - links a node's constructor sets count from allocate on; sentinels that
//     live in the structure object are pinned (never freed);
//   - a node is retired once, by the thread that unlinked it, while it holds it.
// The compatibility table refuses every structure that does not declare this.
//
// Progress: protect is lock-free (it retries when the link changed); freeing
// is wait-free per node. Memory: unbounded (above).
#pragma once

#include <array>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <memory_resource>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "smr/alloc/pool_resource.hpp"
#include "smr/core/check.hpp"
#include "smr/core/limbo_bag.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/padded.hpp"
#include "smr/core/retired_node.hpp"
#include "smr/reclaim/domain_base.hpp"
#include "smr/reclaim/reservation_common.hpp"
#include "smr/reclaim/traits.hpp"

namespace smr {

class lfrc_domain;

namespace detail {

/// True while lfrc_domain::allocate constructs a node on this thread: the
/// header then leaves its count word alone (it may hold stray increments).
inline thread_local bool lfrc_constructing = false;

}  // namespace detail

/// The node header of lfrc: the destroy word, how to find the node's links
/// once it is freed, and the count word.
class lfrc_node_header : public core::destroy_word {
  public:
    /// A header constructed outside lfrc_domain::allocate is a sentinel that
    /// lives in its structure: pinned, with a count that never reaches zero.
    lfrc_node_header() noexcept {
        if (!detail::lfrc_constructing) refs_ = pinned;
    }
    lfrc_node_header(const lfrc_node_header&) = delete;
    lfrc_node_header& operator=(const lfrc_node_header&) = delete;

  private:
    friend class lfrc_domain;
    static constexpr std::uint64_t live = 1;
    static constexpr std::uint64_t retired = 2;
    static constexpr std::uint64_t one = 4;
    static constexpr std::uint64_t pinned = live | (std::uint64_t{1} << 60);

    /// The targets of the node's links, unmarked, non-null; returns how many.
    using links_fn = std::size_t (*)(lfrc_node_header*, lfrc_node_header** out) noexcept;

    std::atomic_ref<std::uint64_t> refs() noexcept { return std::atomic_ref<std::uint64_t>(refs_); }

    // links_ first: the count word must lie at least 16 bytes into the node,
    // past the pool's two free-block links (pool_options::shared_word_offset).
    links_fn links_ = nullptr;
    std::uint64_t refs_;  // no initializer: see the constructor and allocate
};

namespace detail {

inline constexpr std::size_t lfrc_max_links = 4;
/// Nodes one operation may allocate before it ends (insert: one).
inline constexpr int lfrc_max_owned = 4;

struct lfrc_local {
    /// Slot i holds a counted reference to held[i] (or nothing).
    lfrc_node_header* held[max_protect_slots] = {};
    int used = 0;
    /// Nodes allocated and still referenced by this thread until end_op.
    lfrc_node_header* owned[lfrc_max_owned] = {};
    int owned_count = 0;
};

}  // namespace detail

/// Hands out the pool lfrc runs on (see the top of this file); a base class
/// so that its pool exists before domain_base, which is given it.
class lfrc_memory {
  protected:
    explicit lfrc_memory(const domain_config& config);
    domain_config with_pool(domain_config config) const noexcept {
        config.memory = pool_;
        return config;
    }
    std::unique_ptr<alloc::pool_resource> own_;
    alloc::pool_resource* pool_;
};

/// Lock-free reference counting; see the comment at the top of this file.
class lfrc_domain : private lfrc_memory,
                    public domain_base<lfrc_domain, detail::lfrc_local, lfrc_node_header> {
    using base = domain_base<lfrc_domain, detail::lfrc_local, lfrc_node_header>;
    using header = lfrc_node_header;

  public:
    static constexpr reclaimer_traits traits{
        .name = "lfrc",
        .family = reclaimer_family::reference_count,
        .garbage_bounded = false,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = false,
        .protect_uses_slots = true,
        .nests = false,
    };

    /// Where the count word lies in every node (after the destroy word and
    /// the links function): the pool's shared_word_offset must be this.
    static constexpr std::size_t count_offset =
        sizeof(core::destroy_word) + sizeof(lfrc_node_header::links_fn);

    /// The pool options lfrc needs, for a caller that builds its own pool
    /// (a bounded one, for Hart's exhaustion experiments).
    static alloc::pool_options pool_options_for(alloc::pool_options options) noexcept {
        options.shared_word_offset = count_offset;
        return options;
    }

    /// config.memory: null (lfrc makes an unbounded pool of its own) or an
    /// smr::alloc::pool_resource made with pool_options_for; anything else
    /// throws std::invalid_argument.
    explicit lfrc_domain(const domain_config& config)
        : lfrc_memory(config), base(with_pool(config)) {}

    /// The pool nodes come from (stats: blocks in use are the nodes alive).
    alloc::pool_resource& pool() noexcept { return *pool_; }

    // ---- allocation ------------------------------------------------------------

    /// Allocates a node that the calling thread holds until end_op (or
    /// discard); the links its constructor set are counted.
    template <class T, class... Args>
    T* allocate_node(int tid, Args&&... args) {
        static_assert(
            requires { T::counted_links(); },
            "lfrc: a node type must list its links (static counted_links())");
        static_assert(T::counted_links().size() <= detail::lfrc_max_links);
        // `T()` value-initializes: for a type without a user-provided default
        // constructor it first zeroes the whole object, count word included,
        // racing with the stray increments type-stable memory receives (top
        // of file); their decrements would then free a live node. An
        // aggregate is refused here; a non-aggregate whose default
        // constructor is defaulted cannot be told apart (the rule is in
        // docs/library.md).
        static_assert(sizeof...(Args) > 0 || !std::is_aggregate_v<T>,
                      "lfrc: allocate<T>() would zero the node's reference count (value-"
                      "initialization of a type without a user-provided constructor); give "
                      "the node type a constructor");
        T* node;
        {
            constructing scope;
            node = base::template allocate_node<T>(tid, std::forward<Args>(args)...);
        }
        header& h = *node;
        h.links_ = &links_of<T>;
        [[maybe_unused]] const std::uint64_t before =
            h.refs().fetch_add(header::live + header::one, std::memory_order_seq_cst);
        assert((before & (header::live | header::retired)) == 0 && "lfrc: allocated a live node");
        own(tid, &h);
        lfrc_node_header* targets[detail::lfrc_max_links];
        const std::size_t n = links_of<T>(&h, targets);
        for (std::size_t i = 0; i < n; ++i) acquire_ref(*targets[i]);
        return node;
    }

    /// Gives up a node this thread allocated and never published.
    template <class T>
    void on_discard(int tid, T* node) noexcept {
        header* h = node;
        disown(tid, h);
        release(tid, h);
    }

    /// For structure destructors (no thread runs): frees the node and leaves
    /// its count word free for the pool's next user.
    template <class T>
    void free_unshared(T* node) noexcept {
        static_cast<header*>(node)->refs().store(0, std::memory_order_relaxed);
        base::free_unshared(node);
    }

    // ---- links ------------------------------------------------------------------

    /// Valois's CompareAndSwapRef: the desired target gains a count before
    /// the CAS (the caller holds it, so it is alive), the expected one loses
    /// the link's count after a CAS that succeeded; after one that failed,
    /// the desired target's extra count is returned. seq_cst whatever the
    /// caller asks for (below).
    template <class T>
    bool on_compare_exchange_link(int tid, std::atomic<T*>& link, T*& expected, T* desired,
                                  std::memory_order /*success*/,
                                  std::memory_order /*failure*/) noexcept {
        header* const gained = as_header(desired);
        header* const lost = as_header(expected);
        const bool retarget = gained != lost;
        if (retarget && gained != nullptr) acquire_ref(*gained);
        // seq_cst: the store-buffering pair with protect (top of this file).
        if (link.compare_exchange_strong(expected, desired, std::memory_order_seq_cst)) {
            if (retarget && lost != nullptr) release(tid, lost);
            return true;
        }
        if (retarget && gained != nullptr) release(tid, gained);
        return false;
    }

    /// A store into a link of a node no other thread can see yet.
    template <class T>
    void on_store_private_link(int tid, std::atomic<T*>& link, T* value) noexcept {
        header* const gained = as_header(value);
        if (gained != nullptr) acquire_ref(*gained);
        header* const lost = as_header(link.exchange(value, std::memory_order_relaxed));
        if (lost != nullptr) release(tid, lost);
    }

    // ---- hooks ------------------------------------------------------------------

    /// SafeRead: count the target, then check the link still points to it.
    /// The slot's previous node is released once the new one is held.
    template <class T>
    T* on_protect(int tid, int index, const std::atomic<T*>& source) noexcept {
        return protect_held(local(tid), tid, index, source);
    }

    /// Thread tid's protect for one traversal: its held references found
    /// once, not at every node visited (the address of a thread's slot is
    /// reloaded after each counted increment, which orders memory).
    class traversal : public detail::indexed_slots {
      public:
        template <class T>
        T* protect(int index, const std::atomic<T*>& source) const noexcept {
            return domain_->protect_held(*me_, tid_, first_ + index, source);
        }
        /// The same traversal with slot `first` as its slot 0 (block_reader).
        traversal shifted(int first) const noexcept {
            traversal moved = *this;
            moved.first_ += first;
            return moved;
        }

      private:
        friend lfrc_domain;
        traversal(lfrc_domain& domain, detail::lfrc_local& me, int tid) noexcept
            : domain_(&domain), me_(&me), tid_(tid) {}
        lfrc_domain* domain_;
        detail::lfrc_local* me_;
        int tid_;
        int first_ = 0;  // where slot 0 is (shifted)
    };
    traversal make_reader(int tid) noexcept { return {*this, local(tid), tid}; }

    void on_end_op(int tid) noexcept {
        detail::lfrc_local& me = local(tid);
        for (int i = 0; i < me.used; ++i) {
            if (header* h = std::exchange(me.held[i], nullptr)) release(tid, h);
        }
        me.used = 0;
        while (me.owned_count > 0) release(tid, me.owned[--me.owned_count]);
    }

  private:
    template <class T>
    T* protect_held(detail::lfrc_local& me, int tid, int index,
                    const std::atomic<T*>& source) noexcept {
        detail::check_slot(index);
        if (index >= me.used) me.used = index + 1;
        T* value = source.load(std::memory_order_seq_cst);
        for (;;) {
            header* target = as_header(value);
            if (target == nullptr) break;
            // seq_cst increment, then seq_cst re-read: see the top of this file.
            target->refs().fetch_add(header::one, std::memory_order_seq_cst);
            T* again = source.load(std::memory_order_seq_cst);
            if (again == value) break;
            release(tid, target);
            value = again;
        }
        header* previous = std::exchange(me.held[index], as_header(value));
        if (previous != nullptr) release(tid, previous);
        return value;
    }

  public:
    /// Marks the node unlinked (for the statistics: a node freed without it
    /// was discarded). The caller holds the node.
    template <class T>
    void on_retire(int tid, T* node) noexcept {
        // The count word stays readable in a freed block of the pool; the
        // rest of the node does not, so it is counted once known to be held.
        [[maybe_unused]] const std::uint64_t before =
            static_cast<header*>(node)->refs().fetch_or(header::retired, std::memory_order_relaxed);
        assert(before >= header::live + header::one && (before & header::retired) == 0 &&
               "lfrc: retire of a node the caller does not hold, or retired twice");
        count_retired(tid, node);
    }

    void on_thread_exit(int tid) noexcept { on_end_op(tid); }

  private:
    friend base;

    /// Sets detail::lfrc_constructing for one construction.
    struct constructing {
        constructing() noexcept { detail::lfrc_constructing = true; }
        ~constructing() { detail::lfrc_constructing = false; }
    };

    template <class T>
    static header* as_header(T* value) noexcept {
        constexpr std::uintptr_t marks = 7;
        static_assert(alignof(T) > marks, "lfrc: links carry marks in their low three bits");
        auto* node = reinterpret_cast<T*>(reinterpret_cast<std::uintptr_t>(value) & ~marks);
        return node;  // null stays null
    }

    template <class T>
    static std::size_t links_of(header* h, header** out) noexcept {
        T* node = static_cast<T*>(h);
        std::size_t n = 0;
        for (auto member : T::counted_links()) {
            // relaxed: the node is claimed (or private); its last writer's
            // decrement happened before the claim.
            if (header* target = as_header((node->*member).load(std::memory_order_relaxed)))
                out[n++] = target;
        }
        return n;
    }

    /// A count for a node the caller holds (so it cannot be freed meanwhile).
    static void acquire_ref(header& h) noexcept {
        h.refs().fetch_add(header::one, std::memory_order_seq_cst);
    }

    void own(int tid, header* h) noexcept {
        detail::lfrc_local& me = local(tid);
        // Checked in every build: past the array it would write out of bounds.
        SMR_CHECK(me.owned_count < detail::lfrc_max_owned,
                  "lfrc: more than 4 allocations in one operation (detail::lfrc_max_owned)");
        me.owned[me.owned_count++] = h;
    }
    void disown(int tid, header* h) noexcept {
        detail::lfrc_local& me = local(tid);
        for (int i = me.owned_count; i-- > 0;) {
            if (me.owned[i] == h) {
                me.owned[i] = me.owned[--me.owned_count];
                return;
            }
        }
        assert(false && "lfrc: discard of a node this thread did not allocate in this operation");
    }

    /// Drops one count; if it was the last, frees the node and, iteratively,
    /// every node whose last count was held by a freed node's links.
    void release(int tid, header* h) noexcept {
        if (const std::uint64_t claimed = drop(h)) release_chain(tid, h, claimed);
    }

    /// The word before this decrement if it claimed the node (now ours to
    /// free; nonzero: `live` is set), else 0.
    static std::uint64_t drop(header* h) noexcept {
        // seq_cst: see the top of this file. A decrement that claims reads
        // the last value of the count's release sequence, so every earlier
        // holder's accesses happen before the free.
        const std::uint64_t before = h->refs().fetch_sub(header::one, std::memory_order_seq_cst);
        assert(before >= header::one && "lfrc: count underflow");
        const std::uint64_t last =
            header::live + header::one * (SMR_MUTANT("lfrc_claims_at_two_references") ? 2 : 1);
        if ((before & ~header::retired) != last) return 0;
        std::uint64_t expected = before - header::one;
        // Michael and Scott's claim: of several threads that saw the count
        // reach zero, one CAS succeeds; 0 = free, so a stray decrement of a
        // free node never sees `live`.
        if (!h->refs().compare_exchange_strong(expected, 0, std::memory_order_acq_rel,
                                               std::memory_order_relaxed))
            return 0;
        return expected;
    }

    /// Frees `first` (claimed, its word before the claim `word`) and every
    /// node its links held last, breadth-first through a worklist threaded
    /// through the claimed nodes. Retired nodes are garbage freed (counted
    /// as freed); a node never retired was never published (discarded).
    [[gnu::noinline]] void release_chain(int tid, header* first, std::uint64_t word) noexcept {
        core::limbo_bag work[2];  // claimed, links not yet released: [0] discarded, [1] retired
        core::limbo_bag unlinked;
        work[(word & header::retired) != 0].push_back(first);
        for (;;) {
            const bool was_retired = !work[1].empty();
            const core::retired_entry entry = work[was_retired ? 1 : 0].pop_front();
            if (!entry) break;
            header* h = static_cast<header*>(entry.node);
            header* targets[detail::lfrc_max_links];
            const std::size_t n = h->links_(h, targets);
            for (std::size_t i = 0; i < n; ++i) {
                if (const std::uint64_t w = drop(targets[i]))
                    work[(w & header::retired) != 0].push_back(targets[i]);
            }
            if (was_retired) {
                unlinked.push_back(h);
            } else {
                base::on_discard(tid, h);
            }
        }
        dispose_safe(tid, unlinked);
    }
};

inline lfrc_memory::lfrc_memory(const domain_config& config) {
    if (config.memory == nullptr) {
        alloc::pool_options options;
        options.capacity = std::numeric_limits<std::size_t>::max() / 2;  // grows as needed
        options.when_empty = alloc::on_empty::fail;
        own_ = std::make_unique<alloc::pool_resource>(lfrc_domain::pool_options_for(options));
        pool_ = own_.get();
        return;
    }
    pool_ = dynamic_cast<alloc::pool_resource*>(config.memory);
    if (pool_ == nullptr || pool_->options().shared_word_offset != lfrc_domain::count_offset) {
        throw std::invalid_argument(
            "lfrc needs type-stable memory: domain_config::memory must be null or an "
            "smr::alloc::pool_resource made with lfrc_domain::pool_options_for");
    }
}

}  // namespace smr
