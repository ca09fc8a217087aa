// urcu_qsbr, urcu_memb: liburcu (userspace RCU, Desnoyers et al.) as a peer
// reclaimer, so a production library is measured in the same benchmark as
// our schemes.
//
// What is liburcu's and what is ours. Read-side critical sections, thread
// registration, quiescent states and grace-period detection are liburcu's
// (the Debian liburcu, linked as liburcu-qsbr / liburcu-memb). A retired node
// is handed to call_rcu(); after a grace period liburcu's call_rcu helper
// thread runs our callback, which does not free the node but pushes it onto
// a lock-free return stack of the thread that retired it. That thread frees
// it at its next operation through the domain's one free function, with the
// chosen free policy (batch: the whole stack at once; amortized: k per
// operation). Freeing in the call_rcu thread, as a typical liburcu user does,
// would move every free off the workers, which is exactly the variable the
// Epochs paper studies (who frees, when, and into which allocator cache);
// keeping frees on the retiring thread makes urcu_* comparable with the
// other reclaimers and keeps the free counters and latency histograms
// per thread. The cost of the return trip (one CAS per node in the callback,
// one exchange per operation that finds the stack non-empty) is ours.
//
// Flavours (liburcu's names):
//   - urcu_qsbr: read_lock/unlock compile to nothing; every thread must
//     announce quiescent states (quiescent(tid), which smrbench calls between
//     operations) or go offline, else grace periods stop. Cheapest readers.
//   - urcu_memb: read_lock/unlock are a nesting counter plus compiler
//     barriers; grace periods use membarrier(2) (or a fallback fence) to
//     order readers, so readers need no fence and no quiescent states.
//
// Progress: readers are wait-free (qsbr: no instructions; memb: a few
// stores). Retire is lock-free (call_rcu appends to a wait-free queue).
// Memory: unbounded while a thread stalls inside a read-side critical
// section (qsbr: while it is online and announces nothing), like every
// epoch scheme.
//
// Requirements: a thread attaches (smr::context) before its first
// operation and unregisters before it exits; the domain is destroyed with no
// thread registered. The destructor calls rcu_barrier(), so every callback
// has run and every node has been freed when it returns: nothing leaks.
#pragma once

#include <urcu/urcu-memb.h>  // also defines struct rcu_head (urcu/call-rcu.h)
#include <urcu/urcu-qsbr.h>

#include <atomic>
#include <cstdint>
#include <string_view>

#include "smr/core/limbo_bag.hpp"
#include "smr/core/padded.hpp"
#include "smr/core/retired_node.hpp"
#include "smr/reclaim/domain_base.hpp"
#include "smr/reclaim/traits.hpp"

// call_rcu and rcu_barrier of both flavours. Each flavour header declares
// them through urcu/call-rcu.h under the generic names call_rcu/rcu_barrier,
// mapped to its own symbols by macros; that header is included once, so in a
// translation unit with both flavours only the first mapping is declared.
// These are the libraries' exported names (liburcu >= 0.12), declared here
// for both.
extern "C" {
void urcu_qsbr_call_rcu(struct rcu_head* head, void (*func)(struct rcu_head* head));
void urcu_qsbr_barrier(void);
void urcu_memb_call_rcu(struct rcu_head* head, void (*func)(struct rcu_head* head));
void urcu_memb_barrier(void);
}

