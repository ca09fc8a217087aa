// Lock-free hash set: a fixed-size array of Harris-Michael lists, the hash
// table of Michael (SPAA 2002, Section 4) that Hart, McKenney, Demke Brown
// and Walpole measure with every reclamation scheme (JPDC 2007, Figure 16:
// load factor 1).
//
// Each key belongs to one bucket, and each bucket is an hm_list
// (hm_list.hpp) holding the keys that hash to it, so every operation is the
// list's operation on one bucket: the hash set adds no synchronization of its
// own and inherits the list's linearizability and lock-freedom. The table is
// never resized (Michael's table is not either); its size is chosen at
// construction (ds_options::buckets; smrbench --buckets, by default
// key_range / 2, load factor 1 at the 50/50 steady state).
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
//
// Reclamation: exactly the list's. A successful insert allocates one node, a
// successful erase (or the traversal that unlinks its node) retires one, by
// the thread whose CAS unlinked it. The compatibility declarations are the
// list's (reservation schemes are safe, NBR needs every read phase to start
// from the bucket's head, which each bucket does under NBR or with
// ds_options::restart_from_head, passed through).
//
// Memory layout: an array of buckets, each a packed hm_list: a reference to
// the domain, its restart flag and two sentinel nodes at their natural
// alignment (96 bytes per bucket with the 16-byte header of the epoch-family
// and leak domains; padded like a lone list's, each would take 384). Nodes
// are hm_list's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "smr/core/compiler.hpp"
#include "smr/ds/hm_list.hpp"
#include "smr/ds/options.hpp"
#include "smr/ds/validation.hpp"

namespace smr::ds {

/// A set of Key (with a Value per key) hashed into ds_options::buckets
/// Harris-Michael lists. Keys must lie in hm_list's [min_key, max_key].
template <class Domain, class Key = std::int64_t, class Value = std::int64_t>
class hash_set {
  public:
    using domain_type = Domain;
    using key_type = Key;
    using value_type = Value;
    using bucket_type = hm_list<Domain, Key, Value, packed_sentinels>;

    static constexpr std::string_view name = "hash_set";
    // The bucket's declarations: the hash set reads and writes only through it.
    static constexpr bool traverses_unlinked_nodes = bucket_type::traverses_unlinked_nodes;
    static constexpr bool has_read_write_phases = bucket_type::has_read_write_phases;
    static constexpr bool read_phases_start_at_root = bucket_type::read_phases_start_at_root;
    /// The buckets' links are counted (reference counting can run it).
    static constexpr bool counts_links = bucket_type::counts_links;
    /// smrbench --restart-from-head applies (passed to every bucket).
    static constexpr bool has_restart_from_head_option = bucket_type::has_restart_from_head_option;
    /// smrbench --buckets applies (ds_options::buckets).
    static constexpr bool has_buckets_option = true;
    static constexpr int protect_slots = bucket_type::protect_slots;
    static constexpr Key min_key = bucket_type::min_key;
    static constexpr Key max_key = bucket_type::max_key;
    static constexpr std::size_t node_size = bucket_type::node_size;

    /// `domain` must outlive the set. Throws std::invalid_argument when
    /// options.buckets is 0.
    explicit hash_set(Domain& domain, ds_options options = {})
        : bucket_count_(checked_bucket_count(options.buckets)),
          buckets_(allocator{}.allocate(bucket_count_)) {
        // hm_list's constructor only stores and links its sentinels: nothing
        // here throws, so no partly built table needs unwinding.
        for (std::size_t i = 0; i < bucket_count_; ++i) {
            std::construct_at(buckets_ + i, domain, options);
        }
    }

    hash_set(const hash_set&) = delete;
    hash_set& operator=(const hash_set&) = delete;

    /// Each bucket frees its nodes. No operation may be running.
    ~hash_set() {
        for (std::size_t i = bucket_count_; i-- > 0;) std::destroy_at(buckets_ + i);
        allocator{}.deallocate(buckets_, bucket_count_);
    }

    bool insert(int tid, Key key, Value value) { return bucket(key).insert(tid, key, value); }
    bool erase(int tid, Key key) { return bucket(key).erase(tid, key); }
    bool contains(int tid, Key key) { return bucket(key).contains(tid, key); }

    std::size_t bucket_count() const noexcept { return bucket_count_; }

    /// The bucket `key` belongs to: the high bits of key x 2^64/phi, scaled
    /// to [0, bucket_count) by multiply-shift.
    std::size_t bucket_of(Key key) const noexcept {
        const std::uint64_t hashed = static_cast<std::uint64_t>(key) * 0x9E3779B97F4A7C15ULL;
        return static_cast<std::size_t>((static_cast<core::uint128>(hashed) * bucket_count_) >> 64);
    }

    /// True when every bucket starts each read phase from its head.
    bool restarts_from_head() const noexcept { return buckets_[0].restarts_from_head(); }

    /// For a stalled reader (smrbench --stall-hold): holds the first node of
    /// bucket 0 (hm_list::hold_first).
    template <class Wait>
    void hold_first(int tid, Wait&& wait) {
        buckets_[0].hold_first(tid, std::forward<Wait>(wait));
    }

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
            buckets_[i].for_each_key([&](Key key) {
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

  private:
    using allocator = std::allocator<bucket_type>;

    static std::size_t checked_bucket_count(std::size_t buckets) {
        if (buckets == 0) throw std::invalid_argument("hash_set: buckets must be at least 1");
        return buckets;
    }

    bucket_type& bucket(Key key) noexcept { return buckets_[bucket_of(key)]; }

    const std::size_t bucket_count_;
    bucket_type* const buckets_;
};

}  // namespace smr::ds
