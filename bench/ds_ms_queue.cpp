#include "instantiate.hpp"
#include "smr/ds/ms_queue.hpp"

namespace smrbench {
namespace {
template <class Domain>
using ms_queue_of = smr::ds::ms_queue<Domain>;
}

std::vector<combination> ms_queue_combinations() { return combinations_for<ms_queue_of>(); }

}  // namespace smrbench
