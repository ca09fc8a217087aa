// C++26 read-copy-update (P2545, [saferecl.rcu]), by default liburcu's memb
// flavour and optionally over smrlab's epoch schemes: the shape of <rcu>,
// usable today with a C++20 compiler and replaceable by the standard header
// once a standard library ships it.
//
//     struct config : smr::rcu_obj_base<config> { ... };
//     std::atomic<config*> current;
//
//     {   // reader: any number at once, never blocked by writers
//         std::scoped_lock guard(smr::rcu_default_domain());
//         use(*current.load(std::memory_order_acquire));
//     }
//     // writer
//     config* old = current.exchange(new config(...));
//     old->retire();                  // delete old after every reader that
//                                     // could hold it has unlocked
//     smr::rcu_synchronize();         // wait for the readers that began before
//     smr::rcu_barrier();             // run every deleter retired before
//
// Read-side sections and grace periods. By default (rcu_memb, as liburcu's
// urcu-memb): a thread's outermost lock writes the grace-period count it
// reads into its own record, then a compiler barrier; the outermost unlock
// writes 0 (sections nest, by a count in the record). rcu_synchronize issues
// membarrier (every running thread of the process executes a full barrier),
// increments the count, waits until no record shows a section begun under an
// older count, and issues membarrier again (the argument at synchronize_memb
// and core/asymmetric_fence.hpp). A section then costs 15 instructions and
// 1.2-2.0 ns on one thread (scripts/measure/facade_cost.cpp), against 68
// and 4.3-6 ns as a debra operation. Without membarrier (an old kernel,
// a seccomp filter) and under ThreadSanitizer, the reader fences after its
// store and the synchronizer fences instead of membarrier.
//
// Over a scheme (basic_rcu_domain<debra_domain>, ebr, rcu_epoch), a
// read-side critical section is an operation of the scheme (begin_op at the
// outermost lock, end_op at the outermost unlock). What the scheme offers
// beyond that is its grace period:
// it frees a node only after every operation running when the node was
// retired has ended. rcu_synchronize retires a sentinel, which lives on its stack, and
// drives the scheme (flush_step: empty operations that move the epoch on,
// scans) until the scheme frees it; then every section that began before the
// call has ended. Retired objects do not go into the scheme's per-thread
// bags: each thread keeps them in a list of its own that any thread can take
// (one exchange), and the retiring thread reclaims its list once it holds
// `SMR_RCU_RETIRE_BATCH` objects (1024 by default): it takes the list, waits
// for one grace period (rcu_synchronize), and runs the deleters. This is
// liburcu's call_rcu built on synchronize_rcu, with the batch reclaimed by the
// thread that filled it instead of a helper thread. The point of the
// separate lists is rcu_barrier: it takes every thread's list, waits for one
// grace period and runs what it took, so it waits only for readers -- never
// for a thread that sits idle, which the scheme's bags (freed only by their
// owner) would make it wait for (the domain's own barrier() does).
//
// Threads that exit. A thread's list outlives it: at exit it moves onto the
// domain's list of orphans, and the next retire by any thread that finds
// SMR_RCU_RETIRE_BATCH orphans or more reclaims them with its own list. So
// however short the threads' lives, at most (T + 1) x SMR_RCU_RETIRE_BATCH
// retired objects wait to be taken, T the threads registered at the last
// retire, plus what reclamations under way hold (each what it took, at most
// as many). liburcu gives each call_rcu to a helper thread (one per process
// by default, made at the first call_rcu), which waits for grace periods and
// runs callbacks whatever the callers' lifetimes; folly's rcu_domain moves an
// exiting thread's list to a shared one and lets any later retire run a
// reclamation step once 3.2 ms have passed since the last. Neither a thread
// the user did not ask for (it must survive fork, sandboxes and shutdown
// order) nor a clock read per retire: a count, checked where retire already
// writes.
//
// Which schemes: those under which a thread outside an operation holds up no
// grace period -- debra (its read-side section costs a store and a load of
// the global epoch, plus a release store at the end, and its occasional
// epoch advance attempt), ebr
// (Fraser's, as Hart et al. measure it) and rcu_epoch (the IBR benchmark's
// RCU). qsbr and nebr need the application to declare quiescent or offline
// stretches, and token passes its token only from threads that operate; a
// static assertion refuses them.
//
// Where this differs from P2545's wording:
// - rcu_retire and rcu_obj_base::retire may block: once every
//   SMR_RCU_RETIRE_BATCH retirements, outside any read-side section, the
//   retiring thread waits for one grace period (for the readers active
//   then) and runs that batch's deleters. A thread that retires inside a
//   read-side section reclaims at its outermost unlock instead. P2545 lets
//   the deleters run on any thread; it does not say whether retire blocks.
// - rcu_domain has one instance per scheme, made at first use and never
//   destroyed; basic_rcu_domain<Scheme> names the scheme, rcu_domain is
//   basic_rcu_domain<rcu_memb>. rcu_default_domain() returns it.
// - Over a scheme, at most SMR_RCU_THREADS (512 by default) threads use one
//   domain at once (rcu_memb has no bound);
//   the first lock or retire of a thread past that stops the program with a
//   message (lock is noexcept).
// - A deleter must not throw and must not call rcu_barrier (it would wait
//   for itself: the program stops with a message, as it does for
//   rcu_synchronize or rcu_barrier inside a read-side section); an object's
//   deleter D (rcu_obj_base<T, D>) is stored in the object.
// - A thread that uses the domain again during its exit (from a thread_local
//   destructor that runs after the domain's own) is registered for that one
//   call; what it retires is reclaimed like an exited thread's.
// - Objects still retired when the program ends are not destroyed, unless
//   rcu_barrier ran after their retirement.
// - An rcu_obj_base object retired a second time before its deleter ran
//   stops the program with a message, in every build (its list would link
//   it to itself); rcu_retire of one pointer twice, in debug builds
//   (core/retire_check.hpp).
#pragma once

