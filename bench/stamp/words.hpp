// What the STAMP ports share below the transactions: a pointer kept in a
// transactional 64-bit word, and a malloc that throws (the applications'
// plain allocations outside transactions, which STAMP asserts non-null).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace smrbench::stamp {

inline std::int64_t as_value(const void* p) noexcept {
    return static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(p));
}

template <class T>
T* as_pointer(std::int64_t v) noexcept {
    return reinterpret_cast<T*>(static_cast<std::intptr_t>(v));
}

inline void* checked_malloc(std::size_t bytes) {
    void* block = std::malloc(bytes);
    if (block == nullptr) throw std::bad_alloc();
    return block;
}

}  // namespace smrbench::stamp
