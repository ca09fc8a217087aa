// What every reclaimer shares: the hooks a scheme hides and their defaults,
// thread registration, node allocation, the barrier, and the statistics
// every reclaimer reports. The other parts live in headers of their own:
// the configuration (domain_config.hpp), the counters (statistics.hpp), the
// thread slots (thread_slots.hpp), the allocator's side and the free path
// (free_path.hpp), the barrier's
// requests (flush_requests.hpp) and the orphanage (core/orphanage.hpp), the
// recorders (recorders.hpp), epoch pacing (epoch_pacing.hpp); the contract
// a scheme must keep is written as concepts (domain_concepts.hpp).
//
// A reclaimer is a class `R : domain_base<R, R's per-thread state, R's node
// header>` that hides the hooks it needs (on_begin_op, on_retire, ...) and inherits
// empty inline defaults for the rest, so a hook a scheme does not use costs
// nothing after inlining. docs/design.md describes the hook contract.
#pragma once

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <thread>
#include <type_traits>
#include <utility>

#include "smr/alloc/wait_observer.hpp"
#include "smr/core/check.hpp"
#include "smr/core/compiler.hpp"
#include "smr/core/counters.hpp"
#include "smr/core/limbo_bag.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/orphanage.hpp"
#include "smr/core/resource_users.hpp"
#include "smr/core/retired_node.hpp"
#include "smr/reclaim/domain_concepts.hpp"
#include "smr/reclaim/domain_config.hpp"
#include "smr/reclaim/epoch_pacing.hpp"
#include "smr/reclaim/flush_requests.hpp"
#include "smr/reclaim/free_path.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/reclaim/reader.hpp"
#include "smr/reclaim/recorders.hpp"
#include "smr/reclaim/slots.hpp"
#include "smr/reclaim/statistics.hpp"
#include "smr/reclaim/thread_slots.hpp"
#include "smr/reclaim/traits.hpp"
#include "smr/trace/timeline.hpp"

namespace smr {

template <class Derived, class Local, class NodeHeader = core::retired_node>
class domain_base {
    static_assert(std::is_base_of_v<core::retired_node, NodeHeader>);

  public:
    /// Data-structure nodes derive from this (see ds/lazylist.hpp).
    using node_base = NodeHeader;
    /// A thread's context lent to one call (context.hpp): what an operation
    /// passes to every call below. The calls that take a slot number instead
    /// are kept while their callers move to contexts.
    using lent = typename detail::lent_context_key<Derived>::ref;
    /// The scheme, for a class that derives from it (context.hpp).
    using scheme_type = Derived;

    explicit domain_base(const domain_config& config)
        : config_(config), slots_(config.max_threads), free_(config), pacing_(config.min_epoch_us) {
        // Here, where Derived is complete: every scheme is checked where it is built.
        static_assert(detail::hooks_follow_traits<Derived>::value);
        for (std::size_t i = 0; i < config.max_threads; ++i)
            free_path::seed(slots_[static_cast<int>(i)], i);
        // A pool_resource refuses to be destroyed while we may still free into it.
        if (config.memory != nullptr && !SMR_MUTANT("domain_never_attaches_its_resource"))
            core::resource_users::attach(static_cast<const void*>(config.memory));
    }

    domain_base(const domain_base&) = delete;
    domain_base& operator=(const domain_base&) = delete;

    /// Frees every node still held, safe or not: by now no thread may run.
    /// A thread still registered would use the freed slots and nodes: the
    /// program stops instead, in every build.
    ~domain_base() {
        SMR_CHECK(slots_.registry().registered_count() == 0,
                  "domain destroyed while threads are still attached (destroy or detach every "
                  "smr::context first)");
        for (std::size_t i = 0; i < config_.max_threads; ++i) {
            slot& s = slots_[static_cast<int>(i)];
            if constexpr (requires(Local & l, core::limbo_bag & b) { l.drain_into(b); }) {
                s.local.drain_into(s.freeable);
            }
            s.freeable.consume([this](core::retired_entry e) { release_memory(e); });
        }
        core::limbo_bag orphaned;
        orphans_.take_all(orphaned, core::orphanage::any_taker);
        orphaned.consume([this](core::retired_entry e) { release_memory(e); });
        if (config_.memory != nullptr)
            core::resource_users::detach(static_cast<const void*>(config_.memory));
    }

    // ---- thread registration -------------------------------------------------

