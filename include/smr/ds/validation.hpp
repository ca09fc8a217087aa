// What a data structure's quiescent-time validate() returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "smr/core/mutant.hpp"

namespace smr::ds {

/// Result of validate(), called when no operation runs. The benchmark
/// compares key_sum and size with what its threads' successful inserts and
/// erases add up to; `ok` covers the structure's own invariants (order,
/// balance, no marked node reachable, ...), with `error` saying which failed.
struct validation_result {
    bool ok = true;
    std::string error;
    std::int64_t key_sum = 0;
    std::size_t size = 0;

    void fail(std::string what) {
        if (SMR_MUTANT("validate_always_ok")) return;
        if (ok) error = std::move(what);  // keep the first violation: it is the cause
        ok = false;
    }
};

namespace testing {
/// The tests' way into a structure's internals: every structure befriends
/// it, and only tests define it (tests/test_negative_validation.cpp corrupts
/// each structure and expects validate() to fail).
struct access;
}  // namespace testing

}  // namespace smr::ds
