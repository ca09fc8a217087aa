// Must not compile: a scheme that claims the reservation family but whose
// on_protect is misspelt would read through domain_base's plain acquire load and
// reserve nothing (domain_concepts.hpp: protects_pointers).
#include "smr/core/limbo_bag.hpp"
#include "smr/reclaim/domain_base.hpp"

namespace {

struct bag_local {
    smr::core::limbo_bag retired;
};

class unprotected_domain : public smr::domain_base<unprotected_domain, bag_local> {
  public:
    static constexpr smr::reclaimer_traits traits{
        .name = "unprotected",
        .family = smr::reclaimer_family::reservation,
        .garbage_bounded = true,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = false,
    };

    using domain_base::domain_base;

    template <class T>
    T* on_protekt(int, int, const std::atomic<T*>& source) noexcept {
        return source.load(std::memory_order_seq_cst);
    }
    void on_end_op(int) noexcept {}
    template <class T>
    void on_retire(int tid, T* node) noexcept {
        count_retired(tid, node);
        local(tid).retired.push_back(node);
    }
    void hand_over_garbage(int tid) noexcept { orphans().give(local(tid).retired, 0); }
    void on_thread_exit(int tid) noexcept { on_end_op(tid); }
};

}  // namespace

int main() { unprotected_domain domain{smr::domain_config{}}; }
