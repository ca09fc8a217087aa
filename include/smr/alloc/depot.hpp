// The global, non-blocking stack of free lists behind a pool's magazines.
//
// Hart et al. (Section 4) and Bonwick's magazines: threads cache free blocks
// in small lists of their own and exchange whole lists with a global stack,
// so the shared state is touched once per list (up to 100 blocks), not once
// per block. The depot is that stack: a Treiber stack whose elements are
// chains of free blocks.
//
// ABA. A pop reads the top chain's successor and then CASes the head from
// the top to the successor; if between the two the top was popped, reused and
// pushed back, a plain pointer CAS would succeed with a stale successor. The
// head therefore carries a 16-bit tag, incremented by every push and pop, in
// the pointer's unused high bits (user-space addresses on x86-64 and AArch64
// fit in 48 bits; the pool checks every block it carves). A stale CAS fails
// unless exactly 65536 operations happened in between, the usual bound of a
// version tag. The stale successor read itself is safe because a pool never
// returns memory while it lives (type-stable memory).
//
// Progress: push and pop are lock-free.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

#include "smr/alloc/sanitizer.hpp"

namespace smr::alloc::detail {

/// The link words a free block holds while it is in the pool: its successor
/// in a chain and, in the first block of a chain held by the depot, the next
/// chain (low 48 bits) and the chain's length (high 16). Every block is at
/// least 16 bytes, so both fit in any block.
struct free_block {
    free_block* next;
    std::uint64_t chain;
};

inline constexpr int address_bits = 48;
inline constexpr std::uint64_t address_mask = (std::uint64_t{1} << address_bits) - 1;

/// Whether the pool's tagged words can hold `p` (checked once per carved slab).
inline bool fits_tagged_word(const void* p) noexcept {
    return (reinterpret_cast<std::uintptr_t>(p) & ~address_mask) == 0;
}

/// A chain of free blocks: `top` links through free_block::next to null.
struct chain {
    free_block* top = nullptr;
    std::uint32_t count = 0;
};

/// The racy read of a pop (see SMR_POOL_UNTRACKED).
SMR_POOL_UNTRACKED inline std::uint64_t read_chain_word(const free_block* block) noexcept {
    return block->chain;
}

class depot {
  public:
    /// Pushes a non-empty chain.
    SMR_POOL_NO_ASAN void push(chain c) noexcept {
        std::uint64_t head = head_.load(std::memory_order_relaxed);
        for (;;) {
            c.top->chain = (head & address_mask) | (std::uint64_t{c.count} << address_bits);
            // release: the links and the block contents written before the
            // push are visible to the thread whose pop takes this chain.
            if (head_.compare_exchange_weak(head, retag(head, c.top), std::memory_order_release,
                                            std::memory_order_relaxed))
                break;
        }
    }

    /// Pops a chain; an empty chain when the depot is empty.
    SMR_POOL_NO_ASAN chain pop() noexcept {
        // acquire: pairs with push's release CAS, so the top's chain word
        // (and its chain's links) read below are those its pusher wrote.
        std::uint64_t head = head_.load(std::memory_order_acquire);
        for (;;) {
            auto* top = reinterpret_cast<free_block*>(head & address_mask);
            if (top == nullptr) return {};
            const std::uint64_t word = read_chain_word(top);  // may be stale: the CAS decides
            auto* next = reinterpret_cast<free_block*>(word & address_mask);
            if (head_.compare_exchange_weak(head, retag(head, next), std::memory_order_acquire,
                                            std::memory_order_acquire)) {
                return {top, static_cast<std::uint32_t>(word >> address_bits)};
            }
        }
    }

  private:
    static std::uint64_t retag(std::uint64_t old_head, const free_block* top) noexcept {
        const std::uint64_t tag = (old_head >> address_bits) + 1;
        return reinterpret_cast<std::uintptr_t>(top) | (tag << address_bits);
    }

    std::atomic<std::uint64_t> head_{0};
};

}  // namespace smr::alloc::detail
