// Must not compile: allocate<T>() value-initializes an aggregate, which zeroes
// the reference count that stray increments on type-stable memory rely on.
#include <array>
#include <atomic>

#include "smr/reclaim/lfrc.hpp"

struct node : smr::lfrc_node_header {
    std::atomic<node*> next;
    static constexpr auto counted_links() noexcept { return std::array{&node::next}; }
};

node* make(smr::lfrc_domain& domain, smr::context_ref<smr::lfrc_domain> self) {
    return domain.allocate<node>(self);
}
