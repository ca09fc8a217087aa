#include "instantiate.hpp"
#include "smr/ds/abtree.hpp"

namespace smrbench {
namespace {
template <class Domain>
using abtree_of = smr::ds::abtree<Domain>;
}

std::vector<combination> abtree_combinations() { return combinations_for<abtree_of>(); }

}  // namespace smrbench
