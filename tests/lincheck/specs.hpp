// Sequential specifications the search checks histories against.
//
// A set is checked one key at a time: its operations on different keys
// commute, so a set history is linearizable exactly when the sub-history of
// every key is (linearizability is local: Herlihy and Wing 1990, Theorem 1;
// the checking technique is P-compositionality, A. Horn and D. Kroening,
// "Faster Linearizability Checking via P-Compositionality", FORTE 2015,
// doi:10.1007/978-3-319-19195-9_4). One key's state is one bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "history.hpp"

namespace smr::lincheck {

/// One key of a set: insert answers whether the key was absent, remove
/// whether it was present, contains whether it is present.
struct set_key_spec {
    using state = bool;  // present
    explicit set_key_spec(const history&) noexcept {}
    /// At a point where no operation is in flight, the state is the initial
    /// one plus the successful inserts minus the successful removes, whatever
    /// the linearization: a failing history can be cut there.
    static constexpr bool unique_quiescent_state = true;
    /// contains changes nothing: a cut may pass through one.
    static bool read_only(const operation& op) noexcept { return op.kind == op_kind::contains; }

    std::optional<state> step(state present, const operation& op) const noexcept {
        const bool answer = op.result != 0;
        switch (op.kind) {
            case op_kind::insert:
                if (!op.is_pending() && answer == present) return std::nullopt;
                return true;
            case op_kind::remove:
                if (!op.is_pending() && answer != present) return std::nullopt;
                return false;
            case op_kind::contains:
                if (!op.is_pending() && answer != present) return std::nullopt;
                return present;
            default:
                return std::nullopt;  // not a set operation
        }
    }
    static std::size_t hash(state present) noexcept { return present ? 1 : 0; }
};

/// A FIFO queue of distinct values: enqueue appends, dequeue answers the
/// front (empty_queue when there is none).
///
/// Looking ahead keeps the search polynomial in practice. A value appended
/// behind w must be dequeued after w; if the history shows its dequeue
/// returning before w's is invoked (or w never dequeued, with no dequeue
/// pending that could take it), no linearization continues from here, so
/// the step is refused at once. Without this, an enqueue preempted for a
/// long time is tried at every position in between, each refuted only when
/// the search reaches the dequeues far ahead (Henzinger, Sezgin and
/// Vafeiadis's VOrd violation, "Aspect-Oriented Linearizability Proofs",
/// CONCUR 2013, doi:10.1007/978-3-642-40184-8_18).
class queue_spec {
  public:
    /// The values in the queue, front first. A vector, not a deque: every
    /// step copies the state (into the memo and the next configuration), and
    /// a vector copies in one allocation where a deque takes one per 64
    /// values (a queue of thousands, as a run that enqueues two values to a
    /// dequeue builds, took twice as long to check).
    using state = std::vector<std::uint64_t>;
    /// After concurrent enqueues the order of the values is the one the
    /// linearization chose: a quiescent point does not fix the state.
    static constexpr bool unique_quiescent_state = false;
    static bool read_only(const operation&) noexcept { return false; }

    explicit queue_spec(const history& h) {
        for (const operation& op : h) {
            if (op.kind != op_kind::dequeue) continue;
            if (op.is_pending()) {
                pending_dequeues_ = true;
            } else if (op.result != empty_queue) {
                dequeued_.emplace(op.result, interval{op.call, op.ret});  // the first, if twice
            }
        }
    }

    std::optional<state> step(const state& queue, const operation& op) const {
        if (op.kind == op_kind::enqueue) {
            if (!may_follow_all(queue, op.arg)) return std::nullopt;
            state next = queue;
            next.push_back(op.arg);
            return next;
        }
        if (op.kind != op_kind::dequeue) return std::nullopt;
        if (queue.empty()) {
            if (op.is_pending() || op.result == empty_queue) return queue;
            return std::nullopt;
        }
        if (!op.is_pending() && op.result != queue.front()) return std::nullopt;
        return state(queue.begin() + 1, queue.end());
    }

    static std::size_t hash(const state& queue) noexcept {
        std::size_t h = queue.size();
        for (std::uint64_t v : queue) h = (h ^ v) * 0x100000001b3u;
        return h;
    }

  private:
    struct interval {
        std::uint64_t call, ret;
    };

    /// Can `value`, appended now, be dequeued after every value ahead of it?
    bool may_follow_all(const state& queue, std::uint64_t value) const {
        const auto mine = dequeued_.find(value);
        if (mine == dequeued_.end()) return true;  // never dequeued: no constraint
        for (std::uint64_t ahead : queue) {
            const auto theirs = dequeued_.find(ahead);
            if (theirs == dequeued_.end()) {
                if (!pending_dequeues_) return false;  // ahead stays, yet value left
            } else if (mine->second.ret < theirs->second.call) {
                return false;  // value's dequeue returned before ahead's began
            }
        }
        return true;
    }

    std::unordered_map<std::uint64_t, interval> dequeued_;
    bool pending_dequeues_ = false;
};

}  // namespace smr::lincheck
