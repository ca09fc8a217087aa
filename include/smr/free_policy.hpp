// How safe nodes are handed back to the allocator: batch or amortized free.
//
// Every reclaimer here decides *when* a node is safe; this policy decides
// *when a safe node is actually freed*. Kim, Brown and Singh ("Are Your Epochs
// Too Epic?", PPoPP'24, Section 3) show that freeing a whole safe bag at once
// (batch) overflows the allocator's thread cache and forces frees back to
// remote threads' bins under a lock ("remote batch free"), while moving the
// safe bag to a per-thread freeable list and freeing a few nodes at the start
// of each operation (amortized free, AF) keeps frees local and short.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace smr {

enum class free_mode : std::uint8_t {
    batch,      ///< free a safe bag at once (what the literature's reclaimers do)
    amortized,  ///< free `k` nodes per operation from a freeable list
};

inline constexpr std::string_view to_string(free_mode mode) noexcept {
    return mode == free_mode::batch ? "batch" : "amortized";
}

inline constexpr std::optional<free_mode> parse_free_mode(std::string_view name) noexcept {
    if (name == "batch") return free_mode::batch;
    if (name == "amortized") return free_mode::amortized;
    return std::nullopt;
}

struct free_policy {
    free_mode mode = free_mode::batch;

    /// Amortized: nodes freed at each operation start (the paper uses 1).
    std::uint32_t k = 1;

    /// Amortized catch-up, off by default (the paper frees k per operation).
    /// A data structure that retires more than k nodes per operation (the
    /// (a,b)-tree retires up to two) grows the freeable list without bound
    /// at k frees per operation. With a divisor, each operation frees
    /// k + len / catchup_divisor nodes, len being the freeable list's length:
    /// a proportional controller whose steady state is a list of about
    /// catchup_divisor x (retire rate - k) nodes, bounded, and still spread
    /// out (with 1024, a freshly spliced 32K-node bag is freed over thousands
    /// of operations, never at once). 0: the paper's k per operation.
    std::uint32_t catchup_divisor = 0;
};

}  // namespace smr
