#include "instantiate.hpp"
#include "smr/ds/hash_set.hpp"

namespace smrbench {
namespace {
template <class Domain>
using hash_set_of = smr::ds::hash_set<Domain>;
}

std::vector<combination> hash_set_combinations() { return combinations_for<hash_set_of>(); }

}  // namespace smrbench
