// Must not compile: a guard made from a slot number keeps no record of which
// protect slots are free, so it cannot hand one to a guarded pointer; the
// guard must be made from the thread's context (reclaim/guards.hpp).
#include <atomic>

#include "smr/reclaim/hp.hpp"

struct node final : smr::hp_domain::node_base {
    int value = 0;
};

int misuse(smr::hp_domain& domain, int tid, std::atomic<node*>& cell) {
    smr::op_guard guard(domain, tid);
    const auto held = guard.protect(cell);
    return held->value;
}