    /// Claims a slot for the calling thread: what smr::context is made of.
    /// Throws std::length_error when every slot is taken, or what the
    /// scheme's setup throws (std::bad_alloc); the slot is then free again.
    int register_thread() {
        const int tid = slots_.registry().acquire();
        try {
            enter(tid);
        } catch (...) {
            slots_.registry().release(tid);
            throw;
        }
        return tid;
    }
    /// Releases the slot. What the thread retired and could not free yet goes
    /// to the orphanage (core/orphanage.hpp), where running threads adopt it
    /// once it is safe; it does not wait in the slot for the next registrant.
    void unregister_thread(int tid) {
        check_registered(tid);
        derived().on_thread_exit(tid);  // also ends an operation still open
        hand_over(tid);
        slot_of(tid).op_depth = 0;
        slots_.registry().release(tid);
    }

    /// Stops the program unless `tid` is a registered slot: every build, on
    /// the paths that are not per operation (unregister, barrier, offline and
    /// online); an operation's own path asserts it in debug builds (op_guard).
    void check_registered(int tid) const noexcept {
        SMR_CHECK(slots_.registry().registered(tid),
                  "tid is not a registered thread of this domain (attach with smr::context)");
    }
    bool registered(int tid) const noexcept { return slots_.registry().registered(tid); }

    /// The open op_guards of thread tid (guards.hpp): only the outermost one
    /// begins and ends an operation.
    std::uint32_t& operation_depth(int tid) noexcept { return slot_of(tid).op_depth; }

    // ---- what an operation calls ------------------------------------------------
    // Each forwards to the scheme's hook, named as the call with on_ in front
    // (retire to on_retire; allocate to allocate_node, as on_allocate is the
    // hook that stamps a new node; reader to make_reader), so a scheme writes
    // its hooks over the slot number and the calls are declared here once,
    // for every scheme.

    /// Begins and ends one operation of the thread. Prefer smr::op_guard,
    /// which pairs them and counts nested guards.
    void begin_op(lent self) noexcept { derived().on_begin_op(tid_of(self)); }
    void end_op(lent self) noexcept { derived().on_end_op(tid_of(self)); }

    /// Reads a shared pointer that will be dereferenced, reserved in the
    /// thread's protect slot `index` (0 to max_protect_slots - 1) where the
    /// scheme reserves: the node stays safe until the slot's next protect or
    /// the operation's end. Acquire at the least.
    template <class T>
    T* protect(lent self, int index, const std::atomic<T*>& source) noexcept {
        return derived().on_protect(tid_of(self), index, source);
    }
    /// protect(self, index, source) for `source`, a link inside `parent`, a
    /// node the thread holds protected (nullptr: a root, outside every node
    /// the domain frees): on_protect_in where the scheme's traits say
    /// protect_takes_parents, else protect.
    template <class T, class Parent>
    T* protect_in(lent self, int index, const std::atomic<T*>& source,
                  const Parent* parent) noexcept {
        if constexpr (Derived::traits.protect_takes_parents) {
            return derived().on_protect_in(tid_of(self), index, source, parent);
        } else {
            return derived().protect(self, index, source);
        }
    }
    /// The thread's protect for one traversal: reader(self).protect(slot,
    /// source) is protect(self, slot, source). A traversal takes it once and
    /// protects each node through it, so what a reservation scheme's protect
    /// needs (the thread's slots, the fence mode) stays in registers; through
    /// protect(self, ...) it is reloaded after every node's acquire load. Its
    /// slots (reader.slot(index), reclaim/reader.hpp) name a reservation once
    /// per traversal. Valid in its operation.
    auto reader(lent self) noexcept { return derived().make_reader(tid_of(self)); }

    /// Hands over `node`, which the caller has unlinked: the scheme frees it
    /// once no thread can still hold it.
    template <class T>
    void retire(lent self, T* node) noexcept {
        derived().on_retire(tid_of(self), node);
    }

    /// Where a restartable read phase begins (SMR_READ_PHASE_BEGIN in
    /// guards.hpp) and where it ends, reserving the nodes the write phase
    /// will touch: NBR's, and nothing for every other scheme.
    void read_phase_begin(lent self) noexcept { derived().on_read_phase_begin(tid_of(self)); }
    template <class... Reserved>
    void read_phase_end(lent self, Reserved*... reserved) noexcept {
        derived().on_read_phase_end(tid_of(self), reserved...);
    }

