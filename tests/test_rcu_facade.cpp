// The C++26 RCU facade (smr/rcu.hpp), checked against P2545's semantics for
// every scheme it accepts: read-side sections nest and are Lockable;
// rcu_synchronize waits for the sections that began before it and for no
// idle thread; a retired object is reclaimed exactly once, never while a
// section that began before its retirement is open; rcu_barrier runs every
// deleter retired before it, also those of live threads that sit idle and of
// threads that exited. Every test runs in a process of its own
// (gtest_discover_tests), so each starts with fresh domains.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <latch>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "facade_objects.hpp"
#include "smr/rcu.hpp"
#include "stress.hpp"

namespace {

using namespace std::chrono_literals;

using smr::test::destroyed;
using smr::test::intact;
using smr::test::made;
using tracked = smr::test::tracked<smr::rcu_obj_base>;

template <class Scheme>
class rcu_facade : public ::testing::Test {
  protected:
    smr::basic_rcu_domain<Scheme>& domain = smr::rcu_default_domain<Scheme>();
};

struct scheme_names {
    template <class Scheme>
    static std::string GetName(int) {
        if constexpr (std::is_same_v<Scheme, smr::rcu_memb>) {
            return std::string(Scheme::name);
        } else {
            return std::string(Scheme::traits.name);
        }
    }
};
using schemes =
    ::testing::Types<smr::rcu_memb, smr::debra_domain, smr::ebr_domain, smr::rcu_epoch_domain>;
TYPED_TEST_SUITE(rcu_facade, schemes, scheme_names);

static_assert(std::is_same_v<smr::rcu_domain, smr::basic_rcu_domain<smr::rcu_memb>>);
static_assert(std::is_same_v<decltype(smr::rcu_default_domain()), smr::rcu_domain&>);

TYPED_TEST(rcu_facade, read_side_sections_are_lockable_and_nest) {
    auto& domain = this->domain;
    {
        std::scoped_lock outer(domain);
        EXPECT_TRUE(domain.try_lock());
        { std::unique_lock inner(domain); }
        domain.unlock();
    }
    // Balanced: a synchronize now does not wait for this thread.
    smr::rcu_synchronize(domain);
}

/// A reader that holds a section open until told, and says when it is in.
struct held_reader {
    template <class Domain>
    explicit held_reader(Domain& domain)
        : thread([this, &domain] {
              std::scoped_lock section(domain);
              inside.count_down();
              while (!release.load()) std::this_thread::sleep_for(1ms);
              released_at_unlock.store(true);
          }) {
        inside.wait();
    }
    ~held_reader() {
        release.store(true);
        thread.join();
    }
    std::latch inside{1};
    std::atomic<bool> release{false};
    std::atomic<bool> released_at_unlock{false};
    std::thread thread;
};

TYPED_TEST(rcu_facade, synchronize_waits_for_a_reader_that_began_before_it) {
    auto& domain = this->domain;
    held_reader reader(domain);
    std::atomic<bool> returned{false};
    std::thread synchronizer([&] {
        smr::rcu_synchronize(domain);
        returned.store(true);
    });
    std::this_thread::sleep_for(100ms);
    EXPECT_FALSE(returned.load());  // the reader is still inside
    reader.release.store(true);
    synchronizer.join();
    EXPECT_TRUE(reader.released_at_unlock.load());
}

TYPED_TEST(rcu_facade, synchronize_and_barrier_do_not_wait_for_idle_threads) {
    auto& domain = this->domain;
    std::latch used(1);
    std::atomic<bool> done{false};
    std::thread idle([&] {
        { std::scoped_lock section(domain); }
        (new tracked(1))->retire(std::default_delete<tracked>(), domain);
        used.count_down();
        while (!done.load()) std::this_thread::sleep_for(1ms);  // registered, idle
    });
    used.wait();
    smr::rcu_synchronize(domain);  // a hang here fails by the test's timeout
    smr::rcu_barrier(domain);
    EXPECT_EQ(destroyed.load(), 1);  // retired by a live, idle thread
    done.store(true);
    idle.join();
}

TYPED_TEST(rcu_facade, a_retired_object_outlives_the_sections_that_began_before) {
    auto& domain = this->domain;
    auto* object = new tracked(5);
    std::atomic<tracked*> shared{object};
    std::atomic<bool> intact_inside{false};
    std::latch inside(1);
    std::atomic<bool> release{false};
    std::thread reader([&] {
        std::scoped_lock section(domain);
        const tracked* seen = shared.load(std::memory_order_acquire);
        inside.count_down();
        while (!release.load()) std::this_thread::sleep_for(1ms);
        intact_inside.store(intact(seen));
    });
    inside.wait();
    shared.store(nullptr);
    object->retire(std::default_delete<tracked>(), domain);
    std::atomic<bool> barrier_returned{false};
    std::thread barrier([&] {
        smr::rcu_barrier(domain);
        barrier_returned.store(true);
    });
    std::this_thread::sleep_for(100ms);
    EXPECT_FALSE(barrier_returned.load());
    EXPECT_EQ(destroyed.load(), 0);
    release.store(true);
    reader.join();
    barrier.join();
    EXPECT_TRUE(intact_inside.load());
    EXPECT_EQ(destroyed.load(), 1);
}

TYPED_TEST(rcu_facade, nested_sections_protect_until_the_outermost_unlock) {
    auto& domain = this->domain;
    auto* object = new tracked(6);
    std::latch inner_done(1);
    std::atomic<bool> release{false};
    std::atomic<bool> intact_after_inner{false};
    std::thread reader([&] {
        std::scoped_lock outer(domain);
        { std::scoped_lock inner(domain); }  // the inner unlock must not end the section
        inner_done.count_down();
        while (!release.load()) std::this_thread::sleep_for(1ms);
        intact_after_inner.store(intact(object));
    });
    inner_done.wait();
    object->retire(std::default_delete<tracked>(), domain);
    std::thread barrier([&] { smr::rcu_barrier(domain); });
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(destroyed.load(), 0);
    release.store(true);
    reader.join();
    barrier.join();
    EXPECT_TRUE(intact_after_inner.load());
    EXPECT_EQ(destroyed.load(), 1);
}

TYPED_TEST(rcu_facade, rcu_retire_takes_any_type_and_deleter) {
    auto& domain = this->domain;
    std::atomic<int> calls{0};
    auto* value = new int(42);
    smr::rcu_retire(
        value,
        [&calls](int* p) noexcept {
            calls.fetch_add(*p == 42 ? 1 : 100);
            delete p;
        },
        domain);
    smr::rcu_retire(new int(1), std::default_delete<int>(), domain);
    smr::rcu_barrier(domain);
    EXPECT_EQ(calls.load(), 1);
}

TYPED_TEST(rcu_facade, a_full_list_is_reclaimed_by_its_thread) {
    auto& domain = this->domain;
    for (int i = 0; i < SMR_RCU_RETIRE_BATCH; ++i)
        (new tracked(1))->retire(std::default_delete<tracked>(), domain);
    EXPECT_EQ(destroyed.load(), SMR_RCU_RETIRE_BATCH);  // no barrier needed
}

TYPED_TEST(rcu_facade, retired_inside_a_section_is_reclaimed_at_its_unlock) {
    auto& domain = this->domain;
    {
        std::scoped_lock section(domain);
        for (int i = 0; i < SMR_RCU_RETIRE_BATCH; ++i)
            (new tracked(1))->retire(std::default_delete<tracked>(), domain);
        EXPECT_EQ(destroyed.load(), 0);  // inside: the thread cannot wait
    }
    EXPECT_EQ(destroyed.load(), SMR_RCU_RETIRE_BATCH);
}

TYPED_TEST(rcu_facade, barrier_runs_what_exited_threads_retired) {
    auto& domain = this->domain;
    std::vector<std::thread> threads;
    for (int t = 0; t < 20; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 10; ++i) {
                std::scoped_lock section(domain);
                (new tracked(1))->retire(std::default_delete<tracked>(), domain);
            }
        });
    }
    for (auto& t : threads) t.join();
    smr::rcu_barrier(domain);
    EXPECT_EQ(destroyed.load(), 200);
}

