// An owner-only FIFO of retired nodes, stored in blocks of entries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "smr/core/bag_block.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/retired_node.hpp"

namespace smr::core {

/// Retired nodes waiting for a grace period (or, in the freeable list of
/// amortized free, waiting for their turn to be freed). Append and pop are
/// O(1), and so is handing a whole bag over (splice_back links the blocks of
/// a bag of more than one block, and copies a bag of one block into the free
/// room of the last, so that many small epoch bags spliced one after another
/// do not leave a chain of nearly empty blocks).
///
/// Why blocks and not a list threaded through the nodes (the free list of
/// most published code, and once ours): appending writes to
/// no retired node, and freeing a bag reads its entries sequentially instead
/// of chasing a link through each node, whose line is cold by the time the
/// grace period ends; the nodes lose the 8-byte link. docs/design.md gives
/// the measurements.
///
/// Not thread-safe: each bag belongs to one thread slot.
class limbo_bag {
  public:
    limbo_bag() = default;
    limbo_bag(const limbo_bag&) = delete;
    limbo_bag& operator=(const limbo_bag&) = delete;
    limbo_bag(limbo_bag&& other) noexcept { steal(other); }
    limbo_bag& operator=(limbo_bag&& other) noexcept {
        if (this != &other) {
            // The common case, an epoch's rotation, assigns to an empty bag:
            // only the test is inline.
            if (head_ != nullptr) [[unlikely]]
                release_blocks();
            steal(other);
        }
        return *this;
    }
    /// Gives the blocks back; nodes still in the bag are not freed (the
    /// domain frees every node before its bags go).
    ~limbo_bag() {
        if (head_ != nullptr) release_blocks();
    }

    bool empty() const noexcept { return size_ == 0; }
    std::size_t size() const noexcept { return size_; }
    /// The oldest node (nullptr if empty).
    retired_node* front() const noexcept {
        return empty() ? nullptr : head_->entries[head_->begin].node;
    }

    /// Appends `node`, destroyed as core::entry_of decides from its type.
    template <class T>
    void push_back(T* node) noexcept {
        push_back(entry_of(node));
    }
    [[gnu::always_inline]] void push_back(retired_entry entry) noexcept {
        if (tail_ == nullptr || tail_->full()) [[unlikely]]
            append_block();
        tail_->entries[tail_->end++] = entry;
        ++size_;
    }

    /// The oldest entry, removed (a null entry if the bag is empty).
    retired_entry pop_front() noexcept {
        if (empty()) return {};
        const retired_entry entry = head_->entries[head_->begin++];
        --size_;
        if (head_->begin == head_->end) drop_head();
        return entry;
    }

    /// Empties the bag, calling f(entry) for each entry in order; each block
    /// goes back to the thread's cache as soon as f has seen its last entry.
    /// f must not touch this bag.
    template <class F>
    void consume(F&& f) noexcept(noexcept(f(retired_entry{}))) {
        bag_block* b = head_;
        head_ = tail_ = nullptr;
        size_ = 0;
        while (b != nullptr) {
            for (std::uint32_t i = b->begin; i != b->end; ++i) f(b->entries[i]);
            bag_block* const next = b->next;
            release_block(b);
            b = next;
        }
    }

    /// Calls f(entry) for each entry in order, leaving the bag as it is.
    template <class F>
    void for_each(F&& f) const {
        for (const bag_block* b = head_; b != nullptr; b = b->next) {
            for (std::uint32_t i = b->begin; i != b->end; ++i) f(b->entries[i]);
        }
    }
    /// Blocks the bag holds (O(blocks); for tests and diagnostics).
    std::size_t block_count() const noexcept {
        std::size_t n = 0;
        for (const bag_block* b = head_; b != nullptr; b = b->next) ++n;
        return n;
    }

    /// Moves every node of `other` to the back of this bag; `other` ends empty.
    void splice_back(limbo_bag& other) noexcept {
        if (other.empty()) return;
        if (empty()) {
            *this = std::move(other);
            return;
        }
        bag_block* const only = other.head_;
        if (only == other.tail_ && only->size() <= bag_block::capacity - tail_->end) {
            const std::uint32_t end =
                only->end - (SMR_MUTANT("limbo_bag_copied_splice_drops_last") ? 1 : 0);
            for (std::uint32_t i = only->begin; i != end; ++i)
                tail_->entries[tail_->end++] = only->entries[i];
            size_ += other.size_;
            other.release_blocks();
            return;
        }
        tail_->next = other.head_;
        tail_ = other.tail_;
        size_ += other.size_;
        other.forget_blocks();
    }

    /// Moves the entries for which keep(node) is false into a new bag, keeping
    /// order in both. O(n); for scans that must test every node (HP, IBR).
    /// The kept entries are compacted in place: no node is written, and the
    /// blocks they no longer fill go back to the cache.
    template <class Keep>
    limbo_bag extract_unless(Keep&& keep) {
        limbo_bag extracted;
        bag_block* out = head_;
        std::uint32_t out_end = out == nullptr ? 0 : out->begin;
        for (bag_block* b = head_; b != nullptr; b = b->next) {
            for (std::uint32_t i = b->begin; i != b->end; ++i) {
                const retired_entry entry = b->entries[i];
                if (!keep(entry.node)) {
                    extracted.push_back(entry);
                    continue;
                }
                if (out_end == bag_block::capacity) {
                    out->end = out_end;
                    out = out->next;
                    out->begin = 0;
                    out_end = 0;
                }
                out->entries[out_end++] = entry;
            }
        }
        size_ -= extracted.size_;
        if (out == nullptr) return extracted;
        if (!SMR_MUTANT("limbo_bag_extract_keeps_stale_entries")) out->end = out_end;
        bag_block* rest = out->next;
        out->next = nullptr;
        tail_ = out;
        while (rest != nullptr) {
            bag_block* const next = rest->next;
            release_block(rest);
            rest = next;
        }
        if (size_ == 0) release_blocks();
        return extracted;
    }

    friend void swap(limbo_bag& a, limbo_bag& b) noexcept {
        std::swap(a.head_, b.head_);
        std::swap(a.tail_, b.tail_);
        std::swap(a.size_, b.size_);
    }

  private:
    [[gnu::noinline]] void append_block() noexcept {
        bag_block* const b = acquire_block();
        if (tail_ != nullptr) {
            tail_->next = b;
        } else {
            head_ = b;
        }
        tail_ = b;
    }
    void drop_head() noexcept {
        bag_block* const next = head_->next;
        release_block(head_);
        head_ = next;
        if (head_ == nullptr) tail_ = nullptr;
    }
    void steal(limbo_bag& other) noexcept {
        head_ = other.head_;
        tail_ = other.tail_;
        size_ = other.size_;
        other.forget_blocks();
    }
    void forget_blocks() noexcept {
        head_ = tail_ = nullptr;
        size_ = 0;
    }
    [[gnu::noinline]] void release_blocks() noexcept {
        while (head_ != nullptr) {
            bag_block* const next = head_->next;
            release_block(head_);
            head_ = next;
        }
        forget_blocks();
    }

    bag_block* head_ = nullptr;
    bag_block* tail_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace smr::core
