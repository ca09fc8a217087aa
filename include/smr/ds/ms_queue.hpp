// Michael-Scott queue: Maged M. Michael, Michael L. Scott, "Simple, Fast, and
// Practical Non-Blocking and Blocking Concurrent Queue Algorithms" (PODC
// 1996), the non-blocking one, with the hazard-pointer form of its dequeue
// from Michael, "Hazard Pointers" (IEEE TPDS 2004).
//
// A singly linked list from `head` to `tail`. The node `head` points to is a
// dummy: the queue's items are the nodes after it. enqueue links a new node
// after the last one with a CAS on that node's `next` (its linearization
// point), then swings `tail` to it; tail may lag one node behind, and every
// operation that sees it lagging helps it forward before going on. dequeue
// reads the item of head's successor and swings `head` to that successor with
// a CAS (its linearization point), which makes the successor the new dummy.
// An empty queue is a head whose `next` is null.
//
// Progress: lock-free. A CAS fails only because another enqueue or dequeue
// succeeded, or because tail lagged and someone helped it.
//
// ---- Reclamation ---------------------------------------------------------------
//
// The dequeuer whose CAS swings head past a dummy retires that dummy (the old
// head), as in the paper: every node is retired exactly once, by that
// thread, and only after it is unreachable from head. The first dummy lives
// in the queue object (like the lists' sentinels) and is never retired or
// freed; every later dummy was an enqueued node. An enqueue allocates one
// node; a successful dequeue retires one (none the very first time).
//
// Tail never passes head's node in reverse: dequeue swings head only when
// head != tail, and helps tail forward when they are equal, so tail always
// points at head's node or after it, hence never at a retired node.
//
// Reservation schemes (HP, HE, IBR, WFE). A node is dereferenced only after
// protect() found it at a root that still held it at protect's re-read:
//   - enqueue protects tail (re-read: tail still points to it, so it is not
//     retired, by the invariant above) and only compares t->next;
//   - dequeue protects head (likewise), then head->next, then re-reads head:
//     if head is still the same node, that node is still linked, so its
//     successor was not yet retired after the reservation became visible.
//     Without that re-check the successor could have been dequeued and freed
//     already (h.next never changes once set, so protect's own re-read of it
//     proves nothing).
// So no reader follows a pointer out of an unlinked node:
// traverses_unlinked_nodes is false. The same protection rules out ABA on
// the CASes of head and tail: their expected values are protected nodes,
// which cannot be freed and reallocated meanwhile.
//
// Read and write phases (NBR). Each attempt of enqueue or dequeue is one read
// phase (read the roots and one `next`, from the queue object: every read
// phase starts at the root) ended by read_phase_end with the nodes the write
// phase touches (tail's node for enqueue; head's node and its successor for
// dequeue), then one write phase (CAS, retire). A failed CAS starts a new
// attempt. The new node is allocated before the first read phase.
//
// Memory layout: head and tail each on their own cache lines (every enqueue
// writes tail, every dequeue writes head), the first dummy on its own. A node
// is the domain's header + key, value and next: 40 bytes with the 16-byte
// header of the epoch-family and leak domains.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "smr/core/padded.hpp"
#include "smr/ds/marked_ptr.hpp"
#include "smr/ds/validation.hpp"
#include "smr/reclaim/guards.hpp"

namespace smr::ds {

/// The Michael-Scott queue of (Key, Value) items. Not a set: insert enqueues
/// (and always succeeds), dequeue removes the oldest item; there is no erase
/// of a given key and no contains.
template <class Domain, class Key = std::int64_t, class Value = std::int64_t>
class ms_queue {
    friend struct smr::ds::testing::access;  // tests corrupt internals

    struct node final : Domain::node_base {
        node(Key k, Value v) noexcept : key(k), value(v) {}

        const Key key;
        const Value value;
        /// The next node, or null for the last one. Written once (null ->
        /// successor) by the enqueue that links the successor; the first
        /// dummy's is detached once head has left it.
        std::atomic<node*> next{nullptr};

        /// The links a reference-counting domain counts (reclaim/lfrc.hpp).
        static constexpr auto counted_links() noexcept { return std::array{&node::next}; }
    };

    /// What the first dummy's next becomes once head has left it: marked,
    /// so no enqueue's CAS from null can link a node there, and pointing
    /// nowhere, so it holds no reference.
    static node* detached() noexcept { return detail::with_mark<node>(nullptr); }

  public:
    using domain_type = Domain;
    /// What every operation takes: the calling thread's attachment.
    using context_type = smr::context<Domain>;
    using key_type = Key;
    using value_type = Value;

    /// What dequeue returns.
    struct item {
        Key key;
        Value value;
    };

