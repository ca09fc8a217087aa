#include "instantiate.hpp"
#include "smr/ds/harris_list.hpp"

namespace smrbench {
namespace {
template <class Domain>
using harris_list_of = smr::ds::harris_list<Domain>;
}

std::vector<combination> harris_list_combinations() {
    return combinations_for<harris_list_of>(list_default_key_range);
}

}  // namespace smrbench