/// Objects retired and not yet reclaimed.
std::int64_t alive() { return made.load() - destroyed.load(); }

// A thread-per-task program: each task retires a few objects and exits. What
// exited threads retired is reclaimed by later retires, whoever makes them:
// garbage stays below (T + 1) x the batch, T the threads alive at once.
TYPED_TEST(rcu_facade, short_lived_threads_leave_bounded_garbage) {
    auto& domain = this->domain;
    constexpr int tasks = 1000;
    constexpr int per_task = 50;  // 50,000 objects in all, against a batch of 1,024
    std::int64_t most = 0;
    for (int t = 0; t < tasks; ++t) {
        std::thread([&] {
            for (int i = 0; i < per_task; ++i)
                (new tracked(1))->retire(std::default_delete<tracked>(), domain);
        }).join();
        most = std::max(most, alive());
    }
    EXPECT_LE(most, 2 * SMR_RCU_RETIRE_BATCH);
    smr::rcu_barrier(domain);
    EXPECT_EQ(alive(), 0);
}

TYPED_TEST(rcu_facade, short_lived_threads_in_groups_leave_bounded_garbage) {
    auto& domain = this->domain;
    constexpr int group = 4, groups = 250, per_task = 50;
    std::int64_t most = 0;
    for (int g = 0; g < groups; ++g) {
        std::vector<std::thread> tasks;
        for (int t = 0; t < group; ++t) {
            tasks.emplace_back([&] {
                for (int i = 0; i < per_task; ++i) {
                    std::scoped_lock section(domain);  // retired inside: reclaimed at the unlock
                    (new tracked(1))->retire(std::default_delete<tracked>(), domain);
                }
            });
        }
        for (auto& t : tasks) t.join();
        most = std::max(most, alive());
    }
    EXPECT_LE(most, (group + 1) * SMR_RCU_RETIRE_BATCH);
    smr::rcu_barrier(domain);
    EXPECT_EQ(alive(), 0);
}

