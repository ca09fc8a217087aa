// What every stm_stats reading must satisfy, whatever the run: the causes add up to the aborts,
// and each kind of false abort is a subset of the causes it can come from.
#pragma once

#include <gtest/gtest.h>

#include "smr/stm/transaction.hpp"

namespace smr::test {

inline void expect_consistent(const smr::stm::stm_stats& s) {
    EXPECT_EQ(s.aborts, s.aborts_validation + s.aborts_write_locked + s.aborts_read_locked +
                            s.aborts_explicit);
    EXPECT_EQ(s.false_aborts, s.false_aborts_lock_meet + s.false_aborts_validation);
    EXPECT_LE(s.false_aborts_lock_meet, s.aborts_write_locked + s.aborts_read_locked);
    EXPECT_LE(s.false_aborts_validation, s.aborts_validation);
    EXPECT_LE(s.false_aborts_collision, s.false_aborts);
}

}  // namespace smr::test
