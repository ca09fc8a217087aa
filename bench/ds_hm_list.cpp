#include "instantiate.hpp"
#include "smr/ds/hm_list.hpp"

namespace smrbench {
namespace {
template <class Domain>
using hm_list_of = smr::ds::hm_list<Domain>;
}

std::vector<combination> hm_list_combinations() {
    return combinations_for<hm_list_of>(list_default_key_range);
}

}  // namespace smrbench
