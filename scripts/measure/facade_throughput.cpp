// Throughput of the two programs the examples show -- a Treiber stack and a
// configuration map that one writer replaces while readers read it -- per
// reclaimer family, through the domain API (debra: epoch, hp: reservation,
// nbr: neutralization) and through the C++26 facades (hazard_pointer over
// hp, rcu_domain: liburcu's memb flavour). Rounds are interleaved (every variant once per
// round), as noisy shared machines need; each line gives the median and the
// range over the rounds.
//
//   g++ -std=c++20 -O2 -DNDEBUG -Iinclude -pthread -o /tmp/facade_throughput
//       scripts/measure/facade_throughput.cpp                 (one command)
//   /tmp/facade_throughput [threads...]      # default: 2 4; 5 rounds of 0.4 s
//
// Stack: every thread pushes and pops in turn (Mops/s, both counted). Map:
// thread 0 replaces the map's version as fast as it can (a new object each
// time, the old one retired), the others read one setting per lookup
// (Mlookups/s of the readers, and the writer's Mupdates/s).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "smr/hazard_pointer.hpp"
#include "smr/rcu.hpp"
#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/reclaim/hp.hpp"
#include "smr/reclaim/nbr.hpp"
#include "smr/reclaim/obj_base.hpp"

namespace {

using seconds = std::chrono::duration<double>;
constexpr double round_seconds = 0.4;
constexpr int rounds = 5;

/// Runs body(thread index, stop flag) on `threads` threads for a round and
/// returns the sum of what the bodies return, per second; `reader_only`
/// leaves thread 0's count out (the map's writer).
double timed_round(int threads, const std::function<std::uint64_t(int, std::atomic<bool>&)>& body,
                   std::uint64_t* thread0_count = nullptr) {
    std::atomic<bool> stop{false};
    std::vector<std::uint64_t> counts(static_cast<std::size_t>(threads));
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t)
        workers.emplace_back([&, t] { counts[static_cast<std::size_t>(t)] = body(t, stop); });
    std::this_thread::sleep_for(seconds(round_seconds));
    stop.store(true);
    for (auto& w : workers) w.join();
    if (thread0_count != nullptr) *thread0_count = counts[0];
    std::uint64_t total = 0;
    for (int t = thread0_count != nullptr ? 1 : 0; t < threads; ++t)
        total += counts[static_cast<std::size_t>(t)];
    return static_cast<double>(total) / round_seconds;
}

// ---- the Treiber stack, through a domain ----------------------------------

template <class Domain>
struct domain_stack {
    struct node final : Domain::node_base {
        explicit node(std::uint64_t v) noexcept : value(v) {}
        std::uint64_t value;
        node* next = nullptr;
    };
    Domain& domain;
    std::atomic<node*> top{nullptr};

    void push(smr::context_ref<Domain> self, std::uint64_t v) {
        node* fresh = domain.template allocate_outside_op<node>(self, v);
        smr::op_guard op(domain, self);
        fresh->next = top.load(std::memory_order_relaxed);
        while (!top.compare_exchange_weak(fresh->next, fresh, std::memory_order_release,
                                          std::memory_order_relaxed)) {
        }
    }
    bool pop(smr::context_ref<Domain> self) {
        smr::op_guard op(domain, self);
        for (;;) {
            node* t;
            node* next;
            SMR_READ_PHASE_BEGIN(domain, self);
            t = domain.protect(self, 0, top);
            if (t == nullptr) {
                domain.read_phase_end(self);
                return false;
            }
            next = t->next;
            domain.read_phase_end(self, t);
            if (top.compare_exchange_strong(t, next, std::memory_order_acq_rel,
                                            std::memory_order_relaxed)) {
                domain.retire(self, t);
                return true;
            }
        }
    }
    ~domain_stack() {
        for (node* n = top.load(); n != nullptr;) domain.free_unshared(std::exchange(n, n->next));
    }
};

template <class Domain>
double stack_round(int threads) {
    Domain domain{smr::domain_config{}};
    domain_stack<Domain> stack{domain};
    return timed_round(threads, [&](int, std::atomic<bool>& stop) {
        smr::context self(domain);
        std::uint64_t ops = 0;
        while (!stop.load(std::memory_order_relaxed)) {
            stack.push(self, ops);
            stack.pop(self);
            ops += 2;
        }
        return ops;
    });
}

