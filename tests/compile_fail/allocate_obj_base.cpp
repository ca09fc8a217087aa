// Must not compile: domain.allocate would stamp its own destroy function
// over obj_base's and bypass the deleter.
#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/obj_base.hpp"

struct object : smr::obj_base<object, smr::debra_domain> {};

object* misuse(smr::debra_domain& domain, int tid) { return domain.allocate<object>(tid); }
