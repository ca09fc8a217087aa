// Objects the domain did not allocate: the user makes them (new, a pool of
// their own, placement into an arena) and a deleter frees them once no
// thread can hold them, as C++26's hazard_pointer_obj_base<T, D> and
// rcu_obj_base<T, D> and folly's hazptr_obj_base do.
//
//     struct config : smr::obj_base<config, smr::debra_domain> { ... };
//     auto* fresh = new config(...);
//     config* old = current.exchange(fresh);
//     old->retire(domain, self);           // delete old, after a grace period
//
// Why a base class and not retire(self, ptr, deleter): retiring must not
// allocate (NBR forbids it in some phases, and the measurements would see
// it), so the deleter has to live in the object, after the header every
// node of the domain starts with; the limbo bag's entry names the function
// that calls it (smr_destroy). Such an object is retired only through
// object->retire(domain, self): it stores the deleter and ticks the scheme's
// clock; domain.retire(self, object) refuses it at compile time.
//
// Nodes made by domain.allocate need none of this: the domain stamps them
// and gives their memory back to its allocator. An obj_base type is never
// made by allocate (a static assertion), whose stamp would bypass the
// deleter.
//
// What differs from allocate's nodes, per scheme:
// - he, ibr and wfe stamp a node's birth era at allocation. An object made
//   by its user has none, so its birth era is 0: a scan keeps it while any
//   reservation is at or before its retire era, as an epoch scheme would.
//   That is safe, but the bound on garbage is an epoch scheme's too: a
//   reader stalled inside an operation keeps every user object retired
//   after its era (nodes from allocate stay bounded as before).
// - rcu, he, ibr and wfe advance their clock every `epoch_freq` x T
//   allocations of a thread (T threads registered); obj_base::retire counts one in place of the
//   allocation the domain did not see, so a program that retires only its own objects still frees
//   them.
// - lfrc cannot take them: its counts live in its type-stable pool, and a
//   header it did not allocate is a pinned sentinel (a static assertion).
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

#include "smr/core/retired_node.hpp"
#include "smr/reclaim/traits.hpp"

namespace smr {

/// Base of an object of type T (T derives from obj_base<T, Domain, D>) that
/// its user allocates and `D` frees: `D{}(static_cast<T*>(this))` by default
/// `delete`. D is stored in the object (an empty D takes no room), is
/// nothrow default-constructible and move-assignable, and must not throw
/// when called: it runs inside the domain's noexcept free path. As with
/// std::unique_ptr, the default deletes a T: an object of a type derived
/// from T needs T's destructor virtual, or a deleter of its own.
template <class T, class Domain, class D = std::default_delete<T>>
class obj_base : public Domain::node_base {
    static_assert(Domain::traits.family != reclaimer_family::reference_count,
                  "lfrc frees only nodes of its own pool: make them with domain.allocate");
    static_assert(std::is_nothrow_default_constructible_v<D> &&
                      std::is_nothrow_move_constructible_v<D> &&
                      std::is_nothrow_move_assignable_v<D>,
                  "the deleter is made, stored and moved out in noexcept code");

  public:
    /// Marks types that allocate must refuse (domain_base::allocate), and
    /// the one static type retire accepts them as.
    static constexpr bool smr_has_own_deleter = true;
    using smr_obj_base = obj_base;

    /// Hands the object to `domain` on the calling thread, whose context
    /// `self` is (inside an operation or outside one, as domain.retire
    /// allows for the scheme):
    /// `deleter` runs on it once no thread can hold it, exactly once, on
    /// whichever thread frees it. The object must be unreachable from shared
    /// memory and retired once.
    void retire(Domain& domain, typename Domain::lent self, D deleter = D()) noexcept {
        static_assert(std::is_nothrow_destructible_v<T>,
                      "a retired object's destructor must not throw: its deleter runs in the "
                      "domain's noexcept free path and would end the program");
        deleter_ = std::move(deleter);
        domain.tick_clock(tid_of(self));
        // As an obj_base: domain.retire refuses the object's own type (above),
        // and core::entry_of finds smr_destroy on this one.
        domain.retire(self, this);
    }

    /// How the domain destroys the object once it is safe (core::entry_of):
    /// moves the deleter out and calls it.
    static core::node_memory smr_destroy(core::retired_node* node) noexcept {
        T* object = static_cast<T*>(static_cast<obj_base*>(node));
        D deleter = std::move(object->obj_base::deleter_);
        deleter(object);
        return {};  // no address: the deleter gave the memory back itself
    }

  protected:
    obj_base() noexcept = default;
    /// A copy is a new object, not retired.
    obj_base(const obj_base&) noexcept : obj_base() {}
    obj_base& operator=(const obj_base&) noexcept { return *this; }
    ~obj_base() = default;

  private:
    [[no_unique_address]] D deleter_{};
};

}  // namespace smr
