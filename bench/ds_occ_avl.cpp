#include "instantiate.hpp"
#include "smr/ds/occ_avl.hpp"

namespace smrbench {
namespace {
template <class Domain>
using occ_avl_of = smr::ds::occ_avl<Domain>;
}

std::vector<combination> occ_avl_combinations() { return combinations_for<occ_avl_of>(); }

}  // namespace smrbench