    /// A point between operations where the thread holds no shared node:
    /// what ends grace periods under qsbr, qsbr_ibr and urcu_qsbr
    /// (reclaimer_traits::needs_quiescent_states); nothing elsewhere.
    void quiescent(lent self) noexcept { derived().on_quiescent(tid_of(self)); }

    // ---- hooks with defaults (a reclaimer hides the ones it needs) -----------

    /// An operation's bracket (op_guard): the epoch schemes announce here,
    /// the reservation schemes clear their reservations at the end. By
    /// default the amortized free's step (free_policy) and nothing at the end.
    void on_begin_op(int tid) noexcept { amortized_step(tid); }
    void on_end_op(int) noexcept {}

    /// A plain acquire load: it pairs with the release (or CAS) that
    /// published the node, so its fields are initialized. Reservation
    /// schemes announce and validate here.
    template <class T>
    T* on_protect(int, int index, const std::atomic<T*>& source) noexcept {
        // Unused here, but hp's would take it.
        if (!SMR_MUTANT("slot_unchecked_where_unused")) detail::check_slot(index);
        return source.load(std::memory_order_acquire);
    }
    /// The reader protect's callers get by default: each protect is the
    /// domain's protect. A scheme that writes on_protect may write a reader
    /// that keeps what its protect needs per node.
    detail::forwarding_reader<Derived> make_reader(int tid) noexcept {
        return {derived(), lent{tid}};
    }
    void on_read_phase_begin(int) noexcept {}
    template <class... Reserved>
    void on_read_phase_end(int, Reserved*...) noexcept {}
    void on_quiescent(int) noexcept {}
    /// Extended quiescent states, as in liburcu: an offline thread does not
    /// hold up grace periods and must not touch shared nodes. Going offline
    /// hands the thread's garbage over, so barrier() need not wait for it.
    void thread_online(lent self) noexcept {
        const int tid = tid_of(self);
        check_registered(tid);
        mark_online(tid);
        derived().come_online(tid);
    }
    void thread_offline(lent self) noexcept {
        const int tid = tid_of(self);
        check_registered(tid);
        derived().go_offline(tid);
        mark_offline(tid);
    }
    /// What a scheme does to come online or go offline (nebr and qsbr: their
    /// flag; token: the ring; urcu: liburcu's); thread_online/thread_offline
    /// add the barrier's bookkeeping around it. Nothing by default.
    void come_online(int) noexcept {}
    void go_offline(int) noexcept {}
    /// The scheme's garbage of thread tid to the orphanage (unregistration,
    /// thread_offline, a barrier's request). Nothing for schemes without any.
    void hand_over_garbage(int) noexcept {}
    /// A barrier's first step, before it asks the other threads (urcu: drain
    /// liburcu's queue, so no node comes back to a thread that answered).
    void before_flush_request(int) noexcept {}
    /// One round of reclamation driven by a barrier: what moves this scheme
    /// on (by default an empty operation, which moves the epoch schemes'
    /// epochs) and adopts the orphans that are safe.
    void flush_step(int tid) noexcept {
        derived().on_begin_op(tid);
        derived().on_end_op(tid);
        derived().on_quiescent(tid);
    }
    void on_thread_enter(int) noexcept {}
    void on_thread_exit(int) noexcept {}

    // ---- barrier ---------------------------------------------------------------

