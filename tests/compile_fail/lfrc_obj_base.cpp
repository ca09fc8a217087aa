// Must not compile: lfrc frees only nodes of its own type-stable pool.
#include "smr/reclaim/lfrc.hpp"
#include "smr/reclaim/obj_base.hpp"

struct object : smr::obj_base<object, smr::lfrc_domain> {};

object* make() { return new object; }
