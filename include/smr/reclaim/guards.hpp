// RAII guards and the read-phase checkpoint: how data structures call a reclaimer.
//
// Every data-structure operation has this shape (docs/design.md, "Restarts"):
//
//     bool erase(int tid, key_type key) {
//         smr::op_guard guard(domain_, tid);          // begin_op ... end_op
//         for (;;) {                                   // the restart loop
//             SMR_READ_PHASE_BEGIN(domain_, tid);      // NBR checkpoint
//             ... search with domain_.protect(tid, slot, source) ...
//             domain_.read_phase_end(tid, pred, curr); // reserve, enter write phase
//             ... lock, validate; on failure: continue (restart) ...
//             ... unlink; domain_.retire(tid, curr); return true;
//         }
//     }
//
// The checkpoint must be a macro: sigsetjmp has to run in the frame of the
// operation it returns into. Between the checkpoint and read_phase_end the
// operation may be abandoned at any instruction by siglongjmp (NBR), so that
// stretch must not allocate, lock, write shared memory or own anything with a
// destructor, and any local it changes must be re-initialized after the
// checkpoint. For every reclaimer that does not use signals the macro is just
// read_phase_begin(tid), an empty inline function.
#pragma once

#include <cassert>
#include <csetjmp>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "smr/core/check.hpp"
#include "smr/core/compiler.hpp"

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
/// `tid` must be the caller's registered slot: checked in debug builds only,
/// since the guard is on every operation's path (docs/library.md, "Rules").
template <class Domain>
class [[nodiscard]] op_guard {
  public:
    op_guard(Domain& domain, int tid)
        : domain_(domain), tid_(tid), depth_(checked_depth(domain, tid)) {
        if constexpr (!Domain::traits.nests) {
            SMR_CHECK(depth_ == 0,
                      "nested op_guard: this reclaimer protects one operation at a time per "
                      "thread");
        }
        if (depth_++ == 0) domain_.begin_op(tid_);
    }
    ~op_guard() {
        if (--depth_ == 0) domain_.end_op(tid_);
    }
    op_guard(const op_guard&) = delete;
    op_guard& operator=(const op_guard&) = delete;

  private:
    static std::uint32_t& checked_depth(Domain& domain, int tid) noexcept {
        assert(domain.registered(tid) && "op_guard: tid is not a registered thread of the domain");
        return domain.operation_depth(tid);
    }

    Domain& domain_;
    int tid_;
    std::uint32_t& depth_;  // the thread's count of open guards, in its own slot
};

/// A registered thread. Owns one slot of a domain from construction until
/// destruction (or release()); movable, so it can be returned or stored.
template <class Domain>
class [[nodiscard]] thread_handle {
  public:
    explicit thread_handle(Domain& domain) : domain_(&domain), tid_(domain.register_thread()) {}
    ~thread_handle() { release(); }
    thread_handle(thread_handle&& other) noexcept
        : domain_(std::exchange(other.domain_, nullptr)), tid_(other.tid_) {}
    thread_handle& operator=(thread_handle&& other) noexcept {
        if (this != &other) {
            release();
            domain_ = std::exchange(other.domain_, nullptr);
            tid_ = other.tid_;
        }
        return *this;
    }
    thread_handle(const thread_handle&) = delete;
    thread_handle& operator=(const thread_handle&) = delete;

    int tid() const noexcept { return tid_; }

    void release() noexcept {
        if (domain_ != nullptr) std::exchange(domain_, nullptr)->unregister_thread(tid_);
    }

  private:
    Domain* domain_;
    int tid_;
};

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

/// The NBR restart point of a read phase; see the comment at the top of this
/// file. `domain` and `tid` are evaluated more than once.
#define SMR_READ_PHASE_BEGIN(domain, tid)                                                        \
    do {                                                                                         \
        if constexpr (std::remove_cvref_t<decltype(domain)>::traits.uses_signals) {              \
            if (sigsetjmp(*(domain).read_phase_checkpoint(tid), SMR_READ_PHASE_SAVEMASK) != 0) { \
                (domain).on_neutralized(tid);                                                    \
            }                                                                                    \
        }                                                                                        \
        (domain).read_phase_begin(tid);                                                          \
    } while (false)
