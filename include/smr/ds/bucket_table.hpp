// What the hash sets share: a fixed-size array of list buckets, each key in
// the one bucket its hash names. hash_set (Michael's lock-free buckets) and
// cr_hash_set (concurrently readable buckets) are this table over their
// bucket type, with a name of their own.
//
// Each operation is its bucket's operation, so the table adds no
// synchronization: it inherits the bucket's linearizability, progress and
// compatibility declarations. The table is never resized (Michael's is not
// either); its size is chosen at construction (ds_options::buckets; smrbench
// --buckets, by default key_range / 2, load factor 1 at the 50/50 steady
// state: Hart et al.'s Figure 16).
//
// Hashing: Fibonacci (multiplicative) hashing, key x 2^64/phi, then Lemire's
// multiply-shift maps the product's high bits to [0, buckets). No division on
// the hot path (a 64-bit div costs more than the rest of the hash), and keys
// with a stride (all multiples of the bucket count, say), which `key mod
// buckets` would pile into one bucket, are spread too. smrbench's keys are
// consecutive integers, which Fibonacci hashing spreads almost evenly: with
// key_range 200000 and 100000 buckets, 84% of the buckets receive exactly 2
// of the range's keys, 8% one, 8% three, 0.1% four. (`key mod buckets` would
// give every bucket exactly 2, but only for such benign key sets.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "smr/core/compiler.hpp"
#include "smr/ds/options.hpp"
#include "smr/ds/validation.hpp"
#include "smr/reclaim/context.hpp"

namespace smr::ds {

/// A set hashed into ds_options::buckets lists of type Bucket (built with
/// packed_sentinels). Bucket must offer insert, erase, contains, validate,
/// for_each_key and hold_first, and be constructible from (domain) or
/// (domain, ds_options).
template <class Bucket>
class bucket_table {
    friend struct smr::ds::testing::access;  // tests corrupt internals

  public:
    using bucket_type = Bucket;
    using domain_type = typename Bucket::domain_type;
    using context_type = typename Bucket::context_type;
    using key_type = typename Bucket::key_type;
    using value_type = typename Bucket::value_type;

    // The bucket's declarations: the table reads and writes only through it.
    static constexpr bool traverses_unlinked_nodes = Bucket::traverses_unlinked_nodes;
    static constexpr bool passes_parents = Bucket::passes_parents;
    static constexpr bool has_read_write_phases = Bucket::has_read_write_phases;
    static constexpr bool read_phases_start_at_root = Bucket::read_phases_start_at_root;
    static constexpr bool counts_links = Bucket::counts_links;
    /// smrbench --buckets applies (ds_options::buckets).
    static constexpr bool has_buckets_option = true;
    static constexpr int protect_slots = Bucket::protect_slots;
    static constexpr key_type min_key = Bucket::min_key;
    static constexpr key_type max_key = Bucket::max_key;
    static constexpr std::size_t node_size = Bucket::node_size;

    /// `domain` must outlive the set. Throws std::invalid_argument when
    /// options.buckets is 0.
    explicit bucket_table(domain_type& domain, ds_options options = {})
        : bucket_count_(checked_bucket_count(options.buckets)),
          buckets_(allocator{}.allocate(bucket_count_)) {
        // A list's constructor only stores and links its sentinels: nothing
        // here throws, so no partly built table needs unwinding.
        for (std::size_t i = 0; i < bucket_count_; ++i) {
            if constexpr (std::is_constructible_v<Bucket, domain_type&, ds_options>) {
                std::construct_at(buckets_ + i, domain, options);
            } else {
                std::construct_at(buckets_ + i, domain);
            }
        }
    }

    bucket_table(const bucket_table&) = delete;
    bucket_table& operator=(const bucket_table&) = delete;

    /// Each bucket frees its nodes. No operation may be running.
    ~bucket_table() {
        for (std::size_t i = bucket_count_; i-- > 0;) std::destroy_at(buckets_ + i);
        allocator{}.deallocate(buckets_, bucket_count_);
    }

    bool insert(smr::context_ref<domain_type> self, key_type key, value_type value) {
        return bucket(key).insert(self, key, value);
    }
    bool erase(smr::context_ref<domain_type> self, key_type key) {
        return bucket(key).erase(self, key);
    }
    bool contains(smr::context_ref<domain_type> self, key_type key) {
        return bucket(key).contains(self, key);
    }

    std::size_t bucket_count() const noexcept { return bucket_count_; }

    /// The bucket `key` belongs to: the high bits of key x 2^64/phi, scaled
    /// to [0, bucket_count) by multiply-shift.
    std::size_t bucket_of(key_type key) const noexcept {
        const std::uint64_t hashed = static_cast<std::uint64_t>(key) * 0x9E3779B97F4A7C15ULL;
        return static_cast<std::size_t>((static_cast<core::uint128>(hashed) * bucket_count_) >> 64);
    }

    /// For a stalled reader (smrbench --stall-hold): holds the first node of
    /// bucket 0 (the bucket's hold_first).
    template <class Wait>
    void hold_first(smr::context_ref<domain_type> self, Wait&& wait) {
        buckets_[0].hold_first(self, std::forward<Wait>(wait));
    }

    /// Quiescent only (no operation on the set runs): how many keys it
    /// holds, counted by a walk of the whole structure, O(n).
    std::size_t size() const { return validate().size; }

    /// Quiescent only. Every bucket's validate() must hold, and every key
    /// must sit in the bucket it hashes to; key sums (wrapping) and sizes add
    /// up over the buckets.
    validation_result validate() const {
        validation_result result;
        std::uint64_t sum = 0;  // wraps, like each bucket's
        for (std::size_t i = 0; i < bucket_count_; ++i) {
            const validation_result v = buckets_[i].validate();
            if (!v.ok) {
                result.fail("bucket " + std::to_string(i) + ": " + v.error);
                continue;
            }
            sum += static_cast<std::uint64_t>(v.key_sum);
            result.size += v.size;
            buckets_[i].for_each_key([&](key_type key) {
                const std::size_t home = bucket_of(key);
                if (home != i) {
                    result.fail("key " + std::to_string(key) + " in bucket " + std::to_string(i) +
                                ", hashes to bucket " + std::to_string(home));
                }
            });
        }
        result.key_sum = static_cast<std::int64_t>(sum);
        return result;
    }

  protected:
    const Bucket& first_bucket() const noexcept { return buckets_[0]; }

  private:
    using allocator = std::allocator<Bucket>;

    static std::size_t checked_bucket_count(std::size_t buckets) {
        if (buckets == 0) throw std::invalid_argument("hash set: buckets must be at least 1");
        return buckets;
    }

    Bucket& bucket(key_type key) noexcept { return buckets_[bucket_of(key)]; }

    const std::size_t bucket_count_;
    Bucket* const buckets_;
};

}  // namespace smr::ds
