// Every reclaimer smrbench measures and the tests stress: the library's own
// (smr::all_domains) and the liburcu peers (smr::urcu_domains). Including it
// needs liburcu: link smrlab::urcu.
#pragma once

#include <tuple>
#include <utility>

#include "smr/reclaim/all.hpp"
#include "smr/reclaim/urcu.hpp"

namespace smr {

using measured_domains =
    decltype(std::tuple_cat(std::declval<all_domains>(), std::declval<urcu_domains>()));

}  // namespace smr
