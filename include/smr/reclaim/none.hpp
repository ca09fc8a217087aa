// none: never free while running (the "leaky" baseline of every paper).
#pragma once

#include "smr/core/limbo_bag.hpp"
#include "smr/reclaim/domain_base.hpp"
#include "smr/reclaim/traits.hpp"

namespace smr {

namespace detail {
struct leak_local {
    core::limbo_bag retired;
    void drain_into(core::limbo_bag& out) noexcept { out.splice_back(retired); }
};
}  // namespace detail

/// Retired nodes are kept until the domain is destroyed (so a test run under
/// LeakSanitizer stays clean), never freed while threads run: the baseline
/// that the Epochs paper shows is *not* an upper bound on throughput.
///
/// Progress: every hook is wait-free. Memory: unbounded, by design.
class leak_domain : public domain_base<leak_domain, detail::leak_local> {
  public:
    static constexpr reclaimer_traits traits{
        .name = "none",
        .family = reclaimer_family::leak,
        .garbage_bounded = false,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = false,
    };

    using domain_base::domain_base;

    template <class T>
    void on_retire(int tid, T* node) noexcept {
        count_retired(tid, node);
        local(tid).retired.push_back(node);
    }
};

}  // namespace smr
