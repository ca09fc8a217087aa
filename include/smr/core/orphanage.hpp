// Garbage that outlived its thread: the bags a thread held when it
// unregistered, each with the label its scheme decides safety by, waiting for
// a thread that still runs to free them.
#pragma once

#include <atomic>
#include <cassert>
#include <cstdint>
#include <new>
#include <utility>

#include "smr/core/limbo_bag.hpp"

namespace smr::core {

/// A lock-free stack of orphaned bags. Before it, a thread's unfreed nodes
/// stayed in its slot until another thread registered into that slot or the
/// domain died: a worker pool that shrank kept up to a full bag per vacated
/// slot forever. Now an unregistering thread hands each non-empty bag over with
/// a label (an epoch, an era, a token round: whatever the scheme compares
/// against to call a bag safe), and the running threads adopt the bags that
/// have become safe in the slow path where they free their own (an epoch
/// change, a scan, a token receipt).
///
/// Bundles are allocated with the global operator new (nothrow), never from
/// the domain's memory resource, whose capacity belongs to nodes: if even that
/// fails, give() returns false and the bag stays in the slot, as before.
///
/// Progress: give and take are lock-free; the stack is exchanged whole, so no
/// bundle is popped while another thread reads it (no ABA).
class orphanage {
  public:
    orphanage() = default;
    orphanage(const orphanage&) = delete;
    orphanage& operator=(const orphanage&) = delete;
    /// The owner takes the bags first (domain_base's destructor frees their
    /// nodes); the bundles go here either way.
    ~orphanage() {
        limbo_bag rest;
        take_all(rest, any_taker);
        assert(rest.empty() && "orphanage destroyed with bags in it: their nodes leak");
    }

    /// Hands `bag` over with `label`; `bag` ends empty. False (and `bag`
    /// untouched) when no memory is left for the bundle.
    bool give(limbo_bag& bag, std::uint64_t label) noexcept { return give(bag, label, false); }
    /// Hands over nodes that are already safe (what liburcu returned to a
    /// vacated slot).
    bool give_safe(limbo_bag& bag) noexcept { return give(bag, 0, true); }

    /// No orphan now. Relaxed: a hint for the common case; an orphan given
    /// concurrently is adopted at the next look.
    bool empty() const noexcept { return head_.load(std::memory_order_relaxed) == nullptr; }

    /// Taker ids are thread slots; any_taker adopts whatever the reservation,
    /// no_taker never (a thread that must not adopt now).
    static constexpr int any_taker = -1;
    static constexpr int no_taker = -2;

    /// While a barrier runs, only its thread adopts (domain_base::barrier):
    /// it must know when the last bag is freed, and a bag another thread
    /// holds while judging it would be out of its sight.
    void reserve_for(int taker) noexcept {
        // seq_cst: the Dekker pair with take_safe (there).
        reserved_for_.store(taker, std::memory_order_seq_cst);
    }
    void end_reservation() noexcept { reserved_for_.store(any_taker, std::memory_order_release); }

    /// No bag is left and no adopter is judging one.
    bool settled() const noexcept {
        // seq_cst: the other half of take_safe's Dekker pair; acquire: an
        // adopter that left put back what it kept before it left.
        return takers_.load(std::memory_order_seq_cst) == 0 &&
               head_.load(std::memory_order_seq_cst) == nullptr;
    }

    /// Moves into `safe` every bag whose label satisfies `is_safe(label)`,
    /// for labels that stay valid whenever they are judged (an epoch that the
    /// global epoch has passed by three stays passed).
    /// `taker`: the adopting thread's slot (only the reserved one adopts
    /// while a reservation stands).
    template <class IsSafe>
    void take_safe(limbo_bag& safe, IsSafe&& is_safe, int taker) noexcept {
        if (empty() || taker == no_taker) return;
        // seq_cst increment, then seq_cst load of the reservation: either a
        // barrier that reserves sees us at work in settled(), or we see its
        // reservation and leave the bags to it.
        takers_.fetch_add(1, std::memory_order_seq_cst);
        const int reserved = reserved_for_.load(std::memory_order_seq_cst);
        if (reserved == any_taker || reserved == taker || taker == any_taker) adopt(safe, is_safe);
        // release: the bags we put back happen before a settled() that sees
        // us gone.
        takers_.fetch_sub(1, std::memory_order_release);
    }

    /// Every orphan, safe or not: for a scheme that judges node by node later
    /// (a scan), or a domain that no thread runs in any more.
    void take_all(limbo_bag& out, int taker) noexcept {
        take_safe(
            out, [](std::uint64_t) { return true; }, taker);
    }

  private:
    template <class IsSafe>
    void adopt(limbo_bag& safe, IsSafe& is_safe) noexcept {
        // acquire: pairs with give's release, so the bags' nodes and labels
        // are visible.
        bundle* all = head_.exchange(nullptr, std::memory_order_acquire);
        bundle* keep_head = nullptr;
        bundle* keep_tail = nullptr;
        while (all != nullptr) {
            bundle* const next = all->next;
            if (all->given_safe || is_safe(all->label)) {
                safe.splice_back(all->bag);
                delete all;
            } else {
                all->next = keep_head;
                keep_head = all;
                if (keep_tail == nullptr) keep_tail = all;
            }
            all = next;
        }
        if (keep_head != nullptr) push_chain(keep_head, keep_tail);
    }

    struct bundle {
        limbo_bag bag;
        std::uint64_t label;
        bool given_safe;
        bundle* next;
    };

    bool give(limbo_bag& bag, std::uint64_t label, bool safe) noexcept {
        if (bag.empty()) return true;
        auto* b = new (std::nothrow) bundle{std::move(bag), label, safe, nullptr};
        if (b == nullptr) return false;
        push_chain(b, b);
        return true;
    }

    void push_chain(bundle* first, bundle* last) noexcept {
        bundle* head = head_.load(std::memory_order_relaxed);
        do {
            last->next = head;
            // release: the bundles' contents happen before an adopter's
            // acquire exchange.
        } while (!head_.compare_exchange_weak(head, first, std::memory_order_release,
                                              std::memory_order_relaxed));
    }

    std::atomic<bundle*> head_{nullptr};
    std::atomic<int> reserved_for_{any_taker};
    std::atomic<int> takers_{0};  // adopters between their look and their put-back
};

}  // namespace smr::core
