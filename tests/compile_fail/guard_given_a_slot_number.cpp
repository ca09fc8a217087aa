// Must not compile: a guard is made from the thread's context, which owns
// its slot, never from a slot number, which any code could make up
// (reclaim/guards.hpp).
#include "smr/reclaim/hp.hpp"

void misuse(smr::hp_domain& domain, int tid) { smr::op_guard guard(domain, tid); }
