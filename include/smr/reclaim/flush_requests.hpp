// The barrier's requests (domain_base::barrier): a barrier asks every other
// registered thread to hand its garbage over at its next operation, and
// waits for the answers. A thread that is offline has handed its garbage
// over already and answers nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>

namespace smr::detail {

/// A thread's side: the latest request that concerns it (written by
/// barriers) and the latest it answered (written by the thread; above every
/// request while it is offline).
class flush_state {
  public:
    /// Registering or coming online: no request made before now concerns
    /// the thread (it has nothing retired before now to hand over).
    void start_answering() noexcept {
        // acquire: pairs with flush_requests::ask_others's release, so a
        // barrier's reservation of the orphanage is visible before the
        // thread could adopt.
        done_.store(asked_.load(std::memory_order_acquire), std::memory_order_relaxed);
    }
    /// Going offline, once the garbage is handed over: barriers stop waiting.
    void stop_answering() noexcept {
        // release: the bags handed over happen before a barrier that reads it.
        done_.store(offline_mark, std::memory_order_release);
    }
    bool offline() const noexcept {
        // relaxed: read by the thread itself.
        return done_.load(std::memory_order_relaxed) == offline_mark;
    }
    /// A request is not answered yet (an offline thread answers nothing,
    /// even when it runs an operation to retire).
    [[gnu::always_inline]] bool pending() const noexcept {
        // relaxed: the thread's own slot; answer acquires.
        return asked_.load(std::memory_order_relaxed) > done_.load(std::memory_order_relaxed);
    }
    /// Answers the latest request: `hand_over()` gives the garbage away, then
    /// the answer is published.
    template <class HandOver>
    void answer(HandOver&& hand_over) noexcept {
        // acquire: pairs with ask_others's release, so a barrier's
        // reservation of the orphanage is visible from here on.
        const std::uint64_t asked = asked_.load(std::memory_order_acquire);
        hand_over();
        // release: the bags given above happen before the barrier's read.
        done_.store(asked, std::memory_order_release);
    }

  private:
    friend class flush_requests;
    static constexpr std::uint64_t offline_mark = std::numeric_limits<std::uint64_t>::max();

    std::atomic<std::uint64_t> asked_{0};
    std::atomic<std::uint64_t> done_{0};
};

/// The domain's side: barriers one at a time, and their request numbers.
/// `Slots` is a thread_slots whose slots have a `flush` member.
class flush_requests {
  public:
    std::mutex& mutex() noexcept { return mutex_; }

    /// Asks every other thread; with mutex() held, so requests only grow.
    template <class Slots>
    std::uint64_t ask_others(int tid, Slots& slots) noexcept {
        const std::uint64_t request = ++requests_;
        const int limit = slots.scan_limit();
        for (int i = 0; i < limit; ++i) {
            // release: the orphanage's reservation happens before an answer.
            if (i != tid) slots[i].flush.asked_.store(request, std::memory_order_release);
        }
        return request;
    }

    /// Every thread registered when `request` was made has answered it, gone
    /// offline or unregistered (handing its garbage over either way). A slot
    /// taken after the request (its asked_ is older) had nothing to hand.
    template <class Slots>
    static bool others_answered(int tid, std::uint64_t request, const Slots& slots) noexcept {
        const int limit = slots.scan_limit();
        for (int i = 0; i < limit; ++i) {
            if (i == tid || !slots.registry().in_use(i)) continue;
            const flush_state& s = slots[i].flush;
            // acquire: pairs with answer's and stop_answering's release.
            if (s.asked_.load(std::memory_order_relaxed) >= request &&
                s.done_.load(std::memory_order_acquire) < request) {
                return false;
            }
        }
        return true;
    }

  private:
    std::mutex mutex_;
    std::uint64_t requests_ = 0;  // under mutex_
};

}  // namespace smr::detail
