// token: Token-EBR, the token-ring epoch-based reclamation of Kim, Brown and
// Singh, "Are Your Epochs Too Epic? Batch Free Can Be Harmful" (PPoPP 2024,
// Section 4), in its naive, pass-first and periodic variants.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "smr/core/limbo_bag.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/padded.hpp"
#include "smr/reclaim/domain_base.hpp"
#include "smr/reclaim/traits.hpp"

namespace smr {

/// When a thread that receives the token frees its previous bag (Section 4.1).
enum class token_variant : std::uint8_t {
    naive,       ///< free, then pass ("Naive Token-EBR")
    pass_first,  ///< pass, then free ("Pass-first Token-EBR")
    periodic,    ///< pass, then free, passing again every k frees ("Periodic Token-EBR")
};

namespace detail {
struct token_local {
    /// In the ring: set from registration (or thread_online) to
    /// unregistration (or thread_offline). Read by passers; alone on its lines.
    alignas(core::false_sharing_range) std::atomic<bool> member{false};
    /// Set by whoever hands this slot the token, polled by its owner at every
    /// operation: the owner reads its own line, written once per receipt,
    /// instead of the shared token word that every pass writes.
    alignas(core::false_sharing_range) std::atomic<bool> inbox{false};
    /// Nodes retired since this slot's last receipt of the token.
    alignas(core::false_sharing_range) core::limbo_bag current;
    /// Nodes retired between its last two receipts: safe at the next one.
    core::limbo_bag previous;
    /// Receipts of the token by this slot: the epochs it began (the owner's).
    /// The token visits each member once a round, so the k-th receipts of a
    /// fixed ring's members fall in one round.
    std::uint64_t receipts = 0;

    void drain_into(core::limbo_bag& out) noexcept {
        out.splice_back(previous);
        out.splice_back(current);
    }
};

inline constexpr std::string_view token_name(token_variant v) noexcept {
    switch (v) {
        case token_variant::naive:
            return "token_naive";
        case token_variant::pass_first:
            return "token_passfirst";
        case token_variant::periodic:
            return "token_periodic";
    }
    return "token";
}
}  // namespace detail

/// Token-EBR. Registered threads form a ring in slot order (each passes to
/// the next member slot after its own, wrapping; a lone member passes to
/// itself). One token circulates; receiving it starts a new epoch for the
/// receiver. Each thread keeps a current and a previous bag; retire appends to
/// current. At the start of each operation a thread checks whether it holds
/// the token; if so, its previous bag is safe, current becomes previous, and
/// it passes the token on. `epochs` counts rounds of the ring.
///
/// Where the token is. As in the paper's artifact, a thread polls a flag of
/// its own (its inbox, alone on its cache line) at every operation, and the
/// passer sets the receiver's flag: an operation reads no line that other
/// threads write, except once per receipt. Unlike the artifact, whose ring
/// is fixed, threads join and leave here, so the token itself is one word
/// (holder and pass count) that each pass moves with a CAS; the inbox says
/// "look at the word". The CAS is once per pass, and it is what keeps a
/// leaving receiver and its passer from both moving the token on, or
/// neither (below).
///
/// Why it is safe (Section 4, correctness sketch). The previous bag holds nodes
/// retired before the thread's previous receipt, so unlinked before it passed
/// the token that time. By the next receipt the token has been once around
/// the ring: every other member received it at the start of an operation, and
/// that operation began after the pass, hence after the unlinks. The member's
/// older operations ended before that receipt; its newer ones cannot reach a
/// node that was already unlinked. Two receipts therefore make a grace period.
/// In memory-model terms: every token write is a seq_cst CAS (a release) and
/// every read a seq_cst load (an acquire), so the chain of passes carries
/// happens-before from each unlink, through every member's earlier operations,
/// to the free.
///
/// Garbage pile-up (Section 4.1), by variant:
///  - naive frees its previous bag *before* passing, so frees are serialized
///    around the ring; while one thread frees, every other thread keeps
///    retiring without freeing, so each bag is larger than the last and epochs
///    grow longer and longer.
///  - pass_first passes first, so threads free concurrently, but a thread that
///    gets the token back while still freeing keeps it until done; batch frees
///    and epochs still grow.
///  - periodic also checks for the token every `token_check_every` frees
///    (default 100) and passes it on mid-batch (rotating no bag: what became
///    safe meanwhile waits for the next receipt), but a single slow free call
///    (an allocator flushing a remote batch free) still holds the token.
///  - with `free_policy amortized` the safe bag is only queued and freed k per
///    operation, so the token never waits on frees: token_periodic + amortized
///    is the paper's Amortized-free Token-EBR (token_af), the one that works.
///
/// Joining and leaving. A registering thread (or thread_online) just marks
/// itself a member; the next passer that crosses its slot includes it. A
/// thread that joins while the token is in flight may be skipped in that round,
/// which is still safe: it stores its membership and then loads the token
/// (both seq_cst), while a passer loads memberships after receiving the token
/// and before passing it; if the passer skipped the joiner, the joiner's load
/// returns a token value written in or after that round, so every unlink that
/// round protects happens before the joiner's first operation. A leaving
/// thread (unregistration, thread_offline) marks itself out, then loads the
/// token and, if it names the leaver, CASes it to the next member. The race
/// with a passer that hands the token to a thread that is just leaving is a
/// Dekker pair: the passer CASes the token to the receiver and then loads the
/// receiver's membership; the leaver stores its membership and then loads the
/// token (all seq_cst), so at least one of them sees the other and CASes the
/// token onward; if both do, one CAS fails. The token word carries a pass count
/// next to the holder's slot, so a CAS from a stale value (a slot left and
/// taken again meanwhile) fails instead of moving the token twice. With no
/// member left the token names nobody, and the next joiner takes it.
///
/// Progress: begin_op and retire are lock-free (passing retries only past
/// slots whose threads left); joining and leaving are lock-free. Memory:
/// about two rounds of retirements per thread while every member keeps
/// starting operations (much more for naive and pass-first under batch free:
/// garbage pile-up); unbounded if a member stalls (the token stops at it).
template <token_variant V>
class token_domain : public domain_base<token_domain<V>, detail::token_local> {
    using base = domain_base<token_domain<V>, detail::token_local>;

