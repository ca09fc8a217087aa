// What every sorted list between two sentinels must hold when no operation
// runs, checked once for all of them (lazylist, harris_list, hm_list,
// cr_list, lock_list): intact sentinels, keys strictly ascending from head to
// tail (which also stops a cycle), the tail reached. Each list adds only its
// own per-node defect (a reachable marked node, a lock left held).
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "smr/ds/marked_ptr.hpp"
#include "smr/ds/validation.hpp"

namespace smr::ds::detail {

/// Walks from `head` to `tail`: `next(node)` gives a node's successor (mark
/// stripped; null if it has none), `defect(node)` a non-empty description of
/// what is wrong with a node reached (head and tail included), or "". Sums
/// the keys (wrapping) and counts the nodes between the sentinels.
template <class Node, class Next, class Defect>
validation_result validate_sorted_list(const Node& head, const Node& tail, Next&& next,
                                       Defect&& defect) {
    using key_type = std::remove_cvref_t<decltype(head.key)>;
    validation_result result;
    std::uint64_t sum = 0;  // wraps: the sum of arbitrary keys may overflow
    if (head.key != std::numeric_limits<key_type>::min()) result.fail("head sentinel key changed");
    if (tail.key != std::numeric_limits<key_type>::max()) result.fail("tail sentinel key changed");
    if (next(&tail) != nullptr) result.fail("tail sentinel has a successor");
    const Node* pred = &head;
    for (;;) {
        if (std::string what = defect(pred); !what.empty()) {
            result.fail(what + ", key " + std::to_string(pred->key));
        }
        if (pred == &tail) break;
        const Node* curr = next(pred);
        if (curr == nullptr) {
            result.fail("list ends before the tail sentinel");
            break;
        }
        if (!(pred->key < curr->key)) {
            // Also what a cycle would look like: stop instead of looping.
            result.fail("keys not strictly ascending: " + std::to_string(pred->key) + " then " +
                        std::to_string(curr->key));
            break;
        }
        if (curr != &tail) {
            sum += static_cast<std::uint64_t>(curr->key);
            ++result.size;
        }
        pred = curr;
    }
    result.key_sum = static_cast<std::int64_t>(sum);
    return result;
}

/// validate_sorted_list for the lists that mark a removed node in bit 0 of
/// its own `next` (harris_list, hm_list, cr_list): a reachable marked node is
/// the defect, described as `marked` ("reachable marked node").
template <class Node>
validation_result validate_marked_list(const Node& head, const Node& tail, const char* marked) {
    return validate_sorted_list(
        head, tail,
        [](const Node* n) -> const Node* {
            return without_mark(n->next.load(std::memory_order_relaxed));
        },
        [marked](const Node* n) -> std::string {
            return is_marked(n->next.load(std::memory_order_relaxed)) ? marked : "";
        });
}

}  // namespace smr::ds::detail
