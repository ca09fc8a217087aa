// Must not compile: the node type is not final, so a Node* might point into
// a larger object that domain.allocate made, and retire, which destroys the
// node as the type it is given (no destroy word in an epoch domain's node),
// would run the wrong destructor and free the wrong size.
#include "smr/reclaim/debra.hpp"

struct node : smr::debra_domain::node_base {
    int value = 0;
};

void misuse(smr::debra_domain& domain, smr::context_ref<smr::debra_domain> self, node* n) {
    domain.retire(self, n);
}