    /// Returns once every node retired before the call, by any thread, has
    /// been freed: rcu_barrier for this domain (C++26's and liburcu's), a
    /// flush in crossbeam-epoch's terms. The caller is registered and outside
    /// any operation.
    ///
    /// It hands over its own garbage, asks every other registered online
    /// thread to hand over its own at its next operation, and then drives
    /// reclamation itself (operations that move the epoch on, scans, signal
    /// rounds), freeing what it adopts, until nothing retired before the call
    /// is left. While it runs it alone adopts orphans.
    ///
    /// Blocking: it waits for every registered online thread to begin an
    /// operation, and for every operation that still holds a retired node to
    /// end. A thread that stays inside an operation, or stays registered and
    /// online without operating, delays it for as long; declare idle
    /// stretches with thread_offline (which hands the thread's garbage over)
    /// or unregister. Barriers of one domain run one at a time. Under none
    /// (which frees nothing while the domain lives) it returns at once.
    void barrier(lent self) {
        const int tid = tid_of(self);
        check_registered(tid);
        // It would free nodes the caller's own operation may still hold.
        SMR_CHECK(slot_of(tid).op_depth == 0,
                  "barrier() inside an operation: it would free what the operation holds");
        if constexpr (Derived::traits.family != reclaimer_family::leak) {
            std::mutex& barriers = flush_requests_.mutex();
            if (!barriers.try_lock()) {
                // Another barrier runs and waits for us: offline (our garbage
                // handed over, no grace period held up) until our turn.
                derived().thread_offline(self);
                barriers.lock();
                derived().thread_online(self);
            }
            const std::lock_guard<std::mutex> one_at_a_time(barriers, std::adopt_lock);
            orphans_.reserve_for(tid);
            derived().before_flush_request(tid);
            const std::uint64_t request = flush_requests_.ask_others(tid, slots_);
            for (;;) {
                // At least one round, even with nothing in sight: the liburcu
                // adapters' nodes are in liburcu's queue until its barrier.
                hand_over(tid);
                derived().flush_step(tid);
                free_freeable_now(tid);
                hand_over(tid);  // what the round could not free yet
                if (detail::flush_requests::others_answered(tid, request, slots_) &&
                    orphans_.settled()) {
                    break;
                }
                std::this_thread::yield();  // let the threads it waits for run
            }
            orphans_.end_reservation();
        }
    }

    // ---- links (reference counting; plain atomics for every other family) ----

    /// A CAS that makes a shared link point to another node (insert's
    /// publication, an unlink). lfrc moves the link's count from the old
    /// target to the new one; every other scheme just does the CAS. Marking
    /// a link (same target) needs no hook.
    template <class T>
    bool compare_exchange_link(lent self, std::atomic<T*>& link, T*& expected, T* desired,
                               std::memory_order success = std::memory_order_acq_rel,
                               std::memory_order failure = std::memory_order_acquire) noexcept {
        return derived().on_compare_exchange_link(tid_of(self), link, expected, desired, success,
                                                  failure);
    }
    /// A store into a link of a node no other thread can see yet.
    template <class T>
    void store_private_link(lent self, std::atomic<T*>& link, T* value) noexcept {
        derived().on_store_private_link(tid_of(self), link, value);
    }
    template <class T>
    bool on_compare_exchange_link(int, std::atomic<T*>& link, T*& expected, T* desired,
                                  std::memory_order success, std::memory_order failure) noexcept {
        return link.compare_exchange_strong(expected, desired, success, failure);
    }
    template <class T>
    void on_store_private_link(int, std::atomic<T*>& link, T* value) noexcept {
        link.store(value, std::memory_order_relaxed);
    }

    // ---- allocation ----------------------------------------------------------

    /// Allocates and constructs a node; the reclaimer may stamp it (birth era).
    /// Throws std::bad_alloc when the allocator has no memory.
    template <class T, class... Args>
    T* allocate(lent self, Args&&... args) {
        return derived().template allocate_node<T>(tid_of(self), std::forward<Args>(args)...);
    }
    /// What allocate does, unless a scheme hides it (lfrc: counted links).
    template <class T, class... Args>
    T* allocate_node(int tid, Args&&... args) {
        static_assert(std::is_base_of_v<node_base, T>, "nodes must derive from Domain::node_base");
        static_assert(
            !requires { T::smr_has_own_deleter; },
            "an smr::obj_base object is made by its user and freed by its deleter; "
            "allocate would bypass the deleter");
        constexpr core::node_memory shape = core::memory_of_type<T>;
        slot& s = slot_of(tid);
        void* memory = free_.allocate(s, shape.bytes, shape.align);
        T* node;
        try {
            node = ::new (memory) T(std::forward<Args>(args)...);
        } catch (...) {
            free_.release({memory, shape.bytes, shape.align});
            throw;
        }
        if constexpr (std::is_base_of_v<core::destroy_word, T>) {
            node->destroy = &core::destroy_as<T>;
        }
        s.counts.allocated.add();
        s.counts.allocated_bytes.add(sizeof(T));
        derived().on_allocate(tid, *node);
        return node;
    }
    void on_allocate(int, node_base&) noexcept {}

    /// One allocation's worth of the scheme's clock, for an object the domain
    /// did not allocate (smr::obj_base::retire): rcu, he, ibr and wfe advance
    /// their epoch or era every `epoch_freq` x T allocations (domain_config),
    /// so a program that retires only its own objects would otherwise never
    /// free any.
    void tick_clock(int) noexcept {}

