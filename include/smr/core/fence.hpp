// A standalone fence that builds cleanly under ThreadSanitizer.
//
// TSan does not model std::atomic_thread_fence (GCC warns with -Wtsan, an
// error under -Werror). Every use in smrlab is of one kind, and TSan need not
// see it: the fence only decides *which* values a later load may return (the
// announce-then-validate argument of hazard pointers and eras, RCU's scan, the
// STM's seqlock re-read), while every happens-before edge from one thread's
// use of memory to another's reuse of it goes through a release store and an
// acquire load, which TSan does check. Each caller says why that holds there.
#pragma once

#include <atomic>

namespace smr::core {

template <std::memory_order Order = std::memory_order_seq_cst>
inline void fence() noexcept {
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
