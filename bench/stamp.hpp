// `smrbench stamp`: a STAMP application on smrlab's STM (bench/stamp/), as
// the allocator/STM study runs the suite (Baldassin, Borin and Araujo,
// TRANSACT 2014, Section 6): the clients' wall time per trial, the STM's
// commits and aborts by cause, and the application's own verification after
// every trial, whose failure fails the run like a failed validate().
//
// Applications (bench/stamp/apps.hpp): Genome, Intruder, Kmeans,
// Labyrinth, SSCA2, Vacation and Yada, each
// with STAMP's inputs at its simulator size and at "+" and "++".
// The STM defers its frees through debra, as the micro-benchmarks' default.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "allocator.hpp"
#include "run_spec.hpp"
#include "smr/stm/transaction.hpp"

namespace smrbench {

struct stamp_trial {
    int trial = 0;
    double seconds = 0;  ///< the clients' phase
    std::uint64_t tasks = 0;
    smr::stm::stm_stats stm;
    std::uint64_t peak_rss_bytes = 0;
    bool validated = true;
    std::string validation_error;  ///< the application's first failed check

    /// The trial's rate: tasks per second of the clients' phase.
    double tasks_per_s() const noexcept {
        return seconds > 0 ? static_cast<double>(tasks) / seconds : 0.0;
    }
};

/// One trial. Throws what thread creation throws.
stamp_trial run_stamp(const bench_config& config, int trial);

/// The run's JSON (docs/smrbench.md, "stamp").
nlohmann::json stamp_to_json(const bench_config& config, const allocator_identity& allocator,
                             const std::vector<stamp_trial>& trials);

void print_stamp_human(std::ostream& out, const bench_config& config,
                       const allocator_identity& allocator, const std::vector<stamp_trial>& trials);

}  // namespace smrbench
