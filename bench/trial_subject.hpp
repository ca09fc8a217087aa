// The typed half of a trial, as the coordinator sees it.
//
// A trial is a domain x structure pair (runner.hpp's pair_trial, compiled in
// each ds_*.cpp for every reclaimer) driven by a coordinator that knows
// neither (trial_coordinator.cpp, compiled once): threads, prefill, go and
// stop, the sampler, recordings, folding the tallies. The coordinator calls
// each member below once per thread or once per trial, never per operation:
// the measured loop runs inside run_worker, so the virtual calls cost it
// nothing.
#pragma once

#include <cstdint>
#include <string>

#include "smr/ds/validation.hpp"
#include "smr/trace/timeline.hpp"
#include "trial.hpp"
#include "trial_control.hpp"

namespace smrbench {

class trial_subject {
  public:
    trial_subject() = default;
    trial_subject(const trial_subject&) = delete;
    trial_subject& operator=(const trial_subject&) = delete;
    virtual ~trial_subject() = default;

    // Thread roles, each run on its own thread; an exception ends the trial.

    /// --prefill-by main, on the coordinator's thread before the workers
    /// start: fills the structure; returns the keys it inserted.
    virtual std::int64_t prefill_from_main(worker_tally& tally) = 0;
    /// A worker: registers, prefills its share, arrives ready, waits for go,
    /// runs the measured operations (until stop, or its --ops), sets
    /// tally.end_ns and counts itself finished.
    virtual void run_worker(int index, worker_tally& tally) = 0;
    /// --stall: a registered thread that arrives ready inside an operation's
    /// read phase and stays there until stop.
    virtual void run_staller() = 0;
    /// --stall-hold: after the prefill, holds the structure's first node
    /// until stop (arriving ready once it holds it).
    virtual void run_holding_staller() = 0;

    // The coordinator's own calls.

    /// While every worker waits for go: attaches the recorders (either may be
    /// null) and snapshots what the measured interval is reported against.
    virtual void begin_measuring(smr::trace::timeline* timeline,
                                 smr::trace::garbage_series* series) = 0;
    /// Unreclaimed nodes now; from the sampler's thread too.
    virtual std::uint64_t sample_garbage() = 0;
    /// After every thread has joined: the structure's own check.
    virtual smr::ds::validation_result validate() = 0;
    /// After every thread has joined: why the reclaimer's end state is wrong
    /// (a reference count leaked), or empty.
    virtual std::string end_state_error() = 0;
    /// After every thread has joined: the reclaimer's statistics and the
    /// STM's counts in the measured interval.
    virtual void report(trial_result& result, std::uint64_t garbage_at_stop) = 0;
};

}  // namespace smrbench
