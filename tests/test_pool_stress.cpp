// Every structure on a bounded pool small enough to run out, with more
// threads than cores and one reclaimer of each family (where it is safe on
// the structure): the pool's free blocks are poisoned, so a node freed too
// early is still an ASan report although it never goes back to malloc.
//
// With on_empty::fail, operations whose allocation fails give up; the
// structure must free what it had allocated for them (ASan's leak check at
// exit and the pool's counts see a leak) and stay unchanged: validate() and
// the key sums of the successful operations must agree. With on_empty::yield,
// threads wait for memory that only other threads' progress can free, which
// an epoch scheme may never see: a watchdog's stop_waiting() must end every
// wait, and the run must still validate.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <latch>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "ds_variants.hpp"
#include "smr/alloc/pool_resource.hpp"
#include "smr/compatibility.hpp"
#include "smr/ds/abtree.hpp"
#include "smr/ds/cr_list.hpp"
#include "smr/ds/dgt_bst.hpp"
#include "smr/ds/harris_list.hpp"
#include "smr/ds/hm_list.hpp"
#include "smr/ds/lazylist.hpp"
#include "smr/ds/lock_list.hpp"
#include "smr/ds/ms_queue.hpp"
#include "smr/ds/occ_avl.hpp"
#include "stress.hpp"
#include "tested_domains.hpp"

namespace smr::test {
namespace {

using smr::alloc::on_empty;
using smr::alloc::pool_resource;

/// One reclaimer of each family: leak (the pool surely runs out), epoch,
/// reservation, neutralization and the liburcu adapter.
using one_per_family = std::tuple<smr::leak_domain, smr::debra_domain, smr::hp_domain,
                                  smr::nbr_domain, smr::urcu_memb_domain>;

/// Calls pool.stop_waiting() after `after`, unless cancelled first.
class watchdog {
  public:
    watchdog(pool_resource& pool, std::chrono::milliseconds after)
        : thread_([this, &pool, after] {
              std::unique_lock lock(mutex_);
              if (!cv_.wait_for(lock, after, [this] { return done_; })) pool.stop_waiting();
          }) {}
    ~watchdog() {
        {
            std::lock_guard lock(mutex_);
            done_ = true;
        }
        cv_.notify_all();
        thread_.join();
    }

