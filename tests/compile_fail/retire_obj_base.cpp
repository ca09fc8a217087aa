// Must not compile: an smr::obj_base object retired with domain.retire would
// skip the scheme's clock and be freed with a default-made deleter.
#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/obj_base.hpp"

struct object : smr::obj_base<object, smr::debra_domain> {};

void misuse(smr::debra_domain& domain, smr::context_ref<smr::debra_domain> self, object* o) {
    domain.retire(self, o);
}