#include <atomic>
#include <cassert>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>

#include "smr/core/asymmetric_fence.hpp"
#include "smr/core/check.hpp"
#include "smr/core/compiler.hpp"
#include "smr/core/fence.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/retire_check.hpp"
#include "smr/core/retired_node.hpp"
#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/ebr.hpp"
#include "smr/reclaim/rcu.hpp"

#ifndef SMR_RCU_RETIRE_BATCH
#define SMR_RCU_RETIRE_BATCH 1024
#endif
#ifndef SMR_RCU_THREADS
#define SMR_RCU_THREADS 512
#endif

namespace smr {

/// liburcu's memb flavour as the facade's own grace periods, the default of
/// smr::rcu_domain: a reader writes the grace-period count it read into its
/// record at the outermost lock and zero at the outermost unlock, with only
/// a compiler barrier between them and its reads; rcu_synchronize makes
/// every running thread of the process execute a full barrier (membarrier)
/// before and after it waits for the records that show an older count.
/// Where the process cannot use membarrier, and under ThreadSanitizer, the
/// reader adds a seq_cst fence after its store, and the synchronizer a
/// fence of its own: the classic symmetric pair (liburcu's mb flavour).
struct rcu_memb {
    static constexpr std::string_view name = "memb";
};

/// The scheme of smr::rcu_domain.
using rcu_default_scheme = rcu_memb;

namespace detail {

/// What basic_rcu_domain<rcu_memb> keeps where the others keep a scheme.
struct rcu_memb_state {
    /// The grace-period count: 1 at start, incremented by each synchronize;
    /// a reader's record holds the value it read, or 0 outside a section.
    std::atomic<std::uint64_t> period{1};
};

/// Schemes under which a thread between operations holds up no grace
/// period, so that an idle thread never delays rcu_synchronize.
template <class Scheme>
inline constexpr bool rcu_idle_threads_hold_nothing = false;
template <>
inline constexpr bool rcu_idle_threads_hold_nothing<debra_domain> = true;
template <>
inline constexpr bool rcu_idle_threads_hold_nothing<ebr_domain> = true;
template <>
inline constexpr bool rcu_idle_threads_hold_nothing<rcu_epoch_domain> = true;

template <class Scheme>
constexpr bool rcu_acceptable_scheme() {
    if constexpr (std::is_same_v<Scheme, rcu_memb>) {
        return true;
    } else {
        return Scheme::traits.family == reclaimer_family::epoch && Scheme::traits.nests &&
               rcu_idle_threads_hold_nothing<Scheme>;
    }
}

/// An object waiting for a grace period: a link of its thread's list and
/// the function that runs its deleter.
struct rcu_deferred {
    rcu_deferred* next_deferred = nullptr;
    void (*reclaim)(rcu_deferred*) noexcept = nullptr;
};

/// Runs the deleter of every object of `list`.
inline void rcu_reclaim_all(rcu_deferred* list) noexcept {
    while (list != nullptr) {
        rcu_deferred* const next = list->next_deferred;  // before it is deleted
        list->reclaim(list);
        list = next;
    }
}

/// Pushes the chain first..last onto a list that any thread may take whole.
inline void rcu_push_chain(std::atomic<rcu_deferred*>& list, rcu_deferred* first,
                           rcu_deferred* last) noexcept {
    last->next_deferred = list.load(std::memory_order_relaxed);
    // release: the objects' contents and links happen before the taker's
    // exchange (acquire) and the deleters it runs.
    while (!list.compare_exchange_weak(last->next_deferred, first, std::memory_order_release,
                                       std::memory_order_relaxed)) {
    }
}

/// Pushes `object` onto a list that any thread may take whole.
inline void rcu_push(std::atomic<rcu_deferred*>& list, rcu_deferred* object) noexcept {
    rcu_push_chain(list, object, object);
}

}  // namespace detail

template <class Scheme>
class basic_rcu_domain;

/// The domain P2545 calls rcu_domain: liburcu's memb flavour.
using rcu_domain = basic_rcu_domain<rcu_default_scheme>;

/// P2545's rcu_domain over `Scheme`: Lockable (lock, try_lock, unlock), so
/// std::scoped_lock and std::unique_lock make read-side critical sections.
/// One instance per scheme (rcu_default_domain<Scheme>()); a thread is
/// registered at its first use and leaves at exit.
///
/// Progress: lock, try_lock and unlock are lock-free (a thread's first lock
/// registers it: a scan of the registration records and one CAS), and so is
/// retire but once per batch; synchronize, barrier and that retire block
/// for readers (a grace period), and barrier for reclamations under way.
template <class Scheme>
class basic_rcu_domain {
    static_assert(detail::rcu_acceptable_scheme<Scheme>(),
                  "basic_rcu_domain needs rcu_memb or an epoch scheme under which a thread "
                  "outside a read-side section holds up no grace period: debra, ebr or "
                  "rcu_epoch (qsbr and nebr need declared quiescent or offline stretches; token "
                  "passes its token only from threads that operate)");
    static constexpr bool memb = std::is_same_v<Scheme, rcu_memb>;