// ---- the Treiber stack, through smr::hazard_pointer -----------------------

struct hp_node : smr::hazard_pointer_obj_base<hp_node> {
    explicit hp_node(std::uint64_t v) noexcept : value(v) {}
    std::uint64_t value;
    hp_node* next = nullptr;
};

double facade_stack_round(int threads) {
    std::atomic<hp_node*> top{nullptr};
    const double rate = timed_round(threads, [&](int, std::atomic<bool>& stop) {
        std::uint64_t ops = 0;
        smr::hazard_pointer h = smr::make_hazard_pointer();
        while (!stop.load(std::memory_order_relaxed)) {
            auto* fresh = new hp_node(ops);
            fresh->next = top.load(std::memory_order_relaxed);
            while (!top.compare_exchange_weak(fresh->next, fresh, std::memory_order_release,
                                              std::memory_order_relaxed)) {
            }
            for (;;) {
                hp_node* t = h.protect(top);
                if (t == nullptr) break;
                if (top.compare_exchange_strong(t, t->next, std::memory_order_acq_rel,
                                                std::memory_order_relaxed)) {
                    h.reset_protection();
                    t->retire();
                    break;
                }
            }
            ops += 2;
        }
        return ops;
    });
    for (hp_node* n = top.load(); n != nullptr;) delete std::exchange(n, n->next);
    return rate;
}

// ---- the configuration map ------------------------------------------------

/// Four settings that all hold the version number, as in the example.
struct settings_data {
    explicit settings_data(std::uint64_t v) noexcept : version(v) {
        std::fill(std::begin(values), std::end(values), v);
    }
    std::uint64_t version;
    std::uint64_t values[4];
};

template <class Domain>
struct domain_settings : settings_data, smr::obj_base<domain_settings<Domain>, Domain> {
    using settings_data::settings_data;
};

/// One lookup: the read phase copies the setting out (nbr may restart it
/// at any instruction, so nothing it changes lives past the checkpoint).
template <class Domain, class Object>
std::uint64_t read_setting(Domain& domain, smr::context_ref<Domain> self,
                           const std::atomic<Object*>& current, std::uint64_t index) {
    smr::op_guard op(domain, self);
    SMR_READ_PHASE_BEGIN(domain, self);
    const Object* s = domain.protect(self, 0, current);
    const std::uint64_t value = s->values[index];
    domain.read_phase_end(self);
    return value;
}

template <class Domain>
double map_round(int threads, std::uint64_t& updates) {
    Domain domain{smr::domain_config{}};
    using object = domain_settings<Domain>;
    std::atomic<object*> current{new object(0)};
    const double rate = timed_round(
        threads,
        [&](int t, std::atomic<bool>& stop) -> std::uint64_t {
            smr::context self(domain);
            std::uint64_t n = 0;
            if (t == 0) {
                for (; !stop.load(std::memory_order_relaxed); ++n)
                    current.exchange(new object(n), std::memory_order_acq_rel)
                        ->retire(domain, self);
                return n;
            }
            std::uint64_t sum = 0;
            for (; !stop.load(std::memory_order_relaxed); ++n)
                sum += read_setting(domain, self, current, n % 4);
            return n + (sum == 1 ? 1 : 0);  // keeps the reads
        },
        &updates);
    delete current.load();
    return rate;
}

struct hp_settings : settings_data, smr::hazard_pointer_obj_base<hp_settings> {
    using settings_data::settings_data;
};
struct rcu_settings : settings_data, smr::rcu_obj_base<rcu_settings> {
    using settings_data::settings_data;
};

/// The map through a facade: `reader()` makes a thread's reader state and
/// `read(state, current, index)` one lookup; objects retire themselves.
template <class Object, class MakeReader, class Read>
double facade_map_round(int threads, std::uint64_t& updates, MakeReader reader, Read read) {
    std::atomic<Object*> current{new Object(0)};
    const double rate = timed_round(
        threads,
        [&](int t, std::atomic<bool>& stop) -> std::uint64_t {
            std::uint64_t n = 0;
            if (t == 0) {
                for (; !stop.load(std::memory_order_relaxed); ++n)
                    current.exchange(new Object(n), std::memory_order_acq_rel)->retire();
                return n;
            }
            auto state = reader();
            std::uint64_t sum = 0;
            for (; !stop.load(std::memory_order_relaxed); ++n) sum += read(state, current, n % 4);
            return n + (sum == 1 ? 1 : 0);  // keeps the reads
        },
        &updates);
    delete current.load();
    return rate;
}

