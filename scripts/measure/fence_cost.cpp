// What a full fence costs on this machine, in the pattern the reservation
// schemes use it (store an announcement, fence, load the source again), and
// what the reclaimer's side of an asymmetric fence costs (membarrier), so that
// core/fence.hpp and core/asymmetric_fence.hpp rest on a measurement.
//
//   g++ -std=c++20 -O2 -DNDEBUG -Iinclude -pthread -o /tmp/fence_cost
//       scripts/measure/fence_cost.cpp                  (one command)
//   /tmp/fence_cost          # ns per store-fence-load: median and range of 7 rounds
//
// Kinds, one thread:
//   compiler   no fence at all, only a compiler barrier (the asymmetric reader)
//   std        std::atomic_thread_fence(seq_cst) as this compiler emits it
//              (GCC 12: lock orq $0,(%rsp); Clang: mfence)
//   mfence     the mfence instruction
//   lock_or    a locked or of 0 into the word at the stack pointer
//   lock_below a locked add of 0 into a word below the stack pointer (Linux's
//              smp_mb since 4.15: no dependency on the last push or call)
//   xchg_local an exchange on a thread-local atomic (what a seq_cst store is)
//   smr        smr::core::fence(), what the library uses
// Then the heavy side: one membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) while
// 0, 1 and 3 other threads of the process spin (only running threads take its
// interrupt), in microseconds.
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "smr/core/fence.hpp"

// Outside the anonymous namespace: Clang removes atomics that no other
// translation unit can see, and then moves the fence out of the loop.
std::atomic<int> announcement{0};
std::atomic<int> source{1};
thread_local std::atomic<int> private_word{0};

namespace {

template <class Fence>
[[gnu::noinline]] int run(std::size_t iterations, Fence fence) {
    int seen = 0;
    for (std::size_t i = 0; i < iterations; ++i) {
        announcement.store(static_cast<int>(i), std::memory_order_release);
        fence();
        seen += source.load(std::memory_order_acquire);
    }
    return seen;
}

template <class Fence>
void timed(const char* name, Fence fence) {
    constexpr std::size_t iterations = 20'000'000;
    std::vector<double> ns;
    for (int round = 0; round < 7; ++round) {
        const auto start = std::chrono::steady_clock::now();
        const int seen = run(iterations, fence);
        const std::chrono::duration<double, std::nano> took =
            std::chrono::steady_clock::now() - start;
        if (seen == 0) std::puts("");  // keeps the loads
        ns.push_back(took.count() / static_cast<double>(iterations));
    }
    std::sort(ns.begin(), ns.end());
    std::printf("%-11s %7.2f ns  (min %.2f, max %.2f, 7 rounds)\n", name, ns[3], ns.front(),
                ns.back());
}

long membarrier(int command) { return syscall(__NR_membarrier, command, 0, 0); }

void heavy(int spinners) {
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (int i = 0; i < spinners; ++i) {
        threads.emplace_back([&] {
            while (!stop.load(std::memory_order_relaxed)) {
            }
        });
    }
    constexpr int calls = 2'000;
    std::vector<double> us;
    for (int round = 0; round < 7; ++round) {
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; ++i) membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
        const std::chrono::duration<double, std::micro> took =
            std::chrono::steady_clock::now() - start;
        us.push_back(took.count() / calls);
    }
    stop.store(true);
    for (auto& t : threads) t.join();
    std::sort(us.begin(), us.end());
    std::printf("membarrier, %d spinning  %7.2f us  (min %.2f, max %.2f, 7 rounds)\n", spinners,
                us[3], us.front(), us.back());
}

}  // namespace

int main() {
    timed("compiler", [] { std::atomic_signal_fence(std::memory_order_seq_cst); });
    timed("std", [] { std::atomic_thread_fence(std::memory_order_seq_cst); });
#if defined(__x86_64__)
    timed("mfence", [] { asm volatile("mfence" ::: "memory"); });
    timed("lock_or", [] { asm volatile("lock orq $0, (%%rsp)" ::: "memory", "cc"); });
    timed("lock_below", [] { asm volatile("lock addl $0, -8(%%rsp)" ::: "memory", "cc"); });
#endif
    timed("xchg_local", [] { private_word.exchange(0, std::memory_order_seq_cst); });
    timed("smr", [] { smr::core::fence(); });
    if (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0) {
        std::puts("membarrier: private expedited is not available here");
        return 0;
    }
    for (int spinners : {0, 1, 3}) heavy(spinners);
}
