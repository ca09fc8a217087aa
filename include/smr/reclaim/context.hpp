// A thread's attachment to a domain: smr::context.
//
// A thread attaches once, before its first operation, and gets a context;
// the context detaches when it is destroyed, handing what the thread could
// not free yet to the threads that remain. Operations and guards take the
// context instead of a slot number, so a thread cannot name a slot it does
// not own, and a context cannot outlive its attachment:
//
//     smr::debra_domain domain(smr::domain_config{});
//     smr::ds::ms_queue<smr::debra_domain> queue(domain);
//     auto self = smr::attach(domain);       // in each thread
//     queue.enqueue(self, 1, 10);
//
// The structures move to contexts one at a time; until the last has moved,
// tid() gives the slot number that the others take (the thread_handle
// spelling of the same class stays for them).
#pragma once

#include <cassert>
#include <memory>
#include <utility>

namespace smr {

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
    /// The thread's slot number, for the calls that still take one.
    int tid() const noexcept { return attachment_.get_deleter().tid; }
    bool attached() const noexcept { return attachment_ != nullptr; }

    /// Detaches now (what the destructor does); then nothing.
    void detach() noexcept { attachment_.reset(); }

  private:
    /// The attachment is owned as a unique_ptr owns memory: moved, never
    /// copied, released once (unregister_thread) by whoever holds it last.
    struct detach_slot {
        int tid;
        void operator()(Domain* domain) const noexcept { domain->unregister_thread(tid); }
    };
    std::unique_ptr<Domain, detach_slot> attachment_;
};

/// Attaches the calling thread to `domain`.
template <class Domain>
context<Domain> attach(Domain& domain) {
    return context<Domain>(domain);
}

/// What Structure's operations take for the calling thread while the
/// structures move to contexts: the context where the structure has moved
/// (it names a context_type), else the slot number. For code generic over
/// structures; it goes with the last tid signature.
template <class Structure, class Domain>
decltype(auto) caller_for(context<Domain>& self) noexcept {
    if constexpr (requires { typename Structure::context_type; }) {
        return (self);
    } else {
        return self.tid();
    }
}

/// The name a context had before operations took it: code that passes
/// handle.tid() to a structure. release() is detach().
template <class Domain>
class [[nodiscard]] thread_handle : public context<Domain> {
  public:
    using context<Domain>::context;
    void release() noexcept { this->detach(); }
};
template <class Domain>
thread_handle(Domain&) -> thread_handle<Domain>;

}  // namespace smr
