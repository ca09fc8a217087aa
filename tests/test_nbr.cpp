// NBR and NBR+ (reclaim/nbr.hpp): data-structure stress with signals firing
// constantly, neutralization in the read and write phases, NBR+'s watermarks,
// and bounded garbage with a stalled thread.
//
// Under AddressSanitizer a node freed while a neutralized reader or a writer
// can still reach it is a heap-use-after-free. Under ThreadSanitizer the
// domains use the acknowledgement handshake (TSan defers signal handlers);
// siglongjmp out of a handler works there too.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "smr/ds/dgt_bst.hpp"
#include "smr/ds/lazylist.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/reclaim/nbr.hpp"
#include "stress.hpp"

namespace {

using namespace std::chrono_literals;

smr::domain_config small_config(smr::free_mode mode = smr::free_mode::batch) {
    smr::domain_config cfg;
    cfg.max_threads = 32;
    cfg.free.mode = mode;
    cfg.bag_threshold = 128;  // a broadcast every 128 retirements per thread
    return cfg;
}

template <class Domain>
struct test_node final : Domain::node_base {
    static constexpr std::uint64_t alive = 0x5AFE5AFE5AFE5AFEull;
    std::uint64_t canary = alive;
    ~test_node() { canary = 0; }
};

template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!pred()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

// ---- stress: lazylist and dgt_bst x nbr and nbrplus x batch and amortized ------

template <class Domain, template <class...> class DS>
void stress(smr::free_mode mode, std::int64_t key_range) {
    smr::test::stress_options options;
    options.threads = std::max(6, smr::test::default_stress_threads());  // > cores
    options.key_range = key_range;
    options.ops_per_thread = 40'000;
    options.rounds = 3;
    options.cfg = small_config(mode);
    options.cfg.max_threads = static_cast<std::size_t>(options.threads) + 2;
    const auto result = smr::test::run_stress<Domain, DS>(options);
    ASSERT_TRUE(result.ok()) << result.error;
    EXPECT_GT(result.stats.signals, 0u);
    EXPECT_GT(result.stats.freed, 0u);
    EXPECT_EQ(result.stats.freed + result.stats.garbage, result.stats.retired);
    // Bounded: every bag holds at most a threshold plus reserved nodes
    // (amortized free adds the freeable lists, drained by later operations).
    if (mode == smr::free_mode::batch) {
        const std::uint64_t bound =
            static_cast<std::uint64_t>(options.threads) *
            (options.cfg.bag_threshold + 1 + options.threads * Domain::max_reservations);
        EXPECT_LE(result.stats.garbage_peak, bound);
    }
}

#define SMR_NBR_STRESS(domain, structure, mode, range)                                 \
    TEST(nbr_stress, domain##_##structure##_##mode) {                                  \
        stress<smr::domain##_domain, smr::ds::structure>(smr::free_mode::mode, range); \
    }

SMR_NBR_STRESS(nbr, lazylist, batch, 32)
SMR_NBR_STRESS(nbr, lazylist, amortized, 32)
SMR_NBR_STRESS(nbrplus, lazylist, batch, 32)
SMR_NBR_STRESS(nbrplus, lazylist, amortized, 32)
SMR_NBR_STRESS(nbr, dgt_bst, batch, 64)
SMR_NBR_STRESS(nbr, dgt_bst, amortized, 64)
SMR_NBR_STRESS(nbrplus, dgt_bst, batch, 16)
SMR_NBR_STRESS(nbrplus, dgt_bst, amortized, 16)

// ---- neutralization in the read phase -------------------------------------------

template <class Domain>
class nbr_phases : public ::testing::Test {};
using both = ::testing::Types<smr::nbr_domain, smr::nbrplus_domain>;
struct names {
    template <class D>
    static std::string GetName(int) {
        return std::string(D::traits.name);
    }
};
TYPED_TEST_SUITE(nbr_phases, both, names);

/// Retires enough nodes from a new thread to make it broadcast at least once.
template <class Domain>
void retire_until_broadcast(Domain& domain) {
    std::thread([&] {
        smr::context handle(domain);
        const std::uint64_t before = domain.stats().signals;
        const std::size_t n = domain.high_watermark() + 2;
        for (std::size_t i = 0; i < n; ++i) {
            smr::op_guard guard(domain, handle);
            domain.retire(handle, domain.template allocate<test_node<Domain>>(handle));
        }
        EXPECT_GT(domain.stats().signals, before);
    }).join();
}

// A reader stuck in its read phase is neutralized: it siglongjmps back to the
// checkpoint, on_neutralized counts the restart, and the attempt runs again.
TYPED_TEST(nbr_phases, reader_in_read_phase_is_restarted) {
    using D = TypeParam;
    D domain(small_config());
    std::atomic<int> attempts{0};
    std::atomic<bool> in_read_phase{false};
    std::thread reader([&] {
        smr::context handle(domain);
        const auto self = handle.lent();
        smr::op_guard guard(domain, self);
        for (;;) {
            SMR_READ_PHASE_BEGIN(domain, self);
            // Only atomics outside the frame change here (test bookkeeping).
            if (attempts.fetch_add(1) == 0) {
                in_read_phase.store(true);
                // The first attempt never ends by itself. The sleep (an
                // intercepted system call) gives ThreadSanitizer a point at
                // which to run the deferred handler.
                for (;;) std::this_thread::sleep_for(100us);
            }
            domain.read_phase_end(self);
            break;
        }
    });
    ASSERT_TRUE(eventually([&] { return in_read_phase.load(); }));
    retire_until_broadcast(domain);
    reader.join();  // returns only if the first attempt was abandoned
    EXPECT_EQ(attempts.load(), 2);
    EXPECT_GE(domain.stats().restarts, 1u);
}

// A thread in its write phase ignores the signal (no restart), and the node it
// reserved survives a reclaim that frees everything else of the bag.
TYPED_TEST(nbr_phases, writer_is_not_restarted_and_keeps_its_reservation) {
    using D = TypeParam;
    using node = test_node<D>;
    D domain(small_config());
    std::atomic<node*> cell{nullptr};
    {
        smr::context setup(domain);
        cell.store(domain.template allocate<node>(setup));
    }
    std::atomic<int> attempts{0};
    std::atomic<bool> writing{false};
    std::atomic<bool> reclaimed{false};
    std::atomic<std::uint64_t> canary_seen{0};
    std::thread writer([&] {
        smr::context handle(domain);
        const auto self = handle.lent();
        smr::op_guard guard(domain, self);
        for (;;) {
            SMR_READ_PHASE_BEGIN(domain, self);
            attempts.fetch_add(1);
            node* mine = domain.protect(self, 0, cell);
            domain.read_phase_end(self, mine);
            // Write phase: signals are ignored from here on.
            writing.store(true);
            while (!reclaimed.load()) std::this_thread::yield();
            canary_seen.store(mine->canary);  // a heap-use-after-free if it was freed
            break;
        }
    });
    ASSERT_TRUE(eventually([&] { return writing.load(); }));
    const std::uint64_t freed_before = domain.stats().freed;
    std::thread([&] {
        smr::context handle(domain);
        const auto self = handle.lent();
        {
            smr::op_guard guard(domain, self);
            node* old = cell.exchange(domain.template allocate<node>(self));
            domain.retire(self, old);  // first in the bag: the reserved node
        }
        const std::size_t n = domain.high_watermark() + 2;
        for (std::size_t i = 0; i < n; ++i) {
            smr::op_guard guard(domain, self);
            domain.retire(self, domain.template allocate<node>(self));
        }
        EXPECT_GE(domain.bag_size(smr::tid_of(self)), 1u);
    }).join();
    const smr::reclaimer_stats stats = domain.stats();
    EXPECT_GT(stats.signals, 0u);
    EXPECT_GE(stats.freed, freed_before + domain.high_watermark() - 1);
    reclaimed.store(true);
    writer.join();
    EXPECT_EQ(canary_seen.load(), node::alive);
    EXPECT_EQ(attempts.load(), 1);
    EXPECT_EQ(domain.stats().restarts, 0u);
    domain.free_unshared(cell.load());
}

// A thread stalled inside a read phase (sleeping) cannot pin garbage: each
// broadcast neutralizes it and it goes back to sleep at its checkpoint.
TYPED_TEST(nbr_phases, stalled_reader_keeps_garbage_bounded) {
    using D = TypeParam;
    smr::domain_config cfg = small_config();
    D domain(cfg);
    smr::ds::lazylist<D> list(domain);
    std::atomic<bool> stop{false};
    std::atomic<bool> stalled{false};
    std::thread staller([&] {
        smr::context handle(domain);
        const auto self = handle.lent();
        smr::op_guard guard(domain, self);
        for (;;) {
            SMR_READ_PHASE_BEGIN(domain, self);
            stalled.store(true);
            while (!stop.load()) std::this_thread::sleep_for(1ms);
            domain.read_phase_end(self);
            break;
        }
    });
    ASSERT_TRUE(eventually([&] { return stalled.load(); }));
    constexpr int workers = 3;
    std::atomic<int> working{workers};  // the main thread samples garbage until 0
    std::vector<std::thread> crew;
    for (int w = 0; w < workers; ++w) {
        crew.emplace_back([&, w] {
            smr::context handle(domain);
            std::uint64_t x = 88172645463325252ull + static_cast<std::uint64_t>(w);
            for (int i = 0; i < 60'000; ++i) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                const auto key = static_cast<std::int64_t>(x % 32);
                if (x & 0x100) {
                    list.insert(handle, key, key);
                } else {
                    list.erase(handle, key);
                }
            }
            working.fetch_sub(1);
        });
    }
    while (working.load() != 0) {  // the peak is what samples see
        domain.sample_garbage();
        std::this_thread::sleep_for(200us);
    }
    for (auto& t : crew) t.join();
    stop.store(true);
    staller.join();
    const smr::reclaimer_stats stats = domain.stats();
    EXPECT_GT(stats.retired, 10u * cfg.bag_threshold);
    EXPECT_GE(stats.restarts, 1u);  // the staller was neutralized
    const std::uint64_t bound =
        (workers + 1) * (cfg.bag_threshold + 1 + (workers + 1) * D::max_reservations);
    EXPECT_LE(stats.garbage_peak, bound);
    EXPECT_LE(stats.garbage, bound);
}

// ---- NBR+ watermarks, step by step (one OS thread playing two slots) -------------

TEST(nbrplus_watermarks, low_waits_for_a_broadcast_high_signals) {
    using D = smr::nbrplus_domain;
    using node = test_node<D>;
    smr::domain_config cfg = small_config();
    cfg.nbr_low_watermark = 8;
    cfg.nbr_high_watermark = 16;
    D domain(cfg);
    ASSERT_EQ(domain.low_watermark(), 8u);
    ASSERT_EQ(domain.high_watermark(), 16u);
    smr::context<D> a(domain);
    smr::context<D> b(domain);
    auto retire = [&](smr::context_ref<D> self, int n) {
        for (int i = 0; i < n; ++i) {
            domain.begin_op(self);
            domain.retire(self, domain.allocate<node>(self));
            domain.end_op(self);
        }
    };
    // Below the low watermark: nothing happens.
    retire(a, 8);
    EXPECT_EQ(domain.bag_size(a.tid()), 8u);
    EXPECT_EQ(domain.stats().freed, 0u);
    // Past it: a bookmarks 8 nodes and watches, but nobody has broadcast.
    retire(a, 5);
    EXPECT_EQ(domain.bag_size(a.tid()), 13u);
    EXPECT_EQ(domain.stats().freed, 0u);
    EXPECT_EQ(domain.stats().signals, 0u);
    // b reaches its high watermark: it signals (a's slot: this same thread,
    // not in a read phase, so the handler returns) and frees its bag.
    retire(b, 17);
    EXPECT_EQ(domain.stats().signals, 1u);
    EXPECT_EQ(domain.stats().freed, 16u);
    EXPECT_EQ(domain.bag_size(b.tid()), 1u);
    // a's next retire sees b's completed broadcast: it frees its 8
    // bookmarked nodes without a signal of its own.
    retire(a, 1);
    EXPECT_EQ(domain.stats().signals, 1u);
    EXPECT_EQ(domain.stats().freed, 24u);
    EXPECT_EQ(domain.bag_size(a.tid()), 14u - 8u);
    // a at its own high watermark: watches again (no broadcast by others), then
    // signals itself.
    retire(a, 10);  // bag 16
    EXPECT_EQ(domain.stats().signals, 1u);
    retire(a, 1);
    EXPECT_EQ(domain.stats().signals, 2u);
    EXPECT_EQ(domain.bag_size(a.tid()), 1u);
    EXPECT_EQ(domain.stats().freed, 24u + 16u);
    b.detach();
    a.detach();
}

TEST(nbr_config, rejects_bad_signals_and_watermarks) {
    smr::domain_config cfg = small_config();
    cfg.nbr_signal = SIGKILL;
    EXPECT_THROW(smr::nbr_domain{cfg}, std::invalid_argument);
    cfg.nbr_signal = 0;
    EXPECT_THROW(smr::nbr_domain{cfg}, std::invalid_argument);
    // Signals the process needs: to be stopped, to report a fault, libc's own.
    for (const int taken :
         {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGABRT, SIGCHLD, 32, SIGRTMAX + 1}) {
        cfg.nbr_signal = taken;
        EXPECT_THROW(smr::nbr_domain{cfg}, std::invalid_argument) << taken;
        EXPECT_NE(smr::signal_problem(taken), "") << taken;
    }
    for (const int free : {SIGUSR1, SIGUSR2, SIGRTMIN, SIGRTMAX}) {
        EXPECT_EQ(smr::signal_problem(free), "") << free;
    }
    EXPECT_NE(smr::signal_problem(SIGINT).find("could no longer be interrupted"),
              std::string::npos);
    cfg.nbr_signal = SIGUSR1;
    cfg.nbr_low_watermark = 64;
    cfg.nbr_high_watermark = 32;
    EXPECT_THROW(smr::nbrplus_domain{cfg}, std::invalid_argument);
}

void foreign_handler(int) {}
void another_schemes_handler(int) {}

// A signal number something else already handles is refused, with the
// option to change, and the foreign handler stays in place.
TEST(signals, a_signal_with_another_handler_is_refused) {
    const int signo = SIGRTMIN + 5;
    struct sigaction foreign {};
    foreign.sa_handler = &foreign_handler;
    sigemptyset(&foreign.sa_mask);
    struct sigaction before {};
    ASSERT_EQ(sigaction(signo, &foreign, &before), 0);
    smr::domain_config cfg = small_config();
    cfg.nbr_signal = signo;
    try {
        smr::nbr_domain domain(cfg);
        ADD_FAILURE() << "a signal with a foreign handler was taken";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(
            std::string(e.what()).find("already has a handler; choose another with nbr_signal"),
            std::string::npos)
            << e.what();
    }
    struct sigaction after {};
    ASSERT_EQ(sigaction(signo, &before, &after), 0);
    EXPECT_EQ(after.sa_handler, &foreign_handler);
}

// Two schemes that signal (NBR's neutralization, a ping) cannot share a
// number: the second one's handler would replace the first's.
TEST(signals, a_number_one_scheme_took_is_refused_to_another) {
    smr::domain_config cfg = small_config();
    cfg.nbr_signal = SIGRTMIN + 6;
    const smr::nbr_domain domain(cfg);  // installs NBR's handler there
    EXPECT_THROW(smr::detail::install_signal_handler(SIGRTMIN + 6, &another_schemes_handler,
                                                     SA_RESTART, "ping", "pop_signal"),
                 std::runtime_error);
    EXPECT_NO_THROW(smr::nbr_domain{cfg}) << "the same scheme shares its own handler";
}

// A slot's target is signalled only between arm and disarm.
TEST(signals, a_target_is_signalled_only_while_armed) {
    static std::atomic<int> received{0};
    const int signo = SIGRTMIN + 7;
    smr::detail::install_signal_handler(
        signo, [](int) { received.fetch_add(1, std::memory_order_relaxed); }, SA_RESTART, "test",
        "none");
    smr::detail::signal_target target;
    EXPECT_FALSE(target.try_signal(signo)) << "not armed yet";
    target.arm(signo);
    EXPECT_TRUE(target.try_signal(signo));
    // Delivered to this thread on pthread_kill's return (ThreadSanitizer
    // runs it at its next safe point).
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (received.load() == 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::yield();
    }
    EXPECT_EQ(received.load(), 1);
    target.disarm();
    EXPECT_TRUE(target.leaving());
    EXPECT_FALSE(target.try_signal(signo));
    EXPECT_EQ(received.load(), 1);
}

TEST(nbr_config, handshake_mode) {
    smr::nbr_domain domain(small_config());
#if SMR_NBR_UNDER_TSAN
    EXPECT_EQ(domain.handshake(), smr::nbr_handshake::acknowledgement);
#else
    // membarrier(PRIVATE_EXPEDITED) exists since Linux 4.14.
    EXPECT_EQ(domain.handshake(), smr::nbr_handshake::membarrier);
#endif
}

}  // namespace
