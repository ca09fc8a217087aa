// What the stress tests of every transactional structure check beyond the
// typed suite: under heavy conflict, every operation is still exactly one
// committed transaction, the abort causes add up, and every freed node went
// to the domain in a pointer block.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "smr/stm/stm.hpp"
#include "stm_stats_checks.hpp"
#include "stress.hpp"

namespace smr::test {

/// Four keys and twice as many threads as cores: nearly every update meets
/// another's lock or finds its snapshot overtaken. Aborted attempts are
/// retried, never counted as operations, and the answers add up
/// (run_stress's key sum and size).
template <class Domain, template <class...> class DS>
void conflicts_retry_to_the_right_answer() {
    stress_options o;
    o.key_range = 4;
    o.insert_pct = 40;
    o.erase_pct = 40;
    o.ops_per_thread = 40000;
    o.rounds = 2;
    const stress_result r = run_stress<Domain, DS>(o);
    ASSERT_TRUE(r.ok()) << r.error;
    ASSERT_TRUE(r.stm.has_value());
    EXPECT_EQ(r.stm->commits, r.operations);
    EXPECT_GT(r.stm->aborts, 0u) << "no conflict in " << r.operations << " operations";
    expect_consistent(*r.stm);
    // Every erased node went into a pointer block, every block was retired
    // (flushed at each thread's exit), and at most the last grace period's
    // blocks are still unfreed.
    EXPECT_EQ(r.stats.retired, r.stats.allocated - r.stats.discarded);
    EXPECT_GE(r.stats.retired * smr::stm::stm<Domain>::pointers_per_block, r.erased);
}

}  // namespace smr::test
