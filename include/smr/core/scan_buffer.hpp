// The buffer a reservation scheme's scan collects reservations into: sized
// once, when a thread registers, for every slot of every thread the domain
// can hold, so the scan itself never allocates. A scan runs inside retire,
// which is noexcept (and may run where allocating is forbidden: NBR's
// phases, a signal-free retire path); a buffer that grew there could only
// throw into std::terminate or fail silently.
//
// A scan then asks, for every node of its bag, whether the buffer holds it.
// With few reservations -- a small machine's, one to three per thread -- a
// linear pass over one or two cache lines needs no sort, and its branches
// are predictable where a binary search's are not (NBR, dgt_bst 100K keys,
// one thread: about 3 instructions fewer per freed node). Past
// `linear_scan_limit` values the sort pays for itself.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>

#include "smr/core/check.hpp"
#include "smr/core/mutant.hpp"

namespace smr::core {

template <class T>
class scan_buffer {
  public:
    /// Makes room for `capacity` values; keeps what it has if that is enough.
    /// Called at registration (may throw std::bad_alloc there).
    void reserve(std::size_t capacity) {
        if (capacity <= capacity_) return;
        data_ = std::make_unique_for_overwrite<T[]>(capacity);
        capacity_ = capacity;
        size_ = 0;
    }

    void clear() noexcept {
        size_ = 0;
        sorted_ = false;
    }
    /// Never writes past the capacity reserved at registration: a scan that
    /// finds more reservations than the domain can hold is a broken
    /// invariant, stopped with a message in every build.
    void push_back(const T& value) noexcept {
        SMR_CHECK(size_ < capacity_, "scan buffer full: more reservations than registered slots");
        data_[size_++] = value;
    }

    /// Values up to which contains() reads them all instead of searching a
    /// sorted buffer: 16 pointers are two cache lines.
    static constexpr std::size_t linear_scan_limit = 16;

    /// Call once the scan has collected every value, before contains().
    void seal() noexcept {
        sorted_ = size_ > linear_scan_limit;
        if (sorted_) std::sort(begin(), end());
    }

    /// Whether the sealed buffer holds `value`.
    bool contains(const T& value) const noexcept {
        if (sorted_) return std::binary_search(begin(), end(), value);
        const T* last = end();
        if (SMR_MUTANT("scan_buffer_linear_scan_skips_last") && size_ != 0) --last;
        return std::find(begin(), last, value) != last;
    }

    T* begin() noexcept { return data_.get(); }
    T* end() noexcept { return data_.get() + size_; }
    const T* begin() const noexcept { return data_.get(); }
    const T* end() const noexcept { return data_.get() + size_; }
    std::size_t size() const noexcept { return size_; }
    std::size_t capacity() const noexcept { return capacity_; }

  private:
    std::unique_ptr<T[]> data_;
    std::size_t size_ = 0;
    std::size_t capacity_ = 0;
    bool sorted_ = false;
};

}  // namespace smr::core
