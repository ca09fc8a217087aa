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
#include <deque>
#include <optional>

#include "history.hpp"

namespace smr::lincheck {

/// One key of a set: insert answers whether the key was absent, remove
/// whether it was present, contains whether it is present.
struct set_key_spec {
    using state = bool;  // present
    /// At a point where no operation is in flight, the state is the initial
    /// one plus the successful inserts minus the successful removes, whatever
    /// the linearization: a failing history can be cut there.
    static constexpr bool unique_quiescent_state = true;
    /// contains changes nothing: a cut may pass through one.
    static bool read_only(const operation& op) noexcept { return op.kind == op_kind::contains; }

    static std::optional<state> step(state present, const operation& op) noexcept {
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
struct queue_spec {
    using state = std::deque<std::uint64_t>;
    /// After concurrent enqueues the order of the values is the one the
    /// linearization chose: a quiescent point does not fix the state.
    static constexpr bool unique_quiescent_state = false;
    static bool read_only(const operation&) noexcept { return false; }

    static std::optional<state> step(const state& queue, const operation& op) {
        if (op.kind == op_kind::enqueue) {
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
        state next(queue.begin() + 1, queue.end());
        return next;
    }
    static std::size_t hash(const state& queue) noexcept {
        std::size_t h = queue.size();
        for (std::uint64_t v : queue) h = (h ^ v) * 0x100000001b3u;
        return h;
    }
};

}  // namespace smr::lincheck
