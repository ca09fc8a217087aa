// What every reclaimer shares: thread slots, node allocation, the one free
// function, the free policy, and the statistics every reclaimer reports.
//
// A reclaimer is a class `R : domain_base<R, R's per-thread state, R's node
// header>` that hides the hooks it needs (begin_op, retire, ...) and inherits
// empty inline defaults for the rest, so a hook a scheme does not use costs
// nothing after inlining. docs/design.md describes the hook contract.
#pragma once

#include <algorithm>
#include <atomic>
#include <cassert>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <new>
#include <thread>
#include <type_traits>
#include <utility>

#include "smr/alloc/wait_observer.hpp"
#include "smr/core/asymmetric_fence.hpp"
#include "smr/core/clock.hpp"
#include "smr/core/compiler.hpp"
#include "smr/core/counters.hpp"
#include "smr/core/limbo_bag.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/orphanage.hpp"
#include "smr/core/owner_tag.hpp"
#include "smr/core/padded.hpp"
#include "smr/core/resource_users.hpp"
#include "smr/core/retired_node.hpp"
#include "smr/core/thread_registry.hpp"
#include "smr/free_policy.hpp"
#include "smr/reclaim/domain_concepts.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/reclaim/reader.hpp"
#include "smr/reclaim/slots.hpp"
#include "smr/reclaim/traits.hpp"
#include "smr/trace/latency_histogram.hpp"
#include "smr/trace/timeline.hpp"

