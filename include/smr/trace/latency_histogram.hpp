// Log-linear latency histogram in nanoseconds.
//
// Buckets: values below 16 ns are exact; above, each power of two is split
// into 8 linear sub-buckets, so any reported percentile is within 12.5% of the
// true value. 8 x 40 octaves covers up to ~18 minutes. Recording is a
// bit_width, two shifts and an increment: cheap enough to run on every free.
// Single writer (the owning thread); merge() after the writers are done.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

#include "smr/core/mutant.hpp"

namespace smr::trace {

class latency_histogram {
  public:
    static constexpr unsigned sub_bucket_bits = 3;
    static constexpr unsigned sub_buckets = 1u << sub_bucket_bits;
    static constexpr unsigned exact_limit = 2 * sub_buckets;  // values below are exact
    static constexpr unsigned octaves = 40;
    static constexpr unsigned bucket_count = exact_limit + octaves * sub_buckets;

    /// Inlined into the free loops (as a call it cost a third more).
    [[gnu::always_inline]] void record(std::uint64_t ns) noexcept {
        ++counts_[bucket_of(ns)];
        sum_ns_ += ns;
        max_ns_ = std::max(max_ns_, ns);
    }

    void merge(const latency_histogram& other) noexcept {
        for (unsigned i = 0; i < bucket_count; ++i) counts_[i] += other.counts_[i];
        sum_ns_ += other.sum_ns_;
        max_ns_ = std::max(max_ns_, other.max_ns_);
    }

    void reset() noexcept { *this = latency_histogram{}; }

    /// Samples recorded (summed over the buckets: record() stays one
    /// increment shorter, and counting is for reports).
    std::uint64_t count() const noexcept {
        std::uint64_t n = 0;
        for (std::uint64_t c : counts_) n += c;
        return n;
    }
    /// Samples in bucket i (< bucket_count): the whole distribution, for reports.
    std::uint64_t samples_in(unsigned i) const noexcept { return counts_[i]; }
    std::uint64_t sum_ns() const noexcept { return sum_ns_; }
    std::uint64_t max_ns() const noexcept { return max_ns_; }

    /// The smallest recorded-bucket upper bound at or below which a fraction q
    /// (0..1) of the samples lie; exact maximum for q == 1; 0 when empty.
    std::uint64_t percentile(double q) const noexcept {
        const std::uint64_t samples = count();
        if (samples == 0) return 0;
        if (q >= 1.0) return max_ns_;
        const auto rank = static_cast<std::uint64_t>(q * static_cast<double>(samples - 1)) + 1;
        std::uint64_t seen = 0;
        for (unsigned i = 0; i < bucket_count; ++i) {
            seen += counts_[i];
            if (seen >= rank) {
                if (SMR_MUTANT("histogram_percentile_one_bucket_low") && i > 0) --i;
                return std::min(bucket_upper_bound(i), max_ns_);
            }
        }
        return max_ns_;
    }

    /// Branch-free: with s = max(bit_width(ns), 4) - 4, the shift that keeps
    /// the top four bits, ns >> s lies in [8, 16) (or is ns itself, below 16)
    /// and 8s + (ns >> s) enumerates the buckets in order: exact below 16,
    /// then 8 per octave. A handful of instructions on every free.
    static unsigned bucket_of(std::uint64_t ns) noexcept {
        const unsigned shift = static_cast<unsigned>(std::bit_width(ns | 8u)) - 4;
        const auto bucket = static_cast<unsigned>((shift << sub_bucket_bits) + (ns >> shift));
        return std::min(bucket, bucket_count - 1);
    }

    /// Largest value that lands in bucket i.
    static std::uint64_t bucket_upper_bound(unsigned i) noexcept {
        if (i < exact_limit) return i;
        const unsigned octave = (i - exact_limit) / sub_buckets;
        const unsigned sub = (i - exact_limit) % sub_buckets;
        const unsigned exponent = octave + sub_bucket_bits + 1;
        const std::uint64_t width = std::uint64_t{1} << (exponent - sub_bucket_bits);
        return (std::uint64_t{1} << exponent) + (sub + 1) * width - 1;
    }

  private:
    std::array<std::uint64_t, bucket_count> counts_{};
    std::uint64_t sum_ns_ = 0;
    std::uint64_t max_ns_ = 0;
};

}  // namespace smr::trace