double hp_facade_map_round(int threads, std::uint64_t& updates) {
    return facade_map_round<hp_settings>(
        threads, updates, [] { return smr::make_hazard_pointer(); },
        [](smr::hazard_pointer& h, const std::atomic<hp_settings*>& current, std::uint64_t i) {
            const std::uint64_t value = h.protect(current)->values[i];
            h.reset_protection();
            return value;
        });
}

double rcu_facade_map_round(int threads, std::uint64_t& updates) {
    const double rate = facade_map_round<rcu_settings>(
        threads, updates, [] { return &smr::rcu_default_domain(); },
        [](smr::rcu_domain* domain, const std::atomic<rcu_settings*>& current, std::uint64_t i) {
            std::scoped_lock section(*domain);
            return current.load(std::memory_order_acquire)->values[i];
        });
    smr::rcu_barrier();
    return rate;
}

// ---- the table ----------------------------------------------------------------

struct variant {
    std::string name;
    std::function<double(int, std::uint64_t&)> round;  // rate; updates for the map
    std::vector<double> rates;
    std::vector<double> updates;
};

void report(const variant& v, const char* unit) {
    auto sorted = v.rates;
    std::sort(sorted.begin(), sorted.end());
    std::printf("  %-26s %8.2f %s  (%.2f - %.2f)", v.name.c_str(), sorted[sorted.size() / 2] / 1e6,
                unit, sorted.front() / 1e6, sorted.back() / 1e6);
    if (!v.updates.empty()) {
        auto u = v.updates;
        std::sort(u.begin(), u.end());
        std::printf("   writer %.3f Mupdates/s", u[u.size() / 2] / 1e6);
    }
    std::printf("\n");
}

void run(int threads) {
    auto stack = [](auto f) { return [f](int t, std::uint64_t&) { return f(t); }; };
    std::vector<variant> stacks = {
        {"debra (epoch)", stack(stack_round<smr::debra_domain>), {}, {}},
        {"hp (reservation)", stack(stack_round<smr::hp_domain>), {}, {}},
        {"nbr (neutralization)", stack(stack_round<smr::nbr_domain>), {}, {}},
        {"smr::hazard_pointer", stack(facade_stack_round), {}, {}},
    };
    std::vector<variant> maps = {
        {"debra (epoch)", map_round<smr::debra_domain>, {}, {}},
        {"hp (reservation)", map_round<smr::hp_domain>, {}, {}},
        {"nbr (neutralization)", map_round<smr::nbr_domain>, {}, {}},
        {"smr::hazard_pointer", hp_facade_map_round, {}, {}},
        {"smr::rcu_domain (memb)", rcu_facade_map_round, {}, {}},
    };
    for (int r = 0; r < rounds; ++r) {
        for (auto* set : {&stacks, &maps}) {
            for (auto& v : *set) {
                std::uint64_t updates = 0;
                v.rates.push_back(v.round(threads, updates));
                if (set == &maps) v.updates.push_back(static_cast<double>(updates) / round_seconds);
            }
        }
    }
    std::printf("%d threads, median (min - max) of %d rounds of %.1f s\n", threads, rounds,
                round_seconds);
    std::printf(" Treiber stack (push + pop):\n");
    for (const auto& v : stacks) report(v, "Mops/s");
    std::printf(" configuration map (1 writer, %d readers):\n", threads - 1);
    for (const auto& v : maps) report(v, "Mlookups/s");
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<int> thread_counts;
    for (int i = 1; i < argc; ++i) thread_counts.push_back(std::atoi(argv[i]));
    if (thread_counts.empty()) thread_counts = {2, 4};
    for (int threads : thread_counts) {
        if (threads < 2) {
            std::fprintf(stderr, "facade_throughput: thread counts must be at least 2\n");
            return 2;
        }
        run(threads);
    }
}
