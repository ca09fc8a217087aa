// A program a library user could write: two sets under two reclaimers,
// updated by more threads than this machine has cores over a few keys, so
// nodes are retired and freed all the time (under AddressSanitizer a node
// freed too early is a heap-use-after-free). Exit status 0 when every set
// validates and the reclaimers really freed.
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include "smr/ds/hash_set.hpp"
#include "smr/ds/hm_list.hpp"
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
                smr::thread_handle handle(domain);
                std::uint64_t x = 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(t + 1);
                for (int i = 0; i < 20000; ++i) {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    const auto key = static_cast<std::int64_t>(x % 32);
                    if (x & 64) {
                        set.insert(handle.tid(), key, key);
                    } else {
                        set.erase(handle.tid(), key);
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

}  // namespace

int main() {
    bool ok = exercise<smr::debra_domain, smr::ds::hm_list>("hm_list x debra");
    ok = exercise<smr::hp_domain, smr::ds::hash_set>("hash_set x hp") && ok;
#ifdef SMRLAB_CONSUMER_URCU
    ok = exercise<smr::urcu_memb_domain, smr::ds::hm_list>("hm_list x urcu_memb") && ok;
#endif
    return ok ? 0 : 1;
}
