// Must not compile: memory from domain.allocate would go back to the
// domain's allocator, bypassing the object's deleter.
#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/obj_base.hpp"

struct object : smr::obj_base<object, smr::debra_domain> {};

object* misuse(smr::debra_domain& domain, smr::context_ref<smr::debra_domain> self) {
    return domain.allocate<object>(self);
}
