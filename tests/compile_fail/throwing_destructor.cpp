// Must not compile: the node's destructor may throw, and retire would run it
// in the domain's noexcept free path, on whichever thread frees the node,
// where the exception ends the program.
#include "smr/reclaim/debra.hpp"

struct node final : smr::debra_domain::node_base {
    ~node() noexcept(false) {}
    int value = 0;
};

void misuse(smr::debra_domain& domain, int tid, node* n) { domain.retire(tid, n); }