/// Uses the domain from a thread_local destroyed after the domain's own
/// exit handle (it was made before the thread's first section).
template <class Domain>
struct late_user {
    Domain* domain = nullptr;
    std::atomic<tracked*>* shared = nullptr;
    std::atomic<bool>* intact_inside = nullptr;
    ~late_user() {
        if (domain == nullptr) return;
        {
            std::scoped_lock section(*domain);
            intact_inside->store(intact(shared->load()));
        }
        shared->exchange(nullptr)->retire(std::default_delete<tracked>(), *domain);
        smr::rcu_synchronize(*domain);
    }
};

TYPED_TEST(rcu_facade, a_thread_may_use_the_domain_during_its_exit) {
    auto& domain = this->domain;
    std::atomic<tracked*> shared{new tracked(3)};
    std::atomic<bool> intact_inside{false};
    std::thread([&] {
        thread_local late_user<std::remove_reference_t<decltype(domain)>> late;
        late.domain = &domain;
        late.shared = &shared;
        late.intact_inside = &intact_inside;
        std::scoped_lock section(domain);  // registers after `late` was made
    }).join();
    EXPECT_TRUE(intact_inside.load());
    smr::rcu_barrier(domain);
    EXPECT_EQ(destroyed.load(), 1);  // retired during the exit, reclaimed by the barrier
}

/// Deletes slowly, to hold a barrier inside its deleters.
struct slow_delete {
    static inline std::latch* started = nullptr;
    void operator()(tracked* object) const noexcept {
        started->count_down();
        std::this_thread::sleep_for(100ms);
        delete object;
    }
};

TYPED_TEST(rcu_facade, a_barrier_waits_for_the_deleters_of_an_earlier_barrier) {
    auto& domain = this->domain;
    std::latch started(1);
    slow_delete::started = &started;
    // Two objects retired by a thread that exits: the slow one first.
    std::thread([&] {
        smr::rcu_retire(new tracked(1), std::default_delete<tracked>(), domain);
        smr::rcu_retire(new tracked(2), slow_delete{}, domain);
    }).join();
    std::thread first([&] { smr::rcu_barrier(domain); });
    started.wait();  // the first barrier runs the slow deleter
    smr::rcu_barrier(domain);
    EXPECT_EQ(destroyed.load(), 2);
    first.join();
}

/// A deleter that retires another object (a node that owns a child).
struct parent_delete {
    void operator()(tracked* object) const noexcept {
        smr::rcu_retire(new tracked(object->value + 1), std::default_delete<tracked>(),
                        smr::rcu_default_domain());
        delete object;
    }
};

TEST(rcu_facade_deleters, deleters_that_retire_are_reclaimed_in_later_rounds) {
    auto& domain = smr::rcu_default_domain();
    for (int i = 0; i < 2 * SMR_RCU_RETIRE_BATCH; ++i)
        smr::rcu_retire(new tracked(0), parent_delete{}, domain);
    smr::rcu_barrier(domain);  // the parents; their children were retired meanwhile
    smr::rcu_barrier(domain);  // the children retired by the first barrier's deleters
    EXPECT_EQ(destroyed.load(), 4 * SMR_RCU_RETIRE_BATCH);
}

