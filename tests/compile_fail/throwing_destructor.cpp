// Must not compile: the node's destructor may throw, and retire would run it
// in the domain's noexcept free path, on whichever thread frees the node,
// where the exception ends the program.
#include "smr/reclaim/debra.hpp"

struct node final : smr::debra_domain::node_base {
    ~node() noexcept(false) {}
    int value = 0;
};

void misuse(smr::debra_domain& domain, smr::context_ref<smr::debra_domain> self, node* n) {
    domain.retire(self, n);
}
