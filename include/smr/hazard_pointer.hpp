// C++26 hazard pointers (P2530, [saferecl.hp]) over smrlab's hp: the shape of
// <hazard_pointer>, usable today with a C++20 compiler and replaceable by the
// standard header once a standard library ships it.
//
//     struct node : smr::hazard_pointer_obj_base<node> { int value; ... };
//     std::atomic<node*> head;
//
//     smr::hazard_pointer h = smr::make_hazard_pointer();
//     node* n = h.protect(head);         // n cannot be freed while h holds it
//     use(n->value);
//     h.reset_protection();              // or let h go out of scope
//
//     node* old = head.exchange(fresh);  // unlinked: no new reader finds it
//     old->retire();                     // delete old once no hazard names it
//
// How it maps onto hp (reclaim/hp.hpp, Michael's hazard pointers). Every
// thread that makes a hazard pointer or retires an object is registered in
// one process-wide hp_domain, implicitly, at its first use, and leaves it when
// it exits. A registered slot of hp holds 8 hazard cells (max_protect_slots);
// a hazard_pointer owns one cell, taken from its thread's free list, so
// making and destroying one costs a few loads and stores and no atomic
// read-modify-write. A thread that holds more than 8 at once takes another
// slot of the domain for the next 8, and keeps it until it exits. Scans read
// every registered slot, so a cell anywhere protects.
//
// Trade-offs, as hp's: protect costs a store, a compiler barrier and a
// re-read per pointer, and each scan one membarrier call (the asymmetric
// fence of core/asymmetric_fence.hpp; where membarrier is unavailable, a
// full fence per protect instead); in return a thread stalled while it holds
// hazard pointers keeps only the objects they name from being freed. A thread frees what it retired
// each time its list reaches R objects, R = max(1024, 2 x the cells of the registered slots):
// garbage stays below R + H per thread, H those cells. What a thread leaves when it exits is
// adopted by the next thread that retires.
//
// Where this differs from P2530's wording:
// - A hazard_pointer belongs to the thread that made it: it is used, moved
//   and destroyed on that thread (its cell comes back to that thread's free
//   list). Destroying it on another thread stops the program with a message.
//   P2530 does not say so; folly's hazptr_holder is also meant per thread.
// - There is a bound: the domain has SMR_HAZARD_POINTER_SLOTS slots (512
//   by default, define it before the first include to change it), so at most
//   8 x 512 = 4096 hazard pointers exist at once, and at most 512 threads
//   use hazard pointers at once. make_hazard_pointer throws
//   std::length_error past it. Each slot in use costs about
//   64 x SMR_HAZARD_POINTER_SLOTS bytes (32 KB by default), most of it the
//   scan's buffer, sized when the slot is taken so that retire never
//   allocates.
// - hazard_pointer_obj_base<T, D>'s deleter D is stored in the object and
//   must be nothrow default-constructible and nothrow move-assignable (it is
//   made and moved in the noexcept retire path); smr::obj_base explains why.
// - retire is noexcept, as P2530 says; a thread that has no slot yet and
//   cannot get one (all SMR_HAZARD_POINTER_SLOTS in use) stops the program
//   with a message there.
// - Thread exit: a hazard_pointer destroyed after its thread's state (a
//   thread_local made before the thread's first hazard pointer) keeps
//   protecting until then, and its slot stays taken until then. After the
//   state is gone, make_hazard_pointer throws std::logic_error, and each
//   retire or hazard_pointer_cleanup takes a slot for the one call (which
//   sizes that slot's scan buffer again: a rare path, not a cheap one).
// - Objects still retired when the program ends are not destroyed (the
//   domain is never destroyed, since threads may retire while static
//   destructors run); hazard_pointer_cleanup() below, which P2530 does not
//   have (folly's hazptr_cleanup does), frees what can be freed now.
#pragma once

#include <atomic>
#include <cassert>
#include <cstddef>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "smr/core/check.hpp"
#include "smr/reclaim/hp.hpp"
#include "smr/reclaim/obj_base.hpp"

#ifndef SMR_HAZARD_POINTER_SLOTS
#define SMR_HAZARD_POINTER_SLOTS 512
#endif

