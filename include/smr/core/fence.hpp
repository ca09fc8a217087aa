// A standalone fence at its cheapest, that builds cleanly under
// ThreadSanitizer.
//
// The cheapest full fence. On x86-64 a seq_cst fence is a locked
// read-modify-write of the word at the stack pointer (lock or $0), not
// mfence: in x86-TSO a locked instruction drains the store buffer and keeps
// every later load after every earlier store, which is all a seq_cst fence
// adds to x86's ordering; mfence also orders non-temporal stores and cache
// flushes, which nothing here issues, and costs twice as much on this
// project's AMD EPYC machines (scripts/measure/fence_cost.cpp, a store, a
// fence and a load in a loop: 17-19 ns with mfence, 8-11 ns locked). GCC 12
// already emits the locked form for std::atomic_thread_fence(seq_cst); Clang
// 14 emits mfence (16-21 ns against 11 ns), so the instruction is written
// out once, here, for every compiler. The "memory" clobber keeps the compiler
// from moving any memory access across it, as the standard fence does. Other
// targets and orders use std::atomic_thread_fence.
//
// TSan does not model std::atomic_thread_fence (GCC warns with -Wtsan, an
// error under -Werror), nor the instruction. Every use in smrlab is of one
// kind, and TSan need not see it: the fence only decides *which* values a
// later load may return (the announce-then-validate argument of hazard
// pointers and eras, RCU's scan, the STM's seqlock re-read), while every
// happens-before edge from one thread's use of memory to another's reuse of
// it goes through a release store and an acquire load, which TSan does
// check. Each caller says why that holds there.
#pragma once

#include <atomic>

namespace smr::core {

template <std::memory_order Order = std::memory_order_seq_cst>
inline void fence() noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if constexpr (Order == std::memory_order_seq_cst) {
        asm volatile("lock orq $0, (%%rsp)" ::: "memory", "cc");
        return;
    }
#endif
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtsan"
#endif
    std::atomic_thread_fence(Order);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
}

}  // namespace smr::core