    /// As allocate, for a caller that is between operations: it holds no
    /// reference to a shared node (ms_queue's enqueue allocates before it
    /// reads the queue). If the allocator waits for memory (a pool that ran
    /// out, on_empty yield or spin_idle), the thread waits as an idle thread
    /// would: before every retry it runs an empty operation, so it holds up no
    /// grace period and frees its own garbage once that is safe (Hart et al.'s
    /// Figure 13: threads that yield while memory is short let the epoch
    /// schemes recover). A pool that spins (on_empty::spin, their Figure 14)
    /// skips that step. Calling it inside an operation would end that
    /// operation's protection.
    template <class T, class... Args>
    T* allocate_outside_op(lent self, Args&&... args) {
        if (config_.memory == nullptr) [[likely]]
            return derived().template allocate_node<T>(tid_of(self), std::forward<Args>(args)...);
        idle_while_waiting idle(derived(), self);
        alloc::observe_waits scope(idle);
        return derived().template allocate_node<T>(tid_of(self), std::forward<Args>(args)...);
    }

    /// Frees a node that was allocated but never made reachable (a failed
    /// insert): no other thread can hold it, so no grace period is needed.
    /// Not timed: free_seconds and the free latency histogram cover the
    /// frees counted as freed (retired garbage), so time per freed node is
    /// their ratio.
    template <class T>
    void discard(lent self, T* node) noexcept {
        derived().on_discard(tid_of(self), node);
    }
    template <class T>
    void on_discard(int tid, T* node) noexcept {
        slot_of(tid).counts.discarded.add();
        release_memory(core::entry_of(node));
    }

    /// Frees a node that no thread can reach any more, outside any thread
    /// slot: for data-structure destructors, when no operation can be running.
    template <class T>
    void free_unshared(T* node) noexcept {
        release_memory(core::entry_of(node));
    }

    /// Frees a node that was unlinked while its structure excluded every
    /// other access to it (one lock taken by readers and writers alike:
    /// ds::lock_list), so no thread can hold it and no grace period is due.
    /// Counted as retired and freed at once: garbage stays zero, and the
    /// counters still say how many nodes left the structure.
    template <class T>
    void free_exclusive(lent self, T* node) noexcept {
        const int tid = tid_of(self);
        slot& s = slot_of(tid);
        s.counts.retired.add();
        s.counts.freed.add();
        free_.free_timed(tid, s, core::entry_of(node));
    }

    // ---- statistics ----------------------------------------------------------

    /// Unreclaimed nodes now. Safe to call while threads run (relaxed reads:
    /// a recent value, not a linearizable one).
    std::uint64_t garbage() const noexcept {
        std::uint64_t retired = 0;
        std::uint64_t freed = 0;
        const int limit = slots_.scan_limit();
        for (int i = 0; i < limit; ++i) {
            retired += slots_[i].counts.retired.get();
            freed += slots_[i].counts.freed.get();
        }
        return retired > freed ? retired - freed : 0;
    }

    /// Nodes and bytes allocated so far, over all threads (relaxed reads, as
    /// garbage()); exact while no thread allocates.
    struct allocation_totals {
        std::uint64_t nodes = 0;
        std::uint64_t bytes = 0;
    };
    allocation_totals allocated() const noexcept {
        allocation_totals out;
        const int limit = slots_.scan_limit();
        for (int i = 0; i < limit; ++i) {
            out.nodes += slots_[i].counts.allocated.get();
            out.bytes += slots_[i].counts.allocated_bytes.get();
        }
        return out;
    }

    /// Reads garbage() and raises the recorded peak (reclaimer_stats::
    /// garbage_peak). From any thread, registered or not; O(threads).
    std::uint64_t sample_garbage() noexcept {
        const std::uint64_t now = garbage();
        core::raise_to(garbage_peak_, now);
        return now;
    }