namespace smr {

/// Run-time parameters of every reclaimer. Each scheme reads the ones it
/// documents and ignores the rest, so one struct configures any of them.
struct domain_config {
    /// Most threads registered at once (not in total: slots are reused).
    std::size_t max_threads = 256;
    /// Where nodes are allocated and freed. Null (the default) calls
    /// std::malloc and std::free directly, the path every measurement of the
    /// reclaimers' own cost uses; any std::pmr::memory_resource may be given
    /// instead (smr::alloc::pool_resource bounds memory for Hart et al.'s
    /// exhaustion experiments). It must outlive the domain, and its allocate
    /// reports exhaustion by throwing, as std::pmr requires.
    std::pmr::memory_resource* memory = nullptr;
    free_policy free{};
    /// Scan-based schemes (rcu, hp, he, ibr, wfe, nbr) reclaim when a
    /// thread's retire list reaches this many nodes. A library's default: a
    /// thread holds at most about this many unreclaimed nodes, and a scan's
    /// cost is spread over as many retires (folly's hazard pointers use
    /// 1000). smrbench sets 32K, the Epochs paper's uniform batch size
    /// (Section 5) and NBR's default, which suits throughput runs of
    /// millions of operations but keeps a program that retires a few
    /// thousand nodes from freeing any.
    std::size_t bag_threshold = 1024;
    /// ebr, nebr: critical-region entries between epoch-advance attempts
    /// (Hart et al. use 100).
    std::uint32_t advance_every = 100;
    /// debra: operations between looks at the next thread's announcement.
    /// 10 is MIN_OPS_BEFORE_READ of the DEBRA in the Epochs paper's artifact
    /// (Brown's original used 20): checking more often advances the epoch
    /// sooner but, with few threads, spends more of each operation on epoch
    /// changes (alone, a thread advances the epoch every check_every operations).
    std::uint32_t check_every = 10;
    /// rcu, he, ibr, wfe: a thread increments the global epoch / era every
    /// `epoch_freq` x T of its allocations, T the thread slots in use (the
    /// IBR benchmark's and the Epochs artifact's epochFreq x task_num), so
    /// the era moves every `epoch_freq` allocations per thread whatever the
    /// thread count.
    std::uint32_t epoch_freq = 150;
    /// hp: a thread scans its retire list when it reaches
    /// max(bag_threshold, hp_scan_factor x H + hp_scan_offset), H the hazard
    /// slots of registered threads. Michael's R = H + Omega(H); 2 keeps his
    /// amortized O(1) scan cost when bag_threshold is set below it. Hart et
    /// al.'s R = 2H + 100 is factor 2, offset 100 and bag_threshold 1.
    std::uint32_t hp_scan_factor = 2;
    std::uint32_t hp_scan_offset = 0;
    /// wfe: fast-path attempts of protect before it asks for help (the WFE
    /// paper's and its artifact's 16).
    std::uint32_t wfe_fast_attempts = 16;
    /// token_periodic: frees between checks for the token while freeing.
    std::uint32_t token_check_every = 100;
    /// nbr, nbrplus: the neutralization signal (sent with pthread_kill to
    /// registered threads only). Must not be SIGKILL or SIGSTOP, and must
    /// not already have a handler other than NBR's.
    int nbr_signal = SIGUSR1;
    /// nbrplus: bag size at which a thread bookmarks its bag and starts
    /// watching for another thread's signal broadcast (0 = half the high
    /// watermark, the paper's "one half full").
    std::size_t nbr_low_watermark = 0;
    /// nbrplus: bag size at which a thread broadcasts signals itself, like
    /// nbr at bag_threshold (0 = bag_threshold).
    std::size_t nbr_high_watermark = 0;
    /// hp, he, ibr, wfe (and the C++26 hazard_pointer): how a reader's
    /// announcement is ordered before its re-read of the source. asymmetric
    /// (the default, folly's and the Rust crates' choice) makes the reader's
    /// side a compiler barrier and has every scan call membarrier once;
    /// symmetric is Michael's full fence per protected pointer. asymmetric
    /// falls back to symmetric where the process cannot use membarrier
    /// (core/asymmetric_fence.hpp; reclaimer_stats::heavy_barriers counts
    /// the calls).
    fence_mode fence = fence_mode::asymmetric;
    /// Time every free() call into reclaimer_stats::free_latency (a
    /// per-thread histogram of 2.7 KB) and free_seconds, which stay zero
    /// otherwise. Costs two timestamp reads per free and, for the first
    /// domain of the process that asks, a 20 ms calibration of the
    /// timestamp counter. A benchmark's setting (smrbench turns it on; a
    /// timeline needs it).
    bool time_frees = false;
    /// With time_frees: time one free in this many, on average (1, the
    /// default: every free; 0 counts as 1). Two timestamp reads cost more
    /// than many a free() (36 ns on our machines), so timing every call
    /// slows the very batches it measures. The timed frees are drawn at
    /// random gaps, uniform in [1, 2n - 1], which no periodic pattern of the
    /// allocator (a cache flush every k frees) can alias with; free_latency
    /// holds the timed calls, and free_seconds is their sum scaled by
    /// frees / timed frees. A timeline records every call: attaching one
    /// times them all.
    std::uint32_t time_frees_every = 1;
    /// Count the retired nodes each thread frees that another thread
    /// allocated (reclaimer_stats::remote_frees): the frees of the Epochs
    /// paper's remote batch free. Every node the domain allocates then
    /// carries its allocating thread's 4-byte tag after it (core/owner_tag.hpp),
    /// in a block rounded up to the node's alignment, which may move a node to
    /// the next size class of the allocator (not the 40-byte DGT node: 48 bytes
    /// is its class anyway). Reading the tag, outside the timed part of a
    /// free, loads a line of the freed node that an untimed free need not.
    /// Off by default: a domain that does not count allocates and frees
    /// exactly as before, through the same one branch.
    bool count_remote_frees = false;
    /// ebr, nebr, debra, qsbr: the global epoch advances at most once per
    /// this many microseconds (0: as soon as the scheme allows). Epochs as
    /// long as a large machine's, on a small one: with 192 threads an epoch
    /// lasts while every thread's announcement is scanned and the slowest
    /// catches up, and each limbo bag grows to tens of thousands of nodes,
    /// which the Epochs paper's remote batch free is made of; on 2 cores an
    /// epoch ends in microseconds and bags hold hundreds. Attempts in the
    /// meantime return at once, so the scheme's check costs a timestamp read.
    /// Safety is unchanged: an epoch ends later, never sooner.
    std::uint32_t min_epoch_us = 0;
};

/// The counters every reclaimer reports. Garbage = nodes retired but not yet
/// freed, including those in thread-local bags and freeable lists.
struct reclaimer_stats {
    std::uint64_t allocated = 0;
    std::uint64_t allocated_bytes = 0;
    std::uint64_t retired = 0;
    std::uint64_t freed = 0;
    std::uint64_t discarded = 0;  ///< allocated, never published, freed at once
    std::uint64_t garbage = 0;
    /// The most garbage any sample_garbage() call saw, or `garbage` if more.
    /// Schemes never sample on their own: summing every thread's counters at
    /// each epoch change or scan would add a cross-thread read per thread to
    /// the very path that is measured (and more with more threads). A
    /// program samples from a thread of its own (smrbench: every millisecond,
    /// and when the workers stop; with a garbage series, at every epoch change).
    std::uint64_t garbage_peak = 0;
    std::uint64_t epochs = 0;  ///< global epoch advances (or token rounds)
    std::uint64_t signals = 0;
    std::uint64_t restarts = 0;
    /// Asymmetric fences' heavy side (membarrier calls), one per scan.
    std::uint64_t heavy_barriers = 0;
    /// Of `freed`, the nodes another thread had allocated (with
    /// domain_config::count_remote_frees; zero otherwise). A thread is one
    /// registration: a node allocated before its thread unregistered and
    /// re-registered counts as another thread's.
    std::uint64_t remote_frees = 0;
    /// Time inside free() calls, summed over threads (domain_config::time_frees).
    double free_seconds = 0;
    trace::latency_histogram free_latency;  ///< per free() call (time_frees)
};

template <class Derived, class Local, class NodeHeader = core::retired_node>
class domain_base {
    static_assert(std::is_base_of_v<core::retired_node, NodeHeader>);

  public:
    /// Data-structure nodes derive from this (see ds/lazylist.hpp).
    using node_base = NodeHeader;

