// A lock-free stack of your own with C++26-style hazard pointers
// (smr/hazard_pointer.hpp, P2530's shape): Treiber's stack, whose pop reads
// the top node's `next` and so must keep the node alive between reading
// `top` and its CAS. Nothing here names a reclaimer, a thread id or a slot:
// each thread is registered at its first hazard pointer.
//
// Rules it follows: a node is read only through a pointer that a
// hazard_pointer protects (protect re-reads `top` until the protection is
// known to be visible before the node could be retired); a node is retired
// once, by the thread whose CAS unlinked it; hazard pointers stay on the
// thread that made them. More threads than cores push and pop; every value
// pushed must come out exactly once. Exit status 0 when it does and the
// popped nodes were really deleted.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "smr/hazard_pointer.hpp"

namespace {

std::atomic<std::uint64_t> nodes_deleted{0};

class stack {
    struct node : smr::hazard_pointer_obj_base<node> {
        explicit node(std::uint64_t v) noexcept : value(v) {}
        ~node() { nodes_deleted.fetch_add(1, std::memory_order_relaxed); }
        std::uint64_t value;
        node* next = nullptr;  // written before the node is published, then only read
    };

  public:
    stack() = default;
    stack(const stack&) = delete;
    stack& operator=(const stack&) = delete;
    /// No thread may use the stack any more.
    ~stack() {
        for (node* n = top_.load(std::memory_order_relaxed); n != nullptr;)
            delete std::exchange(n, n->next);
    }

    void push(std::uint64_t value) {
        auto* fresh = new node(value);
        fresh->next = top_.load(std::memory_order_relaxed);
        // release: the node's fields are visible to whoever reads it from top.
        while (!top_.compare_exchange_weak(fresh->next, fresh, std::memory_order_release,
                                           std::memory_order_relaxed)) {
        }
    }

    std::optional<std::uint64_t> pop() {
        smr::hazard_pointer h = smr::make_hazard_pointer();
        for (;;) {
            node* top = h.protect(top_);  // alive until h protects something else
            if (top == nullptr) return std::nullopt;
            // acquire on failure: the next protect reads a published node.
            if (top_.compare_exchange_strong(top, top->next, std::memory_order_acquire,
                                             std::memory_order_relaxed)) {
                const std::uint64_t value = top->value;
                h.reset_protection();
                top->retire();  // deleted once no hazard pointer names it
                return value;
            }
        }
    }

  private:
    std::atomic<node*> top_{nullptr};
};

}  // namespace

int main() {
    constexpr int threads = 6;  // more than the cores of a CI machine
    constexpr std::uint64_t per_thread = 20'000;
    stack s;
    std::vector<std::uint64_t> popped_sum(threads, 0);
    std::vector<std::uint64_t> popped_count(threads, 0);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            for (std::uint64_t i = 0; i < per_thread; ++i) {
                s.push(static_cast<std::uint64_t>(t) * per_thread + i + 1);
                if (auto v = s.pop()) {
                    popped_sum[t] += *v;
                    ++popped_count[t];
                }
            }
        });
    }
    for (auto& w : workers) w.join();
    std::uint64_t sum = 0;
    std::uint64_t count = 0;
    for (int t = 0; t < threads; ++t) {
        sum += popped_sum[t];
        count += popped_count[t];
    }
    while (auto v = s.pop()) {
        sum += *v;
        ++count;
    }
    smr::hazard_pointer_cleanup();  // this thread's and the exited threads' retired nodes
    const std::uint64_t n = threads * per_thread;
    const bool ok = count == n && sum == n * (n + 1) / 2 && nodes_deleted.load() == n;
    std::printf("hazard_pointer_stack: %s (%llu popped, %llu deleted)\n", ok ? "ok" : "FAILED",
                static_cast<unsigned long long>(count),
                static_cast<unsigned long long>(nodes_deleted.load()));
    return ok ? 0 : 1;
}