    /// Totals over all slots. Latency histograms are written without
    /// synchronization by their owners, so call this once threads are done.
    reclaimer_stats stats() const {
        reclaimer_stats out;
        const int limit = slots_.scan_limit();
        for (int i = 0; i < limit; ++i) slots_[i].counts.add_to(out);
        out.garbage = out.retired > out.freed ? out.retired - out.freed : 0;
        out.garbage_peak = std::max(garbage_peak_.load(std::memory_order_relaxed), out.garbage);
        free_.merge_latency(out.free_latency, limit);
        if constexpr (requires(const Local& l) { out.publish_latency.merge(l.publish_latency); }) {
            for (int i = 0; i < limit; ++i)
                out.publish_latency.merge(slots_[i].local.publish_latency);
        }
        // Every free counted as freed went through free_timed; one in
        // time_frees_every of them was timed.
        const std::uint64_t timed = out.free_latency.count();
        out.free_seconds = static_cast<double>(out.free_latency.sum_ns()) * 1e-9;
        if (timed != 0 && timed != out.freed && !SMR_MUTANT("free_seconds_not_scaled")) {
            out.free_seconds *= static_cast<double>(out.freed) / static_cast<double>(timed);
        }
        return out;
    }

    /// Starts recording events into `timeline` and each thread's garbage at
    /// every epoch it begins into `series` (either may be null). Both must
    /// outlive the domain's threads; attach before threads register. Off by
    /// default: an event site then costs one well-predicted branch.
    void attach_recorders(trace::timeline* timeline, trace::garbage_series* series) noexcept {
        assert(timeline == nullptr || config_.time_frees);  // free calls are events of a timeline
        free_.attach(timeline);
        recorders_.attach(timeline, series);
    }

    /// Nodes waiting in thread tid's amortized freeable list.
    std::size_t freeable_size(int tid) const noexcept { return slot_of(tid).freeable.size(); }

    const domain_config& config() const noexcept { return config_; }
    const core::thread_registry& registry() const noexcept { return slots_.registry(); }

    /// Which hooks Derived wrote itself rather than inherited
    /// (domain_concepts.hpp). Read here, where the hooks a scheme keeps
    /// private are visible: a scheme befriends its base, which calls them.
    static constexpr detail::hook_set written_hooks() noexcept {
        using detail::own_hook;
        using probe = detail::probe<Derived>;
        return {
            .begin_op = own_hook<&Derived::on_begin_op>,
            .end_op = own_hook<&Derived::on_end_op>,
            .protect = own_hook<&Derived::template on_protect<probe>>,
            .reader = own_hook<&Derived::make_reader>,
            .read_phase_begin = own_hook<&Derived::on_read_phase_begin>,
            .read_phase_end = own_hook<&Derived::template on_read_phase_end<>>,
            .quiescent = own_hook<&Derived::on_quiescent>,
            .come_online = own_hook<&Derived::come_online>,
            .go_offline = own_hook<&Derived::go_offline>,
            .hand_over_garbage = own_hook<&Derived::hand_over_garbage>,
            .on_thread_exit = own_hook<&Derived::on_thread_exit>,
            .tick_clock = own_hook<&Derived::tick_clock>,
            .on_allocate = own_hook<&Derived::on_allocate>,
            .compare_exchange_link = own_hook<&Derived::template on_compare_exchange_link<probe>>,
            .store_private_link = own_hook<&Derived::template on_store_private_link<probe>>,
        };
    }

  protected:
    struct slot {
        Local local{};
        core::limbo_bag freeable;  // amortized free: safe, not yet freed
        detail::thread_counters counts;
        std::uint32_t op_depth = 0;  // op_guards open; the owner's alone
        /// The registration's tag in the blocks it allocates (count_remote_frees).
        std::uint32_t owner_tag = 0;
        /// With time_frees: frees left before the next timed one, and the
        /// state of the generator of the gaps (the owner's alone).
        std::uint32_t frees_until_timed = 1;
        std::uint32_t timing_rng = 1;
        detail::flush_state flush;
    };
    using free_path = detail::free_path<slot>;

    slot& slot_of(int tid) noexcept { return slots_[tid]; }
    const slot& slot_of(int tid) const noexcept { return slots_[tid]; }
    Local& local(int tid) noexcept { return slot_of(tid).local; }
    const Local& local(int tid) const noexcept { return slot_of(tid).local; }
    core::thread_registry& threads() noexcept { return slots_.registry(); }
    /// Garbage of threads that unregistered: a scheme's on_thread_exit gives
    /// its bags with the labels it judges them by, and its slow paths adopt
    /// them.
    core::orphanage& orphans() noexcept { return orphans_; }
    /// For the scan schemes, at retire: the orphans join the caller's list
    /// (their nodes carry what its scan judges them by), so they count
    /// towards its next scan. A relaxed load when there are none.
    void adopt_orphans(int tid, core::limbo_bag& list) noexcept {
        if (!orphans_.empty()) [[unlikely]]
            adopt_all(adopter(tid), list);
    }