  public:
    static constexpr reclaimer_traits traits{
        .name = detail::token_name(V),
        .family = reclaimer_family::epoch,
        .garbage_bounded = false,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = false,
        .threads_begin_epochs = true,
        .reads = {.token_check_every = V == token_variant::periodic},
    };

    explicit token_domain(const domain_config& config) : base(config) {
        if (config.max_threads >= no_holder) {
            throw std::invalid_argument("token_domain: max_threads must be below 2^24 - 1");
        }
    }

    void on_begin_op(int tid) noexcept {
        if (const auto seen = received(tid)) [[unlikely]] {
            receive(tid, *seen);  // once per round with others in the ring
        }
        this->amortized_step(tid);
    }

    void on_end_op(int) noexcept {}

    template <class T>
    void on_retire(int tid, T* node) noexcept {
        auto& s = this->slot_of(tid);
        this->count_retired(s, node);
        s.local.current.push_back(node);
        this->hand_over_if_offline(tid);
    }

    void on_thread_enter(int tid) noexcept { join(tid); }
    void on_thread_exit(int tid) noexcept { leave(tid); }
    void hand_over_garbage(int tid) noexcept { orphan_bags(tid); }
    /// Offline threads leave the ring, so an idle thread does not stop the
    /// token (thread_offline also hands the bags over).
    void come_online(int tid) noexcept { join(tid); }
    void go_offline(int tid) noexcept { leave(tid); }

    /// The slot the token names, or -1 when no thread is in the ring. For
    /// tests and diagnostics; a snapshot.
    int token_holder() const noexcept {
        const std::uint64_t holder = holder_of(token_.load(std::memory_order_relaxed));
        return holder == no_holder ? -1 : static_cast<int>(holder);
    }

  private:
    // The token word: (passes << holder_bits) | holder slot.
    static constexpr unsigned holder_bits = 24;
    static constexpr std::uint64_t no_holder = (std::uint64_t{1} << holder_bits) - 1;

    static constexpr std::uint64_t holder_of(std::uint64_t token) noexcept {
        return token & no_holder;
    }
    static constexpr std::uint64_t as_holder(int tid) noexcept {
        return static_cast<std::uint64_t>(tid);
    }
    /// The value that follows `token` when it moves to `to`.
    static constexpr std::uint64_t moved(std::uint64_t token, std::uint64_t to) noexcept {
        return (((token >> holder_bits) + 1) << holder_bits) | to;
    }

    /// The token word if tid holds it, else nothing. The common case is one
    /// load of tid's own inbox (relaxed: a hint; check_inbox's token load
    /// carries the ordering).
    std::optional<std::uint64_t> received(int tid) noexcept {
        if (!this->local(tid).inbox.load(std::memory_order_relaxed)) [[likely]]
            return std::nullopt;
        return check_inbox(tid);
    }