    static constexpr std::string_view name = "ms_queue";
    /// A FIFO queue, not a set: smrbench maps insert to enqueue and erase to
    /// dequeue, and refuses workloads with contains.
    static constexpr bool is_queue = true;
    /// Readers dereference only nodes that a root still held after the
    /// reservation (head re-checked after protecting head->next).
    static constexpr bool traverses_unlinked_nodes = false;
    /// Every protect out of a node names it (guard.protect_in).
    static constexpr bool passes_parents = true;
    /// One read phase and one write phase per attempt; the write phase
    /// touches only the nodes reserved at read_phase_end.
    static constexpr bool has_read_write_phases = true;
    /// Every attempt re-reads head and tail from the queue object.
    static constexpr bool read_phases_start_at_root = true;
    /// Every link update goes through the domain's link hooks and the node
    /// lists its link: reference counting can run it.
    static constexpr bool counts_links = true;
    /// head (or tail) and head's successor (Michael's hp0, hp1).
    static constexpr int protect_slots = 2;
    /// Any key: the queue never compares keys.
    static constexpr Key min_key = std::numeric_limits<Key>::min();
    static constexpr Key max_key = std::numeric_limits<Key>::max();
    static constexpr std::size_t node_size = sizeof(node);

    /// `domain` must outlive the queue.
    explicit ms_queue(Domain& domain) : domain_(domain), dummy_(Key{}, Value{}) {
        head_.store(&dummy_, std::memory_order_relaxed);
        tail_.store(&dummy_, std::memory_order_relaxed);
    }

    ms_queue(const ms_queue&) = delete;
    ms_queue& operator=(const ms_queue&) = delete;

    /// Frees every node from head on (the current dummy included, unless it
    /// is the in-object one). Retired nodes belong to the domain. No
    /// operation may be running.
    ~ms_queue() {
        node* curr = head_.load(std::memory_order_relaxed);
        while (curr != nullptr) {
            node* next = curr->next.load(std::memory_order_relaxed);
            if (curr != &dummy_) domain_.free_unshared(curr);
            curr = next;
        }
    }

    /// enqueue; a queue always accepts an item (the set interface's insert).
    bool insert(smr::context_ref<Domain> self, Key key, Value value) {
        enqueue(self, key, value);
        return true;
    }

    void enqueue(smr::context_ref<Domain> self, Key key, Value value) {
        // Before the operation (and so before its first read phase, which may
        // not allocate): the thread holds no node yet, so if a bounded pool
        // makes it wait for memory it waits as an idle thread.
        node* const fresh = domain_.template allocate_outside_op<node>(self, key, value);
        smr::op_guard guard(domain_, self);
        for (;;) {
            SMR_READ_PHASE_BEGIN(domain_, self);
            const auto t = guard.protect(tail_);
            // acquire: pairs with the release CAS that linked `next`, so a
            // helping CAS of tail below passes next's fields on to whoever
            // acquires tail (happens-before is transitive). Not dereferenced.
            node* const next = t->next.load(std::memory_order_acquire);
            domain_.read_phase_end(self, t.get());
            if (next != nullptr) {
                // tail lags: help it forward, then try again. (Also when t is
                // no longer the tail: then this CAS fails, harmlessly.)
                node* expected = t.get();
                // release: publishes next's fields (acquired above) to the
                // acquire loads of tail (protect). Under reference counting
                // next is alive if this succeeds: t is then still the tail
                // and holds it (lfrc.hpp: a count on a freed node is undone).
                domain_.compare_exchange_link(self, tail_, expected, next,
                                              std::memory_order_release, std::memory_order_relaxed);
                continue;
            }
            node* expected = nullptr;
            // The linearization point. release: publishes fresh's fields to
            // the acquire loads of t->next (dequeue's protect, enqueue's load
            // above).
            if (domain_.compare_exchange_link(self, t->next, expected, fresh,
                                              std::memory_order_release,
                                              std::memory_order_relaxed)) {
                expected = t.get();
                // release: publishes fresh's fields to the acquire loads of
                // tail. Failure means someone helped already.
                domain_.compare_exchange_link(self, tail_, expected, fresh,
                                              std::memory_order_release, std::memory_order_relaxed);
                return;
            }
            // Another enqueue linked its node after t first.
        }
    }

