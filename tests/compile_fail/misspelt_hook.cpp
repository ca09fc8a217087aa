// Must not compile: a scheme whose on_thread_exit is misspelt would inherit
// domain_base's empty default, and a leaving thread's garbage would never be
// handed over (domain_concepts.hpp: holds_garbage).
#include "smr/core/limbo_bag.hpp"
#include "smr/reclaim/domain_base.hpp"

namespace {

struct bag_local {
    smr::core::limbo_bag retired;
};

class misspelt_domain : public smr::domain_base<misspelt_domain, bag_local> {
  public:
    static constexpr smr::reclaimer_traits traits{
        .name = "misspelt",
        .family = smr::reclaimer_family::epoch,
        .garbage_bounded = false,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = false,
    };

    using domain_base::domain_base;

    void on_end_op(int) noexcept {}
    template <class T>
    void on_retire(int tid, T* node) noexcept {
        count_retired(tid, node);
        local(tid).retired.push_back(node);
    }
    void hand_over_garbage(int tid) noexcept { orphans().give(local(tid).retired, 0); }
    void on_thread_exti(int tid) noexcept { on_end_op(tid); }
};

}  // namespace

int main() { misspelt_domain domain{smr::domain_config{}}; }
