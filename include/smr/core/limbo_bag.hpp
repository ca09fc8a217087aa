// An owner-only intrusive FIFO of retired nodes.
#pragma once

#include <cstddef>
#include <utility>

#include "smr/core/retired_node.hpp"

namespace smr::core {

/// Retired nodes waiting for a grace period (or, in the freeable list of
/// amortized free, waiting for their turn to be freed). Append, pop and splice
/// are O(1), so retire and "this whole bag is now safe" never walk a list.
/// Not thread-safe: each bag belongs to one thread slot.
class limbo_bag {
  public:
    limbo_bag() = default;
    limbo_bag(const limbo_bag&) = delete;
    limbo_bag& operator=(const limbo_bag&) = delete;
    limbo_bag(limbo_bag&& other) noexcept { steal(other); }
    limbo_bag& operator=(limbo_bag&& other) noexcept {
        if (this != &other) {
            clear_links();
            steal(other);
        }
        return *this;
    }

    bool empty() const noexcept { return head_ == nullptr; }
    std::size_t size() const noexcept { return size_; }
    retired_node* front() const noexcept { return head_; }

    void push_back(retired_node* node) noexcept {
        node->next_retired = nullptr;
        if (tail_ != nullptr) {
            tail_->next_retired = node;
        } else {
            head_ = node;
        }
        tail_ = node;
        ++size_;
    }

    retired_node* pop_front() noexcept {
        retired_node* node = head_;
        if (node == nullptr) return nullptr;
        head_ = node->next_retired;
        if (head_ == nullptr) tail_ = nullptr;
        --size_;
        return node;
    }

    /// Empties the bag and returns its nodes as a chain linked by
    /// next_retired and ending in nullptr (nullptr if it was empty): a
    /// consumer walks it without per-node bag updates.
    retired_node* take_chain() noexcept {
        retired_node* chain = head_;
        clear_links();
        return chain;
    }

    /// Moves every node of `other` to the back of this bag; `other` ends empty.
    void splice_back(limbo_bag& other) noexcept {
        if (other.empty()) return;
        if (tail_ != nullptr) {
            tail_->next_retired = other.head_;
        } else {
            head_ = other.head_;
        }
        tail_ = other.tail_;
        size_ += other.size_;
        other.clear_links();
    }

    /// Moves the nodes for which keep(node) is false into a new bag, keeping
    /// order in both. O(n); for scans that must test every node (HP, IBR).
    template <class Keep>
    limbo_bag extract_unless(Keep&& keep) {
        limbo_bag extracted;
        limbo_bag kept;
        while (retired_node* node = pop_front()) {
            if (keep(node)) {
                kept.push_back(node);
            } else {
                extracted.push_back(node);
            }
        }
        *this = std::move(kept);
        return extracted;
    }

    friend void swap(limbo_bag& a, limbo_bag& b) noexcept {
        std::swap(a.head_, b.head_);
        std::swap(a.tail_, b.tail_);
        std::swap(a.size_, b.size_);
    }

  private:
    void steal(limbo_bag& other) noexcept {
        head_ = other.head_;
        tail_ = other.tail_;
        size_ = other.size_;
        other.clear_links();
    }
    void clear_links() noexcept {
        head_ = tail_ = nullptr;
        size_ = 0;
    }

    retired_node* head_ = nullptr;
    retired_node* tail_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace smr::core