namespace smr {

namespace detail {

/// The rcu_head liburcu links through, first member of a standard-layout
/// struct so a callback's rcu_head* converts back to it.
struct urcu_link {
    rcu_head head;
};

}  // namespace detail

/// Node header of the urcu domains: the destroy word, liburcu's rcu_head,
/// where to return the node, and the return stack's link (liburcu is done
/// with the node when it is pushed there). 48 bytes.
struct urcu_node_header : core::destroy_word, detail::urcu_link {
    void* domain = nullptr;
    urcu_node_header* next_returned = nullptr;
    int owner = -1;
};

/// liburcu's QSBR flavour (liburcu-qsbr).
struct urcu_qsbr_flavour {
    static constexpr std::string_view name = "urcu_qsbr";
    static constexpr bool needs_quiescent_states = true;
    static void register_thread() noexcept { urcu_qsbr_register_thread(); }
    static void unregister_thread() noexcept { urcu_qsbr_unregister_thread(); }
    static void read_lock() noexcept { urcu_qsbr_read_lock(); }
    static void read_unlock() noexcept { urcu_qsbr_read_unlock(); }
    static void quiescent_state() noexcept { urcu_qsbr_quiescent_state(); }
    static void thread_offline() noexcept { urcu_qsbr_thread_offline(); }
    static void thread_online() noexcept { urcu_qsbr_thread_online(); }
    static void call(rcu_head* head, void (*callback)(rcu_head*)) noexcept {
        urcu_qsbr_call_rcu(head, callback);
    }
    static void barrier() noexcept { urcu_qsbr_barrier(); }
};

/// liburcu's memory-barrier flavour (liburcu-memb: membarrier(2) when the
/// kernel offers it).
struct urcu_memb_flavour {
    static constexpr std::string_view name = "urcu_memb";
    static constexpr bool needs_quiescent_states = false;
    static void register_thread() noexcept { urcu_memb_register_thread(); }
    static void unregister_thread() noexcept { urcu_memb_unregister_thread(); }
    static void read_lock() noexcept { urcu_memb_read_lock(); }
    static void read_unlock() noexcept { urcu_memb_read_unlock(); }
    static void quiescent_state() noexcept {}
    static void thread_offline() noexcept {}
    static void thread_online() noexcept {}
    static void call(rcu_head* head, void (*callback)(rcu_head*)) noexcept {
        urcu_memb_call_rcu(head, callback);
    }
    static void barrier() noexcept { urcu_memb_barrier(); }
};

namespace detail {

struct urcu_local {
    /// Nodes whose grace period has elapsed, pushed by liburcu's call_rcu
    /// thread, popped (all at once) by the slot's owner. LIFO, linked through
    /// next_returned.
    alignas(core::false_sharing_range) std::atomic<urcu_node_header*> returned{nullptr};
    /// No thread owns the slot: a node returned now goes to the orphanage.
    std::atomic<bool> vacated{false};

    /// Takes every returned node (the domain's destructor, after rcu_barrier).
    void drain_into(core::limbo_bag& out) noexcept {
        // seq_cst (acquire: sees the pushed nodes' links): on_thread_exit's
        // Dekker pair needs it in S.
        urcu_node_header* node = returned.exchange(nullptr, std::memory_order_seq_cst);
        while (node != nullptr) {
            urcu_node_header* next = node->next_returned;
            out.push_back(node);
            node = next;
        }
    }
};

}  // namespace detail

/// A liburcu flavour as a reclaimer domain (see the top of this file).
template <class Flavour>
class urcu_domain : public domain_base<urcu_domain<Flavour>, detail::urcu_local, urcu_node_header> {
    using base = domain_base<urcu_domain<Flavour>, detail::urcu_local, urcu_node_header>;

  public:
    static constexpr reclaimer_traits traits{
        .name = Flavour::name,
        .family = reclaimer_family::external,
        .garbage_bounded = false,
        .needs_restart_from_root = false,
        .uses_signals = false,
        .needs_quiescent_states = Flavour::needs_quiescent_states,
    };

    using node_header = urcu_node_header;

    using base::base;

    /// Waits for every pending callback (rcu_barrier), so the base class's
    /// destructor finds every retired node on a return stack and frees it.
    ~urcu_domain() { Flavour::barrier(); }
    urcu_domain(const urcu_domain&) = delete;
    urcu_domain& operator=(const urcu_domain&) = delete;

    void on_thread_enter(int tid) noexcept {
        // relaxed: a callback that still sees the slot vacated orphans what
        // it returns, which is as good as returning it here.
        this->local(tid).vacated.store(false, std::memory_order_relaxed);
        Flavour::register_thread();
    }
    /// Callbacks still pending for this thread's nodes run later; what they
    /// return, and what they returned already, goes to the orphanage.
    void on_thread_exit(int tid) noexcept {
        Flavour::unregister_thread();
        auto& me = this->local(tid);
        // seq_cst store, then the seq_cst exchange in orphan_returned: a
        // Dekker pair with grace_period_over's push and load, so a node
        // returned concurrently is orphaned by one side or the other.
        me.vacated.store(true, std::memory_order_seq_cst);
        // unregister_thread's hand_over_garbage drains the slot after this.
    }
    void hand_over_garbage(int tid) noexcept { orphan_returned(this->local(tid)); }
    /// Every callback of a node retired before the barrier runs before the
    /// other threads are asked, so they hand those nodes over when they
    /// answer instead of receiving them after.
    void before_flush_request(int) noexcept { Flavour::barrier(); }

