// RAII guards and the read-phase checkpoint: how data structures call a reclaimer.
//
// Every data-structure operation has this shape (docs/design.md, "Restarts"):
//
//     bool erase(smr::context_ref<Domain> self, key_type key) {
//         smr::op_guard guard(domain_, self);           // begin_op ... end_op
//         const auto slots = smr::lend_slots<2>(guard); // pred's and curr's
//         for (;;) {                                     // the restart loop
//             SMR_READ_PHASE_BEGIN(domain_, self);       // NBR checkpoint
//             const auto reader = slots.reader(domain_);
//             ... search with reader.protect(reader.slot(i), source) ...
//             domain_.read_phase_end(self, pred, curr);  // reserve, enter write phase
//             ... lock, validate; on failure: continue (restart) ...
//             ... unlink; domain_.retire(self, curr); return true;
//         }
//     }
//
// Operations take the caller's context, lent as a context_ref (context.hpp),
// make their guard from it and pass it to every call on the domain; a
// function the traversal runs in, which takes the block's view instead,
// gets it back with smr::context_of(slots). The guard hands out the
// protect slots. A
// traversal that keeps nodes protected hand over hand borrows a block of
// them (lend_slots) and rotates over the block's reader; a pointer read on
// its own is a guarded pointer, whose slot comes back when it dies:
//
//     std::optional<item> dequeue(smr::context_ref<Domain> self) {
//         smr::op_guard guard(domain_, self);
//         ... auto head = guard.protect(head_); ...   // a guarded pointer
//
// The checkpoint must be a macro: sigsetjmp has to run in the frame of the
// operation it returns into. Between the checkpoint and read_phase_end the
// operation may be abandoned at any instruction by siglongjmp (NBR), so that
// stretch must not allocate, lock, write shared memory or own anything with a
// destructor, and any local it changes must be re-initialized after the
// checkpoint. For every reclaimer that does not use signals the macro is just
// read_phase_begin(self), an empty inline function.
#pragma once

#include <atomic>
#include <bit>
#include <cassert>
#include <concepts>
#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

#include "smr/core/check.hpp"
#include "smr/core/compiler.hpp"
#include "smr/core/mutant.hpp"
#include "smr/reclaim/context.hpp"
#include "smr/reclaim/reader.hpp"
#include "smr/reclaim/slots.hpp"

namespace smr {

/// Brackets one data-structure operation: begin_op on construction, end_op on
/// destruction. Not copyable or movable, so an operation cannot outlive it.
///
/// Guards of one thread nest where the reclaimer allows it
/// (reclaimer_traits::nests: the epoch family, ibr, none): only the outermost
/// guard begins and ends the operation, so what the outer operation protects
/// stays protected through any inner one. hp, he, wfe, lfrc and nbr refuse a
/// nested guard, in every build (the depth is compared anyway): their
/// protection belongs to one operation at a time, and the inner guard's end
/// would drop the outer one's (docs/design.md, "Nested operations").
///
/// `self` must be the caller's registered context: checked in debug builds only,
/// since the guard is on every operation's path (docs/library.md, "Rules").
/// Only a context makes a guard: a slot number is refused at compile time.
///
/// The guard hands out protect slots to guarded pointers (protect below)
/// and lends blocks of them to traversals (lend_slots), from a mask of the
/// thread's free slots that it keeps where the scheme reserves per slot.
template <class T, class Domain>
class guarded;
template <class Domain, std::size_t N>
class slot_block;
namespace detail {
template <class Guard>
class guarded_slot;
}  // namespace detail

template <class Domain>
class [[nodiscard]] op_guard {
  public:
    /// `self`: the caller's context, or the context_ref an operation was
    /// lent (a context converts to it).
    /// Delegates to a private constructor that takes the slot number, on
    /// measurement (callgrind, one thread, dgt_bst 100K keys): with the work
    /// in this constructor, GCC 12 estimated the rest of an nbr operation
    /// (everything after its sigsetjmp) as almost never run and left its
    /// guard's end and read phase out of line (+10 instructions per
    /// operation); with an empty tag as a third parameter, it stopped
    /// inlining qsbr_ibr's insert into smrbench's loop (+15).
    op_guard(Domain& domain, context_ref<Domain> self) : op_guard(domain, tid_of(self)) {}
    /// A slot number names no context: refused, an int by the private
    /// constructor below, any other integer here (the note the compiler
    /// prints shows the line).
    template <std::integral SlotNumber>
    op_guard(Domain&, SlotNumber) = delete;  // make the guard from the thread's context

