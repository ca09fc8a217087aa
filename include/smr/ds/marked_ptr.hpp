// The mark bit of the lock-free lists (Harris 2001; Michael 2002): bit 0 of a
// node's `next` pointer says the *node holding the pointer* is logically
// deleted. Nodes are at least 8-byte aligned, so bit 0 of a real address is 0.
//
// A marked value is never dereferenced; only its unmarked() form is. Marked
// values travel through std::atomic<node*> (the type protect() takes), which
// holds any bit pattern a pointer-sized integer can.
#pragma once

#include <cstdint>

namespace smr::ds::detail {

template <class T>
inline bool is_marked(T* p) noexcept {
    return (reinterpret_cast<std::uintptr_t>(p) & 1u) != 0;
}

template <class T>
inline T* with_mark(T* p) noexcept {
    return reinterpret_cast<T*>(reinterpret_cast<std::uintptr_t>(p) | 1u);
}

template <class T>
inline T* without_mark(T* p) noexcept {
    return reinterpret_cast<T*>(reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{1});
}

}  // namespace smr::ds::detail
