// What a domain records for a program that attaches a recorder (smrbench's
// --timeline and --garbage-series): instant events on a timeline (epoch
// changes, token passes, signals) and each thread's garbage at the epochs it
// begins. Frees are recorded by the free path (domain_base.hpp). Off by
// default: an event site then costs one well-predicted branch.
#pragma once

#include <cstdint>

#include "smr/core/clock.hpp"
#include "smr/trace/timeline.hpp"

namespace smr::detail {

class recorders {
  public:
    /// Either may be null; both must outlive the domain's threads.
    void attach(trace::timeline* timeline, trace::garbage_series* series) noexcept {
        timeline_ = timeline;
        series_ = series;
    }

    /// An instant event (token pass, signal sent, epoch change, ...).
    [[gnu::always_inline]] void record_event(int tid, trace::event_kind kind,
                                             std::uint64_t value) noexcept {
        if (timeline_ != nullptr) [[unlikely]] {
            timeline_->record_instant(tid, kind, core::now_ticks(), value);
        }
    }

    /// Thread tid begins `epoch` with `garbage()` nodes unreclaimed (called
    /// only while a series is attached: it may read other threads' counters).
    template <class Garbage>
    [[gnu::always_inline]] void epoch_begun(int tid, std::uint64_t epoch, Garbage&& garbage) {
        if (series_ != nullptr) [[unlikely]] {
            series_->record(tid, core::now_ticks(), epoch, garbage());
        }
    }

  private:
    trace::timeline* timeline_ = nullptr;
    trace::garbage_series* series_ = nullptr;
};

}  // namespace smr::detail
