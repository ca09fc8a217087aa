// Harris-Michael list: Maged M. Michael, "High Performance Dynamic Lock-Free
// Hash Tables and List-Based Sets" (SPAA 2002).
//
// Harris's list (harris_list.hpp) reworked so that hazard pointers can
// protect it. The mark bit is the same (bit 0 of a node's own `next`: the
// node is logically deleted; a marked `next` never changes again), but the
// traversal never walks out of a marked node: when it meets a marked node it
// unlinks that one node with a CAS on its predecessor's `next` and goes on
// from the predecessor; when that CAS fails (the predecessor changed or was
// itself marked) it starts again from the head.
//
// ---- Why hazard pointers (and HE, IBR, WFE) are safe here ------------------
//
// A node is dereferenced only after protect() returned it *unmarked* from a
// node that is itself protected. protect announces the pointer and re-reads
// the source until it is stable, so at the re-read the source's `next` still
// held the unmarked pointer: the source node was not marked, hence not
// unlinked (only marked nodes are unlinked), hence reachable, and so was its
// successor, which therefore was not retired before the announcement became
// visible. This is Michael's validation "pred.next still points to curr,
// unmarked" folded into protect's re-read; a marked value read from a source
// is never followed (its hazard names a tagged address, which protects
// nothing, and we do not need it to). traverses_unlinked_nodes is false.
//
// ---- Read and write phases (NBR; docs/design.md, "Restarts") ----------------
//
// Unlinking a marked node is a write, so each attempt of the traversal
// (search) is
//
//   SMR_READ_PHASE_BEGIN           -- checkpoint; a neutralized reader comes back here
//   find(key, start)               -- read phase: walk from `start`, no writes
//   read_phase_end(prev, curr)     -- reserve the nodes the write phase touches
//   if curr is marked:             -- auxiliary write phase:
//       CAS(prev.next, curr, next); retire(curr); continue
//   else return (prev, curr)       -- the operation's own write phase
//
// After an auxiliary unlink, Michael's list continues from prev. A new read
// phase that starts from a node held over from the previous phase is not
// safe under NBR (Section 5.2, "Limitation: restarting from the root": prev
// is reserved but what it points to is not), and Table 1 accordingly lists
// HM04 as incompatible with NBR. So the list restarts every read phase from
// the head when the reclaimer asks for it (Domain::traits.
// needs_restart_from_root) or when built with ds_options::restart_from_head,
// which is the NBR paper's E4 modification ("DEBRA-restarts" in Figure 4b);
// otherwise it resumes from prev, as Michael does. Resuming is safe for every
// other scheme: epochs protect the whole operation, and reservation schemes
// still hold prev's reservation (it stays in its protect slot across phases).
//
// The write phases touch only prev (a CAS on its next) and curr (a CAS on its
// next, or retire after our unlink); `next` is only a value. Every node is
// retired exactly once, by the thread whose CAS unlinked it.
//
// erase marks curr (linearization point), then tries to unlink it; if that
// CAS fails it calls search(key) once more, which unlinks the marked node on
// the way (Michael: "else Find(key)"), so no marked node stays reachable once
// operations are over. contains is Michael's Search: the same traversal, so
// it helps unlink marked nodes (and has write phases) too.
//
// Reference counting (lfrc). Both unlinking CASes and the publishing CAS
// go through the domain's compare_exchange_link, the store into the new
// node's next through store_private_link, and the node lists its one link
// (counted_links), so lfrc counts every reference a link holds; the marking
// CAS keeps the target and stays plain. An unlinked node's frozen next keeps
// its successor alive while any thread holds the node.
//
// Progress: lock-free. A successful insert allocates one node.
//
// Memory layout: the domain's header + key, value and next: 40 bytes with the
// 16-byte header of the epoch-family and leak domains.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "smr/core/mutant.hpp"
#include "smr/core/padded.hpp"
#include "smr/ds/key_range.hpp"
#include "smr/ds/list_validation.hpp"
#include "smr/ds/marked_ptr.hpp"
#include "smr/ds/options.hpp"
#include "smr/ds/sentinel_layout.hpp"
#include "smr/ds/slot_rotation.hpp"
#include "smr/ds/validation.hpp"
#include "smr/reclaim/guards.hpp"

