// Process memory figures from /proc (Linux).
#pragma once

#include <cstdint>

namespace smrbench {

/// Peak resident set size (VmHWM) in bytes; 0 if unavailable.
std::uint64_t peak_rss_bytes();
/// Current resident set size (VmRSS) in bytes; 0 if unavailable.
std::uint64_t current_rss_bytes();
/// Resets the peak RSS to the current RSS (Linux >= 4.0), so each trial
/// reports its own peak. Returns false if the kernel refused.
bool reset_peak_rss();

}  // namespace smrbench