    /// The token word, if the token names tid; clears the inbox. The exchange and the token load
    /// are seq_cst: a pass to tid that the load misses comes later in S, and so does the store into
    /// the inbox that follows its CAS, which the exchange therefore cannot erase (a lost
    /// notification would park the token here for good).
    SMR_SLOW_PATH std::optional<std::uint64_t> check_inbox(int tid) noexcept {
        this->local(tid).inbox.exchange(false, std::memory_order_seq_cst);
        // seq_cst: acquire pairs with the pass (a seq_cst CAS) that handed us
        // the token; seq_cst (the same instruction as acquire on x86 and
        // ARMv8) places the receipt in S before the membership loads of our
        // pass, which the joining argument needs (class comment).
        const std::uint64_t seen = token_.load(std::memory_order_seq_cst);
        if (holder_of(seen) != as_holder(tid)) return std::nullopt;  // stale: we left meanwhile
        return seen;
    }

    /// After a CAS that moved the token to `to`: tells its owner.
    void notify(std::uint64_t to) noexcept {
        // seq_cst: after the CAS in S (check_inbox's argument).
        if (to == no_holder || SMR_MUTANT("token_pass_notifies_nobody")) return;
        this->local(static_cast<int>(to)).inbox.store(true, std::memory_order_seq_cst);
    }

    /// A receipt: the previous bag is safe; rotate the bags, pass the token,
    /// and free (or queue, under amortized free) what became safe, with the
    /// orphaned bags that have become safe too.
    SMR_SLOW_PATH void receive(int tid, std::uint64_t seen) noexcept {
        auto& me = this->local(tid);
        this->note_epoch_begun(tid, ++me.receipts, me.previous.size() + me.current.size());
        if (SMR_MUTANT("token_free_at_first_receipt")) me.previous.splice_back(me.current);
        if constexpr (V == token_variant::naive) {
            adopt_orphans(tid, me.previous, seen);
            this->dispose_safe(tid, me.previous);
            swap(me.current, me.previous);  // current is now the empty bag
            pass(tid, seen);
        } else {
            core::limbo_bag safe = std::move(me.previous);
            me.previous = std::move(me.current);
            pass(tid, seen);
            adopt_orphans(tid, safe, seen);
            if constexpr (V == token_variant::pass_first) {
                this->dispose_safe(tid, safe);
            } else {
                this->dispose_safe(tid, safe, this->config().token_check_every, [&] {
                    const auto again = received(tid);
                    if (!again) return;
                    // Received again while freeing: pass it on at once, and
                    // rotate nothing, as the paper's variant does (token3 in
                    // its artifact). Safe: a receipt that rotates nothing
                    // only makes the next rotation later.
                    pass(tid, *again);
                });
            }
        }
    }

    /// An unregistering thread's bags, both labelled with the token's pass
    /// count after its last retire. Read with an RMW that changes nothing: a
    /// release into the token's chain of passes, so that every receipt after
    /// it happens after the thread's unlinks, as a pass would make them.
    void orphan_bags(int tid) noexcept {
        auto& me = this->local(tid);
        if (me.previous.empty() && me.current.empty()) return;
        // seq_cst RMW: the release above (and acquire: nothing to acquire).
        const std::uint64_t now = token_.fetch_add(0, std::memory_order_seq_cst);
        // Apart: if no memory is left for the second, current stays current
        // (merged into previous, it would be freed a receipt early).
        this->orphans().give(me.previous, now >> holder_bits);
        this->orphans().give(me.current, now >> holder_bits);
    }

    /// Orphans are safe once every member of the ring has received the token
    /// after they were given (the receipt argument of the class comment): at
    /// most two rounds, and every pass (a receipt's or a settle's) moves the
    /// token at least one slot on, so twice ring_limit passes make two rounds.
    /// `seen` is the token we hold (acquired at receipt).
    void adopt_orphans(int tid, core::limbo_bag& safe, std::uint64_t seen) noexcept {
        const std::uint64_t passes = seen >> holder_bits;
        // seq_cst: after our receipt in S, so it counts every slot that had
        // joined when the bags were given (the limit only grows).
        const auto round = static_cast<std::uint64_t>(ring_limit_.load(std::memory_order_seq_cst));
        this->orphans().take_safe(
            safe,
            [passes, round](std::uint64_t given_at) { return passes >= given_at + 2 * round; },
            tid);
    }

    /// Hands the token (value `seen`, naming tid) to the next member. The
    /// move fails only if a passer that saw this slot empty moved the token
    /// on while a new thread was taking the slot: then it is no longer ours.
    void pass(int tid, std::uint64_t seen) noexcept {
        std::uint64_t to = next_member_after(tid);
        if (to == no_holder) to = as_holder(tid);  // tid went offline mid-op
        if (move_token(tid, seen, to, to <= as_holder(tid))) settle(tid, seen);
    }

