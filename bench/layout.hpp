// `smrbench layout`: where an allocator puts consecutive blocks, measured,
// and what that means for a word-based STM whose ownership records (versioned
// locks) are found by (address >> shift) mod 2^bits (TinySTM; smr::stm).
//
// The allocator/STM study (Section 5) explains its results by two layouts,
// which it draws (Figures 2 and 5) rather than measures:
//   - blocks smaller than a stripe: allocators with exact 16-byte classes
//     place two list nodes in one 32-byte stripe, so a transaction writing
//     one node aborts a transaction reading its neighbour (a false abort),
//     while glibc's 32-byte minimum chunk keeps them apart; and TCMalloc hands
//     two threads adjacent blocks from one central list (Figure 2);
//   - glibc's per-thread arenas are aligned at 64 MB (HEAP_MAX_SIZE on 64-bit
//     Linux), so blocks at the same offset in two threads' arenas map to the
//     same versioned lock, whatever the shift: a false abort between threads
//     that touch different nodes.
//
// layout measures both. Two new threads take turns (A, B, A, B, ...), each
// allocating --blocks blocks and keeping them; then one new thread allocates
// alone. For each it reports the distances between consecutive allocations,
// how many consecutive pairs share a versioned lock at shifts 4, 5 and 6,
// and, for the two threads, the cross-thread collisions: how many of B's
// blocks share a lock with any of A's, beside the count a random placement
// would give. Every block is freed at the end.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>

#include "allocator.hpp"
#include "run_spec.hpp"

namespace smrbench {

/// Runs the measurement (docs/smrbench.md, "layout"). Throws
/// std::runtime_error when malloc returns null, std::system_error when a
/// thread cannot be created.
nlohmann::json measure_layout(const bench_config& config, const allocator_identity& allocator);

void print_layout_human(std::ostream& out, const nlohmann::json& layout);

}  // namespace smrbench
