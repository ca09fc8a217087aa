// The median trial of a run: a real trial (the lower median for an even
// count), so that the figures reported with its throughput are its own; and
// the summary of a subcommand's trials.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

namespace smrbench {

/// Index of the item whose `key` is the (lower) median; `items` not empty.
template <class T, class Key>
std::size_t median_index(const std::vector<T>& items, Key key) {
    std::vector<std::size_t> order(items.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return key(items[a]) < key(items[b]); });
    return order[(order.size() - 1) / 2];
}

/// What a subcommand's JSON says of its trials together: the median trial by
/// `key` and the spread of `key`, whether every trial validated, and the
/// largest peak RSS. A trial has `validated` and `peak_rss_bytes`.
template <class Trial>
struct trial_summary {
    const Trial* median;
    double low;
    double high;
    bool validated;
    std::uint64_t peak_rss_bytes;
};

template <class Trial, class Key>
trial_summary<Trial> summarize(const std::vector<Trial>& trials, Key key) {
    const Trial& median = trials[median_index(trials, key)];
    trial_summary<Trial> out{&median, key(median), key(median), true, 0};
    for (const Trial& t : trials) {
        out.low = std::min(out.low, key(t));
        out.high = std::max(out.high, key(t));
        out.validated = out.validated && t.validated;
        out.peak_rss_bytes = std::max(out.peak_rss_bytes, t.peak_rss_bytes);
    }
    return out;
}

}  // namespace smrbench
