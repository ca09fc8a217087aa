#include "instantiate.hpp"
#include "smr/ds/cr_list.hpp"

namespace smrbench {
namespace {
template <class Domain>
using cr_list_of = smr::ds::cr_list<Domain>;
}

std::vector<combination> cr_list_combinations() {
    return combinations_for<cr_list_of>(list_default_key_range);
}

}  // namespace smrbench