  public:
    basic_rcu_domain(const basic_rcu_domain&) = delete;
    basic_rcu_domain& operator=(const basic_rcu_domain&) = delete;

    /// The domain of `Scheme`, made at first use, never destroyed (threads
    /// may use it while static destructors run).
    static basic_rcu_domain& instance() {
        static basic_rcu_domain* const domain = new basic_rcu_domain();
        return *domain;
    }

    /// Begins a read-side critical section; sections of one thread nest.
    /// Objects retired after it began are not reclaimed before it ends.
    void lock() noexcept {
        if constexpr (memb) {
            // The fast path: registered, and membarrier makes the reader's
            // side a compiler barrier. Anything else takes begin_slow.
            reader* const me = fast_;
            if (me == nullptr) [[unlikely]]
                return begin_slow();
            if (me->depth != 0) [[unlikely]] {  // nested: written so, the outermost path is
                ++me->depth;                    // a compare and a store of 1, not an increment
                return;                         // and a test of the old value
            }
            me->depth = 1;
            publish_period(*me);
            core::light_fence();  // see begin_section
        } else {
            reader& me = this_thread();
            if (me.depth++ == 0) scheme_.begin_op(lent_by(me));
        }
    }
    /// Always succeeds (P2545: a read-side lock never blocks).
    bool try_lock() noexcept {
        lock();
        return true;
    }
    /// Ends the section begun by the matching lock; at the outermost, a
    /// thread whose own list is full reclaims it (see the top of the file).
    void unlock() noexcept {
        // Registered by the matching lock: no first-use test here.
        assert(current_ != nullptr && current_->depth > 0 &&
               "rcu_domain::unlock without a matching lock");
        reader& me = *current_;
        if (--me.depth != 0) return;
        end_section(me);
        if (me.due) [[unlikely]]
            after_outermost_unlock(me);
    }

