// Stress of the Michael-Scott queue: producers and consumers under every
// reclaimer safe on it, with batch and amortized free.
//
// Items carry (producer, sequence number) in their value. Checked: every
// item enqueued is dequeued exactly once (by the threads, or by the drain at
// the end), each thread sees each producer's items in increasing sequence
// order (FIFO per producer, which a linearizable queue guarantees to every
// single consumer), validate()'s key sum and size equal what the threads'
// enqueues minus dequeues add up to, and the domain retired one node per
// successful dequeue but the first (the first dummy lives in the queue
// object). The queue is kept short, so dequeues retire constantly and, with
// a small bag threshold, nodes are freed constantly: a use-after-free shows
// up under AddressSanitizer, a missing happens-before under ThreadSanitizer.

#include "smr/ds/ms_queue.hpp"

#include <atomic>
#include <cstdint>
#include <exception>
#include <latch>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ds_concurrent.hpp"

namespace smr::test {
namespace {

struct queue_stress_options {
    int threads = default_stress_threads();
    /// mixed: every thread enqueues and dequeues (50/50, the queue hovers
    /// near empty, tail is often helped); otherwise the first half of the
    /// threads only enqueue and the rest only dequeue.
    bool mixed = true;
    /// Half under ThreadSanitizer, as the set suite (ds_concurrent.hpp).
    std::uint64_t ops_per_thread = thread_sanitizer_build ? 20000 : 40000;
    int rounds = 3;
    smr::domain_config cfg{};
};

struct queue_stress_result {
    std::string error;  // empty when every check held
    std::uint64_t enqueued = 0, dequeued = 0, empty_dequeues = 0, drained = 0;
    smr::reclaimer_stats stats;
};

constexpr int producer_shift = 40;  // value = producer << 40 | sequence (from 1)

template <class Domain>
queue_stress_result run_queue_stress(const queue_stress_options& o) {
    using queue_type = smr::ds::ms_queue<Domain>;
    queue_stress_result result;
    Domain domain(o.cfg);
    queue_type queue(domain);
    std::mutex error_mutex;
    auto fail = [&](const std::string& what) {
        std::lock_guard lock(error_mutex);
        if (result.error.empty()) result.error = what;
    };

    std::vector<std::uint64_t> produced(o.threads, 0);  // per producer, over all rounds
    std::vector<std::int64_t> values;                   // every value dequeued
    std::uint64_t key_sum = 0;                          // enqueued minus dequeued, wraps
    std::int64_t size = 0;

    // Rounds beyond o.rounds (up to 4x) only while nothing has been freed yet:
    // a token ring advances only as fast as its slowest member, and with more
    // threads than cores and consumers finishing first, the token may not
    // have come round twice to a thread that retired before the round ends.
    const bool frees = Domain::traits.family != smr::reclaimer_family::leak;
    for (int round = 0;
         result.error.empty() &&
         (round < o.rounds || (frees && domain.stats().freed == 0 && round < 4 * o.rounds));
         ++round) {
        struct thread_state {
            std::uint64_t key_sum = 0;
            std::int64_t size = 0;
            std::uint64_t enqueued = 0, dequeued = 0, empty = 0;
            std::vector<std::int64_t> values;
        };
        std::vector<thread_state> states(o.threads);
        std::latch ready(o.threads);
        std::vector<std::thread> threads;
        for (int t = 0; t < o.threads; ++t) {
            threads.emplace_back([&, t] {
                bool arrived = false;
                try {
                    smr::context handle(domain);
                    const auto self = handle.lent();
                    thread_state& me = states[t];
                    me.values.reserve(o.ops_per_thread);
                    std::vector<std::uint64_t> last_seen(o.threads, 0);
                    detail::xorshift64 rng(
                        detail::mix_seed((std::uint64_t(round) << 32) ^ std::uint64_t(t)));
                    const bool producer = o.mixed || t < o.threads / 2;
                    const bool consumer = o.mixed || t >= o.threads / 2;
                    ready.arrive_and_wait();
                    arrived = true;
                    for (std::uint64_t i = 0; i < o.ops_per_thread; ++i) {
                        const std::uint64_t r = rng.next();
                        if (producer && (!consumer || (r & 1) == 0)) {
                            const auto key = static_cast<std::int64_t>((r >> 8) % 1024);
                            const std::uint64_t sequence = produced[t] + ++me.enqueued;
                            queue.insert(handle, key,
                                         static_cast<std::int64_t>(
                                             (std::uint64_t(t) << producer_shift) | sequence));
                            me.key_sum += static_cast<std::uint64_t>(key);
                            ++me.size;
                        } else if (const auto item = queue.dequeue(handle)) {
                            me.key_sum -= static_cast<std::uint64_t>(item->key);
                            --me.size;
                            ++me.dequeued;
                            me.values.push_back(item->value);
                            const auto p = static_cast<std::size_t>(item->value >> producer_shift);
                            const std::uint64_t sequence =
                                static_cast<std::uint64_t>(item->value) &
                                ((std::uint64_t{1} << producer_shift) - 1);
                            if (p >= last_seen.size()) {
                                fail("dequeued a value of no producer: " +
                                     std::to_string(item->value));
                            } else if (sequence <= last_seen[p]) {
                                fail("FIFO: thread " + std::to_string(t) + " dequeued item " +
                                     std::to_string(sequence) + " of producer " +
                                     std::to_string(p) + " after its item " +
                                     std::to_string(last_seen[p]));
                            } else {
                                last_seen[p] = sequence;
                            }
                        } else {
                            ++me.empty;
                        }
                        domain.quiescent(self);  // QSBR frees nothing without it
                    }
                } catch (const std::exception& e) {
                    if (!arrived) ready.count_down();
                    fail(std::string("thread: ") + e.what());
                }
            });
        }
        for (auto& thread : threads) thread.join();
        for (int t = 0; t < o.threads; ++t) {
            const thread_state& me = states[t];
            produced[t] += me.enqueued;
            key_sum += me.key_sum;
            size += me.size;
            result.enqueued += me.enqueued;
            result.dequeued += me.dequeued;
            result.empty_dequeues += me.empty;
            values.insert(values.end(), me.values.begin(), me.values.end());
        }
        const auto v = queue.validate();
        const std::string when = " after round " + std::to_string(round + 1);
        if (!v.ok) {
            fail("validate() failed" + when + ": " + v.error);
        } else if (v.key_sum != static_cast<std::int64_t>(key_sum)) {
            fail("key sum " + std::to_string(v.key_sum) + " != expected " +
                 std::to_string(static_cast<std::int64_t>(key_sum)) + when);
        } else if (static_cast<std::int64_t>(v.size) != size) {
            fail("size " + std::to_string(v.size) + " != expected " + std::to_string(size) + when);
        }
    }
    result.stats = domain.stats();

    // Drain what is left with one thread, in order, and check that every
    // item was dequeued exactly once overall.
    {
        smr::context handle(domain);
        std::vector<std::uint64_t> last_seen(o.threads, 0);
        while (const auto item = queue.dequeue(handle)) {
            values.push_back(item->value);
            ++result.drained;
            const auto p = static_cast<std::size_t>(item->value >> producer_shift);
            const std::uint64_t sequence = static_cast<std::uint64_t>(item->value) &
                                           ((std::uint64_t{1} << producer_shift) - 1);
            if (p >= last_seen.size() || sequence <= last_seen[p]) {
                fail("drain: out of order or unknown value " + std::to_string(item->value));
                break;
            }
            last_seen[p] = sequence;
        }
    }
    std::vector<std::vector<std::uint8_t>> seen(o.threads);
    for (int t = 0; t < o.threads; ++t) seen[t].assign(produced[t] + 1, 0);
    for (std::int64_t value : values) {
        const auto p = static_cast<std::size_t>(value >> producer_shift);
        const std::uint64_t sequence =
            static_cast<std::uint64_t>(value) & ((std::uint64_t{1} << producer_shift) - 1);
        if (p >= seen.size() || sequence == 0 || sequence > produced[p]) {
            fail("dequeued an item never enqueued: " + std::to_string(value));
        } else if (seen[p][sequence]++ != 0) {
            fail("item " + std::to_string(sequence) + " of producer " + std::to_string(p) +
                 " dequeued twice");
        }
    }
    for (int t = 0; t < o.threads && result.error.empty(); ++t) {
        for (std::uint64_t sequence = 1; sequence <= produced[t]; ++sequence) {
            if (seen[t][sequence] == 0) {
                fail("item " + std::to_string(sequence) + " of producer " + std::to_string(t) +
                     " was lost");
                break;
            }
        }
    }
    return result;
}

/// Every reclaimer safe on the queue (the first of each family under
/// ThreadSanitizer; see ds_concurrent.hpp). combo<D, ms_queue>::run is never
/// instantiated: the queue has its own stress below.
using queue_combos = stress_combos<smr::ds::ms_queue>;

// The set suite that ds_concurrent.hpp registers is not for a queue, and this
// executable holds no set.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DsConcurrent);

template <class C>
class MsQueueConcurrent : public ::testing::Test {
  protected:
    using domain_type = typename C::domain_type;
    static constexpr bool frees = !std::is_same_v<domain_type, smr::leak_domain>;

