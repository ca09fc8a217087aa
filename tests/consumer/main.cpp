// A program a library user could write: two sets under two reclaimers,
// updated by more threads than this machine has cores over a few keys, so
// nodes are retired and freed all the time (under AddressSanitizer a node
// freed too early is a heap-use-after-free). Exit status 0 when every set
// validates and the reclaimers really freed, and when the C++26 interfaces
// (hazard pointers, RCU) deleted every version they were given.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "smr/ds/hash_set.hpp"
#include "smr/ds/hm_list.hpp"
#include "smr/hazard_pointer.hpp"
#include "smr/rcu.hpp"
#include "smr/reclaim/all.hpp"
#ifdef SMRLAB_CONSUMER_URCU
#include "smr/reclaim/urcu.hpp"
#endif

namespace {

template <class Domain, template <class...> class Set>
bool exercise(const char* name) {
    smr::domain_config config;
    config.bag_threshold = 64;  // free often: the point of the exercise
    Domain domain(config);
    bool ok = true;
    {
        Set<Domain> set(domain);
        std::vector<std::thread> threads;
        for (int t = 0; t < 6; ++t) {
            threads.emplace_back([&set, &domain, t] {
                auto self = smr::attach(domain);
                std::uint64_t x = 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(t + 1);
                for (int i = 0; i < 20000; ++i) {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    const auto key = static_cast<std::int64_t>(x % 32);
                    if (x & 64) {
                        set.insert(self, key, key);
                    } else {
                        set.erase(self, key);
                    }
                }
            });
        }
        for (auto& thread : threads) thread.join();
        const auto validation = set.validate();
        if (!validation.ok) {
            std::fprintf(stderr, "%s: %s\n", name, validation.error.c_str());
            ok = false;
        }
    }
    if (domain.stats().freed == 0) {
        std::fprintf(stderr, "%s: nothing was freed\n", name);
        ok = false;
    }
    std::printf("%s: %s, %llu nodes freed\n", name, ok ? "ok" : "FAILED",
                static_cast<unsigned long long>(domain.stats().freed));
    return ok;
}

std::atomic<int> versions_deleted{0};

template <template <class, class> class Base>
struct version : Base<version<Base>, std::default_delete<version<Base>>> {
    explicit version(int v) noexcept : value(v) {}
    ~version() { versions_deleted.fetch_add(1); }
    int value;
};

/// Threads replace a version and read it, through hazard pointers and RCU;
/// every retired version must be deleted at the end.
bool facades() {
    using hp_version = version<smr::hazard_pointer_obj_base>;
    using rcu_version = version<smr::rcu_obj_base>;
    std::atomic<hp_version*> hp_current{new hp_version(0)};
    std::atomic<rcu_version*> rcu_current{new rcu_version(0)};
    constexpr int threads = 6;
    constexpr int replacements = 2000;
    std::vector<std::thread> workers;
    std::atomic<int> bad{0};
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&] {
            smr::hazard_pointer h = smr::make_hazard_pointer();
            for (int i = 1; i <= replacements; ++i) {
                hp_current.exchange(new hp_version(i))->retire();
                rcu_current.exchange(new rcu_version(i))->retire();
                if (h.protect(hp_current)->value < 0) bad.fetch_add(1);
                h.reset_protection();
                std::scoped_lock section(smr::rcu_default_domain());
                if (rcu_current.load(std::memory_order_acquire)->value < 0) bad.fetch_add(1);
            }
        });
    }
    for (auto& worker : workers) worker.join();
    smr::hazard_pointer_cleanup();
    smr::rcu_barrier();
    delete hp_current.load();
    delete rcu_current.load();
    const bool ok = bad.load() == 0 && versions_deleted.load() == 2 * (threads * replacements + 1);
    std::printf("hazard_pointer and rcu_domain: %s, %d versions deleted\n", ok ? "ok" : "FAILED",
                versions_deleted.load());
    return ok;
}

}  // namespace

int main() {
    bool ok = exercise<smr::debra_domain, smr::ds::hm_list>("hm_list x debra");
    ok = exercise<smr::hp_domain, smr::ds::hash_set>("hash_set x hp") && ok;
#ifdef SMRLAB_CONSUMER_URCU
    ok = exercise<smr::urcu_memb_domain, smr::ds::hm_list>("hm_list x urcu_memb") && ok;
#endif
    ok = facades() && ok;
    return ok ? 0 : 1;
}
