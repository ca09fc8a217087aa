// A cheap monotonic clock for timing individual free calls.
//
// Every free is timed (the latency histogram is the Epochs paper's evidence of
// remote batch free), so the clock sits on the hot path. On x86-64 with an
// invariant TSC (constant_tsc + nonstop_tsc, true on every machine made since
// about 2008) rdtsc costs ~20 cycles and needs no system call; elsewhere we
// fall back to steady_clock, which is a vDSO call on Linux.
#pragma once

#include <chrono>
#include <cstdint>
#include <thread>

#include "smr/core/compiler.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define SMR_HAVE_RDTSC 1
#else
#define SMR_HAVE_RDTSC 0
#endif

namespace smr::core {

/// Ticks of the fastest monotonic counter available. Only differences mean
/// anything; convert them with a tick_converter.
inline std::uint64_t now_ticks() noexcept {
#if SMR_HAVE_RDTSC
    return __rdtsc();
#else
    return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

namespace detail {
inline double measure_ns_per_tick() {
#if SMR_HAVE_RDTSC
    // Calibrate once against steady_clock over ~20 ms: enough for 0.1% error.
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    const std::uint64_t c0 = now_ticks();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto t1 = clock::now();
    const std::uint64_t c1 = now_ticks();
    const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
    return c1 > c0 ? ns / static_cast<double>(c1 - c0) : 1.0;
#else
    using period = std::chrono::steady_clock::period;
    return 1e9 * static_cast<double>(period::num) / static_cast<double>(period::den);
#endif
}
}  // namespace detail

/// Nanoseconds per tick, measured on first use (a function-local static, so
/// thread-safe). Call it once before timing starts to keep the 20 ms
/// calibration out of measured intervals.
inline double ns_per_tick() {
    static const double value = detail::measure_ns_per_tick();
    return value;
}

/// Converts tick differences to nanoseconds: nanoseconds per tick as a 32.32
/// fixed-point factor, so a conversion is one 64x64->128 multiply and a shift
/// instead of the dozen instructions of an unsigned-to-double round trip
/// (every free is converted). Exact to 2^-32 ns per tick: under 1 ns of error up to ~4e9
/// ticks, i.e. seconds; no overflow for any 64-bit tick count.
class tick_converter {
  public:
    explicit tick_converter(double ns_per_tick_value) noexcept
        : factor_(static_cast<std::uint64_t>(ns_per_tick_value * 4294967296.0 + 0.5)) {}

    std::uint64_t to_ns(std::uint64_t ticks) const noexcept {
        return static_cast<std::uint64_t>((static_cast<uint128>(ticks) * factor_) >> 32);
    }

  private:
    std::uint64_t factor_;  // ns per tick x 2^32
};

/// Wall-clock nanoseconds on the monotonic clock, for timestamps that must be
/// comparable across threads and with the benchmark's own timing.
inline std::uint64_t now_ns() noexcept {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
}

}  // namespace smr::core
