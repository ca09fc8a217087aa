// `smrbench threadtest`: the allocator microbenchmark of Hoard (Berger,
// McKinley, Blumofe and Wilson, "Hoard: A Scalable Memory Allocator for
// Multithreaded Applications", ASPLOS 2000), as the allocator/STM study
// runs it (Section 3, Figure 3): every thread allocates a block and frees it
// at once, so the figure is the cost of one malloc/free pair on a thread's
// fast path, with nothing shared between threads but the allocator itself.
//
// Hoard's original form (--objects N) allocates N blocks per round and then
// frees them, which leaves each thread's cache to refill and drain once per
// round: slower paths (central lists, arena locks) enter the measurement.
//
// Every block is checked, so that a result is never reported for an
// allocator that misbehaved: malloc may not return null; the block is
// aligned for any object of its size (C17 7.22.3: min(max_align_t,
// the largest power of two not above the size)); and a tag written at both
// ends of it is still there when it is freed. With --objects, the N blocks of
// a round are live together, so two that overlap overwrite each other's tag.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "allocator.hpp"
#include "run_spec.hpp"

namespace smrbench {

struct threadtest_trial {
    int trial = 0;
    std::uint64_t pairs = 0;  ///< malloc/free pairs of all threads
    double seconds = 0;       ///< the measured interval
    double pairs_per_s = 0;
    std::uint64_t peak_rss_bytes = 0;
    bool validated = true;
    std::string validation_error;  ///< the first check that failed, in one line
};

/// One trial. Throws std::system_error when a thread cannot be created.
threadtest_trial run_threadtest(const bench_config& config, int trial);

/// The run's JSON (docs/smrbench.md, "threadtest").
nlohmann::json threadtest_to_json(const bench_config& config, const allocator_identity& allocator,
                                  const std::vector<threadtest_trial>& trials);

void print_threadtest_human(std::ostream& out, const bench_config& config,
                            const allocator_identity& allocator,
                            const std::vector<threadtest_trial>& trials);

}  // namespace smrbench