namespace smr::ds {

/// The Harris-Michael list as a set of Key (with a Value per key). Keys must
/// lie in [min_key, max_key] = [numeric_limits<Key>::min() + 1,
/// numeric_limits<Key>::max() - 1]: the sentinels hold the extremes.
template <class Domain, class Key = std::int64_t, class Value = std::int64_t,
          class SentinelLayout = padded_sentinels>
class hm_list {
    friend struct smr::ds::testing::access;  // tests corrupt internals

    struct node final : Domain::node_base {
        node(Key k, Value v, node* successor) noexcept : key(k), value(v), next(successor) {}

        const Key key;
        const Value value;
        /// Successor, with bit 0 = this node is logically deleted. Once
        /// marked, never written again.
        std::atomic<node*> next;

        /// The links a reference-counting domain counts (reclaim/lfrc.hpp).
        static constexpr auto counted_links() noexcept { return std::array{&node::next}; }
    };

    /// Where a read phase starts: prev, and the slot of the traversal's
    /// block holding it (any, for the head sentinel, which needs none).
    struct cursor {
        node* prev;
        int prev_slot;
    };

    /// What find returns: prev.key < key, prev.next == curr when curr was
    /// read. Either curr is unmarked with curr.key >= key (or the tail) and
    /// next is its successor, or curr_marked and next is curr's successor,
    /// which the caller must unlink curr towards.
    struct window {
        node* prev;
        node* curr;
        node* next;     // unmarked; null when curr is the tail
        int prev_slot;  // where a read phase resumes after unlinking curr
        bool curr_marked;
    };
    /// The three slots an operation borrows from its guard for its
    /// traversals (prev, curr, next; smr::lend_slots), and their reader.
    using slot_view = typename smr::slot_block<Domain, 3>::view;

  public:
    using domain_type = Domain;
    /// What every operation takes: the calling thread's attachment.
    using context_type = smr::context<Domain>;
    using key_type = Key;
    using value_type = Value;

    static constexpr std::string_view name = "hm_list";
    /// The traversal never follows a pointer out of a marked node.
    static constexpr bool traverses_unlinked_nodes = false;
    /// Every protect out of a node names it (smr::protect_in).
    static constexpr bool passes_parents = true;
    /// Every operation is a sequence of (read phase, write phase) pairs; the
    /// write phases touch only prev and curr, reserved at read_phase_end.
    static constexpr bool has_read_write_phases = true;
    /// Every read phase starts from the head whenever the reclaimer's
    /// traits.needs_restart_from_root asks for it (it resumes from prev
    /// otherwise, unless ds_options::restart_from_head).
    static constexpr bool read_phases_start_at_root = true;
    /// Every link update goes through the domain's link hooks and nodes
    /// list their links (counted_links): reference counting can run it.
    static constexpr bool counts_links = true;
    /// smrbench --restart-from-head applies (ds_options::restart_from_head).
    static constexpr bool has_restart_from_head_option = true;
    /// prev, curr and next, hand over hand (Michael's hp0, hp1, hp2).
    static constexpr int protect_slots = 3;
    static constexpr Key min_key = std::numeric_limits<Key>::min() + 1;
    static constexpr Key max_key = std::numeric_limits<Key>::max() - 1;
    static constexpr std::size_t node_size = sizeof(node);

    /// `domain` must outlive the list.
    explicit hm_list(Domain& domain, ds_options options = {})
        : domain_(domain),
          restart_from_head_(options.restart_from_head || Domain::traits.needs_restart_from_root),
          head_(std::numeric_limits<Key>::min(), Value{}, &tail_),
          tail_(std::numeric_limits<Key>::max(), Value{}, nullptr) {}

    hm_list(const hm_list&) = delete;
    hm_list& operator=(const hm_list&) = delete;

    /// Frees every node still linked (marked or not: a linked node was never
    /// retired). No operation may be running.
    ~hm_list() {
        node* curr = detail::without_mark(head_.next.load(std::memory_order_relaxed));
        while (curr != &tail_) {
            node* next = detail::without_mark(curr->next.load(std::memory_order_relaxed));
            domain_.free_unshared(curr);
            curr = next;
        }
    }

    /// True when every read phase starts from the head (the option, or a
    /// reclaimer that needs it).
    bool restarts_from_head() const noexcept { return restart_from_head_; }

