// Must not compile: a scheme that writes retire(int, T*), as schemes did
// before the calls moved to domain_base, hides domain_base's retire(self,
// node), which every structure calls; its hook is on_retire
// (domain_concepts.hpp names the rename before the concept fails).
#include "smr/core/limbo_bag.hpp"
#include "smr/reclaim/domain_base.hpp"

namespace {

struct bag_local {
    smr::core::limbo_bag retired;
};

class old_style_domain : public smr::domain_base<old_style_domain, bag_local> {
  public:
    static constexpr smr::reclaimer_traits traits{
        .name = "old_style",
        .family = smr::reclaimer_family::epoch,
        .garbage_bounded = false,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = false,
    };

    using domain_base::domain_base;

    void on_end_op(int) noexcept {}
    template <class T>
    void retire(int tid, T* node) noexcept {
        count_retired(tid, node);
        local(tid).retired.push_back(node);
    }
    void hand_over_garbage(int tid) noexcept { orphans().give(local(tid).retired, 0); }
    void on_thread_exit(int tid) noexcept { on_end_op(tid); }
};

}  // namespace

int main() { old_style_domain domain{smr::domain_config{}}; }