    ~op_guard() {
        if (--depth_ == 0) domain_.end_op(self_);
    }
    op_guard(const op_guard&) = delete;
    op_guard& operator=(const op_guard&) = delete;

    /// Reads `source` for dereferencing: the node it returns stays safe
    /// while the guarded pointer lives (and this guard with it). Under a
    /// scheme that publishes per slot (hp, he, wfe, lfrc) the pointer takes
    /// one of the thread's max_protect_slots slots, the lowest free one,
    /// and gives it back when it dies; more pointers alive at once stop the
    /// program with one line, in every build (a test of a mask already in a
    /// register). The slot's reservation then ends at its next protect or at
    /// this guard's end, whichever comes first: clearing it at each death
    /// would cost a store per node a traversal leaves. Elsewhere the pointer
    /// is the bare pointer. Not with slots numbered by hand in one operation
    /// (domain.protect(self, index, ...)): the two would share slots.
    template <class T>
    guarded<T, Domain> protect(const std::atomic<T*>& source) noexcept {
        static_assert(
            !Domain::traits.uses_signals || std::is_trivially_destructible_v<guarded<T, Domain>>,
            "a read phase left by siglongjmp runs no destructor");
        if constexpr (Domain::traits.protect_uses_slots) {
            const int slot = take_slot();
            return guarded<T, Domain>(domain_.protect(self_, slot, source), this, slot);
        } else {
            return guarded<T, Domain>(domain_.protect(self_, 0, source));
        }
    }
    /// protect(source) for `source`, a link inside `parent`, a node this
    /// guard holds (smr::protect_in, reader.hpp, says who needs it).
    template <class T, class Parent>
    guarded<T, Domain> protect_in(const std::atomic<T*>& source, const Parent* parent) noexcept {
        if constexpr (!Domain::traits.protect_takes_parents) {
            return protect(source);
        } else {
            static_assert(Domain::traits.protect_uses_slots);
            const int slot = take_slot();
            return guarded<T, Domain>(domain_.protect_in(self_, slot, source, parent), this, slot);
        }
    }

    Domain& domain() const noexcept { return domain_; }
    /// The context the guard was made from, lent on to the domain's calls.
    context_ref<Domain> context() const noexcept { return self_; }
    int tid() const noexcept { return tid_of(self_); }

  private:
    /// The slot a guarded pointer takes: the lowest free one.
    int take_slot() noexcept {
        std::uint32_t& free = free_slots_.mask;
        SMR_CHECK(free != 0,
                  "op_guard::protect: more guarded pointers alive than a thread's protect "
                  "slots (max_protect_slots)");
        const int slot = SMR_MUTANT("guarded_pointers_share_a_slot") ? 0 : std::countr_zero(free);
        free &= free - 1;
        return slot;
    }

    template <class>
    friend class detail::guarded_slot;
    template <class, std::size_t>
    friend class slot_block;

    op_guard(Domain& domain, int tid)  // make the guard from the thread's context
        : domain_(domain), self_{tid}, depth_(checked_depth(domain, tid)) {
        if constexpr (!Domain::traits.nests) {
            SMR_CHECK(depth_ == 0,
                      "nested op_guard: this reclaimer protects one operation at a time per "
                      "thread");
        }
        if (depth_++ == 0) domain_.begin_op(self_);
    }

    /// The first of n adjacent free slots, now taken: one mask operation
    /// per block, whatever the traversal visits.
    int take_block(int n) noexcept {
        std::uint32_t& free = free_slots_.mask;
        std::uint32_t starts = free;  // bit i: slots i to i + n - 1 all free
        for (int i = 1; i < n; ++i) starts &= free >> i;
        SMR_CHECK(starts != 0,
                  "smr::lend_slots: fewer adjacent free protect slots than the block asks for "
                  "(max_protect_slots, less what guarded pointers and other blocks hold)");
        const int first = std::countr_zero(starts);
        if (!SMR_MUTANT("slot_blocks_take_no_slots")) free &= ~(block_bits(n) << first);
        return first;
    }
    void give_back_block(int first, int n) noexcept { free_slots_.mask |= block_bits(n) << first; }
    static constexpr std::uint32_t block_bits(int n) noexcept { return (1u << n) - 1; }

