#include "instantiate.hpp"
#include "smr/ds/stm_list.hpp"

namespace smrbench {
namespace {
template <class Domain>
using stm_list_of = smr::ds::stm_list<Domain>;
}

std::vector<combination> stm_list_combinations() {
    return combinations_for<stm_list_of>(list_default_key_range);
}

}  // namespace smrbench
