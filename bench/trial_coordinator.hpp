// The untyped half of a trial: threads, prefill, go and stop, the sampler,
// the recordings and the result. Compiled once (trial_coordinator.cpp), for
// every domain x structure pair (trial_subject.hpp).
#pragma once

#include "run_spec.hpp"
#include "smr/alloc/pool_resource.hpp"
#include "trial.hpp"
#include "trial_control.hpp"
#include "trial_subject.hpp"

namespace smrbench {

/// Runs trial `trial_index` of `subject`: starts a thread per worker (and
/// the stalled thread of --stall or --stall-hold), waits for the prefill,
/// measures for --duration or until every worker has run --ops (or all wait
/// for `pool` memory nothing can free), joins, writes the recordings asked
/// for, and returns the result, validated. `control` is the one `subject`
/// was built with; `pool` is the --pool-nodes pool (or reference counting's)
/// or null. Throws what a thread threw.
trial_result coordinate_trial(const bench_config& config, int trial_index, trial_subject& subject,
                              trial_control& control, smr::alloc::pool_resource* pool);

}  // namespace smrbench
