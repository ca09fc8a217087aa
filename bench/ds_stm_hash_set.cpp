#include "instantiate.hpp"
#include "smr/ds/stm_hash_set.hpp"

namespace smrbench {
namespace {
template <class Domain>
using stm_hash_set_of = smr::ds::stm_hash_set<Domain>;
}

std::vector<combination> stm_hash_set_combinations() { return combinations_for<stm_hash_set_of>(); }

}  // namespace smrbench
