// The median trial of a run: a real trial (the lower median for an even
// count), so that the figures reported with its throughput are its own.
#pragma once

#include <algorithm>
#include <cstddef>
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

}  // namespace smrbench