    bool insert(smr::context_ref<Domain> self, Key key, Value value) {
        detail::check_key(key, min_key, max_key);
        smr::op_guard guard(domain_, self);
        const auto slots = smr::lend_slots<3>(guard);  // prev, curr, next
        node* fresh = nullptr;  // allocated in a write phase, kept across attempts
        for (;;) {
            const window w = search(slots.lent(), key);  // returns in a write phase
            if (w.curr->key == key) {
                if (fresh != nullptr) domain_.discard(self, fresh);
                return false;  // curr was unmarked when find read its next
            }
            if (fresh == nullptr) fresh = domain_.template allocate<node>(self, key, value, w.curr);
            domain_.store_private_link(self, fresh->next, w.curr);  // not yet shared
            node* expected = w.curr;
            // release: publishes fresh's fields to the acquire loads of prev.next.
            if (domain_.compare_exchange_link(self, w.prev->next, expected, fresh)) {
                return true;
            }
            // prev changed or was marked: Michael restarts from the head.
        }
    }

    bool erase(smr::context_ref<Domain> self, Key key) {
        detail::check_key(key, min_key, max_key);
        smr::op_guard guard(domain_, self);
        const auto slots = smr::lend_slots<3>(guard);  // prev, curr, next
        for (;;) {
            const window w = search(slots.lent(), key);  // returns in a write phase
            if (w.curr->key != key) return false;
            node* succ = w.next;
            // The logical delete, and our linearization point.
            if (!w.curr->next.compare_exchange_strong(succ, detail::with_mark(w.next),
                                                      std::memory_order_acq_rel,
                                                      std::memory_order_acquire)) {
                continue;  // curr.next changed (insert after it, or marked): from the head
            }
            node* expected = w.curr;
            if (domain_.compare_exchange_link(self, w.prev->next, expected, w.next)) {
                domain_.retire(self, w.curr);
            } else {
                (void)search(slots.lent(), key);  // unlinks curr on the way (Michael: Find(key))
            }
            return true;
        }
    }

    /// Michael's Search: the traversal of the updates (it unlinks the marked
    /// nodes it meets), then a look at the key.
    bool contains(smr::context_ref<Domain> self, Key key) {
        detail::check_key(key, min_key, max_key);
        smr::op_guard guard(domain_, self);
        const auto slots = smr::lend_slots<3>(guard);  // prev, curr, next
        const window w = search(slots.lent(), key);
        return w.curr->key == key;
    }

    /// For a stalled reader (smrbench --stall-hold): inside one operation,
    /// holds the first node after the head, as a traversal preempted there
    /// would, and calls wait() until it returns. A neutralized reader (NBR)
    /// comes back to the checkpoint and holds the then-first node. wait()
    /// must only read and sleep (it runs inside a read phase).
    template <class Wait>
    void hold_first(smr::context_ref<Domain> self, Wait&& wait) {
        smr::op_guard guard(domain_, self);
        SMR_READ_PHASE_BEGIN(domain_, self);
        [[maybe_unused]] const auto first = guard.protect(head_.next);  // held while waiting
        wait();
        domain_.read_phase_end(self);
    }

    /// Quiescent only (no operation on the set runs): how many keys it
    /// holds, counted by a walk of the whole structure, O(n).
    std::size_t size() const { return validate().size; }

    /// Quiescent only. Checks: sentinels intact, keys strictly ascending from
    /// head to tail, no reachable node marked; sums keys and counts nodes
    /// between the sentinels.
    validation_result validate() const {
        return detail::validate_marked_list(head_, tail_, "reachable marked node");
    }

    /// Quiescent only (after validate() held): calls f(key) for every key
    /// between the sentinels, in order. hash_set checks each key's bucket.
    template <class F>
    void for_each_key(F&& f) const {
        const node* curr = detail::without_mark(head_.next.load(std::memory_order_relaxed));
        for (; curr != &tail_ && curr != nullptr;
             curr = detail::without_mark(curr->next.load(std::memory_order_relaxed))) {
            f(curr->key);
        }
    }

  private:
    cursor from_head() noexcept { return {&head_, detail::sentinel_slot}; }

