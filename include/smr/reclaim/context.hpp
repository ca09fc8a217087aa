// A thread's attachment to a domain: smr::context.
//
// A thread attaches once, before its first operation, and gets a context;
// the context detaches when it is destroyed, handing what the thread could
// not free yet to the threads that remain. Operations and guards take the
// context instead of a slot number, so a thread cannot name a slot it does
// not own, and a context cannot outlive its attachment:
//
//     smr::debra_domain domain(smr::domain_config{});
//     smr::ds::lazylist<smr::debra_domain> set(domain);
//     auto self = smr::attach(domain);       // in each thread
//     set.insert(self, 1, 10);
//
// Every structure's operations take it, lent for the call as a context_ref
// (below), and pass it on to the domain's calls (retire, allocate,
// read_phase_end, ...) and to its guard, which passes it to begin_op,
// end_op, protect and reader. No call takes a slot number: tid() is the
// number, for a structure's own per-thread arrays (abtree's SCX records).
#pragma once

#include <cassert>
#include <memory>
#include <type_traits>
#include <utility>

namespace smr {

namespace detail {

/// Where the lent context's type is defined: one per scheme, not per most
/// derived class, so that a class deriving from a scheme (a test's
/// instrumented hp_domain) lends contexts that the scheme's calls, declared
/// in its domain_base, take. A scheme names itself as domain_base's
/// scheme_type; any other domain is its own scheme.
template <class Scheme>
struct lent_context_key {
    /// An enumeration, not a class or a reference, on measurement: GCC
    /// sizes a function that reads a field of a class parameter, or loads
    /// through a reference, a little larger than one that takes an int,
    /// enough to stop inlining dgt_bst's insert into smrbench's loop under
    /// rcu, qsbr_ibr and nebr (callgrind, one thread, dgt_bst 100K keys: +5
    /// to +28 instructions per operation); and through a reference the
    /// caller, whose context's address had escaped into the call, reloaded
    /// the slot number after every call (+2.4 under none, +4.5 under ebr).
    enum class ref : int {};
    /// The slot number a lent context carries. Found by argument-dependent
    /// lookup only (the enumeration's class is this one), which is how
    /// smr::tid_of accepts a lent context and no other enumeration.
    friend constexpr int lent_tid(ref self) noexcept { return static_cast<int>(self); }
};

template <class Domain>
struct scheme_of {
    using type = Domain;
};
template <class Domain>
requires requires { typename Domain::scheme_type; }
struct scheme_of<Domain> {
    using type = typename Domain::scheme_type;
};

}  // namespace detail

/// A thread attached to a domain, from construction until destruction (or
/// detach()). Movable, so it can be returned or stored; not copyable, since
/// a slot has one owner. Used by the thread that made it: a domain's slot
/// holds that thread's reservations.
template <class Domain>
class [[nodiscard]] context {
  public:
    /// Throws std::length_error when the domain already holds
    /// domain_config::max_threads threads.
    explicit context(Domain& domain)
        : attachment_(&domain, detach_slot{domain.register_thread()}) {}

    /// The domain attached to. Only while attached().
    Domain& domain() const noexcept {
        assert(attached() && "smr::context: used after detach() or after a move");
        return *attachment_;
    }
    /// The thread's slot number, for a structure's own per-thread arrays (abtree's SCX
    /// records); no call of the library takes one.
    int tid() const noexcept { return attachment_.get_deleter().tid; }
    bool attached() const noexcept { return attachment_ != nullptr; }

    /// Detaches now (what the destructor does); then nothing.
    void detach() noexcept { attachment_.reset(); }

    /// The context lent to one call (smr::context_ref, below).
    using ref = typename detail::lent_context_key<typename detail::scheme_of<Domain>::type>::ref;
    operator ref() const noexcept { return ref{tid()}; }  // NOLINT: implicit by design
    /// The same, named: for a thread that keeps its lent context in a local
    /// and passes it to many calls while the context lives.
    ref lent() const noexcept { return ref{tid()}; }

  private:
    /// The attachment is owned as a unique_ptr owns memory: moved, never
    /// copied, released once (unregister_thread) by whoever holds it last.
    struct detach_slot {
        int tid;
        void operator()(Domain* domain) const noexcept { domain->unregister_thread(tid); }
    };
    std::unique_ptr<Domain, detach_slot> attachment_;
};

/// A context lent to one call: what a structure's operations take
/// (context<Domain>::ref). The caller passes its context, which converts
/// implicitly, and the operation gets the slot number by value, in a
/// register, as it got a bare `int tid` before contexts; but only a context
/// makes one without a cast, so an operation cannot be handed a slot
/// number by accident. Valid for the call it was made for: an operation
/// must not keep it.
template <class Domain>
using context_ref = typename context<Domain>::ref;

/// The slot number a lent context carries, for the domain's calls that
/// take one. Only a context_ref: any other enumeration is refused.
template <class Ref>
requires requires(Ref self) { lent_tid(self); }
constexpr int tid_of(Ref self) noexcept { return lent_tid(self); }

/// The lent context as a local of the operation that was lent it, made
/// after the operation's argument checks:
///
///     bool insert(smr::context_ref<Domain> caller, Key key, Value value) {
///         detail::check_key(key, min_key, max_key);
///         const auto self = smr::local_copy(caller);
///
/// The same slot number, for an operation that holds an NBR checkpoint:
/// GCC 12 allocates registers worse around sigsetjmp when the value kept
/// across it is the incoming parameter. Callgrind, one thread, nbr, with
/// the copy against without: dgt_bst (100K keys) 710.2 against 724.4
/// instructions per operation (its search loop spilled the parent's
/// version word), lazylist (1K) 1,804.0 against 1,810.3, occ_avl (100K)
/// 1,818.7 against 1,823.0; every other scheme unchanged.
template <class Ref>
requires requires(Ref self) { lent_tid(self); }
constexpr Ref local_copy(Ref caller) noexcept { return Ref{lent_tid(caller)}; }

/// Attaches the calling thread to `domain`.
template <class Domain>
context<Domain> attach(Domain& domain) {
    return context<Domain>(domain);
}

}  // namespace smr
