// The random choices of a worker: which operation, which key.
#pragma once

#include <cstdint>

namespace smrbench {

/// xoshiro-style generators are overkill here; splitmix64 passes BigCrush,
/// is one multiply-xorshift chain per number and has no state to warm up.
class splitmix64 {
  public:
    explicit splitmix64(std::uint64_t seed) noexcept : state_(seed) {}
    std::uint64_t next() noexcept {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    /// Uniform in [0, bound) without a division (Lemire's multiply-shift).
    std::uint64_t below(std::uint64_t bound) noexcept {
        return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * bound) >> 64);
    }

  private:
    std::uint64_t state_;
};

/// A distinct, reproducible stream per (seed, trial, thread, phase).
inline std::uint64_t stream_seed(std::uint64_t seed, int trial, int thread, int phase) noexcept {
    splitmix64 mix(seed ^ (static_cast<std::uint64_t>(trial) << 40) ^
                   (static_cast<std::uint64_t>(thread) << 8) ^ static_cast<std::uint64_t>(phase));
    return mix.next();
}

enum class op_kind { insert, erase, contains };

/// Percent thresholds drawn once per operation.
struct op_mix {
    int insert_pct;
    int erase_pct;
    op_kind pick(splitmix64& rng) const noexcept {
        const auto roll = static_cast<int>(rng.below(100));
        if (roll < insert_pct) return op_kind::insert;
        if (roll < insert_pct + erase_pct) return op_kind::erase;
        return op_kind::contains;
    }
};

/// --alternate (TinySTM's integer-set benchmark with -a, the allocator/STM
/// paper's workload): a thread's updates take turns, an insert of a random
/// key, then the erase of the key that insert added, so the set keeps its
/// prefill size plus at most one key per thread. A failed insert (the key
/// was there) leaves the turn to the next insert.
class alternating_updates {
  public:
    /// The operation to run instead of the drawn one (and its key).
    op_kind next(op_kind drawn, std::int64_t& key) const noexcept {
        if (drawn == op_kind::contains) return drawn;
        if (!has_pending_) return op_kind::insert;
        key = pending_;
        return op_kind::erase;
    }
    /// After `kind` ran on `key`; `changed`: it changed the set.
    void done(op_kind kind, std::int64_t key, bool changed) noexcept {
        if (kind == op_kind::insert && changed) {
            pending_ = key;
            has_pending_ = true;
        } else if (kind == op_kind::erase) {
            has_pending_ = false;
        }
    }

  private:
    // The key inserted by this thread and not yet erased, if has_pending_. Not
    // a std::optional: GCC 12 at -O1 (the TSan build) reports its payload
    // "maybe uninitialized" once the worker loop is inlined.
    std::int64_t pending_ = 0;
    bool has_pending_ = false;
};

}  // namespace smrbench
