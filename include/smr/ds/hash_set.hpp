// Lock-free hash set: a fixed-size array of Harris-Michael lists, the hash
// table of Michael (SPAA 2002, Section 4) that Hart, McKenney, Demke Brown
// and Walpole measure with every reclamation scheme (JPDC 2007, Figure 16:
// load factor 1, "LF"). The table, its hashing and its validation are
// bucket_table's (bucket_table.hpp); this file chooses the bucket.
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

#include <cstdint>
#include <string_view>

#include "smr/ds/bucket_table.hpp"
#include "smr/ds/hm_list.hpp"

namespace smr::ds {

/// A set of Key (with a Value per key) hashed into ds_options::buckets
/// Harris-Michael lists. Keys must lie in hm_list's [min_key, max_key].
template <class Domain, class Key = std::int64_t, class Value = std::int64_t>
class hash_set : public bucket_table<hm_list<Domain, Key, Value, packed_sentinels>> {
    using base = bucket_table<hm_list<Domain, Key, Value, packed_sentinels>>;

  public:
    static constexpr std::string_view name = "hash_set";
    /// smrbench --restart-from-head applies (passed to every bucket).
    static constexpr bool has_restart_from_head_option = true;

    using base::base;

    /// True when every bucket starts each read phase from its head.
    bool restarts_from_head() const noexcept { return this->first_bucket().restarts_from_head(); }
};

}  // namespace smr::ds
