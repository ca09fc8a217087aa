// Every reclaimer, and the list the benchmark and the tests iterate over.
#pragma once

#include <tuple>

#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/none.hpp"

namespace smr {

/// Every reclaimer domain type, in the order smrbench --list prints them.
/// Adding a reclaimer: include its header above and add it here; smrbench and
/// the stress tests pick it up from this list.
using all_domains = std::tuple<leak_domain, debra_domain>;

}  // namespace smr