/// A deleter that starts and joins a thread which uses RCU, while barriers
/// run: nothing the exiting thread needs may be held by a barrier.
struct joining_delete {
    void operator()(tracked* object) const noexcept {
        std::thread([] { std::scoped_lock section(smr::rcu_default_domain()); }).join();
        delete object;
    }
};

TEST(rcu_facade_deleters, a_deleter_may_wait_for_a_thread_that_uses_rcu) {
    auto& domain = smr::rcu_default_domain();
    std::atomic<bool> stop{false};
    std::thread barriers([&] {
        while (!stop.load()) smr::rcu_barrier(domain);
    });
    for (int i = 0; i < 3 * SMR_RCU_RETIRE_BATCH; ++i)
        smr::rcu_retire(new tracked(0), joining_delete{}, domain);
    stop.store(true);
    barriers.join();  // a deadlock here fails by the test's timeout
    smr::rcu_barrier(domain);
    EXPECT_EQ(destroyed.load(), 3 * SMR_RCU_RETIRE_BATCH);
}

struct barrier_delete {
    void operator()(tracked* object) const noexcept {
        smr::rcu_barrier();
        delete object;
    }
};

// In every build: a second retire would link the object to itself, and the
// barrier would walk its list for ever.
TYPED_TEST(rcu_facade, a_second_retire_stops_the_program) {
    auto& domain = this->domain;
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            auto* object = new tracked(1);
            object->retire(std::default_delete<tracked>(), domain);
            object->retire(std::default_delete<tracked>(), domain);
            smr::rcu_barrier(domain);
        },
        "retired twice");
}

/// An object whose deleter keeps it (returns it to a free list) instead of
/// deleting it.
struct kept_object;
struct keep {
    static inline kept_object* kept = nullptr;
    void operator()(kept_object* object) const noexcept { kept = object; }
};
struct kept_object : smr::rcu_obj_base<kept_object, keep> {};

TYPED_TEST(rcu_facade, an_object_kept_by_its_deleter_may_be_retired_again) {
    auto& domain = this->domain;
    auto object = std::make_unique<kept_object>();
    for (int round = 0; round < 3; ++round) {
        keep::kept = nullptr;
        object->retire(keep{}, domain);
        smr::rcu_barrier(domain);
        EXPECT_EQ(keep::kept, object.get());
    }
}

TEST(rcu_facade_death, misuse_that_would_wait_forever_stops_with_a_message) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            std::scoped_lock section(smr::rcu_default_domain());
            smr::rcu_synchronize();
        },
        "rcu_synchronize inside a read-side section");
    EXPECT_DEATH(
        {
            smr::rcu_retire(new tracked(0), barrier_delete{});
            smr::rcu_barrier();
        },
        "rcu_barrier called from a deleter");
}

/// The configuration-map pattern: writers replace entries and retire the old
/// ones, readers read entries inside sections and check them; threads come
/// and go in rounds, and one of them runs barriers meanwhile. At the end
/// every object made has been reclaimed exactly once.
TYPED_TEST(rcu_facade, readers_never_see_a_reclaimed_object) {
    auto& domain = this->domain;
    constexpr int cells = 4;
    const int threads = smr::test::default_stress_threads();
    constexpr int rounds = 4;
    constexpr int ops = 20000;
    std::vector<std::atomic<tracked*>> shared(cells);
    for (auto& cell : shared) cell.store(new tracked(0));
    std::atomic<std::uint64_t> broken{0};

    smr::test::in_rounds(threads, rounds, [&](int t, std::minstd_rand& rng) {
        for (int i = 0; i < ops; ++i) {
            auto& cell = shared[rng() % cells];
            const unsigned dice = rng() % 1000;
            if (dice < 300) {
                tracked* old = cell.exchange(new tracked(rng()));
                old->retire(std::default_delete<tracked>(), domain);
            } else if (dice < 301 && t == 0) {
                smr::rcu_barrier(domain);
            } else if (dice < 303) {
                smr::rcu_synchronize(domain);
            } else {
                std::scoped_lock section(domain);
                const tracked* p = cell.load(std::memory_order_acquire);
                if (dice % 7 == 0) {
                    std::scoped_lock nested(domain);
                    std::this_thread::yield();  // hold it while writers retire
                }
                if (!intact(p)) broken.fetch_add(1);
            }
        }
    });
    EXPECT_EQ(broken.load(), 0u);
    for (auto& cell : shared)
        cell.exchange(nullptr)->retire(std::default_delete<tracked>(), domain);
    smr::rcu_barrier(domain);
    EXPECT_EQ(destroyed.load(), made.load());
}

}  // namespace
