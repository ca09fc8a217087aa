// What constructing a reclaimer domain costs a library user: the time of the
// first construction in a process and of each further one, and the heap the
// domain holds (mallinfo2's bytes in use, before and after).
//
//   g++ -std=c++20 -O2 -Iinclude scripts/measure/domain_cost.cpp -o /tmp/domain_cost -pthread
//   /tmp/domain_cost            # one line per reclaimer: first, further (median of 20), bytes
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <tuple>
#include <vector>

#include "smr/reclaim/all.hpp"

namespace {

/// Heap bytes in use, mmapped chunks included (a large table is mmapped).
std::size_t heap_in_use() {
    const auto info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class Domain>
void measure() {
    using clock = std::chrono::steady_clock;
    const std::size_t heap_before = heap_in_use();
    auto start = clock::now();
    auto first = std::make_unique<Domain>(smr::domain_config{});
    const double first_s = seconds_since(start);
    const std::size_t heap_after = heap_in_use();
    std::vector<double> further;
    for (int i = 0; i < 20; ++i) {
        start = clock::now();
        auto another = std::make_unique<Domain>(smr::domain_config{});
        further.push_back(seconds_since(start));
    }
    std::sort(further.begin(), further.end());
    std::printf("%-16s first %9.3f ms  further %8.1f us (median of 20)  heap %8zu bytes\n",
                std::string(Domain::traits.name).c_str(), first_s * 1e3, further[10] * 1e6,
                heap_after - heap_before);
}

template <class... Domains>
void measure_all(std::tuple<Domains...>*) {
    (measure<Domains>(), ...);
}

}  // namespace

int main() { measure_all(static_cast<smr::all_domains*>(nullptr)); }