    /// A barrier's round: liburcu's own barrier runs every callback pending,
    /// so every node retired before it is on a slot's return stack or in the
    /// orphanage; take them all (returned nodes are safe, whoever's slot).
    void flush_step(int tid) noexcept {
        Flavour::barrier();
        core::limbo_bag safe;
        const int limit = this->registry().scan_limit();
        for (int i = 0; i < limit; ++i) this->local(i).drain_into(safe);
        this->orphans().take_all(safe, tid);
        this->dispose_safe(tid, safe);
    }

    void on_begin_op(int tid) noexcept {
        take_returned(tid);
        this->amortized_step(tid);
        Flavour::read_lock();
    }
    void on_end_op(int) noexcept { Flavour::read_unlock(); }

    void on_quiescent(int) noexcept { Flavour::quiescent_state(); }
    /// liburcu's extended quiescent states (thread_offline also hands the
    /// returned nodes over).
    void come_online(int) noexcept { Flavour::thread_online(); }
    void go_offline(int) noexcept { Flavour::thread_offline(); }

    template <class T>
    void on_retire(int tid, T* node) noexcept {
        this->count_retired(tid, node);
        urcu_node_header* header = node;
        // The destroy word the node comes back with (an obj_base object's
        // deleter, which allocate did not stamp).
        header->destroy = core::entry_of(node).destroy;
        header->domain = this;
        header->owner = tid;
        Flavour::call(&header->head, &grace_period_over);
    }

  private:
    /// Runs on liburcu's call_rcu thread after a grace period: returns the
    /// node to the thread that retired it (or to whoever holds its slot now).
    static void grace_period_over(rcu_head* head) noexcept {
        // rcu_head is the first member of the standard-layout urcu_link.
        auto* link = reinterpret_cast<detail::urcu_link*>(head);
        auto* header = static_cast<urcu_node_header*>(link);
        auto* domain = static_cast<urcu_domain*>(header->domain);
        auto& owner = domain->local(header->owner);
        push_returned(owner, header);
        // seq_cst push and load: the other half of on_thread_exit's Dekker
        // pair.
        if (owner.vacated.load(std::memory_order_seq_cst)) domain->orphan_returned(owner);
    }

    static void push_returned(detail::urcu_local& to, urcu_node_header* node) noexcept {
        urcu_node_header* top = to.returned.load(std::memory_order_relaxed);
        do {
            node->next_returned = top;
            // seq_cst (release: the owner's exchange sees next_returned and,
            // transitively, the grace period liburcu established before
            // calling us, before it frees the node).
        } while (!to.returned.compare_exchange_weak(top, node, std::memory_order_seq_cst,
                                                    std::memory_order_relaxed));
    }

    /// The slot's returned nodes, safe, to the orphanage; back onto the slot
    /// (for its next owner or the destructor) if no memory is left for that.
    void orphan_returned(detail::urcu_local& vacated) noexcept {
        core::limbo_bag safe;
        vacated.drain_into(safe);
        if (this->orphans().give_safe(safe)) return;
        while (const core::retired_entry entry = safe.pop_front())
            push_returned(vacated, static_cast<urcu_node_header*>(entry.node));
    }

    /// Hands every returned node to the free policy (in return-stack order:
    /// most recently returned first), with the orphans of exited threads.
    void take_returned(int tid) noexcept {
        auto& me = this->local(tid);
        if (me.returned.load(std::memory_order_relaxed) == nullptr && this->orphans().empty()) {
            return;
        }
        core::limbo_bag safe;
        me.drain_into(safe);
        this->orphans().take_all(safe, tid);  // every urcu orphan is safe
        this->dispose_safe(tid, safe);
    }
};

using urcu_qsbr_domain = urcu_domain<urcu_qsbr_flavour>;
using urcu_memb_domain = urcu_domain<urcu_memb_flavour>;

/// Both flavours, in the order smrbench --list prints them.
using urcu_domains = std::tuple<urcu_qsbr_domain, urcu_memb_domain>;

}  // namespace smr
