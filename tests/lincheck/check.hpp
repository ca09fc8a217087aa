// Checks a recorded set or queue history and, when it is not linearizable,
// cuts it down to the smallest failing window it can find, so that the
// report is a handful of operations instead of thousands.
//
// The cut has two ends. The right end is the shortest failing prefix:
// linearizability is closed under prefixes (an operation the cut leaves
// unfinished becomes pending: it may have taken effect or not), so the
// first time at which the prefix fails is found by binary search. The left
// end is the latest point before it with no update in flight from which the
// rest still fails, when the specification's state there is the same for
// every linearization, as a set key's is: the window starts from that state.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "history.hpp"
#include "specs.hpp"
#include "wgl.hpp"

namespace smr::lincheck {

struct report {
    verdict answer = verdict::linearizable;
    /// The failing window (not linearizable) or the history given up on
    /// (too hard), in order of invocation; empty when linearizable.
    history window;
    std::string where;        // "key 3 (absent at the window's start)", "queue []"
    std::size_t checked = 0;  // operations checked
    std::size_t configurations = 0;

    bool ok() const noexcept { return answer == verdict::linearizable; }
    /// One line when linearizable; otherwise the verdict and the window.
    std::string text() const {
        std::ostringstream out;
        if (ok()) {
            out << "linearizable: " << checked << " operations, " << configurations
                << " configurations";
            return out.str();
        }
        out << (answer == verdict::too_hard ? "gave up (too many configurations) on "
                                            : "not linearizable: ")
            << where << ", " << window.size() << " operations:\n";
        print(out, window);
        return out.str();
    }
};

namespace detail {

inline void sort_by_call(history& h) {
    std::stable_sort(h.begin(), h.end(),
                     [](const operation& a, const operation& b) { return a.call < b.call; });
}

/// The history as it stood at time t: operations invoked by t, those not
/// returned by t pending.
inline history prefix_at(const history& h, std::uint64_t t) {
    history out;
    for (operation op : h) {
        if (op.call > t) continue;
        if (op.is_pending() || op.ret > t) op.ret = operation::pending;
        out.push_back(op);
    }
    return out;
}

template <class Spec>
bool fails(const history& h, const typename Spec::state& initial) {
    return linearize<Spec>(h, initial).answer == verdict::not_linearizable;
}

/// The shortest failing prefix of a failing history `h` (sorted by call).
template <class Spec>
history shortest_failing_prefix(const history& h, const typename Spec::state& initial) {
    std::vector<std::uint64_t> times;
    for (const operation& op : h) {
        times.push_back(op.call);
        if (!op.is_pending()) times.push_back(op.ret);
    }
    std::sort(times.begin(), times.end());
    std::size_t lo = 0;
    std::size_t hi = times.size() - 1;  // the whole history fails
    while (lo < hi) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (fails<Spec>(prefix_at(h, times[mid]), initial)) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return prefix_at(h, times[lo]);
}

/// Where `h` (sorted by call) may be cut: before operation i when every
/// update invoked before it has returned (reads may span the cut). Latest
/// first.
template <class Spec>
std::vector<std::size_t> cuts_latest_first(const history& h) {
    std::vector<std::size_t> cuts;
    std::uint64_t latest_update_return = 0;
    bool any_update = false;
    for (std::size_t i = 0; i < h.size(); ++i) {
        if (any_update && latest_update_return < h[i].call) cuts.push_back(i);
        if (!Spec::read_only(h[i])) {
            latest_update_return = std::max(latest_update_return, h[i].ret);  // pending: max
            any_update = true;
        }
    }
    std::reverse(cuts.begin(), cuts.end());
    return cuts;
}

/// The window of a failing `h` (sorted by call) that starts at the latest
/// cut from which it still fails, and its start state: the state the
/// operations before the cut leave, the same for every linearization when
/// no update is in flight. Reads that span the cut are left out; that the
/// window fails without them still proves `h` fails, since taking reads out
/// of a linearization of `h` leaves one of the window. At most `tries` cuts.
template <class Spec>
std::pair<history, typename Spec::state> cut_left(const history& h,
                                                  const typename Spec::state& initial,
                                                  std::size_t tries = 64) {
    for (std::size_t cut : cuts_latest_first<Spec>(h)) {
        if (tries-- == 0) break;
        const std::uint64_t at = h[cut].call;
        history before;
        history window;
        for (const operation& op : h) {
            if (op.call >= at) {
                window.push_back(op);
            } else if (!op.is_pending() && op.ret < at) {
                before.push_back(op);
            }
        }
        const search_result<Spec> start = linearize<Spec>(before, initial);
        if (start.answer == verdict::linearizable && fails<Spec>(window, start.final_state)) {
            return {std::move(window), start.final_state};
        }
    }
    return {h, initial};
}

/// The smallest failing window of a failing history and the state it starts
/// from.
template <class Spec>
std::pair<history, typename Spec::state> smallest_window(history h, typename Spec::state initial) {
    sort_by_call(h);
    history prefix = shortest_failing_prefix<Spec>(h, initial);
    if constexpr (Spec::unique_quiescent_state) return cut_left<Spec>(prefix, initial);
    return {std::move(prefix), std::move(initial)};
}

template <class Spec>
report check_one(const history& h, const typename Spec::state& initial,
                 std::size_t max_configurations) {
    report out;
    out.checked = h.size();
    const search_result<Spec> found = linearize<Spec>(h, initial, max_configurations);
    out.answer = found.answer;
    out.configurations = found.configurations;
    if (found.answer == verdict::too_hard) {
        out.window = h;
        detail::sort_by_call(out.window);
    }
    return out;
}

}  // namespace detail

namespace detail {

/// Checks one key's operations (sorted by call) from `present`, a segment at
/// a time: at a point where no operation is in flight the key's state is the
/// same for every linearization of what came before, so the history is
/// linearizable exactly when each segment is, from the state the one before
/// it left. That keeps the search (and its memo, a bit per operation of the
/// history searched) as small as the longest stretch without such a point.
inline report check_key(const history& ops, std::uint64_t key, bool present,
                        std::size_t max_configurations) {
    report out;
    std::size_t begin = 0;
    std::uint64_t latest_return = 0;
    for (std::size_t i = 0; i <= ops.size(); ++i) {
        if (i != ops.size() && (i == begin || latest_return >= ops[i].call)) {
            latest_return = std::max(latest_return, ops[i].ret);
            continue;
        }
        const history segment(ops.begin() + static_cast<long>(begin),
                              ops.begin() + static_cast<long>(i));
        const auto found = linearize<set_key_spec>(segment, present, max_configurations);
        out.configurations += found.configurations;
        out.checked += segment.size();
        if (found.answer != verdict::linearizable) {
            out.answer = found.answer;
            bool start = present;
            if (found.answer == verdict::not_linearizable) {
                std::tie(out.window, start) = smallest_window<set_key_spec>(segment, present);
            } else {
                out.window = segment;
            }
            // Appended, not `"key " + ...`: GCC 12's false -Wrestrict (history.hpp).
            out.where = "key ";
            out.where += std::to_string(key);
            out.where += start ? " (present" : " (absent";
            out.where += " at the window's start)";
            return out;
        }
        present = found.final_state;
        begin = i;
        if (i != ops.size()) latest_return = ops[i].ret;
    }
    return out;
}

}  // namespace detail

/// Checks a set history key by key; `initially` holds the keys present
/// before the first operation.
inline report check_set(const history& h, const std::set<std::uint64_t>& initially = {},
                        std::size_t max_configurations = 4'000'000) {
    std::map<std::uint64_t, history> by_key;
    for (const operation& op : h) by_key[op.arg].push_back(op);
    report total;
    for (auto& [key, ops] : by_key) {
        detail::sort_by_call(ops);
        report one = detail::check_key(ops, key, initially.count(key) != 0, max_configurations);
        total.configurations += one.configurations;
        total.checked += one.checked;
        if (one.ok()) continue;
        one.checked = total.checked;
        one.configurations = total.configurations;
        return one;
    }
    return total;
}

/// Checks a FIFO queue history of distinct enqueued values, starting from
/// `initially` (front first).
inline report check_queue(const history& h, const queue_spec::state& initially = {},
                          std::size_t max_configurations = 4'000'000) {
    report out = detail::check_one<queue_spec>(h, initially, max_configurations);
    if (out.answer == verdict::not_linearizable) {
        out.window = detail::smallest_window<queue_spec>(h, initially).first;
    }
    if (!out.ok()) {
        out.where = "queue of ";
        out.where += std::to_string(initially.size());
        out.where += " values";
    }
    return out;
}

}  // namespace smr::lincheck