    /// The oldest item, or nothing when the queue is empty.
    std::optional<item> dequeue(smr::context_ref<Domain> self) {
        smr::op_guard guard(domain_, self);
        for (;;) {
            SMR_READ_PHASE_BEGIN(domain_, self);
            const auto h = guard.protect(head_);
            // Compared with h only, never dereferenced. Read after head (the
            // acquire in protect keeps it there): the dequeuer that installed
            // h saw tail at h or beyond before its release CAS of head, so
            // this load sees tail at h or beyond too (coherence), and
            // t != h means tail is past h.
            node* const t = tail_.load(std::memory_order_relaxed);
            const auto next = guard.protect_in(h->next, h.get());
            // Head still h: h is still linked, so next was not retired when
            // the reservation of it became visible (protect's fence precedes
            // this load). relaxed: only compared. On failure the next attempt
            // is still the same read phase: nothing was written.
            if (head_.load(std::memory_order_relaxed) != h) continue;
            if (next == nullptr) {
                // h was the last node while it was head: empty (linearized
                // at the read of h->next).
                domain_.read_phase_end(self);
                return std::nullopt;
            }
            if (h == t) {
                // tail lags behind a non-empty queue: help it forward first,
                // so head never passes tail.
                domain_.read_phase_end(self, h.get(), next.get());
                node* expected = t;
                // release: publishes next's fields (acquired through
                // protect) to the acquire loads of tail.
                domain_.compare_exchange_link(self, tail_, expected, next.get(),
                                              std::memory_order_release, std::memory_order_relaxed);
                continue;
            }
            const item result{next->key, next->value};
            domain_.read_phase_end(self, h.get(), next.get());
            node* expected = h.get();
            // The linearization point. release: publishes next's fields
            // (acquired through protect) to the acquire loads of head, and
            // orders our read of tail before it (see t above).
            if (domain_.compare_exchange_link(self, head_, expected, next.get(),
                                              std::memory_order_release,
                                              std::memory_order_relaxed)) {
                if (h != &dummy_) {
                    domain_.retire(self, h.get());
                } else {
                    detach_first_dummy(self, next.get());
                }
                return result;
            }
            // Another dequeue won.
        }
    }

    /// For a stalled reader (smrbench --stall-hold): inside one operation,
    /// holds the oldest item's node (head's successor; nothing when the
    /// queue is empty), as a dequeue preempted after protecting it would,
    /// and calls wait() until it returns. A neutralized reader (NBR) comes
    /// back to the checkpoint and holds the then-oldest. wait() must only
    /// read and sleep (it runs inside a read phase).
    template <class Wait>
    void hold_first(smr::context_ref<Domain> self, Wait&& wait) {
        smr::op_guard guard(domain_, self);
        SMR_READ_PHASE_BEGIN(domain_, self);
        smr::guarded<node, Domain> h, next;
        for (;;) {
            h = guard.protect(head_);
            next = guard.protect_in(h->next, h.get());
            // Head still h: its successor was linked when protected (dequeue).
            if (head_.load(std::memory_order_relaxed) == h.get()) break;
        }
        wait();
        domain_.read_phase_end(self);
    }

    /// Quiescent only. Checks: the list from head ends (no cycle), tail is
    /// its last node or the one before; sums the keys of the items (the nodes
    /// after head) and counts them.
    validation_result validate() const {
        validation_result result;
        std::uint64_t sum = 0;  // wraps
        const node* const head = head_.load(std::memory_order_relaxed);
        const node* const tail = tail_.load(std::memory_order_relaxed);
        if (head == nullptr || tail == nullptr) {
            result.fail("null head or tail");
            return result;
        }
        const node* last = head;
        const node* before_last = nullptr;
        const node* slow = head;  // Floyd: moves every other step
        bool tail_seen = false;
        for (std::size_t steps = 1;; ++steps) {
            tail_seen = tail_seen || last == tail;
            const node* next = last->next.load(std::memory_order_relaxed);
            if (next == nullptr) break;
            sum += static_cast<std::uint64_t>(next->key);
            ++result.size;
            before_last = last;
            last = next;
            if (steps % 2 == 0) slow = slow->next.load(std::memory_order_relaxed);
            if (slow == last) {
                result.fail("cycle in the list from head");
                return result;
            }
        }
        if (!tail_seen) {
            result.fail("tail is not reachable from head");
        } else if (tail != last && tail != before_last) {
            result.fail("tail lags more than one node behind the last node");
        }
        result.key_sum = static_cast<std::int64_t>(sum);
        return result;
    }

  private:
    /// Head has left the first dummy for good (it is never enqueued again),
    /// so its link is dropped: the dummy is never freed, and under
    /// reference counting its link would keep every later node alive. Only
    /// stale readers still look at it, and each re-checks its root (head or
    /// tail, both past the dummy) before it follows or links anything.
    void detach_first_dummy(smr::context_ref<Domain> self, node* successor) noexcept {
        node* expected = successor;
        // relaxed: the value is never followed (see above).
        domain_.compare_exchange_link(self, dummy_.next, expected, detached(),
                                      std::memory_order_relaxed, std::memory_order_relaxed);
    }

    Domain& domain_;
    alignas(core::false_sharing_range) std::atomic<node*> head_{nullptr};
    alignas(core::false_sharing_range) std::atomic<node*> tail_{nullptr};
    /// The first dummy: never allocated, retired or freed.
    alignas(core::false_sharing_range) node dummy_;
};

}  // namespace smr::ds