    /// After a retire outside an operation: an offline thread's garbage must
    /// not wait in its slot, where no barrier looks (one bundle per such
    /// retire, a small allocation: an offline retire is a rare path).
    void hand_over_if_offline(int tid) noexcept {
        if (slot_of(tid).flush.offline()) [[unlikely]] {
            hand_over(tid);
        }
    }

    /// Who adopts for thread tid: tid, or nobody while it is offline. A
    /// barrier does not wait for an offline thread, so it must not hold
    /// adopted bags out of the barrier's sight (a retire while offline
    /// touches the orphanage's adoption sites).
    int adopter(int tid) const noexcept {
        return slot_of(tid).flush.offline() ? core::orphanage::no_taker : tid;
    }

    /// Counts one allocation of a thread (`allocations` is its own count):
    /// true on every (`epoch_freq` x T)-th, T the slots in use, when the
    /// scheme's tick_clock advances. The common path compares with
    /// `epoch_freq` alone; T is read once the count has passed it.
    bool clock_due(std::uint32_t& allocations) const noexcept {
        if (++allocations < config_.epoch_freq) return false;
        const int threads = slots_.scan_limit();
        const std::uint64_t period = std::uint64_t{config_.epoch_freq} *
                                     static_cast<std::uint64_t>(threads > 1 ? threads : 1);
        if (allocations < std::min<std::uint64_t>(period, UINT32_MAX)) return false;
        allocations = 0;
        return true;
    }

    /// An smr::obj_base object may be retired only as its obj_base, the static
    /// type obj_base::retire passes; any other node as itself.
    template <class T>
    static constexpr bool retire_accepts() noexcept {
        if constexpr (requires { T::smr_has_own_deleter; }) {
            return std::is_same_v<std::remove_cv_t<T>, typename T::smr_obj_base>;
        } else {
            return true;
        }
    }

    /// Every scheme's retire starts here, which is where an smr::obj_base
    /// object retired past its retire() is refused at compile time (and
    /// core::entry_of refuses a node type that is not final).
    template <class T>
    void count_retired(int tid, const T* node) noexcept {
        count_retired(slot_of(tid), node);
    }
    template <class T>
    void count_retired(slot& s, [[maybe_unused]] const T* node) noexcept {
        static_assert(retire_accepts<T>(),
                      "retire an smr::obj_base object with object->retire(domain, self): it "
                      "stores the deleter and counts the object on the scheme's clock");
        core::note_retired(static_cast<const core::retired_node*>(node));  // debug builds
        s.counts.retired.add();
    }
    void count_signal(int tid) noexcept { slot_of(tid).counts.signals.add(); }
    void count_restart(int tid) noexcept { slot_of(tid).counts.restarts.add(); }
    void count_heavy_barrier(int tid) noexcept { slot_of(tid).counts.heavy_barriers.add(); }

    /// Whether the global epoch may advance now (domain_config::min_epoch_us,
    /// epoch_pacing.hpp). An epoch scheme asks before its scan.
    bool epoch_due() const noexcept { return pacing_.due(); }

    /// Called by the thread whose CAS advanced the global epoch to `epoch`.
    void note_epoch_advanced(int tid, std::uint64_t epoch = 0) {
        slot_of(tid).counts.epochs.add();
        pacing_.advanced();
        recorders_.record_event(tid, trace::event_kind::epoch_change, epoch);
    }

    /// Called by a thread of a scheme whose threads begin epochs of their own
    /// (reclaimer_traits::threads_begin_epochs) as it begins `epoch`, before
    /// it frees what that makes safe, with the nodes in its limbo bags. The
    /// garbage series records them with the thread's amortized freeable list:
    /// the Epochs paper's Figure 4 sums, per epoch, what each thread had
    /// unreclaimed when it began the epoch. The thread's own counts: no
    /// other thread's memory is read.
    void note_epoch_begun(int tid, std::uint64_t epoch, std::size_t limbo) {
        recorders_.epoch_begun(tid, epoch, [&]() -> std::uint64_t {
            return SMR_MUTANT("garbage_series_sums_every_thread") ? garbage()
                                                                  : limbo + freeable_size(tid);
        });
    }

