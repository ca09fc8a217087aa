// What a thread does while it waits for pool memory.
//
// Hart et al. (Section 5, Figures 13 and 14): a thread that finds the pool
// empty waits for another thread's garbage to be reclaimed, and an epoch
// scheme reclaims only when every thread passes a quiescent state. A waiting
// thread must therefore not hold up grace periods itself, and the garbage
// its own limbo bags hold must be freed once it is safe, or every thread can
// end up waiting for memory that sits in the bags of waiting threads. The
// allocating code knows how to make such progress (smr::domain_base runs an
// empty operation); the pool knows when it waits. This interface connects
// the two without the pool knowing about reclaimers: the allocating thread
// installs an observer for the scope of one allocation, and the pool calls it
// before every retry.
#pragma once

namespace smr::alloc {

class wait_observer {
  public:
    /// Called by a waiting allocation before each retry, on the waiting thread.
    virtual void between_retries() noexcept = 0;

  protected:
    ~wait_observer() = default;
};

/// Installs `observer` for the calling thread's allocations for this scope
/// (nested scopes restore the outer observer).
class observe_waits {
  public:
    explicit observe_waits(wait_observer& observer) noexcept : previous_(current()) {
        current() = &observer;
    }
    ~observe_waits() { current() = previous_; }
    observe_waits(const observe_waits&) = delete;
    observe_waits& operator=(const observe_waits&) = delete;

    /// The calling thread's observer, or null.
    static wait_observer*& current() noexcept {
        thread_local wait_observer* observer = nullptr;
        return observer;
    }

  private:
    wait_observer* previous_;
};

}  // namespace smr::alloc