namespace smr {

/// The domain every hazard_pointer and hazard_pointer_obj_base uses, made at
/// first use and never destroyed. Its statistics (garbage(), stats()) are
/// the facade's; call nothing else on it.
inline hp_domain& hazard_pointer_default_domain() {
    static hp_domain* const domain = [] {
        domain_config config;
        config.max_threads = SMR_HAZARD_POINTER_SLOTS;
        return new hp_domain(config);
    }();
    return *domain;
}

namespace detail {

struct hazard_block;
class hazard_thread;

/// One hazard cell of a thread, free or owned by a hazard_pointer.
struct hazard_record {
    hazard_slot cell;
    hazard_record* next_free;
    hazard_block* home;
    hazard_thread* owner;
};

/// One slot of the default domain that a thread took, and its 8 cells.
/// `outstanding` counts the cells hazard_pointers own once the thread has
/// exited (counted at its exit, so making and destroying cost nothing).
struct hazard_block {
    int tid;
    std::size_t outstanding = max_protect_slots;
    hazard_record records[max_protect_slots];

    template <std::size_t... I>
    hazard_block(hp_domain& domain, int t, hazard_thread* thread,
                 std::index_sequence<I...>) noexcept
        : tid(t), records{hazard_record{domain.hazard(t, int{I}), nullptr, this, thread}...} {}
};

/// The calling thread's state, or null before its first use and after it
/// exits; trivially destructible, so it can be read during thread exit.
inline thread_local hazard_thread* this_thread_state = nullptr;
inline thread_local bool this_thread_exited = false;

/// Blocks whose thread exited while hazard_pointers still owned cells of
/// them (thread_locals destroyed after the thread's state): they stay
/// registered, so those hazard pointers keep protecting, until the last is
/// destroyed. Never destroyed itself (threads may exit during static
/// destruction).
struct hazard_graveyard {
    std::mutex mutex;
    std::vector<std::unique_ptr<hazard_block>> blocks;

    static hazard_graveyard& instance() {
        static hazard_graveyard* const graveyard = new hazard_graveyard();
        return *graveyard;
    }

    void keep(std::unique_ptr<hazard_block> block) {
        const std::lock_guard<std::mutex> hold(mutex);
        blocks.push_back(std::move(block));
    }

    /// A hazard_pointer destroyed after its thread's state.
    void release(hazard_record* record) noexcept {
        record->cell.clear();
        hazard_block* const block = record->home;
        if (--block->outstanding != 0) return;
        hazard_pointer_default_domain().unregister_thread(block->tid);
        const std::lock_guard<std::mutex> hold(mutex);
        std::erase_if(blocks, [block](const auto& kept) { return kept.get() == block; });
    }
};

/// A thread's slots in the default domain and its free cells. Made at the
/// thread's first use; at exit its slots are unregistered, which clears
/// their cells and hands what it retired to the domain's orphanage (a slot
/// with cells still owned waits in the graveyard above).
class hazard_thread {
  public:
    hazard_thread() noexcept { this_thread_state = this; }
    ~hazard_thread() {
        for (hazard_record* r = free_; r != nullptr; r = r->next_free) --r->home->outstanding;
        for (auto& owned : blocks_) {
            if (owned->outstanding == 0) {
                hazard_pointer_default_domain().unregister_thread(owned->tid);
            } else {
                try {
                    hazard_graveyard::instance().keep(std::move(owned));
                } catch (...) {  // no memory: the block and its slot leak
                    (void)owned.release();
                }
            }
        }
        this_thread_state = nullptr;
        this_thread_exited = true;
    }
    hazard_thread(const hazard_thread&) = delete;
    hazard_thread& operator=(const hazard_thread&) = delete;

    /// The slot this thread retires through (its first).
    int tid() {
        if (blocks_.empty()) add_block();
        return blocks_.front()->tid;
    }

    hazard_record* acquire() {
        if (free_ == nullptr) add_block();
        return std::exchange(free_, free_->next_free);
    }

    void release(hazard_record* record) noexcept {
        record->cell.clear();
        record->next_free = std::exchange(free_, record);
    }

  private:
    /// Another slot of the domain: 8 more cells (throws std::length_error
    /// when every slot is in use, std::bad_alloc without memory).
    void add_block() {
        hp_domain& domain = hazard_pointer_default_domain();
        blocks_.reserve(blocks_.size() + 1);  // the push below cannot throw
        int tid = -1;
        try {
            tid = domain.register_thread();
        } catch (const std::length_error&) {
            throw std::length_error("make_hazard_pointer: all " +
                                    std::to_string(SMR_HAZARD_POINTER_SLOTS) +
                                    " thread slots of the default domain are in use (each holds " +
                                    std::to_string(max_protect_slots) +
                                    " hazard pointers); define SMR_HAZARD_POINTER_SLOTS larger");
        }
        std::unique_ptr<hazard_block> fresh;
        try {
            fresh = std::make_unique<hazard_block>(domain, tid, this,
                                                   std::make_index_sequence<max_protect_slots>{});
        } catch (...) {
            domain.unregister_thread(tid);
            throw;
        }
        for (auto it = std::rbegin(fresh->records); it != std::rend(fresh->records); ++it) {
            it->next_free = std::exchange(free_, &*it);
        }
        blocks_.push_back(std::move(fresh));
    }

