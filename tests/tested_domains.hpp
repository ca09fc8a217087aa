// The reclaimers the typed concurrency tests run: smr::measured_domains, less those
// a sanitizer cannot judge in this build.
//
// Under ThreadSanitizer the liburcu adapters (family `external`) are left
// out: liburcu is not instrumented, so TSan cannot see the happens-before its
// grace periods establish between a reader's last access to a node and the
// free after call_rcu, and would report races that are not there. They run
// under AddressSanitizer (where a node freed too early is a use-after-free)
// and in the release build.
#pragma once

#include <tuple>
#include <type_traits>
#include <utility>

#include "smr/reclaim/measured.hpp"

namespace smr::test {

inline constexpr bool thread_sanitizer_build =
#if defined(__SANITIZE_THREAD__)
    true;
#else
    false;
#endif

template <class Domain>
inline constexpr bool testable_in_this_build =
    !(thread_sanitizer_build && Domain::traits.family == reclaimer_family::external);

template <class Tuple>
struct testable_domains_of;
template <class... Domains>
struct testable_domains_of<std::tuple<Domains...>> {
    using type = decltype(std::tuple_cat(
        std::declval<std::conditional_t<testable_in_this_build<Domains>, std::tuple<Domains>,
                                        std::tuple<>>>()...));
};

/// smr::measured_domains minus what this build's sanitizer cannot judge.
using tested_domains = typename testable_domains_of<measured_domains>::type;

}  // namespace smr::test