    /// An instant event for the timeline (token pass, signal sent, ...).
    void record_event(int tid, trace::event_kind kind, std::uint64_t value) noexcept {
        recorders_.record_event(tid, kind, value);
    }

    /// Every node of `safe` may be freed: free it now (batch) or queue it on
    /// the freeable list (amortized). `safe` ends empty.
    void dispose_safe(int tid, core::limbo_bag& safe) noexcept {
        dispose_safe(tid, safe, 0, [] {});
    }

    /// As above; in batch mode calls `between()` after every `every` frees
    /// (token_periodic passes the token while it frees; 0 = never).
    template <class Between>
    void dispose_safe(int tid, core::limbo_bag& safe, std::uint32_t every, Between&& between) {
        free_.dispose(tid, slot_of(tid), safe, every, between);
    }

    /// Amortized free's per-operation step: k nodes plus the catch-up share,
    /// and the answer to a barrier's request. Inline: the two checks (the
    /// first always true in batch mode); the frees are out of line.
    void amortized_step(int tid) noexcept { amortized_step(tid, slot_of(tid)); }
    /// As above, with the caller's slot (one index computation per hook).
    void amortized_step(int tid, slot& s) noexcept {
        if (!s.freeable.empty() && !SMR_MUTANT("amortized_never_frees"))
            free_.amortized_free(tid, s);
        if (s.flush.pending()) [[unlikely]] {
            answer_flush(tid, s);
        }
    }

  private:
    Derived& derived() noexcept { return static_cast<Derived&>(*this); }

    SMR_SLOW_PATH void adopt_all(int tid, core::limbo_bag& list) noexcept {
        orphans_.take_all(list, tid);
    }

    /// The scheme's garbage to the orphanage; the amortized freeable list,
    /// already safe, is freed here (a thread leaving, going offline or
    /// answering a barrier pays for its own queued frees, and lfrc, which
    /// adopts nothing, is left no safe orphans).
    void hand_over(int tid) noexcept {
        derived().hand_over_garbage(tid);
        free_freeable_now(tid);
    }

    /// Going offline: the garbage goes to the orphanage and barriers stop
    /// waiting for the thread.
    void mark_offline(int tid) noexcept {
        hand_over(tid);
        slot_of(tid).flush.stop_answering();
    }
    /// Coming online: no request before now concerns the thread.
    void mark_online(int tid) noexcept { slot_of(tid).flush.start_answering(); }

    /// A barrier asked: hand the garbage over and answer.
    SMR_SLOW_PATH void answer_flush(int tid, slot& s) noexcept {
        s.flush.answer([&] { hand_over(tid); });
    }

    /// Frees the freeable list at once, whatever the free policy (hand_over,
    /// and the barrier for what it adopted).
    void free_freeable_now(int tid) noexcept { free_.free_now(tid, slot_of(tid)); }

    /// register_thread's setup of a claimed slot (may throw: the scheme's
    /// on_thread_enter sizes its scan buffers).
    void enter(int tid) {
        slot& s = slot_of(tid);
        // Nothing retired before now to hand over: no barrier waits for us.
        s.flush.start_answering();
        // relaxed: only uniqueness matters; 0 is never a registration's.
        s.owner_tag = owner_tags_.fetch_add(1, std::memory_order_relaxed) + 1;
        derived().on_thread_enter(tid);
    }

    /// allocate_outside_op's wait: an empty operation and a quiescent state
    /// per retry (epoch schemes advance and free there; QSBR declares it).
    class idle_while_waiting final : public alloc::wait_observer {
      public:
        idle_while_waiting(Derived& domain, lent self) noexcept : domain_(domain), self_(self) {}
        void between_retries() noexcept override {
            domain_.begin_op(self_);
            domain_.end_op(self_);
            domain_.quiescent(self_);
        }

      private:
        Derived& domain_;
        lent self_;
    };

    void release_memory(core::retired_entry entry) noexcept { free_.release(entry.release()); }

    domain_config config_;
    detail::thread_slots<slot> slots_;
    free_path free_;
    detail::epoch_pacing pacing_;
    detail::recorders recorders_;
    alignas(core::false_sharing_range) core::orphanage orphans_;
    detail::flush_requests flush_requests_;
    std::atomic<std::uint32_t> owner_tags_{0};  // registrations so far
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> garbage_peak_{0};
};

}  // namespace smr