    std::vector<std::unique_ptr<hazard_block>> blocks_;
    hazard_record* free_ = nullptr;
};

/// The calling thread's state, made at its first call.
inline hazard_thread& this_thread_hazards() {
    if (this_thread_exited) [[unlikely]] {
        throw std::logic_error(
            "smr::make_hazard_pointer: called during thread exit, after the thread's "
            "hazard pointers were released");
    }
    thread_local hazard_thread state;
    return state;
}

/// Runs f(domain, self) with a slot of the calling thread, lent as the
/// context the domain's calls take; noexcept callers
/// stop the program if the thread cannot get one. During thread exit, after
/// the thread's state is gone, a slot is taken for the call and given back.
template <class F>
void with_this_thread_slot(F&& f) noexcept {
    hp_domain& domain = hazard_pointer_default_domain();
    try {
        if (this_thread_exited) [[unlikely]] {
            const int tid = domain.register_thread();
            f(domain, hp_domain::lent{tid});
            domain.unregister_thread(tid);  // what f retired goes to the orphanage
            return;
        }
        f(domain, hp_domain::lent{this_thread_hazards().tid()});
    } catch (const std::exception&) {
        core::contract_failed(
            "hazard pointers: this thread has no slot in the default domain and cannot "
            "get one (all SMR_HAZARD_POINTER_SLOTS in use, or no memory)");
    }
}

}  // namespace detail

/// Base of a type whose objects hazard pointers protect (P2530's
/// hazard-protectable types): T derives from hazard_pointer_obj_base<T, D>.
/// The user makes the object; retire() hands it to the default domain, and
/// D{}(object) (by default `delete`) runs once no hazard pointer names it.
template <class T, class D = std::default_delete<T>>
class hazard_pointer_obj_base : public obj_base<T, hp_domain, D> {
  public:
    /// Marks types that hazard_pointer::protect accepts.
    using smr_hazard_protectable = void;

    /// The object must be unreachable from shared memory (no new reader can
    /// find it) and retired once. Any thread may retire it.
    void retire(D deleter = D()) noexcept {
        detail::with_this_thread_slot([&](hp_domain& domain, hp_domain::lent self) {
            obj_base<T, hp_domain, D>::retire(domain, self, std::move(deleter));
        });
    }

  protected:
    hazard_pointer_obj_base() noexcept = default;
    hazard_pointer_obj_base(const hazard_pointer_obj_base&) noexcept = default;
    hazard_pointer_obj_base(hazard_pointer_obj_base&&) noexcept = default;
    hazard_pointer_obj_base& operator=(const hazard_pointer_obj_base&) noexcept = default;
    hazard_pointer_obj_base& operator=(hazard_pointer_obj_base&&) noexcept = default;
    ~hazard_pointer_obj_base() = default;
};

/// A type hazard pointers may protect: derived from hazard_pointer_obj_base,
/// so that the cell names the header its retire list holds.
template <class T>
concept hazard_protectable = requires {
    typename T::smr_hazard_protectable;
}
&&std::is_base_of_v<core::retired_node, T>;

/// One hazard pointer (P2530's hazard_pointer): empty, or owning one cell
/// that protects at most one object at a time. Made by make_hazard_pointer;
/// movable, not copyable; used and destroyed on the thread that made it.
class hazard_pointer {
  public:
    /// Empty: owns no cell.
    hazard_pointer() noexcept = default;
    hazard_pointer(hazard_pointer&& other) noexcept
        : record_(std::exchange(other.record_, nullptr)),
          cell_(other.cell_),
          fences_(other.fences_) {}
    hazard_pointer& operator=(hazard_pointer&& other) noexcept {
        if (this != &other) {
            release();
            record_ = std::exchange(other.record_, nullptr);
            cell_ = other.cell_;
            fences_ = other.fences_;
        }
        return *this;
    }
    hazard_pointer(const hazard_pointer&) = delete;
    hazard_pointer& operator=(const hazard_pointer&) = delete;
    /// Ends the protection and gives the cell back to the thread.
    ~hazard_pointer() { release(); }