    /// Hands `object` to the domain: its reclaim function runs once every
    /// section that could hold it has ended. Blocks once every
    /// SMR_RCU_RETIRE_BATCH calls (outside a section) for a grace period.
    void retire(detail::rcu_deferred* object) noexcept {
        reader& me = this_thread();
        detail::rcu_push(me.pending, object);
        // relaxed: a trigger; the orphans themselves are taken by an exchange.
        if (++me.pending_count >= SMR_RCU_RETIRE_BATCH ||
            (orphan_count_.load(std::memory_order_relaxed) >= SMR_RCU_RETIRE_BATCH &&
             !SMR_MUTANT("rcu_orphans_wait_for_a_barrier"))) [[unlikely]] {
            if (me.depth == 0) {
                reclaim_own(me);
            } else {
                me.pending_count = SMR_RCU_RETIRE_BATCH;  // at the outermost unlock
                me.due = true;
            }
        }
        if (me.temporary && me.depth == 0) [[unlikely]]
            leave(me);
    }

    /// Returns once every read-side section that began before the call has
    /// ended. Blocking; the caller is not inside a section (it would wait
    /// for itself).
    void synchronize() noexcept {
        reader& me = this_thread();
        synchronize(me);
        if (me.temporary) [[unlikely]]
            leave(me);
    }

    /// Returns once the deleter of every object retired before the call, by
    /// any thread, has run. Waits for readers (one grace period), for
    /// reclamations under way and for another barrier, never for idle
    /// threads. Not inside a section, and not from a deleter (it would wait
    /// for itself; both stop the program with a message).
    void barrier() noexcept {
        reader& me = this_thread();
        SMR_CHECK(!me.reclaiming, "rcu_barrier called from a deleter: it would wait for itself");
        SMR_CHECK(me.depth == 0,
                  "rcu_barrier inside a read-side section: it would wait for itself");
        // One barrier at a time: a later one waits until the deleters of an
        // earlier one have run. Reclaimers never take this mutex.
        const std::lock_guard<std::mutex> one_at_a_time(barrier_mutex_);
        me.reclaiming = true;
        detail::rcu_deferred* taken = nullptr;
        for (reader* r = first_reader(); r != nullptr; r = r->next_reader)
            take_into(taken, r->pending);
        take_orphans(taken);
        for (reader* r = first_reader(); r != nullptr; r = r->next_reader) wait_for_round(*r);
        take_orphans(taken);  // lists that threads exiting meanwhile moved there
        synchronize(me);
        detail::rcu_reclaim_all(taken);
        me.reclaiming = false;
        if (me.temporary) [[unlikely]]
            leave(me);
    }

    /// The scheme's domain (its statistics count sections and sentinels).
    const Scheme& scheme() const noexcept requires(!memb) { return scheme_; }

  private:
    /// A thread's registration: its slot in the scheme, its nesting depth and
    /// the list of what it retired. Records are linked into a list that only
    /// grows and are never freed: a thread that exits moves its list to the
    /// orphans and releases its record, and the next thread to register
    /// reuses it, so a barrier walks the list with no lock.
    struct reader {
        std::atomic<bool> in_use{true};
        reader* next_reader = nullptr;  // written once, before the record is published
        int tid = -1;
        std::uint32_t depth = 0;
        std::size_t pending_count = 0;  // pushes since the owner last took its list
        bool reclaiming = false;        // the owner runs deleters (no nested reclaim)
        bool temporary = false;         // registered for one call during thread exit
        bool due = false;               // the outermost unlock reclaims or leaves (one test there)
        std::atomic<detail::rcu_deferred*> pending{nullptr};
        /// rcu_memb: the grace-period count read at the outermost lock, 0
        /// outside a section; and whether each section fences (no membarrier).
        std::atomic<std::uint64_t> period{0};
        bool fence_each_section = true;
        /// Odd while the owner runs the deleters of lists it took, or moves
        /// its list to the orphans.
        std::atomic<std::uint64_t> rounds{0};
    };

    /// The calling thread's record (per scheme), null before its first use
    /// and after it exits; trivially destructible, so it can be read during
    /// thread exit.
    static inline thread_local reader* current_ = nullptr;
    /// rcu_memb: current_ when its sections need no fence, else null.
    static inline thread_local reader* fast_ = nullptr;
    static inline thread_local bool exited_ = false;

    /// Releases the thread's record at its exit.
    struct exit_handle {
        exit_handle() noexcept = default;
        exit_handle(const exit_handle&) = delete;
        exit_handle& operator=(const exit_handle&) = delete;
        ~exit_handle() {
            exited_ = true;
            if (reader* me = current_) instance().leave(*me);
        }
    };

