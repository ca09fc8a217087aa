// A lock-free stack of your own (Treiber's) on three reclaimer families:
// an epoch scheme (debra), hazard pointers (hp) and neutralization (nbr).
// One source serves all three because it follows the rules every family
// needs (README, "Using the library"):
//
//   - every read of a shared node happens inside an smr::op_guard made from
//     the thread's context, through the guard's protect, which returns a
//     guarded pointer (hazard schemes publish a hazard in a slot the guard
//     hands out and takes back when the pointer dies; epoch schemes just
//     load);
//   - the read-only stretch of an operation is bracketed by
//     SMR_READ_PHASE_BEGIN and domain.read_phase_end(self, nodes...), which
//     names the nodes the rest of the operation uses (nbr restarts a read
//     phase with a signal when it reclaims; the other schemes ignore both);
//     no allocation, lock or destructor inside it;
//   - nodes come from domain.allocate, made before the operation reads
//     shared memory, and a node is retired once, after the CAS that
//     unlinked it, by the thread whose CAS succeeded;
//   - each thread attaches (smr::attach) before it touches the domain and
//     passes its context to the stack, whose operations borrow it
//     (smr::context_ref) for the guard and the domain's calls.
//
// More threads than cores push and pop; every value pushed must come out
// exactly once. Exit status 0 when it does and nodes were really freed.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include "smr/reclaim/all.hpp"
#include "smr/reclaim/guards.hpp"

namespace {

template <class Domain>
class treiber_stack {
    struct node final : Domain::node_base {
        explicit node(std::uint64_t v) noexcept : value(v) {}
        std::uint64_t value;
        node* next = nullptr;  // written before the node is published, then only read
    };

  public:
    explicit treiber_stack(Domain& domain) noexcept : domain_(domain) {}
    treiber_stack(const treiber_stack&) = delete;
    treiber_stack& operator=(const treiber_stack&) = delete;

    /// No thread may use the stack any more.
    ~treiber_stack() {
        for (node* n = top_.load(std::memory_order_relaxed); n != nullptr;) {
            node* next = n->next;
            domain_.free_unshared(n);
            n = next;
        }
    }

    // The caller's context, lent for the call (a context converts to it).
    void push(smr::context_ref<Domain> self, std::uint64_t value) {
        // Allocated before the operation reads anything shared.
        node* fresh = domain_.template allocate_outside_op<node>(self, value);
        smr::op_guard op(domain_, self);
        node* top = top_.load(std::memory_order_relaxed);
        do {
            fresh->next = top;
            // release: publishes fresh->value and fresh->next to the pop
            // that reads fresh through protect (an acquire load).
        } while (!top_.compare_exchange_weak(top, fresh, std::memory_order_release,
                                             std::memory_order_relaxed));
    }

    bool pop(smr::context_ref<Domain> self, std::uint64_t& value) {
        smr::op_guard op(domain_, self);
        for (;;) {
            SMR_READ_PHASE_BEGIN(domain_, self);
            // Under nbr a guarded pointer is a bare pointer, with no
            // destructor for a neutralization to skip.
            const auto top = op.protect(top_);
            if (!top) {
                domain_.read_phase_end(self);
                return false;
            }
            node* const next = top->next;
            domain_.read_phase_end(self, top.get());  // nbr: top stays usable below
            node* expected = top.get();
            // acquire on failure is not needed: the next round protects again.
            if (top_.compare_exchange_strong(expected, next, std::memory_order_acq_rel,
                                             std::memory_order_relaxed)) {
                value = top->value;
                domain_.retire(self, top.get());  // unlinked by us, retired once
                return true;
            }
        }
    }

  private:
    Domain& domain_;
    std::atomic<node*> top_{nullptr};
};

std::uint64_t next_random(std::uint64_t& x) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
}

template <class Domain>
bool exercise(const char* name) {
    smr::domain_config config;
    config.max_threads = 8;
    config.bag_threshold = 64;  // free often: the point of the exercise
    Domain domain(config);
    constexpr int threads = 6;  // more than the cores of a small machine
    constexpr int operations = 30'000;
    std::vector<std::uint64_t> pushed_sum(threads), popped_sum(threads);
    std::uint64_t left_sum = 0;
    {
        treiber_stack<Domain> stack(domain);
        std::vector<std::thread> workers;
        for (int t = 0; t < threads; ++t) {
            workers.emplace_back([&, t] {
                auto self = smr::attach(domain);
                std::uint64_t x = 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(t + 1);
                for (int i = 0; i < operations; ++i) {
                    const std::uint64_t r = next_random(x);
                    std::uint64_t value = 0;
                    if (r & 1) {
                        stack.push(self, r >> 8);
                        pushed_sum[t] += r >> 8;
                    } else if (stack.pop(self, value)) {
                        popped_sum[t] += value;
                    }
                }
            });
        }
        for (auto& worker : workers) worker.join();
        auto self = smr::attach(domain);
        for (std::uint64_t value = 0; stack.pop(self, value);) left_sum += value;
    }
    std::uint64_t in = 0;
    std::uint64_t out = left_sum;
    for (int t = 0; t < threads; ++t) {
        in += pushed_sum[t];
        out += popped_sum[t];
    }
    const auto stats = domain.stats();
    const bool ok = in == out && stats.freed > 0;
    std::printf("treiber_stack x %s: %s (%llu nodes retired, %llu freed while running)\n", name,
                ok ? "ok" : "FAILED", static_cast<unsigned long long>(stats.retired),
                static_cast<unsigned long long>(stats.freed));
    if (in != out) std::fprintf(stderr, "%s: values pushed and popped differ\n", name);
    return ok;
}

}  // namespace

int main() {
    bool ok = exercise<smr::debra_domain>("debra");
    ok = exercise<smr::hp_domain>("hp") && ok;
    ok = exercise<smr::nbr_domain>("nbr") && ok;
    return ok ? 0 : 1;
}
