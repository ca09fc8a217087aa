#include "instantiate.hpp"
#include "smr/ds/stm_rbtree.hpp"

namespace smrbench {
namespace {
template <class Domain>
using stm_rbtree_of = smr::ds::stm_rbtree<Domain>;
}

std::vector<combination> stm_rbtree_combinations() { return combinations_for<stm_rbtree_of>(); }

}  // namespace smrbench
