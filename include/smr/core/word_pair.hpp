// Two 64-bit words that change together: a double-width CAS (lock cmpxchg16b
// on x86-64) for the pair, plain 64-bit atomics for either word alone.
//
// Wait-free eras (reclaim/wfe.hpp) keep a reservation and its slow-path tag in
// one pair, so that a helper's write of the era fails once the requester has
// moved on; Crystalline-W (reclaim/crystalline_w.hpp) keeps a slot's list head
// with the same tag. Both read a pair whole only on help paths, where the cost
// of a CAS-as-load is paid rarely.
#pragma once

#include <atomic>
#include <cstdint>

#include "smr/core/compiler.hpp"

namespace smr::core {

struct alignas(16) word_pair {
    std::atomic<std::uint64_t> first{0};
    std::atomic<std::uint64_t> second{0};
};

struct word_pair_value {
    std::uint64_t first;
    std::uint64_t second;
    friend bool operator==(const word_pair_value&, const word_pair_value&) = default;
};

#if defined(__x86_64__)
#define SMR_CX16 __attribute__((target("cx16")))
#else
#define SMR_CX16
#endif

/// Double-width CAS: seq_cst, a full barrier.
SMR_CX16 inline bool dcas(word_pair& word, word_pair_value expected,
                          word_pair_value desired) noexcept {
    const uint128 e = (static_cast<uint128>(expected.second) << 64) | expected.first;
    const uint128 d = (static_cast<uint128>(desired.second) << 64) | desired.first;
    auto* target = reinterpret_cast<uint128*>(&word);
#if defined(__x86_64__)
    return __sync_bool_compare_and_swap(target, e, d);
#else
    uint128 expect = e;
    return __atomic_compare_exchange_n(target, &expect, d, false, __ATOMIC_SEQ_CST,
                                       __ATOMIC_SEQ_CST);
#endif
}

/// Atomic 128-bit load: a CAS of {0, 0} by {0, 0} that returns the value it
/// found (it writes only if the pair was already zero), so a full barrier too.
SMR_CX16 inline word_pair_value dload(word_pair& word) noexcept {
    auto* target = reinterpret_cast<uint128*>(&word);
#if defined(__x86_64__)
    const uint128 v = __sync_val_compare_and_swap(target, uint128{0}, uint128{0});
#else
    uint128 v = 0;
    __atomic_compare_exchange_n(target, &v, uint128{0}, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
#endif
    return {static_cast<std::uint64_t>(v), static_cast<std::uint64_t>(v >> 64)};
}

#undef SMR_CX16

}  // namespace smr::core