    basic_rcu_domain() : scheme_(make_scheme()) {}

    static auto make_scheme() {
        if constexpr (memb) {
            return detail::rcu_memb_state{};
        } else {
            return Scheme(scheme_config());
        }
    }

    static domain_config scheme_config() noexcept {
        domain_config config;
        config.max_threads = SMR_RCU_THREADS;
        return config;
    }

    reader& this_thread() noexcept {
        if (reader* me = current_) [[likely]]
            return *me;
        return register_this_thread();
    }
    /// A reader's registration in the scheme, as the context its calls take
    /// (not under rcu_memb, which has no scheme).
    static auto lent_by(const reader& me) noexcept requires(!memb) {
        return typename Scheme::lent{me.tid};
    }

    /// A thread's first use: claims a record. During thread exit (after the
    /// exit handle ran) the record is held for one call only.
    SMR_SLOW_PATH reader& register_this_thread() noexcept {
        try {
            reader& me = claim_record();
            if (exited_) {
                me.temporary = true;
                me.due = true;  // leaves at its outermost unlock
            } else {
                thread_local exit_handle handle;
            }
            current_ = &me;
            if constexpr (memb) fast_ = me.fence_each_section ? nullptr : &me;
            return me;
        } catch (...) {
            core::contract_failed(
                "rcu_domain: this thread cannot register (all SMR_RCU_THREADS slots in use, or "
                "no memory)");
        }
    }

    reader* first_reader() const noexcept {
        // acquire: pairs with claim_record's publication of a new record.
        return readers_.load(std::memory_order_acquire);
    }

    /// A free record (or a new one) with a slot of the scheme.
    reader& claim_record() {
        reader* r = first_reader();
        for (; r != nullptr; r = r->next_reader) {
            bool free = false;
            // acquire: pairs with leave's release, so the last owner's
            // accesses to the record happen before ours.
            if (!r->in_use.load(std::memory_order_relaxed) &&
                r->in_use.compare_exchange_strong(free, true, std::memory_order_acquire)) {
                break;
            }
        }
        if (r == nullptr) {
            auto fresh = std::make_unique<reader>();
            fresh->next_reader = readers_.load(std::memory_order_relaxed);
            // release: the record's initialization happens before a walker's
            // acquire load of the head.
            while (!readers_.compare_exchange_weak(fresh->next_reader, fresh.get(),
                                                   std::memory_order_release,
                                                   std::memory_order_relaxed)) {
            }
            r = fresh.release();  // never freed: barriers walk the list without a lock
        }
        if constexpr (memb) {
            r->fence_each_section = sections_fence();
        } else {
            try {
                r->tid = scheme_.register_thread();
            } catch (...) {
                r->in_use.store(false, std::memory_order_release);
                throw;
            }
        }
        r->depth = 0;
        r->due = false;
        r->pending_count = 0;
        return *r;
    }

    /// At thread exit (or after a call made during it): the list goes to the
    /// orphans, the slot back to the scheme and the record to the free ones.
    void leave(reader& me) noexcept {
        if (me.depth != 0) end_section(me);  // exited inside a section
        orphan_list(me);
        if constexpr (!memb) scheme_.unregister_thread(me.tid);
        me.depth = 0;
        me.temporary = false;
        current_ = nullptr;
        fast_ = nullptr;
        // release: our pushes and scheme calls happen before the next owner's
        // claim (acquire).
        me.in_use.store(false, std::memory_order_release);
    }

    /// Reclaims the calling thread's list and the lists left in released
    /// records: one grace period, then the deleters. Deleters that retire
    /// push onto the list again; if that fills it, another round follows.
    void reclaim_own(reader& me) noexcept {
        if (me.reclaiming) return;  // a deleter retired: the round under way continues
        me.reclaiming = true;
        do {
            // seq_cst: an odd count is in S before our exchanges, so a
            // barrier that takes lists after them and reads the count sees
            // the round (and waits for its deleters).
            me.rounds.fetch_add(1, std::memory_order_seq_cst);
            me.pending_count = 0;
            detail::rcu_deferred* taken = nullptr;
            take_into(taken, me.pending);
            take_orphans(taken);
            synchronize(me);
            detail::rcu_reclaim_all(taken);
            // release: the deleters ran before a barrier that reads the even
            // count (acquire).
            me.rounds.fetch_add(1, std::memory_order_release);
        } while (me.pending_count >= SMR_RCU_RETIRE_BATCH);
        me.reclaiming = false;
    }