    static queue_stress_options options(smr::free_mode mode, bool mixed) {
        queue_stress_options o;
        o.mixed = mixed;
        o.cfg.free.mode = mode;
        o.cfg.bag_threshold = 128;  // free constantly (rcu, hp, ...: scan at this length)
        return o;
    }

    void run_and_check(const queue_stress_options& o) {
        const queue_stress_result r = run_queue_stress<domain_type>(o);
        EXPECT_TRUE(r.error.empty()) << r.error;
        EXPECT_GT(r.enqueued, 0u);
        EXPECT_GT(r.dequeued, 0u);
        EXPECT_EQ(r.enqueued, r.dequeued + r.drained);
        EXPECT_EQ(r.stats.allocated, r.enqueued);
        // One retire per successful dequeue, but the first.
        EXPECT_EQ(r.stats.retired, r.dequeued - 1);
        EXPECT_LE(r.stats.freed, r.stats.retired);
        if constexpr (frees) {
            EXPECT_GT(r.stats.freed, 0u);  // nodes really were freed while threads ran
        } else {
            EXPECT_EQ(r.stats.freed, 0u);
        }
    }
};

TYPED_TEST_SUITE(MsQueueConcurrent, queue_combos, combo_names);

TYPED_TEST(MsQueueConcurrent, MixedBatchFree) {
    this->run_and_check(this->options(smr::free_mode::batch, true));
}

TYPED_TEST(MsQueueConcurrent, MixedAmortizedFree) {
    this->run_and_check(this->options(smr::free_mode::amortized, true));
}

TYPED_TEST(MsQueueConcurrent, ProducersAndConsumersBatchFree) {
    this->run_and_check(this->options(smr::free_mode::batch, false));
}

TYPED_TEST(MsQueueConcurrent, ProducersAndConsumersAmortizedFree) {
    this->run_and_check(this->options(smr::free_mode::amortized, false));
}

}  // namespace
}  // namespace smr::test
