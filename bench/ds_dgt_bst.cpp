#include "instantiate.hpp"
#include "smr/ds/dgt_bst.hpp"

namespace smrbench {
namespace {
template <class Domain>
using dgt_bst_of = smr::ds::dgt_bst<Domain>;
}

std::vector<combination> dgt_bst_combinations() { return combinations_for<dgt_bst_of>(); }

}  // namespace smrbench
