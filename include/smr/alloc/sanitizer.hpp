// AddressSanitizer hooks for memory that stays inside a pool.
//
// A block freed into a pool never goes back to malloc, so ASan alone would
// not see a later read of it: the pool poisons every free block and
// unpoisons it when it hands it out again, so a use-after-free into pooled
// memory still fails a test (as "use-after-poison"). Without ASan these are
// empty inline functions and the library needs no sanitizer headers.
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define SMR_POOL_ASAN 1
#endif

/// For the functions that read or write a pool's links inside free blocks,
/// which are poisoned: ASan must not report the pool itself.
#define SMR_POOL_NO_ASAN __attribute__((no_sanitize("address")))

/// For the one read that races by design: a depot pop reads the link of the
/// top block, which another thread may meanwhile have popped, handed out and
/// written; the tagged CAS that follows discards the stale value. TSan cannot
/// know that, so that read alone is hidden from it (the depot's atomics stay
/// instrumented: they are the happens-before edges between a block's users).
#define SMR_POOL_UNTRACKED __attribute__((no_sanitize("address", "thread")))

namespace smr::alloc::detail {

inline void poison(void* p, std::size_t bytes) noexcept {
#ifdef SMR_POOL_ASAN
    ASAN_POISON_MEMORY_REGION(p, bytes);
#else
    (void)p;
    (void)bytes;
#endif
}

inline void unpoison(void* p, std::size_t bytes) noexcept {
#ifdef SMR_POOL_ASAN
    ASAN_UNPOISON_MEMORY_REGION(p, bytes);
#else
    (void)p;
    (void)bytes;
#endif
}

/// True in AddressSanitizer builds, where free pool blocks are poisoned.
inline constexpr bool poisons_free_blocks =
#ifdef SMR_POOL_ASAN
    true;
#else
    false;
#endif

}  // namespace smr::alloc::detail