    /// Moves the token, of value `seen`, on to `to` (by thread tid: its
    /// holder, or a thread settling it on behalf of a non-member) and wakes
    /// `to`; `seen` becomes the new value. A move that wraps around the ring
    /// (`wraps`: `to` is not after the slot it leaves) ends a round,
    /// Token-EBR's epoch (the timeline value is the token's pass count).
    /// False if the token changed since `seen`: whoever changed it moves it on.
    bool move_token(int tid, std::uint64_t& seen, std::uint64_t to, bool wraps) noexcept {
        const std::uint64_t next = moved(seen, to);
        // seq_cst: release pairs with the receiver's load, carrying everything
        // before this move (the holder's operations, the pass chain) to it;
        // acquire of the value it replaces (a move on a non-member's behalf
        // passes on what that value carried); and S for the Dekker pairs with
        // a joining or leaving receiver (join, leave, settle).
        if (!token_.compare_exchange_strong(seen, next, std::memory_order_seq_cst,
                                            std::memory_order_relaxed)) {
            return false;
        }
        notify(to);
        this->record_event(tid, trace::event_kind::token_pass, to);
        if (wraps) this->note_epoch_advanced(tid, next >> holder_bits);
        seen = next;
        return true;
    }

    void join(int tid) noexcept {
        raise_ring_limit(tid + 1);
        // seq_cst store, then seq_cst load of the token: the joining
        // argument (class comment), and a Dekker pair with a leaver that set
        // the token to nobody and then looks for members.
        this->local(tid).member.store(true, std::memory_order_seq_cst);
        const std::uint64_t seen = token_.load(std::memory_order_seq_cst);
        if (holder_of(seen) == no_holder) settle(tid, seen);
    }

    void leave(int tid) noexcept {
        // seq_cst store, then seq_cst load: the Dekker pair with a passer
        // handing us the token (it CASes, then loads our membership).
        this->local(tid).member.store(false, std::memory_order_seq_cst);
        const std::uint64_t seen = token_.load(std::memory_order_seq_cst);
        if (holder_of(seen) == as_holder(tid)) settle(tid, seen);
    }

    /// The token has value `seen`, which this thread wrote or saw naming a
    /// non-member (or nobody). While it names a slot that is not in the ring,
    /// move it to the next member; stop when it names a member, when there is
    /// none, or when a CAS fails (whoever changed the token settles it).
    void settle(int tid, std::uint64_t seen) noexcept {
        for (;;) {
            const std::uint64_t from = holder_of(seen);
            std::uint64_t to;
            if (from == no_holder) {
                to = next_member_after(-1);
                if (to == no_holder) return;  // nobody: the next joiner takes it
            } else {
                // seq_cst: our half of the leave Dekker pair (after our CAS
                // or seq_cst load of the token).
                if (this->local(static_cast<int>(from)).member.load(std::memory_order_seq_cst)) {
                    return;
                }
                to = next_member_after(static_cast<int>(from));
            }
            const bool wraps = from != no_holder && to != no_holder && to <= from;
            if (!move_token(tid, seen, to, wraps)) return;
        }
    }

    /// The first member slot after `from` in ring order (wrapping, `from`
    /// itself last), or no_holder. from == -1: the lowest member.
    std::uint64_t next_member_after(int from) const noexcept {
        // seq_cst (limit and memberships): a passer's view of the ring must
        // be ordered in S against joiners' stores (joining argument).
        const int limit = ring_limit_.load(std::memory_order_seq_cst);
        for (int i = from + 1; i < limit; ++i) {
            if (this->local(i).member.load(std::memory_order_seq_cst)) {
                return as_holder(i);
            }
        }
        for (int i = 0; i <= from && i < limit; ++i) {
            if (this->local(i).member.load(std::memory_order_seq_cst)) {
                return as_holder(i);
            }
        }
        return no_holder;
    }

    /// One past the highest slot that ever joined the ring, raised in S just
    /// before the joiner's membership store, which the joining argument orders
    /// (class comment): a bound for the ring, not for the registry's slots.
    void raise_ring_limit(int limit) noexcept {
        int current = ring_limit_.load(std::memory_order_relaxed);
        // seq_cst: precedes the joiner's membership store in S.
        while (current < limit &&
               !ring_limit_.compare_exchange_weak(current, limit, std::memory_order_seq_cst,
                                                  std::memory_order_relaxed)) {
        }
    }

    alignas(core::false_sharing_range) std::atomic<std::uint64_t> token_{no_holder};
    alignas(core::false_sharing_range) std::atomic<int> ring_limit_{0};
};

using token_naive_domain = token_domain<token_variant::naive>;
using token_passfirst_domain = token_domain<token_variant::pass_first>;
using token_periodic_domain = token_domain<token_variant::periodic>;

}  // namespace smr