    static std::uint32_t& checked_depth(Domain& domain, int tid) noexcept {
        assert(domain.registered(tid) && "op_guard: tid is not a registered thread of the domain");
        return domain.operation_depth(tid);
    }

    void give_back(int slot) noexcept { free_slots_.mask |= 1u << slot; }

    /// Bit i set: slot i is free for protect. Only where the scheme
    /// reserves per slot.
    struct slot_mask {
        std::uint32_t mask = (1u << max_protect_slots) - 1;
    };
    struct no_slot_mask {};

    Domain& domain_;
    context_ref<Domain> self_;
    std::uint32_t& depth_;  // the thread's count of open guards, in its own slot
    [[no_unique_address]] std::conditional_t<Domain::traits.protect_uses_slots, slot_mask,
                                             no_slot_mask>
        free_slots_{};
};

template <class Domain>
op_guard(Domain&, context_ref<Domain>) -> op_guard<Domain>;  // Domain: from the first

namespace detail {

/// What a guarded pointer holds besides the pointer, under a scheme that
/// publishes per slot: the slot it took, owned as a unique_ptr owns memory
/// (moved, released once), released by giving it back to its guard. A
/// member of its own, so that the guarded pointer's destructor stays
/// trivial where there is no slot (a constrained destructor would say the
/// same, but clang before 16 does not take one).
template <class Guard>
class guarded_slot {
  public:
    guarded_slot() noexcept = default;
    guarded_slot(Guard* owner, int slot) noexcept : held_(owner, give_back_slot{slot}) {}
    void give_back() noexcept { held_.reset(); }

  private:
    struct give_back_slot {
        int slot = 0;
        void operator()(Guard* owner) const noexcept { owner->give_back(slot); }
    };
    std::unique_ptr<Guard, give_back_slot> held_;
};

/// The same where protect takes no slot: nothing.
struct no_guarded_slot {
    void give_back() noexcept {}
};

}  // namespace detail

/// A pointer read by op_guard::protect: safe to dereference while it lives.
/// Move-only; its slot (where the scheme has slots) goes back to the guard
/// when it dies, is reset, or is assigned another guarded pointer. Under a
/// scheme without slots it is a bare pointer with a trivial destructor, so
/// it may live in an NBR read phase, which a neutralization leaves by
/// siglongjmp without running destructors.
template <class T, class Domain>
class [[nodiscard]] guarded {
    static constexpr bool has_slot = Domain::traits.protect_uses_slots;
    using guard_type = op_guard<Domain>;
    using slot_type =
        std::conditional_t<has_slot, detail::guarded_slot<guard_type>, detail::no_guarded_slot>;

  public:
    guarded() noexcept = default;
    guarded(guarded&& other) noexcept
        : ptr_(std::exchange(other.ptr_, nullptr)), slot_(std::move(other.slot_)) {}
    guarded& operator=(guarded&& other) noexcept {
        if (this != &other) {
            slot_ = std::move(other.slot_);  // gives our slot back first
            ptr_ = std::exchange(other.ptr_, nullptr);
        }
        return *this;
    }
    guarded(const guarded&) = delete;
    guarded& operator=(const guarded&) = delete;
    ~guarded() = default;

    T* get() const noexcept { return ptr_; }
    T* operator->() const noexcept { return ptr_; }
    T& operator*() const noexcept { return *ptr_; }
    explicit operator bool() const noexcept { return ptr_ != nullptr; }
    friend bool operator==(const guarded& a, const T* b) noexcept { return a.ptr_ == b; }

    /// Ends the protection now: the pointer becomes null.
    void reset() noexcept {
        slot_.give_back();
        ptr_ = nullptr;
    }