    /// A barrier's wait for a round of r's owner that may hold lists taken
    /// before the barrier's own exchanges, or be moving its list to the
    /// orphans.
    static void wait_for_round(reader& r) noexcept {
        // seq_cst: see reclaim_own.
        const std::uint64_t seen = r.rounds.load(std::memory_order_seq_cst);
        if ((seen & 1) == 0) return;
        // acquire: pairs with the release that ends the round.
        while (r.rounds.load(std::memory_order_acquire) == seen) std::this_thread::yield();
    }

    /// rcu_synchronize: a sentinel retired into the scheme is freed only
    /// after every operation that was running at its retirement has ended.
    void synchronize(reader& me) noexcept {
        SMR_CHECK(me.depth == 0,
                  "rcu_synchronize inside a read-side section: it would wait for itself");
        if constexpr (memb) {
            synchronize_memb();
        } else {
            synchronize_scheme(me);
        }
    }

    /// Whether rcu_memb's sections fence (and its synchronize fences instead
    /// of membarrier): without membarrier, and under ThreadSanitizer, which
    /// models neither membarrier nor a compiler barrier as ordering.
    static bool sections_fence() noexcept {
        return SMR_TSAN || !core::asymmetric_fence_available();
    }

    /// The outermost lock's store: the grace-period count into our record.
    void publish_period(reader& me) noexcept {
        me.period.store(scheme_.period.load(std::memory_order_relaxed), std::memory_order_relaxed);
    }

    /// rcu_memb's outermost lock. relaxed load: any count is safe here (an
    /// old one only makes a synchronizer wait for this section too; see
    /// synchronize_memb). Then the Dekker pair with synchronize's first
    /// fence: either our store is seen by its scan, or our reads after this
    /// line see what the writer unlinked before it, so the section cannot
    /// reach a node the writer waits to free. A compiler barrier where the
    /// writer's membarrier makes it a full one; else a full fence.
    void begin_section(reader& me) noexcept {
        publish_period(me);
        if (me.fence_each_section) [[unlikely]] {
            core::fence();
        } else {
            core::light_fence();
        }
    }

    /// rcu_memb's lock for a thread not yet registered, or whose sections
    /// fence (no membarrier, or ThreadSanitizer).
    SMR_SLOW_PATH void begin_slow() noexcept {
        reader& me = this_thread();
        if (me.depth++ == 0) begin_section(me);
    }

    /// What a section's end found to do: a list filled inside it, a thread
    /// registered for one call during its exit.
    SMR_SLOW_PATH void after_outermost_unlock(reader& me) noexcept {
        me.due = false;
        if (me.pending_count >= SMR_RCU_RETIRE_BATCH) reclaim_own(me);
        if (me.temporary) leave(me);
    }

    /// The outermost unlock (or an exit inside a section).
    void end_section(reader& me) noexcept {
        if constexpr (memb) {
            // release: the section's reads happen before a synchronizer's
            // acquire load that sees 0, and so before what it then frees.
            me.period.store(0, std::memory_order_release);
        } else {
            scheme_.end_op(lent_by(me));
        }
    }

    /// rcu_memb's grace period. The first heavy fence cuts every reader's
    /// execution at one point: a section begun before it shows in the scan
    /// with a count below `period` (it read the count before our
    /// increment), and one begun after reads nothing we unlinked before the
    /// call. We wait for the first kind to end (its record goes to 0, or to
    /// a later count when it has begun another section). The second heavy
    /// fence orders each ended section's reads, on hardware weaker than
    /// x86, before the frees that follow the call. ThreadSanitizer sees
    /// neither fence; the edge it checks, from a section's last read to the
    /// free, is end_section's release store read by the scan's acquire load.
    void synchronize_memb() noexcept {
        const bool fenced = sections_fence();
        const auto heavy = [fenced] {
            if (fenced) {
                core::fence();
            } else {
                core::heavy_fence();
            }
        };
        heavy();
        // relaxed: the fences above and below order it; a reader that reads
        // the old count after it is only waited for too.
        const std::uint64_t period = scheme_.period.fetch_add(1, std::memory_order_relaxed) + 1;
        for (reader* r = first_reader(); r != nullptr; r = r->next_reader) {
            for (unsigned spins = 1;; ++spins) {
                // acquire: pairs with end_section's release.
                const std::uint64_t seen = r->period.load(std::memory_order_acquire);
                if (seen == 0 || seen >= period || SMR_MUTANT("rcu_memb_waits_for_nobody")) break;
                if (spins % 64 == 0) std::this_thread::yield();  // a reader preempted inside
            }
        }
        heavy();
    }