    /// Michael's Find. Returns (prev, curr) with prev.key < key <= curr.key,
    /// both unmarked when read and adjacent, in the write phase (prev and curr
    /// reserved). Each attempt is a read phase; the checkpoint lives in this
    /// frame, which is active for the whole read phase. `start` changes only
    /// in write phases, before the next checkpoint. Out of line for every
    /// scheme, as NBR's checkpoint needs it: GCC 12 inlined it into some
    /// callers and not others, and the inlined traversal was the slower (one
    /// thread, 1,000 keys: `none` 2,753 instructions per operation inlined,
    /// 2,369 out of line), which made the leaking baseline cost more than
    /// `ebr`.
    [[gnu::noinline]] window search(slot_view slots, Key key) {
        const auto self = smr::context_of(slots);
        cursor start = from_head();
        for (;;) {
            SMR_READ_PHASE_BEGIN(domain_, self);
            // Not const: so GCC builds w in the return slot (NRVO). A const w
            // was copied out with 16-byte loads that cannot forward from its
            // field stores, two store-forwarding stalls per search.
            window w = find(slots, key, start);
            domain_.read_phase_end(self, w.prev, w.curr);
            if (!w.curr_marked) return w;

            // Auxiliary write phase: unlink the marked curr.
            node* expected = w.curr;
            if (domain_.compare_exchange_link(self, w.prev->next, expected, w.next)) {
                domain_.retire(self, w.curr);
                start = restart_from_head_ ? from_head() : cursor{w.prev, w.prev_slot};
            } else {
                start = from_head();  // prev changed or was marked (Michael: try_again)
            }
        }
    }

    /// The read phase: writes nothing shared, allocates nothing, and every
    /// local is initialized here, so a neutralization may abandon it anywhere.
    /// Slots: prev, curr and next each keep their own, asked of the reader
    /// once (reclaim/reader.hpp), and next takes the slot prev leaves.
    window find(slot_view slots, Key key, cursor start) noexcept {
        const auto reader = smr::reader_of(domain_, slots);
        // Not const, and the only value returned: NRVO (see search).
        window w;
        for (;;) {
            const int first = start.prev_slot == 0 ? 1 : 0;
            auto s0 = reader.slot(start.prev_slot);
            auto s1 = reader.slot(first);
            auto s2 = reader.slot(detail::third_slot(start.prev_slot, first));
            node* n0 = start.prev;
            node* n1 = smr::protect_in(reader, s1, start.prev->next, start.prev);
            node* n2 = nullptr;
            if (detail::is_marked(n1)) {
                // Only when resuming: prev was marked since we held it. Its
                // successor may be gone; start over from the head.
                start = from_head();
                continue;
            }
            // One node: prev in (p, ps), curr in (c, cs); curr's successor
            // goes to (n, ns). True when the window is found (in w).
            const auto step = [&](node* p, auto ps, node* c, auto cs, node*& n, auto ns) {
                if (c == &tail_) {
                    w = {p, c, nullptr, reader.index(ps), false};
                    return true;
                }
                n = smr::protect_in(reader, SMR_MUTANT("hm_list_next_takes_curr_slot") ? cs : ns,
                                    c->next, c);
                if (detail::is_marked(n)) {  // c is deleted; do not follow its next
                    w = {p, c, detail::without_mark(n), reader.index(ps), true};
                    return true;
                }
                // c was unmarked at protect's re-read, so reachable, so n was
                // too: n is protected.
                if (c->key < key) return false;
                w = {p, c, n, reader.index(ps), false};
                return true;
            };
            // Three nodes per round, each variable taking each role in turn
            // (the third node goes where the first was): no node or slot
            // moves from variable to variable, which cost six register
            // copies per node visited.
            for (;;) {
                if (step(n0, s0, n1, s1, n2, s2)) return w;
                if (step(n1, s1, n2, s2, n0, s0)) return w;
                if (step(n2, s2, n0, s0, n1, s1)) return w;
            }
        }
    }

    Domain& domain_;
    const bool restart_from_head_;
    /// Sentinels live in the list object (never allocated, retired or freed),
    /// each on its own cache lines unless SentinelLayout packs them.
    alignas(node) alignas(SentinelLayout::alignment) node head_;
    alignas(node) alignas(SentinelLayout::alignment) node tail_;
};

}  // namespace smr::ds