    explicit domain_base(const domain_config& config)
        : config_(config),
          memory_(config.memory),
          direct_(config.memory == nullptr && !config.count_remote_frees),
          registry_(config.max_threads),
          slots_(std::make_unique<core::padded<slot>[]>(config.max_threads)),
          latency_(config.time_frees ? std::make_unique<core::padded<trace::latency_histogram>[]>(
                                           config.max_threads)
                                     : nullptr),
          ticks_(config.time_frees ? core::ns_per_tick() : 1.0),
          timing_gaps_(2 * std::clamp<std::uint32_t>(config.time_frees_every, 1, 1u << 30) - 1),
          min_epoch_ticks_(
              config.min_epoch_us == 0
                  ? 0
                  : static_cast<std::uint64_t>(config.min_epoch_us * 1e3 / core::ns_per_tick())),
          last_advance_ticks_(config.min_epoch_us == 0 ? 0 : core::now_ticks()) {
        // Here, where Derived is complete: every scheme is checked where it is built.
        static_assert(detail::hooks_follow_traits<Derived>::value);
        for (std::size_t i = 0; i < config.max_threads; ++i) {
            // Any odd multiple of i + 1 is non-zero, as xorshift needs.
            slots_[i]->timing_rng = static_cast<std::uint32_t>((i + 1) * 0x9e3779b9u);
        }
        // A pool_resource refuses to be destroyed while we may still free into it.
        if (memory_ != nullptr && !SMR_MUTANT("domain_never_attaches_its_resource"))
            core::resource_users::attach(static_cast<const void*>(memory_));
    }

    domain_base(const domain_base&) = delete;
    domain_base& operator=(const domain_base&) = delete;

    /// Frees every node still held, safe or not: by now no thread may run.
    /// A thread still registered would use the freed slots and nodes: the
    /// program stops instead, in every build.
    ~domain_base() {
        SMR_CHECK(registry_.registered_count() == 0,
                  "domain destroyed while threads are still registered (destroy or release "
                  "every thread_handle first)");
        for (std::size_t i = 0; i < config_.max_threads; ++i) {
            slot& s = *slots_[i];
            if constexpr (requires(Local & l, core::limbo_bag & b) { l.drain_into(b); }) {
                s.local.drain_into(s.freeable);
            }
            s.freeable.consume([this](core::retired_entry e) { release_memory(e); });
        }
        core::limbo_bag orphaned;
        orphans_.take_all(orphaned, core::orphanage::any_taker);
        orphaned.consume([this](core::retired_entry e) { release_memory(e); });
        if (memory_ != nullptr) core::resource_users::detach(static_cast<const void*>(memory_));
    }

    // ---- thread registration -------------------------------------------------