    [[nodiscard]] bool empty() const noexcept { return record_ == nullptr; }

    /// Reads `src` until the value read is protected and returns it: the
    /// object it names (if not null) is not freed until this hazard pointer
    /// protects something else, is reset or destroyed. Lock-free: it retries
    /// only when `src` changed. Precondition: not empty.
    template <hazard_protectable T>
    T* protect(const std::atomic<T*>& src) noexcept {
        assert(!empty() && "protect on an empty hazard_pointer");
        return slot().protect(src);
    }

    /// One attempt to protect `ptr`, the value the caller read from `src`:
    /// true if `src` still holds it once the protection is visible (`ptr`
    /// is then protected); otherwise false, `ptr` is the value read now and
    /// nothing is protected. Wait-free. Precondition: not empty.
    template <hazard_protectable T>
    bool try_protect(T*& ptr, const std::atomic<T*>& src) noexcept {
        assert(!empty() && "try_protect on an empty hazard_pointer");
        return slot().try_protect(ptr, src);
    }

    /// Protects `ptr` without reading any source: the caller knows that
    /// *ptr is not retired before this returns (it protects it otherwise,
    /// or owns it). Ends any earlier protection. Precondition: not empty.
    template <hazard_protectable T>
    void reset_protection(const T* ptr) noexcept {
        assert(!empty() && "reset_protection on an empty hazard_pointer");
        if (ptr == nullptr) {
            slot().clear();
        } else {
            slot().announce(ptr);
        }
    }

    /// Ends the protection. Precondition: not empty.
    void reset_protection(std::nullptr_t = nullptr) noexcept {
        assert(!empty() && "reset_protection on an empty hazard_pointer");
        slot().clear();
    }

    /// Exchanges the cells (and so what each protects): hand-over-hand
    /// traversals move protection this way without a window.
    void swap(hazard_pointer& other) noexcept {
        // Both fence as the default domain does: only the cells move.
        std::swap(record_, other.record_);
        std::swap(cell_, other.cell_);
    }

  private:
    friend hazard_pointer make_hazard_pointer();
    explicit hazard_pointer(detail::hazard_record* record) noexcept
        : record_(record), cell_(&record->cell.cell()), fences_(record->cell.fences()) {}

    void release() noexcept {
        if (record_ == nullptr) return;
        detail::hazard_record* const record = std::exchange(record_, nullptr);
        detail::hazard_thread* const me = detail::this_thread_state;
        if (me == nullptr && detail::this_thread_exited) [[unlikely]] {
            // Destroyed during thread exit, after the thread's state.
            detail::hazard_graveyard::instance().release(record);
            return;
        }
        SMR_CHECK(record->owner == me,  // owners are never null
                  "hazard_pointer destroyed on a thread other than the one that made it");
        me->release(record);
    }

    detail::hazard_slot slot() const noexcept { return {*cell_, fences_}; }

    detail::hazard_record* record_ = nullptr;
    /// record_->cell's cell and fences, copied: protect and reset_protection
    /// then load neither through record_ (three of their eleven
    /// instructions; after protect's acquire load the compiler may not reuse
    /// what it loaded before). Two members, not a hazard_slot: GCC kept a
    /// 16-byte member in memory and swapped it with wide copies that the
    /// byte loads after them could not forward from.
    std::atomic<const void*>* cell_ = nullptr;
    core::fence_pair fences_{fence_mode::symmetric};
};

/// A hazard pointer that owns a cell and protects nothing yet. Throws
/// std::length_error when the default domain has no slot left
/// (SMR_HAZARD_POINTER_SLOTS), std::bad_alloc without memory.
[[nodiscard]] inline hazard_pointer make_hazard_pointer() {
    return hazard_pointer(detail::this_thread_hazards().acquire());
}

inline void swap(hazard_pointer& a, hazard_pointer& b) noexcept { a.swap(b); }

/// Not in P2530 (folly's hazptr_cleanup): frees now every object that the
/// calling thread retired, or that exited threads left, and that no hazard
/// pointer protects. Objects retired by other running threads stay on their
/// lists, freed by those threads' own scans (at most R each, see the top of
/// this file) or adopted once they exit.
inline void hazard_pointer_cleanup() noexcept {
    detail::with_this_thread_slot(
        [](hp_domain& domain, hp_domain::lent self) { domain.flush_step(tid_of(self)); });
}

}  // namespace smr
