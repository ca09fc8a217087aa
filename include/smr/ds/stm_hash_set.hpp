// Transactional hash set: a fixed table of bucket heads, each the first node
// of an unsorted chain, every operation one transaction of smrlab's
// word-based STM (smr/stm/). It is the hash set of Baldassin, Borin and
// Araujo's allocator study ("On the Impact of Memory Allocators on the
// Performance of Software Transactional Memory", TRANSACT 2014, Section 5.2),
// itself the hash set of TinySTM's integer-set benchmark: 2^17 buckets
// (ds_options::buckets; smrbench --buckets 131072), 16-byte nodes, 4096
// elements.
//
// ---- What it is for -----------------------------------------------------------
//
// With 128K buckets and 4K keys a chain rarely holds more than one node, so a
// transaction touches a bucket head and one or two nodes: short transactions,
// small read and write sets. What is left to conflict is where the nodes
// are: consecutive allocations of two threads 16 bytes apart share a 32-byte
// stripe (the paper's Figure 2, TCMalloc's central cache handing out
// neighbouring blocks), and glibc's 64 MB-aligned per-thread arenas put the
// nodes of different threads on the same versioned lock once the high bits
// are dropped (Section 5.2). Both show up as false aborts (stm_stats).
//
// ---- The algorithm -------------------------------------------------------------
//
// The benchmark's: a key's bucket is Knuth's multiplicative hash of its low
// 32 bits (x 2654435761, modulo 2^32) modulo the table size (TinySTM masks
// with 2^17 - 1, the same for a power of two). insert searches the chain for
// the key and, if absent, pushes a new node at the chain's head (one store,
// to the bucket head); erase unlinks the node from its predecessor or the
// head and frees it with the transaction (the node's words are locked until
// the commit, TinySTM's stm_free); contains searches. Every load is
// transactional, keys included, as there. Chains are unsorted, so a search
// walks the whole chain when the key is absent.
//
// The table of heads is one calloc'ed array of 8-byte words, four to a 32-byte
// stripe: heads of buckets next to each other in the table share a lock.
// Knuth's hash spreads consecutive keys far apart in the table, so that
// rarely matters for the benchmark's uniform keys.
//
// Reclamation, progress and the rules for callers: as stm_list's (the STM's
// pointer blocks; a thread calls flush(self) before its context detaches).
//
// Values: a set of keys; the value argument of insert is not stored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>

#include "smr/ds/key_range.hpp"
#include "smr/ds/options.hpp"
#include "smr/ds/stm_structure.hpp"
#include "smr/ds/validation.hpp"

namespace smr::ds {

/// The transactional hash set as a set of std::int64_t keys in [min_key,
/// max_key] (the same range as the other structures), hashed into
/// ds_options::buckets chains.
template <class Domain>
class stm_hash_set : public detail::stm_structure<Domain> {
    friend struct smr::ds::testing::access;  // tests corrupt internals

    using base = detail::stm_structure<Domain>;
    using node = detail::stm_node;

    /// The link that points at the node found (a bucket head or a node's
    /// next), the node that link is in (null for a bucket head), and the
    /// node found, or null if the key is absent.
    struct found {
        node** link;
        node* owner;
        node* curr;
    };

  public:
    using typename base::context_type;
    using key_type = std::int64_t;

    static constexpr std::string_view name = "stm_hash_set";
    /// smrbench --buckets applies (ds_options::buckets).
    static constexpr bool has_buckets_option = true;
    static constexpr key_type min_key = std::numeric_limits<key_type>::min() + 1;
    static constexpr key_type max_key = std::numeric_limits<key_type>::max() - 1;
    static constexpr std::size_t node_size = sizeof(node);

    /// `domain` must outlive the set. Throws std::invalid_argument when
    /// options.buckets is 0 or an ORT option is out of range, std::bad_alloc
    /// when the table cannot be allocated.
    explicit stm_hash_set(Domain& domain, const ds_options& options = {})
        : base(domain, options),
          bucket_count_(checked_bucket_count(options.buckets)),
          // calloc, as the benchmark: a large zeroed table, usually fresh pages.
          buckets_(static_cast<node**>(std::calloc(bucket_count_, sizeof(node*)))) {
        if (buckets_ == nullptr) throw std::bad_alloc();
    }

