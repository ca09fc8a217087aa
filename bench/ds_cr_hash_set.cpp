#include "instantiate.hpp"
#include "smr/ds/cr_hash_set.hpp"

namespace smrbench {
namespace {
template <class Domain>
using cr_hash_set_of = smr::ds::cr_hash_set<Domain>;
}

std::vector<combination> cr_hash_set_combinations() { return combinations_for<cr_hash_set_of>(); }

}  // namespace smrbench
