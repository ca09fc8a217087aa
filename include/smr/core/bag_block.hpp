// The storage of limbo bags: fixed blocks of (node, destroy) entries, and a
// small per-thread cache of empty blocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "smr/core/check.hpp"
#include "smr/core/retired_node.hpp"  // retired_entry

namespace smr::core {

/// A block of entries; a bag is a chain of them. 1 KB: one allocator size
/// class in glibc, jemalloc and mimalloc, 63 entries, and one malloc per 63
/// retires when the cache is empty.
struct bag_block {
    static constexpr std::uint32_t capacity = 63;

    bag_block* next = nullptr;
    /// The live entries are [begin, end): pop_front advances begin, push_back
    /// end, so both ends are O(1) with no shifting.
    std::uint32_t begin = 0;
    std::uint32_t end = 0;
    retired_entry entries[capacity];

    std::uint32_t size() const noexcept { return end - begin; }
    bool full() const noexcept { return end == capacity; }
};
static_assert(sizeof(bag_block) == 1024);

namespace detail {

/// Empty blocks a thread keeps for its next bags. Trivially destructible and
/// constant-initialized, so it can be reached at any time on its thread,
/// even from a static destructor that runs after the thread's other
/// thread_local objects are gone (a domain with static storage duration):
/// block_cache_closer frees the blocks at thread exit and closes it, and a
/// closed cache hands every block straight back to free().
struct block_cache {
    /// Enough for the bags an epoch-based thread keeps (three epochs, the
    /// freeable list and a batch being freed) to refill without malloc after
    /// a batch is freed; a large batch's extra blocks go back to free().
    static constexpr std::uint32_t limit = 32;

    bag_block* top = nullptr;
    std::uint32_t count = 0;
    bool closed = false;
    bool closer_armed = false;
};

inline thread_local constinit block_cache thread_block_cache{};

/// Frees the thread's cached blocks when the thread exits.
struct block_cache_closer {
    ~block_cache_closer() {
        block_cache& cache = thread_block_cache;
        while (bag_block* b = cache.top) {
            cache.top = b->next;
            std::free(b);
        }
        cache.count = 0;
        cache.closed = true;
    }
};

inline thread_local block_cache_closer thread_block_cache_closer;

}  // namespace detail

/// An empty block, from the thread's cache or malloc. Out of memory for a
/// 1-KB block stops the program: retire cannot fail, and a bag that could not
/// grow would leak its node.
inline bag_block* acquire_block() noexcept {
    detail::block_cache& cache = detail::thread_block_cache;
    bag_block* b = cache.top;
    if (b != nullptr) [[likely]] {
        cache.top = b->next;
        --cache.count;
    } else {
        void* memory = std::malloc(sizeof(bag_block));
        SMR_CHECK(memory != nullptr, "out of memory for a limbo-bag block (1 KB)");
        b = static_cast<bag_block*>(memory);
    }
    b->next = nullptr;
    b->begin = b->end = 0;
    return b;
}

/// Gives an emptied block back to the thread's cache (free() when the cache
/// is full or closed). Any thread may release a block another acquired.
inline void release_block(bag_block* b) noexcept {
    detail::block_cache& cache = detail::thread_block_cache;
    if (cache.count == detail::block_cache::limit || cache.closed) [[unlikely]] {
        std::free(b);
        return;
    }
    if (!cache.closer_armed) [[unlikely]] {
        // The first cached block registers the thread's exit hook (odr-use of
        // a thread_local with a destructor constructs it on this thread).
        static_cast<void>(&detail::thread_block_cache_closer);
        cache.closer_armed = true;
    }
    b->next = cache.top;
    cache.top = b;
    ++cache.count;
}

}  // namespace smr::core