    /// A scheme's grace period: a sentinel retired into the scheme is freed
    /// only after every operation that was running at its retirement ended.
    void synchronize_scheme(reader& me) noexcept {
        sentinel marker;
        scheme_.retire(lent_by(me), &marker);
        // acquire: pairs with the release in sentinel::smr_destroy, which the
        // scheme's free path reaches after the grace period.
        for (unsigned round = 1; !marker.freed.load(std::memory_order_acquire); ++round) {
            scheme_.flush_step(me.tid);  // moves the epoch on, frees what is due
            // An epoch advance takes many steps (debra looks at one thread per
            // check_every operations), and a yield to running threads costs a
            // time slice: yield only now and then, for readers we wait for
            // that were preempted (a synchronize with 2 readers spinning on 2
            // cores: 8 ms yielding every 16 steps, 8-20 us every 256).
            if (round % 256 == 0) std::this_thread::yield();
        }
    }

    struct sentinel : Scheme::node_base {
        std::atomic<bool> freed{false};

        /// What freeing the marker does (core::entry_of): it lives on the
        /// synchronizing thread's stack.
        static core::node_memory smr_destroy(core::retired_node* node) noexcept {
            // release: see synchronize.
            static_cast<sentinel*>(node)->freed.store(true, std::memory_order_release);
            return {};  // on the synchronizing thread's stack: nothing to free
        }
    };

    /// A list taken whole: its ends and length.
    struct chain {
        detail::rcu_deferred* first = nullptr;
        detail::rcu_deferred* last = nullptr;
        std::size_t count = 0;
    };

    /// Takes `list` (one exchange; its owner may push concurrently).
    static chain take(std::atomic<detail::rcu_deferred*>& list) noexcept {
        chain out;
        // seq_cst: see reclaim_own. Also acquire: pairs with the pushes.
        out.first = list.exchange(nullptr, std::memory_order_seq_cst);
        if (out.first == nullptr) return out;
        out.last = out.first;
        for (out.count = 1; out.last->next_deferred != nullptr; ++out.count)
            out.last = out.last->next_deferred;
        return out;
    }

    /// Takes `list` onto `taken`; returns how many objects it held.
    static std::size_t take_into(detail::rcu_deferred*& taken,
                                 std::atomic<detail::rcu_deferred*>& list) noexcept {
        const chain more = take(list);
        if (more.first == nullptr) return 0;
        more.last->next_deferred = taken;
        taken = more.first;
        return more.count;
    }

    void take_orphans(detail::rcu_deferred*& taken) noexcept {
        const std::size_t count = take_into(taken, orphans_);
        // Never below zero: orphan_list adds before it pushes, and our
        // exchange read that push (acquire), so the add comes first.
        if (count != 0) orphan_count_.fetch_sub(count, std::memory_order_relaxed);
    }

    /// Moves the exiting thread's list onto the orphans, inside an odd
    /// round: a barrier that took the thread's list empty and the orphans
    /// before the move waits for the round's end and takes them again.
    void orphan_list(reader& me) noexcept {
        // seq_cst: see reclaim_own.
        me.rounds.fetch_add(1, std::memory_order_seq_cst);
        const chain list = take(me.pending);
        if (list.first != nullptr) {
            orphan_count_.fetch_add(list.count, std::memory_order_relaxed);
            detail::rcu_push_chain(orphans_, list.first, list.last);
        }
        me.pending_count = 0;
        // release: the move happens before a barrier that reads the even
        // count (acquire) and then takes the orphans.
        me.rounds.fetch_add(1, std::memory_order_release);
    }

