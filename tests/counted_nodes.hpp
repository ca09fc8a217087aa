// Nodes that count their own destruction, and the one operation that retires
// them: what the tests of threads that exit and of barrier() count with
// (test_thread_exit, test_barrier). The counter belongs to whoever retired
// the node, so a test can ask "has everything this thread retired been
// freed?" without reading freed memory.
#pragma once

#include <atomic>
#include <cstdint>

#include "smr/reclaim/guards.hpp"

namespace smr::test {

template <class Domain>
struct counted_node final : Domain::node_base {
    std::atomic<std::uint64_t>* freed = nullptr;
    ~counted_node() {
        if (freed != nullptr) freed->fetch_add(1, std::memory_order_relaxed);
    }
};

template <class Domain>
using counted_cell = std::atomic<counted_node<Domain>*>;

/// One operation: replaces the cell's node `times` times and retires the old
/// ones, each counted into `counter` (if any) when it is freed; then a
/// quiescent state (qsbr's end of operation).
template <class Domain>
void replace_counted(Domain& domain, context_ref<Domain> self, counted_cell<Domain>& cell,
                     std::atomic<std::uint64_t>* counter, int times = 1) {
    {
        op_guard op(domain, self);
        SMR_READ_PHASE_BEGIN(domain, self);
        domain.read_phase_end(self);
        for (int i = 0; i < times; ++i) {
            auto* fresh = domain.template allocate<counted_node<Domain>>(self);
            counted_node<Domain>* old = cell.exchange(fresh, std::memory_order_acq_rel);
            old->freed = counter;  // read only by its destructor, after the grace period
            domain.retire(self, old);
        }
    }
    domain.quiescent(self);
}

}  // namespace smr::test
