// Concurrently readable hash set: a fixed-size array of cr_list buckets, each
// with its own writer lock, the "CR" hash table of Hart, McKenney, Demke
// Brown and Walpole (JPDC 2007, Figure 16: load factor 1, compared with the
// lock-free hash_set under the same reclamation scheme). The table, its
// hashing and its validation are bucket_table's (bucket_table.hpp); this file
// chooses the bucket.
//
// Writers to different buckets never meet, so at load factor 1 the writer
// lock is almost never contended: what the comparison with hash_set measures
// is the cost of a lock acquisition and release against a lock-free update's
// CAS and mark checks, on lists of about one element.
//
// Reclamation: exactly the list's (cr_list.hpp). A successful insert
// allocates one node, a successful erase retires one.
//
// Memory layout: an array of buckets, each a packed cr_list: a reference to
// the domain, the 1-byte lock and two sentinel nodes at their natural
// alignment. Nodes are cr_list's.
#pragma once

#include <cstdint>
#include <string_view>

#include "smr/ds/bucket_table.hpp"
#include "smr/ds/cr_list.hpp"

namespace smr::ds {

/// A set of Key (with a Value per key) hashed into ds_options::buckets
/// concurrently readable lists. Keys must lie in cr_list's [min_key, max_key].
template <class Domain, class Key = std::int64_t, class Value = std::int64_t>
class cr_hash_set : public bucket_table<cr_list<Domain, Key, Value, packed_sentinels>> {
    using base = bucket_table<cr_list<Domain, Key, Value, packed_sentinels>>;

  public:
    static constexpr std::string_view name = "cr_hash_set";

    using base::base;
};

}  // namespace smr::ds