    /// Frees every node still linked and the table. No operation may be
    /// running.
    ~stm_hash_set() {
        for (std::size_t i = 0; i != bucket_count_; ++i) {
            for (node* curr = buckets_[i]; curr != nullptr;) {
                node* next = curr->next;
                std::free(curr);
                curr = next;
            }
        }
        std::free(buckets_);
    }

    bool insert(smr::context_ref<Domain> self, key_type key,
                std::int64_t /*value: not stored*/ = 0) {
        detail::check_key(key, min_key, max_key);
        return this->stm_.atomically(self, [&](stm::transaction& tx) {
            node** head = &buckets_[bucket_of(key)];
            node* first = tx.load(head);
            if (find(tx, head, first, key).curr != nullptr) return false;
            tx.store(head, tx.make<node>(key, first), {head, sizeof(node*)});
            return true;
        });
    }

    bool erase(smr::context_ref<Domain> self, key_type key) {
        detail::check_key(key, min_key, max_key);
        return this->stm_.atomically(self, [&](stm::transaction& tx) {
            node** head = &buckets_[bucket_of(key)];
            const found f = find(tx, head, tx.load(head), key);
            if (f.curr == nullptr) return false;
            // The link is a bucket head (one word of the table) or a node's next.
            const stm::transaction::object_extent owner =
                f.link == head ? stm::transaction::object_extent{head, sizeof(node*)}
                               : stm::transaction::object_extent{f.owner, sizeof(node)};
            tx.store(f.link, tx.load(&f.curr->next), owner);
            tx.free(f.curr);
            return true;
        });
    }

    bool contains(smr::context_ref<Domain> self, key_type key) {
        detail::check_key(key, min_key, max_key);
        return this->stm_.atomically(self, [&](stm::transaction& tx) {
            node** head = &buckets_[bucket_of(key)];
            return find(tx, head, tx.load(head), key).curr != nullptr;
        });
    }

    std::size_t bucket_count() const noexcept { return bucket_count_; }

    /// The bucket of `key`: Knuth's multiplicative hash of its low 32 bits.
    std::size_t bucket_of(key_type key) const noexcept {
        const std::uint32_t hashed = static_cast<std::uint32_t>(key) * 2654435761u;
        return static_cast<std::size_t>(hashed) % bucket_count_;
    }

    /// Quiescent only (no operation on the set runs): how many keys it
    /// holds, counted by a walk of the whole structure, O(n).
    std::size_t size() const { return validate().size; }

    /// Quiescent only. Checks: every node in the bucket its key hashes to, no
    /// key twice (which also stops a cycle), no versioned lock left held;
    /// sums keys and counts nodes.
    validation_result validate() const {
        validation_result result;
        std::uint64_t sum = 0;  // wraps, as the other structures' sums
        std::unordered_set<key_type> seen;
        for (std::size_t i = 0; i != bucket_count_ && result.ok; ++i) {
            for (const node* curr = buckets_[i]; curr != nullptr; curr = curr->next) {
                if (bucket_of(curr->key) != i) {
                    result.fail("key " + std::to_string(curr->key) + " in bucket " +
                                std::to_string(i) + ", hashes to " +
                                std::to_string(bucket_of(curr->key)));
                    break;
                }
                if (!seen.insert(curr->key).second) {
                    result.fail("key " + std::to_string(curr->key) + " twice (or a cycle)");
                    break;
                }
                sum += static_cast<std::uint64_t>(curr->key);
                ++result.size;
            }
        }
        result.key_sum = static_cast<std::int64_t>(sum);
        this->check_locks_released(result);
        return result;
    }

  private:
    static std::size_t checked_bucket_count(std::size_t buckets) {
        if (buckets == 0) throw std::invalid_argument("stm_hash_set: buckets must be at least 1");
        return buckets;
    }

    /// `key`'s node in the chain that starts at `first` (read from `head`), and
    /// the link to it; curr is null when the key is absent.
    static found find(stm::transaction& tx, node** head, node* first, key_type key) {
        node** link = head;
        node* owner = nullptr;
        for (node* curr = first; curr != nullptr; curr = tx.load(link)) {
            if (tx.load(&curr->key) == key) return {link, owner, curr};
            owner = curr;
            link = &curr->next;
        }
        return {link, owner, nullptr};
    }

    std::size_t bucket_count_;
    node** buckets_;  // bucket_count_ transactional words
};

}  // namespace smr::ds