    /// Claims a slot for the calling thread. Prefer smr::thread_handle.
    /// Throws std::length_error when every slot is taken, or what the
    /// scheme's setup throws (std::bad_alloc); the slot is then free again.
    int register_thread() {
        const int tid = registry_.acquire();
        try {
            enter(tid);
        } catch (...) {
            registry_.release(tid);
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
        registry_.release(tid);
    }

    /// Stops the program unless `tid` is a registered slot: every build, on
    /// the paths that are not per operation (unregister, barrier, offline and
    /// online); an operation's own path asserts it in debug builds (op_guard).
    void check_registered(int tid) const noexcept {
        SMR_CHECK(registry_.registered(tid),
                  "tid is not a registered thread of this domain (use smr::thread_handle)");
    }
    bool registered(int tid) const noexcept { return registry_.registered(tid); }

    /// The open op_guards of thread tid (guards.hpp): only the outermost one
    /// begins and ends an operation.
    std::uint32_t& operation_depth(int tid) noexcept { return slot_of(tid).op_depth; }

    // ---- hooks with empty defaults (a reclaimer hides the ones it needs) -----

    void begin_op(int tid) noexcept { amortized_step(tid); }
    void end_op(int) noexcept {}

    /// Reads a shared pointer that will be dereferenced. Acquire: pairs with
    /// the release (or CAS) that published the node, so its fields are
    /// initialized. Reservation schemes announce and validate here.
    template <class T>
    T* protect(int, int index, const std::atomic<T*>& source) noexcept {
        // Unused here, but hp's would take it.
        if (!SMR_MUTANT("slot_unchecked_where_unused")) detail::check_slot(index);
        return source.load(std::memory_order_acquire);
    }
    /// Thread tid's protect for one traversal: reader(tid).protect(slot,
    /// source) is protect(tid, slot, source). A traversal takes it once and
    /// protects each node through it, so what a reservation scheme's protect
    /// needs (the thread's slots, the fence mode) stays in registers; through
    /// protect(tid, ...) it is reloaded after every node's acquire load. Its
    /// slots (reader.slot(index), reclaim/reader.hpp) name a reservation once
    /// per traversal. Valid in its operation; a class that hides protect must
    /// hide reader as well.
    detail::forwarding_reader<Derived> reader(int tid) noexcept { return {derived(), tid}; }
    void read_phase_begin(int) noexcept {}
    template <class... Reserved>
    void read_phase_end(int, Reserved*...) noexcept {}
    void quiescent(int) noexcept {}
    /// Extended quiescent states, as in liburcu: an offline thread does not
    /// hold up grace periods and must not touch shared nodes. Going offline
    /// hands the thread's garbage over, so barrier() need not wait for it.
    void thread_online(int tid) noexcept {
        check_registered(tid);
        mark_online(tid);
        derived().come_online(tid);
    }
    void thread_offline(int tid) noexcept {
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
        derived().begin_op(tid);
        derived().end_op(tid);
        derived().quiescent(tid);
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
    void barrier(int tid) {
        check_registered(tid);
        // It would free nodes the caller's own operation may still hold.
        SMR_CHECK(slot_of(tid).op_depth == 0,
                  "barrier() inside an operation: it would free what the operation holds");
        if constexpr (Derived::traits.family != reclaimer_family::leak) {
            if (!barrier_mutex_.try_lock()) {
                // Another barrier runs and waits for us: offline (our garbage
                // handed over, no grace period held up) until our turn.
                derived().thread_offline(tid);
                barrier_mutex_.lock();
                derived().thread_online(tid);
            }
            const std::lock_guard<std::mutex> one_at_a_time(barrier_mutex_, std::adopt_lock);
            orphans_.reserve_for(tid);
            derived().before_flush_request(tid);
            const std::uint64_t request = ask_others_to_flush(tid);
            for (;;) {
                // At least one round, even with nothing in sight: the liburcu
                // adapters' nodes are in liburcu's queue until its barrier.
                hand_over(tid);
                derived().flush_step(tid);
                free_freeable_now(tid);
                hand_over(tid);  // what the round could not free yet
                if (others_answered(tid, request) && orphans_.settled()) break;
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
    bool compare_exchange_link(int, std::atomic<T*>& link, T*& expected, T* desired,
                               std::memory_order success = std::memory_order_acq_rel,
                               std::memory_order failure = std::memory_order_acquire) noexcept {
        return link.compare_exchange_strong(expected, desired, success, failure);
    }
    /// A store into a link of a node no other thread can see yet.
    template <class T>
    void store_private_link(int, std::atomic<T*>& link, T* value) noexcept {
        link.store(value, std::memory_order_relaxed);
    }

    // ---- allocation ----------------------------------------------------------

    /// Allocates and constructs a node; the reclaimer may stamp it (birth era).
    /// Throws std::bad_alloc when the allocator has no memory.
    template <class T, class... Args>
    T* allocate(int tid, Args&&... args) {
        static_assert(std::is_base_of_v<node_base, T>, "nodes must derive from Domain::node_base");
        static_assert(
            !requires { T::smr_has_own_deleter; },
            "an smr::obj_base object is made by its user and freed by its deleter; "
            "allocate would bypass the deleter");
        constexpr core::node_memory shape = core::memory_of_type<T>;
        void* memory = allocate_memory(tid, shape.bytes, shape.align);
        T* node;
        try {
            node = ::new (memory) T(std::forward<Args>(args)...);
        } catch (...) {
            free_memory({memory, shape.bytes, shape.align});
            throw;
        }
        if constexpr (std::is_base_of_v<core::destroy_word, T>) {
            node->destroy = &core::destroy_as<T>;
        }
        slot& s = slot_of(tid);
        s.allocated.add();
        s.allocated_bytes.add(sizeof(T));
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
    T* allocate_outside_op(int tid, Args&&... args) {
        if (memory_ == nullptr) [[likely]]
            return derived().template allocate<T>(tid, std::forward<Args>(args)...);
        idle_while_waiting idle(derived(), tid);
        alloc::observe_waits scope(idle);
        return derived().template allocate<T>(tid, std::forward<Args>(args)...);
    }

    /// Frees a node that was allocated but never made reachable (a failed
    /// insert): no other thread can hold it, so no grace period is needed.
    /// Not timed: free_seconds and the free latency histogram cover the
    /// frees counted as freed (retired garbage), so time per freed node is
    /// their ratio.
    template <class T>
    void discard(int tid, T* node) noexcept {
        slot_of(tid).discarded.add();
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
    void free_exclusive(int tid, T* node) noexcept {
        slot& s = slot_of(tid);
        s.retired.add();
        s.freed.add();
        free_timed(tid, s, core::entry_of(node));
    }

    // ---- statistics ----------------------------------------------------------

    /// Unreclaimed nodes now. Safe to call while threads run (relaxed reads:
    /// a recent value, not a linearizable one).
    std::uint64_t garbage() const noexcept {
        std::uint64_t retired = 0;
        std::uint64_t freed = 0;
        const int limit = registry_.scan_limit();
        for (int i = 0; i < limit; ++i) {
            retired += slot_of(i).retired.get();
            freed += slot_of(i).freed.get();
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
        const int limit = registry_.scan_limit();
        for (int i = 0; i < limit; ++i) {
            out.nodes += slot_of(i).allocated.get();
            out.bytes += slot_of(i).allocated_bytes.get();
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
        const int limit = registry_.scan_limit();
        for (int i = 0; i < limit; ++i) {
            const slot& s = *slots_[static_cast<std::size_t>(i)];
            out.allocated += s.allocated.get();
            out.allocated_bytes += s.allocated_bytes.get();
            out.retired += s.retired.get();
            out.freed += s.freed.get();
            out.discarded += s.discarded.get();
            out.epochs += s.epochs.get();
            out.signals += s.signals.get();
            out.restarts += s.restarts.get();
            out.heavy_barriers += s.heavy_barriers.get();
            out.remote_frees += s.remote_frees.get();
            if (latency_ != nullptr) out.free_latency.merge(*latency_[static_cast<std::size_t>(i)]);
        }
        out.garbage = out.retired > out.freed ? out.retired - out.freed : 0;
        out.garbage_peak = std::max(garbage_peak_.load(std::memory_order_relaxed), out.garbage);
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
    /// every epoch it begins into `series` (either may be null). Both must outlive the
    /// domain's threads; attach before threads register. Off by default: an
    /// event site then costs one well-predicted branch.
    void attach_recorders(trace::timeline* timeline, trace::garbage_series* series) noexcept {
        assert(timeline == nullptr || config_.time_frees);  // free calls are events of a timeline
        timeline_ = timeline;
        if (timeline != nullptr) timing_gaps_ = 1;  // every call is an event
        series_ = series;
    }

    /// Nodes waiting in thread tid's amortized freeable list.
    std::size_t freeable_size(int tid) const noexcept { return slot_of(tid).freeable.size(); }

    const domain_config& config() const noexcept { return config_; }
    const core::thread_registry& registry() const noexcept { return registry_; }

    /// Which hooks Derived wrote itself rather than inherited
    /// (domain_concepts.hpp). Read here, where the hooks a scheme keeps
    /// private are visible: a scheme befriends its base, which calls them.
    static constexpr detail::hook_set written_hooks() noexcept {
        using detail::own_hook;
        using probe = detail::probe<Derived>;
        return {
            .begin_op = own_hook<&Derived::begin_op>,
            .end_op = own_hook<&Derived::end_op>,
            .protect = own_hook<&Derived::template protect<probe>>,
            .reader = own_hook<&Derived::reader>,
            .read_phase_begin = own_hook<&Derived::read_phase_begin>,
            .read_phase_end = own_hook<&Derived::template read_phase_end<>>,
            .quiescent = own_hook<&Derived::quiescent>,
            .come_online = own_hook<&Derived::come_online>,
            .go_offline = own_hook<&Derived::go_offline>,
            .hand_over_garbage = own_hook<&Derived::hand_over_garbage>,
            .on_thread_exit = own_hook<&Derived::on_thread_exit>,
            .tick_clock = own_hook<&Derived::tick_clock>,
            .on_allocate = own_hook<&Derived::on_allocate>,
            .compare_exchange_link = own_hook<&Derived::template compare_exchange_link<probe>>,
            .store_private_link = own_hook<&Derived::template store_private_link<probe>>,
        };
    }

  protected:
    struct slot {
        Local local{};
        core::limbo_bag freeable;  // amortized free: safe, not yet freed
        core::owner_counter allocated, allocated_bytes, retired, freed, discarded;
        core::owner_counter epochs, signals, restarts, heavy_barriers, remote_frees;
        std::uint32_t op_depth = 0;  // op_guards open; the owner's alone
        /// The registration's tag in the blocks it allocates (count_remote_frees).
        std::uint32_t owner_tag = 0;
        /// With time_frees: frees left before the next timed one, and the
        /// state of the generator of the gaps (the owner's alone).
        std::uint32_t frees_until_timed = 1;
        std::uint32_t timing_rng = 1;
        /// The latest barrier request that concerns the thread (written by
        /// barriers) and the latest it answered (by the owner; `answered_offline`
        /// while offline).
        std::atomic<std::uint64_t> flush_asked{0};
        std::atomic<std::uint64_t> flush_done{0};
    };
    static constexpr std::uint64_t answered_offline = std::numeric_limits<std::uint64_t>::max();

    /// A hook that touches its slot more than once takes it once: the index
    /// is recomputed after every atomic access otherwise.
    /// A registered thread's id is in [0, max_threads): the one place it
    /// becomes an index.
    slot& slot_of(int tid) noexcept { return *slots_[static_cast<std::size_t>(tid)]; }
    const slot& slot_of(int tid) const noexcept { return *slots_[static_cast<std::size_t>(tid)]; }
    Local& local(int tid) noexcept { return slot_of(tid).local; }
    const Local& local(int tid) const noexcept { return slot_of(tid).local; }
    core::thread_registry& threads() noexcept { return registry_; }
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
        // relaxed: the thread's own slot.
        if (slot_of(tid).flush_done.load(std::memory_order_relaxed) == answered_offline)
            [[unlikely]] {
            hand_over(tid);
        }
    }

    /// Going offline: the garbage goes to the orphanage and barriers stop
    /// waiting for the thread (its flush_done is above any request).
    void mark_offline(int tid) noexcept {
        hand_over(tid);
        // release: the bags given above happen before a barrier that reads it.
        slot_of(tid).flush_done.store(answered_offline, std::memory_order_release);
    }
    /// Coming online: no request before now concerns the thread.
    void mark_online(int tid) noexcept {
        slot& s = slot_of(tid);
        // acquire: as in register_thread.
        s.flush_done.store(s.flush_asked.load(std::memory_order_acquire),
                           std::memory_order_relaxed);
    }

    /// Who adopts for thread tid: tid, or nobody while it is offline. A
    /// barrier does not wait for an offline thread, so it must not hold
    /// adopted bags out of the barrier's sight (a retire while offline
    /// touches the orphanage's adoption sites).
    int adopter(int tid) const noexcept {
        // relaxed: the thread's own slot.
        return slot_of(tid).flush_done.load(std::memory_order_relaxed) == answered_offline
                   ? core::orphanage::no_taker
                   : tid;
    }

    /// Counts one allocation of a thread (`allocations` is its own count):
    /// true on every (`epoch_freq` x T)-th, T the slots in use, when the
    /// scheme's tick_clock advances. The common path compares with
    /// `epoch_freq` alone; T is read once the count has passed it.
    bool clock_due(std::uint32_t& allocations) const noexcept {
        if (++allocations < config_.epoch_freq) return false;
        const int threads = registry_.scan_limit();
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
                      "retire an smr::obj_base object with object->retire(domain, tid): it "
                      "stores the deleter and counts the object on the scheme's clock");
        core::note_retired(static_cast<const core::retired_node*>(node));  // debug builds
        s.retired.add();
    }
    void count_signal(int tid) noexcept { slot_of(tid).signals.add(); }
    void count_restart(int tid) noexcept { slot_of(tid).restarts.add(); }
    void count_heavy_barrier(int tid) noexcept { slot_of(tid).heavy_barriers.add(); }

    /// Whether the global epoch may advance now (domain_config::min_epoch_us):
    /// always without a minimum, else once the last advance (or the domain's
    /// construction) is that long ago. An epoch scheme asks before its scan.
    bool epoch_due() const noexcept {
        if (min_epoch_ticks_ == 0 || SMR_MUTANT("min_epoch_ignored")) [[likely]]
            return true;
        return min_epoch_passed();
    }
    /// Out of line: inlined, the timestamp read kept ebr's begin_op, which
    /// holds its advance attempt, from being inlined into operations.
    SMR_SLOW_PATH bool min_epoch_passed() const noexcept {
        // relaxed: a rate limit, not a synchronization; the scan and the CAS
        // that follow decide safety as they always do.
        return core::now_ticks() - last_advance_ticks_.load(std::memory_order_relaxed) >=
               min_epoch_ticks_;
    }

    /// Called by the thread whose CAS advanced the global epoch to `epoch`.
    void note_epoch_advanced(int tid, std::uint64_t epoch = 0) {
        slot_of(tid).epochs.add();
        if (min_epoch_ticks_ != 0) {
            last_advance_ticks_.store(core::now_ticks(), std::memory_order_relaxed);
        }
        if (timeline_ != nullptr) [[unlikely]] {
            timeline_->record_instant(tid, trace::event_kind::epoch_change, core::now_ticks(),
                                      epoch);
        }
    }

    /// Called by a thread of a scheme whose threads begin epochs of their own
    /// (reclaimer_traits::threads_begin_epochs) as it begins `epoch`, before
    /// it frees what that makes safe, with the nodes in its limbo bags. The
    /// garbage series records them with the thread's amortized freeable list:
    /// the Epochs paper's Figure 4 sums, per epoch, what each thread had
    /// unreclaimed when it began the epoch. The thread's own counts: no
    /// other thread's memory is read.
    void note_epoch_begun(int tid, std::uint64_t epoch, std::size_t limbo) {
        if (series_ != nullptr) [[unlikely]] {
            const std::uint64_t mine = SMR_MUTANT("garbage_series_sums_every_thread")
                                           ? garbage()
                                           : limbo + freeable_size(tid);
            series_->record(tid, core::now_ticks(), epoch, mine);
        }
    }

    /// An instant event for the timeline (token pass, signal sent, ...).
    void record_event(int tid, trace::event_kind kind, std::uint64_t value) noexcept {
        if (timeline_ != nullptr) [[unlikely]] {
            timeline_->record_instant(tid, kind, core::now_ticks(), value);
        }
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
        slot& s = slot_of(tid);
        if (config_.free.mode == free_mode::amortized) {
            s.freeable.splice_back(safe);
            return;
        }
        if (timeline_ != nullptr) [[unlikely]] {
            free_batch<true>(tid, s, safe, every, between);
        } else {
            free_batch<false>(tid, s, safe, every, between);
        }
    }

    /// Amortized free's per-operation step: k nodes plus the catch-up share.
    /// Inline: the empty check (always true in batch mode); the frees are
    /// out of line (not cold: in amortized mode they run at most operations).
    void amortized_step(int tid) noexcept { amortized_step(tid, slot_of(tid)); }
    /// As above, with the caller's slot (one index computation per hook).
    void amortized_step(int tid, slot& s) noexcept {
        if (!s.freeable.empty() && !SMR_MUTANT("amortized_never_frees")) amortized_free(tid, s);
        // relaxed: the thread's own slot; answer_flush acquires. An offline
        // thread (answered_offline, above every request) answers nothing,
        // even when it runs an operation to retire.
        if (s.flush_asked.load(std::memory_order_relaxed) >
            s.flush_done.load(std::memory_order_relaxed)) [[unlikely]] {
            answer_flush(tid, s);
        }
    }

  private:
    /// Batch free of `safe`, block by block (no per-node bag bookkeeping);
    /// between() may append to `safe`, so the bag is taken again until it
    /// stays empty. Traced: the timeline is attached (the untraced loop does
    /// not test for it at every node).
    template <bool Traced, class Between>
    void free_batch(int tid, slot& s, core::limbo_bag& safe, std::uint32_t every,
                    Between& between) {
        const std::uint64_t batch_start = Traced ? core::now_ticks() : 0;
        std::size_t batch_size = 0;
        std::uint32_t since_check = 0;
        while (!safe.empty()) {
            core::limbo_bag batch = std::move(safe);
            batch.consume([&](core::retired_entry entry) {
                free_timed<Traced>(tid, s, entry);
                // Per node: a sample taken while a long batch runs counts
                // what it freed so far as freed.
                if (!SMR_MUTANT("batch_counts_freed_at_its_end")) s.freed.add();
                ++batch_size;
                if (every != 0 && ++since_check == every) {
                    since_check = 0;
                    between();
                }
            });
        }
        if (SMR_MUTANT("batch_counts_freed_at_its_end")) s.freed.add(batch_size);
        if constexpr (Traced) {
            if (batch_size != 0) {
                timeline_->record(tid, trace::event_kind::batch_free, batch_start,
                                  core::now_ticks(), batch_size);
            }
        }
    }

    [[gnu::noinline]] void amortized_free(int tid, slot& s) noexcept {
        std::size_t quota = config_.free.k;
        if (config_.free.catchup_divisor != 0)
            quota += s.freeable.size() / config_.free.catchup_divisor;
        if (SMR_MUTANT("amortized_frees_whole_list")) quota = s.freeable.size();
        std::size_t freed = 0;
        for (; freed != quota; ++freed) {
            const core::retired_entry entry = s.freeable.pop_front();
            if (!entry) break;
            free_timed(tid, s, entry);
        }
        s.freed.add(freed);
    }

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

    /// A barrier asked (its request number is above what we answered): hand
    /// the garbage over and answer.
    SMR_SLOW_PATH void answer_flush(int tid, slot& s) noexcept {
        // acquire: pairs with ask_others_to_flush's release, so a barrier's
        // reservation of the orphanage is visible from here on.
        const std::uint64_t asked = s.flush_asked.load(std::memory_order_acquire);
        hand_over(tid);
        // release: the bags given above happen before the barrier's read.
        s.flush_done.store(asked, std::memory_order_release);
    }

    /// Called with barrier_mutex_ held, so requests only grow.
    std::uint64_t ask_others_to_flush(int tid) noexcept {
        const std::uint64_t request = ++flush_requests_;
        const int limit = registry_.scan_limit();
        for (int i = 0; i < limit; ++i) {
            // release: the orphanage's reservation happens before an answer.
            if (i != tid) slot_of(i).flush_asked.store(request, std::memory_order_release);
        }
        return request;
    }

    /// Every thread registered when `request` was made has answered it, gone
    /// offline or unregistered (handing its garbage over either way). A slot
    /// taken after the request (its flush_asked is older) had nothing to hand.
    bool others_answered(int tid, std::uint64_t request) const noexcept {
        const int limit = registry_.scan_limit();
        for (int i = 0; i < limit; ++i) {
            if (i == tid || !registry_.in_use(i)) continue;
            const slot& s = slot_of(i);
            // acquire: pairs with answer_flush's and mark_offline's release.
            if (s.flush_asked.load(std::memory_order_relaxed) >= request &&
                s.flush_done.load(std::memory_order_acquire) < request) {
                return false;
            }
        }
        return true;
    }

    /// Frees the freeable list at once, whatever the free policy (hand_over,
    /// and the barrier for what it adopted).
    void free_freeable_now(int tid) noexcept {
        slot& s = slot_of(tid);
        if (s.freeable.empty()) return;
        core::limbo_bag all = std::move(s.freeable);
        auto nothing = [] {};
        free_batch<false>(tid, s, all, 0, nothing);
    }

    /// register_thread's setup of a claimed slot (may throw: the scheme's
    /// on_thread_enter sizes its scan buffers).
    void enter(int tid) {
        slot& s = slot_of(tid);
        // Nothing retired before now to hand over: no barrier waits for us.
        // acquire: pairs with ask_others_to_flush's release, so a barrier's
        // reservation of the orphanage is visible before we could adopt.
        s.flush_done.store(s.flush_asked.load(std::memory_order_acquire),
                           std::memory_order_relaxed);
        // relaxed: only uniqueness matters; 0 is never a registration's.
        s.owner_tag = owner_tags_.fetch_add(1, std::memory_order_relaxed) + 1;
        derived().on_thread_enter(tid);
    }

    /// allocate_outside_op's wait: an empty operation and a quiescent state
    /// per retry (epoch schemes advance and free there; QSBR declares it).
    class idle_while_waiting final : public alloc::wait_observer {
      public:
        idle_while_waiting(Derived& domain, int tid) noexcept : domain_(domain), tid_(tid) {}
        void between_retries() noexcept override {
            domain_.begin_op(tid_);
            domain_.end_op(tid_);
            domain_.quiescent(tid_);
        }

      private:
        Derived& domain_;
        int tid_;
    };

    /// The two places memory meets the allocator. The direct case (no
    /// resource, no owner tags) is tested first and inlined: a run with the
    /// system allocator pays one predicted branch per node for the hooks.
    /// The other paths are out of line and cold (a pool or owner tags: runs
    /// that pay a virtual call or a tag per node anyway), so that they weigh
    /// nothing on the inlining of allocate into its structure's operations:
    /// as plain out-of-line calls they kept dgt_bst's insert from being
    /// inlined into smrbench's loop (+10 instructions per operation).
    void* allocate_memory(int tid, std::size_t bytes, std::size_t align) {
        if (direct_) [[likely]]
            return allocate_from_system(bytes, align);
        return allocate_indirect(tid, bytes, align);
    }
    SMR_SLOW_PATH void* allocate_indirect(int tid, std::size_t bytes, std::size_t align) {
        if (!config_.count_remote_frees) return memory_->allocate(bytes, align);
        const std::size_t block = core::tagged_block_bytes(bytes, align);
        void* memory = memory_ == nullptr ? allocate_from_system(block, align)
                                          : memory_->allocate(block, align);
        core::stamp_owner(memory, bytes, slot_of(tid).owner_tag);
        return memory;
    }
    static void* allocate_from_system(std::size_t bytes, std::size_t align) {
        void* memory = align <= alignof(std::max_align_t) ? std::malloc(bytes)
                                                          : std::aligned_alloc(align, bytes);
        if (memory == nullptr) throw std::bad_alloc();
        return memory;
    }
    void free_memory(core::node_memory m) noexcept {
        if (direct_) [[likely]] {
            std::free(m.address);
        } else {
            free_indirect(m);
        }
    }
    /// A null address is an smr::obj_base object that its deleter freed:
    /// free(nullptr) does nothing, a memory resource must not see it.
    SMR_SLOW_PATH void free_indirect(core::node_memory m) noexcept {
        if (m.address == nullptr) return;
        const std::size_t block =
            config_.count_remote_frees ? core::tagged_block_bytes(m.bytes, m.align) : m.bytes;
        if (memory_ == nullptr) {
            std::free(m.address);
        } else {
            memory_->deallocate(m.address, block, m.align);
        }
    }
    /// With count_remote_frees: counts the free of `m` by the thread of slot
    /// `s` if another registration allocated it.
    SMR_SLOW_PATH void count_if_remote(slot& s, core::node_memory m) noexcept {
        if (config_.count_remote_frees && m.address != nullptr &&
            core::owner_of(m.address, m.bytes) != s.owner_tag &&
            !SMR_MUTANT("remote_frees_never_counted")) {
            s.remote_frees.add();
        }
    }

    /// The one place a node goes back to the allocator while threads run:
    /// one call in time_frees_every is timed into the thread's latency
    /// histogram (which also sums the time in free). Callers count it as
    /// freed (retired garbage). It runs for every node, so it is kept to a
    /// countdown, and on a timed call two rdtsc, a fixed-point conversion and
    /// a histogram increment, inlined into the freeing loops (a call frame
    /// per node cost ~14 instructions). MaybeTraced = false: the caller knows
    /// no timeline is attached.
    template <bool MaybeTraced = true>
    [[gnu::always_inline]] void free_timed(int tid, slot& s, core::retired_entry entry) noexcept {
        const core::node_memory memory = entry.release();
        // Before the timed part: the tag's line is the node's, often cold.
        if (!direct_) [[unlikely]]
            count_if_remote(s, memory);
        if (latency_ == nullptr || --s.frees_until_timed != 0) {
            free_memory(memory);  // time_frees off (the library's default), or not this one
            return;
        }
        s.frees_until_timed = next_timing_gap(s);
        const std::uint64_t start = core::now_ticks();
        free_memory(memory);
        const std::uint64_t end = core::now_ticks();
        latency_[static_cast<std::size_t>(tid)]->record(ticks_.to_ns(end - start));
        if (MaybeTraced && timeline_ != nullptr && end - start >= timeline_->min_free_ticks())
            [[unlikely]] {
            timeline_->record(tid, trace::event_kind::free_call, start, end, 1);
        }
    }

    void release_memory(core::retired_entry entry) noexcept { free_memory(entry.release()); }

    /// Frees until the next timed one: 1 + a uniform draw below timing_gaps_
    /// (xorshift32, then Lemire's multiply-shift; no division).
    std::uint32_t next_timing_gap(slot& s) noexcept {
        if (timing_gaps_ == 1) return 1;
        std::uint32_t x = s.timing_rng;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        s.timing_rng = x;
        return 1 + static_cast<std::uint32_t>((std::uint64_t{x} * timing_gaps_) >> 32);
    }

    domain_config config_;
    std::pmr::memory_resource* memory_;
    /// Nodes come from std::malloc and go back to std::free as they are: no
    /// resource, no owner tags (count_remote_frees).
    bool direct_;
    core::thread_registry registry_;
    std::unique_ptr<core::padded<slot>[]> slots_;
    /// Per-slot free() latency, only with config.time_frees (2.7 KB a slot).
    std::unique_ptr<core::padded<trace::latency_histogram>[]> latency_;
    core::tick_converter ticks_;
    /// How many gaps between timed frees are drawn from: 2 x time_frees_every
    /// - 1 (mean time_frees_every), 1 while a timeline is attached.
    std::uint32_t timing_gaps_;
    /// domain_config::min_epoch_us in ticks (0: no minimum), and when the
    /// epoch last advanced: written once per epoch, read at each attempt.
    std::uint64_t min_epoch_ticks_;
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> last_advance_ticks_;
    trace::timeline* timeline_ = nullptr;
    trace::garbage_series* series_ = nullptr;
    alignas(core::false_sharing_range) core::orphanage orphans_;
    std::mutex barrier_mutex_;
    std::uint64_t flush_requests_ = 0;          // under barrier_mutex_
    std::atomic<std::uint32_t> owner_tags_{0};  // registrations so far
    alignas(core::false_sharing_range) std::atomic<std::uint64_t> garbage_peak_{0};
};

}  // namespace smr
