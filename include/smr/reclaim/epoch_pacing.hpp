// domain_config::min_epoch_us: the global epoch advances at most once per
// so many microseconds, so that a small machine's epochs last as long as a
// large one's. Safety is unchanged: an epoch ends later, never sooner.
#pragma once

#include <atomic>
#include <cstdint>

#include "smr/core/clock.hpp"
#include "smr/core/compiler.hpp"
#include "smr/core/mutant.hpp"

namespace smr::detail {

class epoch_pacing {
  public:
    explicit epoch_pacing(std::uint32_t min_epoch_us)
        : min_ticks_(min_epoch_us == 0
                         ? 0
                         : static_cast<std::uint64_t>(min_epoch_us * 1e3 / core::ns_per_tick())),
          last_advance_ticks_(min_epoch_us == 0 ? 0 : core::now_ticks()) {}

    /// Whether the global epoch may advance now: always without a minimum,
    /// else once the last advance (or the domain's construction) is that
    /// long ago. An epoch scheme asks before its scan.
    [[gnu::always_inline]] bool due() const noexcept {
        if (min_ticks_ == 0 || SMR_MUTANT("min_epoch_ignored")) [[likely]]
            return true;
        return passed();
    }
    /// The epoch advanced now.
    [[gnu::always_inline]] void advanced() noexcept {
        if (min_ticks_ != 0)
            last_advance_ticks_.store(core::now_ticks(), std::memory_order_relaxed);
    }

  private:
    /// Out of line: inlined, the timestamp read kept ebr's begin_op, which
    /// holds its advance attempt, from being inlined into operations.
    SMR_SLOW_PATH bool passed() const noexcept {
        // relaxed: a rate limit, not a synchronization; the scan and the CAS
        // that follow decide safety as they always do.
        return core::now_ticks() - last_advance_ticks_.load(std::memory_order_relaxed) >=
               min_ticks_;
    }

    /// In ticks (0: no minimum), read at each attempt, and when the epoch
    /// last advanced. Both on one line: the second is written only with a
    /// minimum, once per epoch, which then lasts min_epoch_us at least.
    std::uint64_t min_ticks_;
    std::atomic<std::uint64_t> last_advance_ticks_;
};

}  // namespace smr::detail
