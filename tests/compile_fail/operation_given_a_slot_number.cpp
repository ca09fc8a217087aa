// Must not compile: a structure's operations take the caller's context
// (lent as smr::context_ref), not a slot number, so an operation cannot be
// handed a number that no thread attached with, or another thread's
// (reclaim/context.hpp). The caller passes its context: set.insert(self, ...).
#include "smr/ds/lazylist.hpp"
#include "smr/reclaim/debra.hpp"

bool misuse(smr::ds::lazylist<smr::debra_domain>& set, int tid) { return set.insert(tid, 1, 1); }