  private:
    std::mutex mutex_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;
};

smr::alloc::pool_options pool_of(std::size_t capacity, on_empty policy) {
    smr::alloc::pool_options options;
    options.capacity = capacity;
    options.when_empty = policy;
    return options;
}

template <class Domain, template <class...> class DS>
void run_on_pool(on_empty policy) {
    pool_resource pool(pool_of(192, policy));
    stress_result r;
    {
        std::optional<watchdog> dog;
        if (policy != on_empty::fail) dog.emplace(pool, std::chrono::milliseconds(300));
        stress_options o;
        o.key_range = 32;
        o.ops_per_thread = 20000;
        o.rounds = 2;
        o.allocation_may_fail = true;
        o.cfg.memory = &pool;
        o.cfg.bag_threshold = 32;
        r = run_stress<Domain, DS>(o);
    }
    const std::string what = std::string(Domain::traits.name) + " on a pool of 192, " +
                             std::string(smr::alloc::to_string(policy));
    EXPECT_TRUE(r.ok()) << what << ": " << r.error;
    EXPECT_GT(r.inserted, 0u) << what;
    const auto stats = pool.stats();
    EXPECT_LE(stats.carved, 192u) << what;
    // abtree may also abandon rebalancing steps: more give-ups than failed operations.
    EXPECT_GE(stats.gave_up, r.failed) << what;
    EXPECT_EQ(stats.in_use, 0u) << what << ": blocks leaked (" << stats.allocations
                                << " allocations, " << stats.deallocations << " frees)";
    if constexpr (Domain::traits.family == reclaimer_family::leak) {
        EXPECT_GT(r.failed, 0u) << what << ": a leaking reclaimer must exhaust the pool";
    }
}

template <template <class...> class DS, class... Domains>
void each_safe_reclaimer(on_empty policy, std::tuple<Domains...>*) {
    (
        [&] {
            if constexpr (smr::check<DS<Domains>, Domains>().safe &&
                          testable_in_this_build<Domains>) {
                run_on_pool<Domains, DS>(policy);
            }
        }(),
        ...);
}

template <template <class...> class DS>
void each_safe_reclaimer(on_empty policy) {
    each_safe_reclaimer<DS>(policy, static_cast<one_per_family*>(nullptr));
}

TEST(pool_stress, lazylist_fails_cleanly) {
    each_safe_reclaimer<smr::ds::lazylist>(on_empty::fail);
}
TEST(pool_stress, dgt_bst_fails_cleanly) { each_safe_reclaimer<smr::ds::dgt_bst>(on_empty::fail); }
TEST(pool_stress, harris_list_fails_cleanly) {
    each_safe_reclaimer<smr::ds::harris_list>(on_empty::fail);
}
TEST(pool_stress, hm_list_fails_cleanly) { each_safe_reclaimer<smr::ds::hm_list>(on_empty::fail); }
TEST(pool_stress, abtree_fails_cleanly) { each_safe_reclaimer<smr::ds::abtree>(on_empty::fail); }
TEST(pool_stress, occ_avl_fails_cleanly) { each_safe_reclaimer<smr::ds::occ_avl>(on_empty::fail); }
TEST(pool_stress, hash_set_fails_cleanly) {
    each_safe_reclaimer<hash_set_4_buckets>(on_empty::fail);
}

TEST(pool_stress, cr_list_fails_cleanly) { each_safe_reclaimer<smr::ds::cr_list>(on_empty::fail); }
TEST(pool_stress, cr_hash_set_fails_cleanly) {
    each_safe_reclaimer<cr_hash_set_4_buckets>(on_empty::fail);
}
// A writer waits for memory holding the writer lock but outside any
// operation, so the other writers wait for the lock without holding up a
// grace period, and the readers' operations end: the epoch schemes recover.
TEST(pool_stress, cr_list_waits_end_when_told) {
    each_safe_reclaimer<smr::ds::cr_list>(on_empty::yield);
}

// The lock-based list frees what it erases at once, so only a pool smaller
// than the key range runs out: an insert that finds no memory gives up
// under the lock, which it must release.
template <class Domain>
void lock_list_on_small_pool() {
    pool_resource pool(pool_of(16, on_empty::fail));
    stress_result r;
    {
        stress_options o;
        o.key_range = 64;
        o.ops_per_thread = 20000;
        o.rounds = 2;
        o.allocation_may_fail = true;
        o.cfg.memory = &pool;
        r = run_stress<Domain, smr::ds::lock_list>(o);
    }
    EXPECT_TRUE(r.ok()) << r.error;
    EXPECT_GT(r.failed, 0u) << "32 keys live on average, 16 blocks";
    EXPECT_EQ(r.stats.freed, r.stats.retired);
    EXPECT_EQ(pool.stats().in_use, 0u);
}

TEST(pool_stress, lock_list_fails_cleanly) {
    lock_list_on_small_pool<smr::leak_domain>();
    lock_list_on_small_pool<smr::debra_domain>();
}

TEST(pool_stress, dgt_bst_waits_end_when_told) {
    each_safe_reclaimer<smr::ds::dgt_bst>(on_empty::yield);
}
TEST(pool_stress, abtree_waits_end_when_told) {
    each_safe_reclaimer<smr::ds::abtree>(on_empty::yield);
}
TEST(pool_stress, hm_list_spins_end_when_told) {
    each_safe_reclaimer<smr::ds::hm_list>(on_empty::spin);
}

// ---- the queue --------------------------------------------------------------

/// Producers and consumers at once on a pool of 64 blocks: every item whose
/// enqueue succeeded is dequeued exactly once (by a thread or by the final
/// drain), and a failed enqueue leaves nothing behind.
template <class Domain>
void queue_on_pool() {
    using queue_type = smr::ds::ms_queue<Domain>;
    pool_resource pool(pool_of(64, on_empty::fail));
    smr::domain_config config;
    config.memory = &pool;
    config.bag_threshold = 16;
    std::uint64_t enqueued = 0, dequeued = 0, failed = 0;
    std::int64_t enqueued_sum = 0, dequeued_sum = 0;
    {
        Domain domain(config);
        queue_type queue(domain);
        const int threads = default_stress_threads();
        std::mutex totals;
        std::latch ready(threads);
        std::vector<std::thread> workers;
        for (int t = 0; t < threads; ++t) {
            workers.emplace_back([&, t] {
                smr::context handle(domain);
                std::uint64_t in = 0, out = 0, lost = 0;
                std::int64_t in_sum = 0, out_sum = 0;
                ready.arrive_and_wait();
                for (std::int64_t i = 0; i < 20000; ++i) {
                    const std::int64_t key = t * 100000 + i;
                    // Enqueue-heavy producers run the pool dry; consumers free it again.
                    if ((i % 3 != 0) == (t % 2 == 0)) {
                        try {
                            queue.enqueue(handle, key, key);
                            ++in;
                            in_sum += key;
                        } catch (const std::bad_alloc&) {
                            ++lost;
                        }
                    } else if (const auto item = queue.dequeue(handle)) {
                        ++out;
                        out_sum += item->key;
                    }
                    domain.quiescent(handle);
                }
                std::lock_guard lock(totals);
                enqueued += in;
                dequeued += out;
                failed += lost;
                enqueued_sum += in_sum;
                dequeued_sum += out_sum;
            });
        }
        for (auto& w : workers) w.join();
        smr::context handle(domain);
        while (const auto item = queue.dequeue(handle)) {
            ++dequeued;
            dequeued_sum += item->key;
        }
        EXPECT_TRUE(queue.validate().ok);
    }
    const std::string what(Domain::traits.name);
    EXPECT_EQ(enqueued, dequeued) << what;
    EXPECT_EQ(enqueued_sum, dequeued_sum) << what;
    EXPECT_GT(enqueued, 0u) << what;
    EXPECT_EQ(pool.stats().gave_up, failed) << what;
    EXPECT_EQ(pool.stats().in_use, 0u) << what << ": blocks leaked";
    if constexpr (Domain::traits.family == reclaimer_family::leak) {
        EXPECT_GT(failed, 0u) << what;
    }
}

TEST(pool_stress, ms_queue_fails_cleanly) {
    std::apply(
        [](auto*... domains) {
            (
                [&]<class Domain>(Domain*) {
                    if constexpr (testable_in_this_build<Domain>) queue_on_pool<Domain>();
                }(domains),
                ...);
        },
        std::tuple<smr::leak_domain*, smr::debra_domain*, smr::hp_domain*, smr::nbr_domain*,
                   smr::urcu_memb_domain*>{});
}

}  // namespace
}  // namespace smr::test