  private:
    friend guard_type;
    explicit guarded(T* ptr) noexcept : ptr_(ptr) {}
    guarded(T* ptr, guard_type* owner, int slot) noexcept : ptr_(ptr), slot_(owner, slot) {}

    T* ptr_ = nullptr;
    [[no_unique_address]] slot_type slot_{};
};

/// N adjacent protect slots of the calling thread, lent by its guard for as
/// long as this lives (smr::lend_slots): what a traversal that keeps nodes
/// protected hand over hand rotates over, through reader(), so that its
/// slots come from the guard, not from numbers written into the structure,
/// and a guarded pointer or another block taken meanwhile gets other slots.
/// The slots' reservations end as a guarded pointer's do: at their next
/// protect or at the guard's end. Neither copyable nor movable; a function
/// the traversal runs in takes lent() by value, in place of the slot number.
///
/// Neither the block nor its reader is what travels: the reader is built
/// where the traversal runs, and the view carries the slot number and the
/// block's first slot. Measured on hm_list at 1,000 keys, whose search is
/// out of line: a reader kept in the block cost every scheme a few stores
/// per operation (+7 instructions under none); a reader passed by value
/// kept registers busy across NBR's checkpoint (+89 under nbr); the block
/// passed by reference let the guard's address escape, so its mask of free
/// slots was reloaded and recomputed after every call (+35 under hp).
template <class Domain, std::size_t N>
class [[nodiscard]] slot_block {
    static constexpr bool has_slots = Domain::traits.protect_uses_slots;
    using guard_type = op_guard<Domain>;
    using domain_reader =
        decltype(std::declval<Domain&>().reader(std::declval<context_ref<Domain>>()));
    static_assert(N >= 1 && N <= static_cast<std::size_t>(max_protect_slots),
                  "smr::lend_slots: a block of 1 to max_protect_slots slots");

  public:
    /// The domain's reader over the block: slot(k), k in 0 to N - 1.
    using reader_type =
        std::conditional_t<has_slots, detail::block_reader<domain_reader, N>, domain_reader>;

    /// What a function the traversal runs in takes, by value, in place of
    /// the slot number: the thread's slot number (smr::tid_of) and, where
    /// slots exist, the block's first slot (smr::reader_of). An enumeration,
    /// so a scalar to the optimizer: GCC counts a struct's copy as one more
    /// statement of the operation that makes it (dgt_bst's insert: 125
    /// against 124, where 123 is its inlining limit under qsbr_ibr and the
    /// token schemes). Valid while the block lives.
    enum class view : std::conditional_t<has_slots, std::uint64_t, int> {};

    explicit slot_block(guard_type& guard) noexcept : held_(guard), view_(make_view(guard)) {}

    view lent() const noexcept { return view_; }
    /// The block's reader in `domain`, its guard's.
    reader_type reader(Domain& domain) const noexcept {
        if constexpr (has_slots) {
            assert(&held_.guard.domain() == &domain &&
                   "slot_block::reader: not the domain of the block's guard");
        }
        return lent_reader(domain, view_);
    }