    std::conditional_t<memb, detail::rcu_memb_state, Scheme> scheme_;
    std::atomic<reader*> readers_{nullptr};
    /// What exited threads retired, for the next reclamation or barrier.
    std::atomic<detail::rcu_deferred*> orphans_{nullptr};
    std::atomic<std::size_t> orphan_count_{0};
    std::mutex barrier_mutex_;
};

/// The domain of `Scheme` (P2545's rcu_default_domain for the default).
template <class Scheme = rcu_default_scheme>
basic_rcu_domain<Scheme>& rcu_default_domain() noexcept {
    return basic_rcu_domain<Scheme>::instance();
}

/// Base of an object of type T (T derives from rcu_obj_base<T, D>) that
/// retire() hands to an RCU domain: D{}(object) (by default `delete`) runs
/// once every read-side section that could hold it has ended. D is stored in
/// the object and must not throw when called.
template <class T, class D = std::default_delete<T>>
class rcu_obj_base : private detail::rcu_deferred {
  public:
    /// The object must be unreachable from shared memory (no new reader can
    /// find it) and retired once. Any thread may retire it, inside a
    /// read-side section or not.
    template <class Scheme = rcu_default_scheme>
    void retire(D deleter = D(),
                basic_rcu_domain<Scheme>& domain = rcu_default_domain<Scheme>()) noexcept {
        // In every build, at the cost of a load of the line written next: a
        // second retire before the reclamation would link the object to
        // itself, and every walk of its list would loop for ever.
        static_assert(std::is_nothrow_destructible_v<T>,
                      "a retired object's destructor must not throw: its deleter runs where "
                      "nothing can catch, and would end the program");
        SMR_CHECK(this->reclaim == nullptr || SMR_MUTANT("rcu_obj_base_retire_unchecked"),
                  "rcu_obj_base::retire: the object was retired twice (retire it once, after "
                  "it is unreachable)");
        deleter_ = std::move(deleter);
        this->reclaim = &reclaim_with_deleter;
        domain.retire(static_cast<detail::rcu_deferred*>(this));
    }

  protected:
    rcu_obj_base() = default;
    rcu_obj_base(const rcu_obj_base&) noexcept : rcu_obj_base() {}
    rcu_obj_base(rcu_obj_base&&) noexcept : rcu_obj_base() {}
    rcu_obj_base& operator=(const rcu_obj_base&) noexcept { return *this; }
    rcu_obj_base& operator=(rcu_obj_base&&) noexcept { return *this; }
    ~rcu_obj_base() = default;

  private:
    template <class>
    friend class basic_rcu_domain;

    static void reclaim_with_deleter(detail::rcu_deferred* node) noexcept {
        node->reclaim = nullptr;  // a deleter that keeps the object may retire it again
        T* object = static_cast<T*>(static_cast<rcu_obj_base*>(node));
        D deleter = std::move(object->rcu_obj_base::deleter_);
        deleter(object);
    }

    [[no_unique_address]] D deleter_{};
};

namespace detail {

/// rcu_retire's record for an object of any type: the pointer and deleter.
template <class T, class D>
struct rcu_retired_box : rcu_deferred {
    rcu_retired_box(T* p, D&& d) : object(p), deleter(std::move(d)) { reclaim = &run; }
    T* object;
    D deleter;

    static void run(rcu_deferred* node) noexcept {
        auto* box = static_cast<rcu_retired_box*>(node);
        core::note_freed(box->object);  // debug builds: see rcu_retire
        box->deleter(box->object);
        delete box;
    }
};

}  // namespace detail

/// Hands `p` to `domain`: d(p) runs once every read-side section that could
/// hold it has ended. `p` need not derive from rcu_obj_base: a small record
/// is allocated for it (throws std::bad_alloc, and then `p` is not retired).
template <class T, class D = std::default_delete<T>, class Scheme = rcu_default_scheme>
void rcu_retire(T* p, D d = D(), basic_rcu_domain<Scheme>& domain = rcu_default_domain<Scheme>()) {
    auto* box = new detail::rcu_retired_box<T, D>(p, std::move(d));
    // Debug builds (core/retire_check.hpp): each retire has a record of its
    // own, so only the set of retired objects sees `p` retired twice.
    core::note_retired(p);
    domain.retire(box);
}

/// Returns once every read-side section of `domain` that began before the
/// call has ended. Not inside a section.
template <class Scheme = rcu_default_scheme>
void rcu_synchronize(basic_rcu_domain<Scheme>& domain = rcu_default_domain<Scheme>()) noexcept {
    domain.synchronize();
}

/// Returns once every object retired to `domain` before the call, by any
/// thread, has been reclaimed. Not inside a section.
template <class Scheme = rcu_default_scheme>
void rcu_barrier(basic_rcu_domain<Scheme>& domain = rcu_default_domain<Scheme>()) noexcept {
    domain.barrier();
}

}  // namespace smr
