// Deferred frees of the STM: blocks freed by committed transactions go back to
// std::free only after a grace period of the reclamation domain.
//
// ---- The trade-off ----------------------------------------------------------
//
// A transaction that frees a node may commit while another transaction, doomed
// but not yet aware of it, still reads the node. Freeing at commit would hand
// that reader freed memory; so the free is deferred to the domain, whose
// grace period covers every transaction in progress (stm::atomically runs each
// inside an op_guard).
//
// The domain frees *nodes*: memory it allocated, with its header in front.
// The STM's blocks are plain std::malloc memory with no header, and must stay
// so: the study measures how the allocator alone lays them out. So the frees
// travel in pointer blocks: domain nodes of about 512 bytes holding up to 60
// pointers. A thread appends the frees of each of its commits to its current
// block and retires the block when it is full; when the domain frees the block
// after a grace period, its destructor std::frees the 60 pointers. One retire
// per 60 frees, no allocation per free, and nothing is written into the freed
// blocks (the domain's intrusive link lives in the pointer block).
//
// The price: a freed block waits for its pointer block to fill (or for
// flush) before its grace period even starts, so garbage is up to 59 blocks
// per thread larger than with a retire per free.
//
// Allocation failure: the blocks a commit will need are allocated before the
// commit point (reserve), so appending after it cannot fail and a committed
// transaction never reports bad_alloc.
#pragma once

#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <utility>
#include <vector>

#include "smr/core/padded.hpp"
#include "smr/reclaim/context.hpp"
#include "smr/reclaim/guards.hpp"

namespace smr::stm {

template <class Domain>
class deferred_frees {
  public:
    static constexpr std::size_t pointers_per_block = 60;

    /// A domain node carrying up to 60 freed blocks; freeing it frees them.
    struct pointer_block final : Domain::node_base {
        pointer_block() noexcept {}  // pointers past count are never read
        ~pointer_block() {
            for (std::uint32_t i = 0; i != count; ++i) std::free(pointers[i]);
        }
        pointer_block(const pointer_block&) = delete;
        pointer_block& operator=(const pointer_block&) = delete;

        std::array<void*, pointers_per_block> pointers;
        pointer_block* next_spare = nullptr;  // while on a thread's spare list
        std::uint32_t count = 0;
    };

    /// `domain` must outlive this object.
    deferred_frees(Domain& domain, std::size_t max_threads)
        : domain_(domain),
          slots_(std::make_unique<core::padded<slot>[]>(max_threads)),
          max_threads_(max_threads) {}

    deferred_frees(const deferred_frees&) = delete;
    deferred_frees& operator=(const deferred_frees&) = delete;

    /// No transaction may be running: every pointer still held is freed now
    /// (free_unshared runs the block's destructor).
    ~deferred_frees() {
        for (std::size_t i = 0; i != max_threads_; ++i) {
            slot& s = *slots_[i];
            if (s.current != nullptr) domain_.free_unshared(s.current);
            while (s.spare != nullptr) domain_.free_unshared(pop_spare(s));
        }
    }

    /// Before a commit point: makes room for `frees` more pointers in thread
    /// self's blocks. May throw std::bad_alloc (nothing committed yet).
    void reserve(context_ref<Domain> self, std::size_t frees) {
        slot& s = slot_of(self);
        std::size_t room = s.spares * pointers_per_block;
        if (s.current != nullptr) room += pointers_per_block - s.current->count;
        for (; room < frees; room += pointers_per_block) {
            push_spare(s, domain_.template allocate<pointer_block>(self));
        }
    }

    /// After the commit point, inside the transaction's operation (op_guard):
    /// records `blocks`, retiring each pointer block as it fills. Never
    /// allocates: reserve made the room.
    void append(context_ref<Domain> self, const std::vector<void*>& blocks) noexcept {
        slot& s = slot_of(self);
        for (void* block : blocks) {
            if (s.current == nullptr) s.current = pop_spare(s);
            s.current->pointers[s.current->count++] = block;
            if (s.current->count == pointers_per_block) {
                domain_.retire(self, s.current);
                s.current = nullptr;
            }
        }
    }

    /// Outside any operation of self: retires self's partly filled block and
    /// discards its spares, so its frees do not wait for the slot's next user.
    void flush(context_ref<Domain> self) {
        slot& s = slot_of(self);
        // current is never empty: append fills a block as soon as it takes it.
        if (s.current != nullptr) {
            smr::op_guard guard(domain_, self);  // epoch schemes label a retire with its operation
            domain_.retire(self, std::exchange(s.current, nullptr));
        }
        while (s.spare != nullptr) domain_.discard(self, pop_spare(s));
    }

  private:
    struct slot {
        pointer_block* current = nullptr;  // being filled
        pointer_block* spare = nullptr;    // reserved, empty
        std::size_t spares = 0;
    };

    static void push_spare(slot& s, pointer_block* block) noexcept {
        block->next_spare = s.spare;
        s.spare = block;
        ++s.spares;
    }

    static pointer_block* pop_spare(slot& s) noexcept {
        assert(s.spare != nullptr && "append without reserve");
        pointer_block* block = s.spare;
        s.spare = block->next_spare;
        block->next_spare = nullptr;
        --s.spares;
        return block;
    }

    slot& slot_of(context_ref<Domain> self) noexcept {
        return *slots_[static_cast<std::size_t>(tid_of(self))];
    }

    Domain& domain_;
    std::unique_ptr<core::padded<slot>[]> slots_;
    std::size_t max_threads_;
};

}  // namespace smr::stm
