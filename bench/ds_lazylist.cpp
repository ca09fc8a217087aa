#include "instantiate.hpp"
#include "smr/ds/lazylist.hpp"

namespace smrbench {
namespace {
template <class Domain>
using lazylist_of = smr::ds::lazylist<Domain>;
}

std::vector<combination> lazylist_combinations() {
    return combinations_for<lazylist_of>(list_default_key_range);
}

}  // namespace smrbench
