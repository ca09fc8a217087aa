// Compiler hints shared by the reclaimers.
#pragma once

/// Marks a reclaimer's rare path (an epoch change, a scan, a token receipt):
/// kept out of line and out of the hot text, so the common path of a hook
/// stays small enough for the compiler to inline into every operation. Every
/// reclaimer hook runs once or more per operation, so a call frame around its
/// common path costs as much as the work it does.
#define SMR_SLOW_PATH [[gnu::noinline, gnu::cold]]

/// 1 in a ThreadSanitizer build (GCC defines __SANITIZE_THREAD__, Clang has
/// __has_feature), else 0: TSan runs asynchronous signal handlers late and
/// with every signal blocked, which NBR must allow for (reclaim/nbr.hpp,
/// reclaim/guards.hpp).
#if defined(__SANITIZE_THREAD__)
#define SMR_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SMR_TSAN 1
#endif
#endif
#ifndef SMR_TSAN
#define SMR_TSAN 0
#endif

namespace smr::core {

/// A 128-bit unsigned integer, for 64x64->128 products and double-width
/// CAS. A GCC and Clang extension: `__extension__` keeps -Wpedantic quiet in
/// users' builds, and every use goes through this name.
__extension__ typedef unsigned __int128 uint128;

/// One pause of a spin-wait loop: tells the CPU we are spinning (x86 `pause`,
/// Arm `yield`), which saves power and frees the core's resources for a
/// sibling hyperthread; nothing elsewhere.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    asm volatile("yield" ::: "memory");
#endif
}

}  // namespace smr::core
