// Data structures built with non-default ds_options, as types of their own so
// that typed tests (which take a structure template of one domain argument)
// can run them beside the defaults.
#pragma once

#include <cstddef>
#include <string_view>

#include "smr/ds/cr_hash_set.hpp"
#include "smr/ds/hash_set.hpp"
#include "smr/ds/hm_list.hpp"
#include "smr/ds/options.hpp"
#include "smr/ds/stm_hash_set.hpp"

namespace smr::test {

/// hm_list built with ds_options::restart_from_head (the NBR paper's E4
/// "restarts" variant).
template <class Domain>
class hm_list_restarting : public smr::ds::hm_list<Domain> {
  public:
    static constexpr std::string_view name = "hm_list_restarting";
    explicit hm_list_restarting(Domain& domain)
        : smr::ds::hm_list<Domain>(domain, smr::ds::ds_options{.restart_from_head = true}) {}
};

/// hash_set with a fixed, small bucket count: long buckets, so updates
/// collide inside them and the lists' traversals and unlinks are exercised
/// (the default table would give most test keys a bucket of their own).
template <class Domain, std::size_t Buckets>
class hash_set_with_buckets : public smr::ds::hash_set<Domain> {
  public:
    static constexpr std::string_view name = Buckets == 3   ? "hash_set_3_buckets"
                                             : Buckets == 4 ? "hash_set_4_buckets"
                                                            : "hash_set_n";
    explicit hash_set_with_buckets(Domain& domain)
        : smr::ds::hash_set<Domain>(domain, smr::ds::ds_options{.buckets = Buckets}) {}
};

template <class Domain>
using hash_set_3_buckets = hash_set_with_buckets<Domain, 3>;
template <class Domain>
using hash_set_4_buckets = hash_set_with_buckets<Domain, 4>;

/// cr_hash_set with 4 buckets: long buckets, so writers contend for each
/// bucket's lock and readers meet removals inside a bucket.
template <class Domain>
class cr_hash_set_4_buckets : public smr::ds::cr_hash_set<Domain> {
  public:
    static constexpr std::string_view name = "cr_hash_set_4_buckets";
    explicit cr_hash_set_4_buckets(Domain& domain)
        : smr::ds::cr_hash_set<Domain>(domain, smr::ds::ds_options{.buckets = 4}) {}
};

/// stm_hash_set with a fixed, small bucket count: chains of many nodes, so
/// erases unlink from inside a chain.
template <class Domain, std::size_t Buckets>
class stm_hash_set_with_buckets : public smr::ds::stm_hash_set<Domain> {
  public:
    static constexpr std::string_view name =
        Buckets == 1 ? "stm_hash_set_1_bucket" : "stm_hash_set_4_buckets";
    explicit stm_hash_set_with_buckets(Domain& domain)
        : smr::ds::stm_hash_set<Domain>(domain, smr::ds::ds_options{.buckets = Buckets}) {}
};

template <class Domain>
using stm_hash_set_1_bucket = stm_hash_set_with_buckets<Domain, 1>;
template <class Domain>
using stm_hash_set_4_buckets = stm_hash_set_with_buckets<Domain, 4>;

}  // namespace smr::test