    friend constexpr int lent_tid(view slots) noexcept {
        if constexpr (has_slots) {
            return static_cast<int>(static_cast<std::uint64_t>(slots) & 0xffff'ffffu);
        } else {
            return static_cast<int>(slots);
        }
    }
    /// The context of the guard that lent the block, for the domain's calls
    /// made where only the block's view was passed on.
    friend context_ref<Domain> lent_context(view slots) noexcept {
        return context_ref<Domain>{lent_tid(slots)};
    }
    friend reader_type lent_reader(Domain& domain, view slots) noexcept {
        if constexpr (has_slots) {
            const auto first = static_cast<int>(static_cast<std::uint64_t>(slots) >> 32);
            return reader_type(domain.reader(lent_context(slots)).shifted(first));
        } else {
            return domain.reader(lent_context(slots));
        }
    }

  private:
    /// The slots taken, given back at the end. A member of its own, so that
    /// the block's destructor stays trivial where there are none (as
    /// guarded_slot; clang before 16 takes no constrained destructor).
    struct held_slots {
        explicit held_slots(guard_type& owner) noexcept
            : guard(owner), first(owner.take_block(static_cast<int>(N))) {}
        held_slots(const held_slots&) = delete;
        held_slots& operator=(const held_slots&) = delete;
        ~held_slots() { guard.give_back_block(first, static_cast<int>(N)); }
        guard_type& guard;
        int first;
    };
    struct no_slots {
        explicit no_slots(guard_type& /*owner*/) noexcept {}
    };

    /// The slot number alone where there are no slots, and nothing to unpack.
    view make_view(guard_type& guard) const noexcept {
        if constexpr (has_slots) {
            return static_cast<view>(static_cast<std::uint32_t>(guard.tid()) |
                                     static_cast<std::uint64_t>(held_.first) << 32);
        } else {
            return static_cast<view>(guard.tid());
        }
    }

    [[no_unique_address]] std::conditional_t<has_slots, held_slots, no_slots> held_;
    view view_;
};

/// The reader of the block a view was lent from, in `domain`:
/// smr::reader_of(domain_, slots) where the traversal runs.
template <class Domain, class View>
requires requires(Domain& domain, View slots) { lent_reader(domain, slots); }
auto reader_of(Domain& domain, View slots) noexcept { return lent_reader(domain, slots); }

/// The context of the operation a view was lent in, for the domain's calls
/// (retire, read_phase_end, ...) of a function the traversal runs in:
/// smr::context_of(slots).
template <class View>
requires requires(View slots) { lent_context(slots); }
auto context_of(View slots) noexcept { return lent_context(slots); }

/// Lends N adjacent protect slots of `guard`'s thread to a traversal:
///
///     smr::op_guard guard(domain_, self);
///     const auto slots = smr::lend_slots<3>(guard);   // prev, curr, next
///     const auto reader = slots.reader(domain_);
///     node* curr = reader.protect(reader.slot(0), head_.next);
///
/// The guard must be made from the caller's context (it keeps the mask of
/// free slots). More slots than are free stop the program with one line,
/// in every build.
template <std::size_t N, class Domain>
slot_block<Domain, N> lend_slots(op_guard<Domain>& guard) noexcept {
    static_assert(
        !Domain::traits.uses_signals || std::is_trivially_destructible_v<slot_block<Domain, N>>,
        "a read phase left by siglongjmp runs no destructor");
    return slot_block<Domain, N>(guard);
}

}  // namespace smr

/// Whether the NBR checkpoint saves the signal mask. Not in a normal build:
/// the NBR handler is installed with SA_NODEFER, so leaving it by siglongjmp
/// leaves no signal blocked and there is no mask to restore -- saving one
/// would cost a sigprocmask system call per read phase (reclaim/nbr.hpp).
/// Under ThreadSanitizer, yes: TSan runs a deferred handler with every signal
/// blocked and unblocks them when the handler returns, which a handler that
/// leaves by siglongjmp never does; without the saved mask the neutralized
/// thread kept every signal blocked, never took the next broadcast's, and
/// the broadcaster waited for its acknowledgement forever.
#define SMR_READ_PHASE_SAVEMASK SMR_TSAN

namespace smr::detail {
/// The slot number of the thread a read phase belongs to, from the context
/// its operation was lent (or the thread's own).
template <class Domain>
int read_phase_slot(const context<Domain>& self) noexcept {
    return self.tid();
}
template <class Ref>
requires requires(Ref self) { lent_tid(self); }
constexpr int read_phase_slot(Ref self) noexcept { return lent_tid(self); }
}  // namespace smr::detail

/// The NBR restart point of a read phase; see the comment at the top of this
/// file. `self` is the operation's lent context. `domain` and `self` are
/// evaluated more than once.
#define SMR_READ_PHASE_BEGIN(domain, self)                                                       \
    do {                                                                                         \
        if constexpr (std::remove_cvref_t<decltype(domain)>::traits.uses_signals) {              \
            if (sigsetjmp(*(domain).read_phase_checkpoint(::smr::detail::read_phase_slot(self)), \
                          SMR_READ_PHASE_SAVEMASK) != 0) {                                       \
                (domain).on_neutralized(::smr::detail::read_phase_slot(self));                   \
            }                                                                                    \
        }                                                                                        \
        (domain).read_phase_begin(self);                                                         \
    } while (false)
