#include "instantiate.hpp"
#include "smr/ds/lock_list.hpp"

namespace smrbench {
namespace {
template <class Domain>
using lock_list_of = smr::ds::lock_list<Domain>;
}

std::vector<combination> lock_list_combinations() {
    return combinations_for<lock_list_of>(list_default_key_range);
}

}  // namespace smrbench
