// A loop over a fixed-size array of reservation cells, written out one call
// per cell. The reservation schemes clear every cell of a thread at the end
// of each operation (hp's eight hazard pointers, he's and wfe's eras, NBR's
// reservations): cheaper than tracking the cells used at every protect, but
// only if the clear is a handful of stores. GCC 12 at -O3 keeps a loop of
// atomic stores a loop (three instructions per cell for the index, the
// compare and the branch, beside the store): one thread on the hash set,
// hp's end_op cost 29 instructions per operation as a loop.
#pragma once

#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace smr::core {

namespace detail {

template <class Array>
constexpr std::size_t extent_of() noexcept {
    if constexpr (std::is_array_v<Array>) {
        return std::extent_v<Array>;
    } else {
        return std::tuple_size_v<std::remove_cv_t<Array>>;
    }
}

template <class Array, class F, std::size_t... I>
void for_each_unrolled(Array& array, F& f, std::index_sequence<I...>) {
    (f(array[I]), ...);
}

}  // namespace detail

/// Calls f(array[i]) for i = 0, 1, ..., in order, with no loop left for the
/// compiler to keep. `Array` is a built-in array or a std::array.
template <class Array, class F>
void for_each_unrolled(Array& array, F&& f) {
    detail::for_each_unrolled(array, f, std::make_index_sequence<detail::extent_of<Array>()>{});
}

}  // namespace smr::core
