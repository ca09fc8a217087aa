// A bounded pool allocator that can run out: Hart et al.'s allocator.
//
// Why a reclamation library ships an allocator. A reclaimer's worst case
// shows only when memory is finite. Hart, McKenney, Demke Brown and Walpole
// ("Performance of memory reclamation for lockless synchronization", JPDC
// 67(12), 2007, doi:10.1016/j.jpdc.2007.04.010) ran every scheme on a pool of
// fixed size: a preempted thread that holds up a grace period then makes
// every allocating thread wait, and busy-waiting threads (their Figure 14)
// keep the preempted one from running, so the epoch schemes stall while
// hazard pointers, whose garbage is bounded, keep going. The system
// allocators never run out at the sizes a benchmark uses, so none of this can
// be seen without a pool like this one.
//
// Design (Hart's Section 4, after Bonwick's magazines, USENIX 2001). Each
// thread keeps, per size class, two free lists ("magazines") of up to
// `magazine_size` blocks (Hart: 100). Allocation pops from the loaded one;
// when it is empty the thread swaps in the other, and when both are empty it
// takes a whole list from a global non-blocking stack (detail::depot) or, if
// the pool has not yet drawn `capacity` blocks, carves a new list from the
// upstream resource. Freeing pushes onto the loaded list; when both are full,
// one goes to the depot. The shared state is touched once per list, not once
// per block.
//
// Bound. The pool draws at most `capacity` blocks from upstream, over all
// size classes, and keeps them until it is destroyed: memory is type-stable
// (a freed block is only ever reused as a block of the same pool and class).
// Blocks in one thread's magazines are not available to another, so a small
// pool clamps the magazine size to capacity / 64: 32 threads' magazines then
// hold at most the whole pool, and a thread that stops allocating strands at
// most that much until it exits or calls flush_thread_cache().
//
// Sizes. Every request up to 4 KiB is served, in classes of 16 bytes: a
// request of `bytes` with alignment `align` takes the class of bytes rounded
// up to a multiple of max(align, 16), and that class's blocks are aligned to
// the largest power of two dividing the class size, so every alignment that
// divides the size is met. Larger requests throw std::length_error (a node
// type that large is not what this pool is for).
//
// Exhaustion. When a thread finds its magazines, the depot and the budget all
// empty, `on_empty` decides: `yield` calls sched_yield() and retries (Hart's
// default: a preempted thread gets the CPU and can end its grace period),
// `spin` busy-waits and retries (Hart's Figure 14), `spin_idle` busy-waits
// like an idle thread, `fail` throws std::bad_alloc at once. Before every
// retry a yielding or spin_idle thread calls its wait_observer, if it
// installed one (a domain's allocate_outside_op does: the waiting thread then
// runs empty operations and holds up no grace period). A `spin` thread does
// not: as in Hart's Section 5.4.2, it holds up the grace periods it held when
// it began to wait, and the epoch schemes stall. A waiting thread also gives
// up, with std::bad_alloc, once stop_waiting() was called: a benchmark's stop
// flag reaches every waiting loop, so a trial whose threads all wait for
// memory that only a stalled thread could release still ends.
//
// Shared word. A pool made with pool_options::shared_word_offset keeps one
// 8-byte word per block out of its own hands: zeroed when the block is
// carved, never written or poisoned after, so it keeps its value across free
// and reuse. Reference counting (reclaim/lfrc.hpp) keeps its count there,
// where a thread may still increment it after the node was freed.
//
// Thread caches are found through a one-entry thread_local cache keyed by a
// serial that no other pool ever has, so an allocation costs a TLS read and a
// compare before the magazine pop, plus the virtual call of
// std::pmr::memory_resource. A thread's magazines go back to the depot when
// the thread exits (if the pool still lives) or when it calls
// flush_thread_cache().
//
// Rules: the pool must outlive every allocation from it and every thread
// that used it must have stopped using it before it is destroyed; blocks
// must be freed with the size and alignment they were allocated with (as
// std::pmr requires). Progress: allocation and free are lock-free while the
// pool has blocks (a thread's first use of a pool takes a mutex once);
// exhaustion waits, by the policy above.
#pragma once

#include <sched.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "smr/alloc/depot.hpp"
#include "smr/alloc/sanitizer.hpp"
#include "smr/alloc/wait_observer.hpp"
#include "smr/core/check.hpp"
#include "smr/core/compiler.hpp"
#include "smr/core/counters.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/padded.hpp"
#include "smr/core/resource_users.hpp"

namespace smr::alloc {

/// What an allocation does when the pool has no free block. A waiting
/// thread (yield, spin_idle) calls its wait_observer before every retry, so
/// it holds up no grace period; a spinning one (spin) does not, and holds up
/// every grace period it held when it began to wait.
enum class on_empty : std::uint8_t {
    yield,      ///< sched_yield() and retry, idle meanwhile (Hart's default, Figure 13)
    spin,       ///< busy-wait and retry, holding up grace periods (Hart's Figure 14)
    spin_idle,  ///< busy-wait and retry, idle meanwhile (ours: spin without Figure 14's stall)
    fail,       ///< throw std::bad_alloc at once
};

inline constexpr std::string_view to_string(on_empty policy) noexcept {
    switch (policy) {
        case on_empty::yield:
            return "yield";
        case on_empty::spin:
            return "spin";
        case on_empty::spin_idle:
            return "spin_idle";
        case on_empty::fail:
            return "fail";
    }
    return "yield";
}

inline constexpr std::optional<on_empty> parse_on_empty(std::string_view name) noexcept {
    if (name == "yield") return on_empty::yield;
    if (name == "spin") return on_empty::spin;
    if (name == "spin_idle") return on_empty::spin_idle;
    if (name == "fail") return on_empty::fail;
    return std::nullopt;
}

struct pool_options {
    /// Most blocks the pool ever draws from upstream, over all size classes.
    std::size_t capacity = 0;
    on_empty when_empty = on_empty::yield;
    /// Blocks per magazine (Hart: 100), clamped to [1, max(1, capacity / 64)].
    std::size_t magazine_size = 100;
    /// For memory that must stay type-stable for a counter (lfrc's reference
    /// count, which a thread may touch after the node was freed): the offset
    /// of one 8-byte word per block that the pool zeroes when it carves the
    /// block and never writes or poisons afterwards, so the word keeps its
    /// value across free and reuse. 0 = none; otherwise a multiple of 8, at
    /// least 16 (the pool's own words). Blocks too small to hold it are
    /// unaffected.
    std::size_t shared_word_offset = 0;
};

struct pool_stats {
    std::uint64_t capacity = 0;
    /// Blocks drawn from upstream so far (never more than capacity).
    std::uint64_t carved = 0;
    /// Peak of blocks outside the depot: in use, or cached in a thread's
    /// magazines (sampled when a list enters or leaves the depot). Equals
    /// capacity when the pool ran dry.
    std::uint64_t in_use_peak = 0;
    /// Allocations that found the pool empty (each then waited or failed).
    std::uint64_t failures = 0;
    /// Re-checks by waiting allocations (one per yield or spin).
    std::uint64_t retries = 0;
    /// Allocations that returned no memory: `fail`, or given up after stop_waiting().
    std::uint64_t gave_up = 0;
    /// Time allocations spent waiting for a block, summed over threads.
    double wait_seconds = 0;
    /// Blocks handed out and taken back; in_use is their difference (exact
    /// once no thread uses the pool: 0 then means nothing leaked).
    std::uint64_t allocations = 0;
    std::uint64_t deallocations = 0;
    std::uint64_t in_use = 0;
};

class pool_resource final : public std::pmr::memory_resource {
  public:
    static constexpr std::size_t granularity = 16;
    static constexpr std::size_t max_block = 4096;
    static constexpr std::size_t class_count = max_block / granularity;

    explicit pool_resource(const pool_options& options,
                           std::pmr::memory_resource* upstream = std::pmr::new_delete_resource())
        : options_(checked(options)),
          magazine_(effective_magazine_size(options)),
          upstream_(upstream),
          serial_(next_serial()) {
        std::lock_guard lock(live_pools().mutex);
        live_pools().serials.push_back(serial_);
    }

    pool_resource(const pool_resource&) = delete;
    pool_resource& operator=(const pool_resource&) = delete;

    /// Stops the program if a domain still allocates from the pool: that
    /// domain frees its nodes into it when destroyed, after the pool's
    /// memory went back (destroy the domain first).
    ~pool_resource() override {
        SMR_CHECK(
            core::resource_users::count(static_cast<const std::pmr::memory_resource*>(this)) == 0,
            "pool_resource destroyed while a domain still allocates from it (destroy the "
            "domain first)");
        {
            // After this, exiting threads no longer flush into this pool.
            std::lock_guard lock(live_pools().mutex);
            auto& serials = live_pools().serials;
            serials.erase(std::find(serials.begin(), serials.end(), serial_));
        }
        for (const slab& s : slabs_) {
            detail::unpoison(s.memory, s.bytes);
            upstream_->deallocate(s.memory, s.bytes, s.align);
        }
    }

    /// From now on, allocations that wait for a block give up (std::bad_alloc)
    /// instead; allocations that find one are unaffected.
    void stop_waiting() noexcept {
        stop_.store(true, std::memory_order_release);  // read by wait_for_block's acquire load
    }

    /// Changes what allocations that find the pool empty do from now on (a
    /// benchmark fills its structure with `fail`, so that a pool too small
    /// for the prefill is reported instead of waited on).
    void set_when_empty(on_empty policy) noexcept {
        when_empty_.store(policy, std::memory_order_relaxed);
    }
    on_empty when_empty() const noexcept { return when_empty_.load(std::memory_order_relaxed); }

    /// Threads waiting for a block now, and waits that have ended with one so
    /// far: when every thread that could free memory waits and no wait ends,
    /// nothing ever will (a benchmark's deadlock watch reads these).
    int waiting() const noexcept { return waiting_.load(std::memory_order_relaxed); }
    std::uint64_t waits_served() const noexcept {
        return waits_served_.load(std::memory_order_relaxed);
    }

    /// Returns the calling thread's cached blocks to the depot, where every
    /// thread can take them.
    void flush_thread_cache() noexcept {
        for (const exit_flush::entry& e : exit_flush::of_this_thread().entries) {
            if (e.serial == serial_) flush(*e.cache);
        }
    }

    /// Recent totals (relaxed reads; exact once no thread uses the pool).
    pool_stats stats() const {
        pool_stats out;
        out.capacity = options_.capacity;
        out.carved = carved_.load(std::memory_order_relaxed);
        out.in_use_peak = std::max(in_use_peak_.load(std::memory_order_relaxed), outside_depot());
        std::uint64_t wait_ns = 0;
        std::lock_guard lock(mutex_);
        for (const auto& cache : caches_) {
            out.failures += cache->failures.get();
            out.retries += cache->retries.get();
            out.gave_up += cache->gave_up.get();
            wait_ns += cache->wait_ns.get();
            out.allocations += cache->allocations.get();
            out.deallocations += cache->deallocations.get();
        }
        // Relaxed reads of counters still moving: a block may show as freed
        // before its allocation does.
        out.in_use = out.allocations > out.deallocations ? out.allocations - out.deallocations : 0;
        out.wait_seconds = static_cast<double>(wait_ns) * 1e-9;
        return out;
    }

    const pool_options& options() const noexcept { return options_; }
    std::size_t magazine_size() const noexcept { return magazine_; }

  private:
    struct magazine_pair {
        detail::chain loaded, previous;
    };
    struct thread_cache {
        std::array<magazine_pair, class_count> by_class{};
        core::owner_counter failures, retries, gave_up, wait_ns;
        core::owner_counter allocations, deallocations;
        /// False once its thread exited (its magazines flushed): another
        /// thread may adopt it. Release by the exiting thread, acquire by the
        /// adopter, so the adopter sees the flushed (empty) magazines.
        std::atomic<bool> owned{true};
    };
    struct slab {
        void* memory;
        std::size_t bytes, align;
    };

    // ---- the magazine layer (Bonwick's alloc and free) -----------------------

    // The fast paths are for a thread that has used this pool before, a
    // common request (alignment at most 16, 1 to 4096 bytes) and a magazine
    // that can give or take a block: a TLS read, two compares, a pop or push.
    // Everything else is out of line, so the fast paths need no stack frame.

    void* do_allocate(std::size_t bytes, std::size_t align) override {
        thread_cache* cache = cache_if_known();
        if (cache == nullptr || !common_request(bytes, align)) [[unlikely]] {
            return allocate_slow(bytes, align);
        }
        magazine_pair& m = cache->by_class[(bytes - 1) / granularity];
        if (m.loaded.count == 0) [[unlikely]]
            return allocate_slow(bytes, align);
        return hand_out(*cache, m.loaded, bytes);
    }

    void do_deallocate(void* p, std::size_t bytes, std::size_t align) override {
        thread_cache* cache = cache_if_known();
        if (cache == nullptr || !common_request(bytes, align)) [[unlikely]] {
            return deallocate_slow(p, bytes, align);
        }
        const std::size_t c = (bytes - 1) / granularity;
        magazine_pair& m = cache->by_class[c];
        if (m.loaded.count == magazine_) [[unlikely]]
            return deallocate_slow(p, bytes, align);
        take_back(*cache, m.loaded, p, c);
    }

    /// Bonwick's allocation when the loaded magazine is empty: swap in the
    /// other one, or a list from the depot (or newly carved), or wait.
    [[gnu::noinline]] void* allocate_slow(std::size_t bytes, std::size_t align) {
        const std::size_t c = class_of(bytes, align);
        thread_cache& cache = this_thread_cache();
        magazine_pair& m = cache.by_class[c];
        if (m.loaded.count == 0) {
            if (m.previous.count != 0) {
                std::swap(m.loaded, m.previous);
            } else if (!refill(c, m.loaded)) {
                wait_for_block(cache, c, m.loaded);  // throws when it gives up
            }
        }
        return hand_out(cache, m.loaded, bytes);
    }

    /// Bonwick's free when the loaded magazine is full: swap it with the
    /// other one, after giving that one to the depot if it is full too.
    [[gnu::noinline]] void deallocate_slow(void* p, std::size_t bytes, std::size_t align) {
        const std::size_t c = class_of(bytes, align);
        thread_cache& cache = this_thread_cache();
        magazine_pair& m = cache.by_class[c];
        if (m.loaded.count == magazine_) {
            if (m.previous.count == magazine_) {
                give_to_depot(c, m.previous);
                m.previous = {};
            }
            std::swap(m.loaded, m.previous);
        }
        take_back(cache, m.loaded, p, c);
    }

    static void* hand_out(thread_cache& cache, detail::chain& loaded, std::size_t bytes) noexcept {
        void* block = take(loaded);
        cache.allocations.add();
        detail::unpoison(block, bytes);
        return block;
    }

    void take_back(thread_cache& cache, detail::chain& loaded, void* p,
                   std::size_t c) const noexcept {
        cache.deallocations.add();
        put(loaded, p, class_size(c));
    }

    bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
        return this == &other;
    }

    SMR_POOL_NO_ASAN static void* take(detail::chain& c) noexcept {
        detail::free_block* block = c.top;
        if (!SMR_MUTANT("pool_hands_a_block_out_twice") || c.count % 2 != 0) c.top = block->next;
        --c.count;
        return block;
    }

    SMR_POOL_NO_ASAN void put(detail::chain& c, void* p, std::size_t size) const noexcept {
        // Default-initialized: the chain word is written only when the block
        // heads a list pushed to the depot, not on every free.
        auto* block = ::new (p) detail::free_block;
        block->next = c.top;
        c.top = block;
        ++c.count;
        poison_free_block(static_cast<unsigned char*>(p), size);
    }

    bool holds_shared_word(std::size_t size) const noexcept {
        return options_.shared_word_offset != 0 &&
               size >= options_.shared_word_offset + sizeof(std::uint64_t);
    }

    /// Poisons a free block, except its shared word, which is not free memory
    /// to its users: poisoned even for an instant, a stray access to it would
    /// be reported. Compiles to nothing without ASan.
    void poison_free_block(unsigned char* p, std::size_t size) const noexcept {
        if (!detail::poisons_free_blocks) return;
        if (!holds_shared_word(size)) return detail::poison(p, size);
        const std::size_t word = options_.shared_word_offset;
        const std::size_t after = word + sizeof(std::uint64_t);
        detail::poison(p, word);
        detail::poison(p + after, size - after);
    }

    // ---- the depot and the budget --------------------------------------------

    /// Fills the empty `into` with a list from the depot or newly carved
    /// blocks; false when the pool has neither.
    bool refill(std::size_t c, detail::chain& into) {
        into = depots_[c]->pop();
        if (into.count != 0) {
            depot_blocks_.fetch_sub(into.count, std::memory_order_relaxed);
        } else {
            into = carve(c);
            if (into.count == 0) return false;
        }
        core::raise_to(in_use_peak_, outside_depot());
        return true;
    }

    void give_to_depot(std::size_t c, detail::chain list) noexcept {
        if (list.count == 0) return;
        depots_[c]->push(list);
        depot_blocks_.fetch_add(list.count, std::memory_order_relaxed);
    }

    /// Reserves up to one magazine of blocks from the budget and draws them
    /// from upstream as one slab; an empty chain when the budget is spent.
    detail::chain carve(std::size_t c) {
        std::size_t taken = carved_.load(std::memory_order_relaxed);
        std::size_t n = 0;
        do {
            n = std::min(magazine_, options_.capacity - taken);
            if (n == 0) return {};
        } while (!carved_.compare_exchange_weak(taken, taken + n, std::memory_order_relaxed));

        const std::size_t size = class_size(c);
        const slab s{allocate_upstream(n * size, class_align(c), n), n * size, class_align(c)};
        {
            std::lock_guard lock(mutex_);
            slabs_.push_back(s);
        }
        detail::chain list;
        auto* bytes = static_cast<unsigned char*>(s.memory);
        for (std::size_t i = n; i-- > 0;) {
            unsigned char* block = bytes + i * size;
            if (holds_shared_word(size)) {
                std::memset(block + options_.shared_word_offset, 0, sizeof(std::uint64_t));
            }
            put(list, block, size);
        }
        return list;
    }

    void* allocate_upstream(std::size_t bytes, std::size_t align, std::size_t blocks) {
        void* memory;
        try {
            memory = upstream_->allocate(bytes, align);
        } catch (...) {
            carved_.fetch_sub(blocks, std::memory_order_relaxed);  // the budget was not used
            throw;
        }
        if (!detail::fits_tagged_word(static_cast<unsigned char*>(memory) + bytes)) {
            upstream_->deallocate(memory, bytes, align);
            carved_.fetch_sub(blocks, std::memory_order_relaxed);
            throw std::runtime_error("pool_resource: upstream memory above 2^48 cannot be tagged");
        }
        return memory;
    }

    /// The slow path of an allocation that found no block: the on_empty policy.
    [[gnu::noinline]] void wait_for_block(thread_cache& cache, std::size_t c, detail::chain& into) {
        cache.failures.add();
        const on_empty policy = when_empty();
        if (policy == on_empty::fail) give_up(cache);
        const auto start = std::chrono::steady_clock::now();
        waiting_.fetch_add(1, std::memory_order_relaxed);
        for (;;) {
            // acquire: pairs with stop_waiting's release store.
            if (stop_.load(std::memory_order_acquire)) {
                waiting_.fetch_sub(1, std::memory_order_relaxed);
                cache.wait_ns.add(elapsed_ns(start));
                give_up(cache);
            }
            cache.retries.add();
            // Hart's spinners (Figure 14) do nothing but spin: whatever grace
            // period the thread held up when it began to wait, it holds up
            // still, and that is the stall the figure shows.
            if (policy != on_empty::spin || SMR_MUTANT("pool_spinner_waits_idle")) {
                if (wait_observer* observer = observe_waits::current()) observer->between_retries();
            }
            if (policy == on_empty::yield) {
                sched_yield();
            } else {
                core::cpu_relax();
            }
            if (refill(c, into)) {
                waits_served_.fetch_add(1, std::memory_order_relaxed);
                waiting_.fetch_sub(1, std::memory_order_relaxed);
                cache.wait_ns.add(elapsed_ns(start));
                return;
            }
        }
    }

    [[noreturn]] static void give_up(thread_cache& cache) {
        cache.gave_up.add();
        throw std::bad_alloc();
    }

    void flush(thread_cache& cache) noexcept {
        for (std::size_t c = 0; c < class_count; ++c) {
            magazine_pair& m = cache.by_class[c];
            give_to_depot(c, std::exchange(m.loaded, {}));
            give_to_depot(c, std::exchange(m.previous, {}));
        }
    }

    /// Blocks in use or in magazines (relaxed reads of two counters: a
    /// recent estimate; a pop may subtract before its push added).
    std::uint64_t outside_depot() const noexcept {
        const auto carved = static_cast<std::int64_t>(carved_.load(std::memory_order_relaxed));
        const std::int64_t outside = carved - depot_blocks_.load(std::memory_order_relaxed);
        return static_cast<std::uint64_t>(std::clamp<std::int64_t>(outside, 0, carved));
    }

    // ---- finding the calling thread's cache ----------------------------------

    /// The last pool this thread used and its cache there.
    struct last_used {
        std::uint64_t serial = 0;
        thread_cache* cache = nullptr;
    };
    static last_used& last_used_by_this_thread() noexcept {
        thread_local last_used last;
        return last;
    }

    /// The calling thread's cache if it is the last one this thread used.
    thread_cache* cache_if_known() const noexcept {
        const last_used& last = last_used_by_this_thread();
        return last.serial == serial_ ? last.cache : nullptr;
    }

    thread_cache& this_thread_cache() {
        last_used& last = last_used_by_this_thread();
        if (last.serial == serial_) [[likely]]
            return *last.cache;
        return find_or_make_cache(last);
    }

    [[gnu::noinline]] thread_cache& find_or_make_cache(last_used& last) {
        exit_flush& mine = exit_flush::of_this_thread();
        for (const exit_flush::entry& e : mine.entries) {
            if (e.serial == serial_) {
                last = {serial_, e.cache};
                return *e.cache;
            }
        }
        thread_cache* cache = adopt_or_make_cache();
        mine.add({serial_, this, cache});
        last = {serial_, cache};
        return *cache;
    }

    thread_cache* adopt_or_make_cache() {
        std::lock_guard lock(mutex_);
        for (const auto& cache : caches_) {
            bool exited = false;
            if (cache->owned.compare_exchange_strong(exited, true, std::memory_order_acquire))
                return cache.get();
        }
        return caches_.emplace_back(std::make_unique<thread_cache>()).get();
    }

    /// Per thread: the caches it has in every pool, flushed when it exits
    /// into the pools that still live.
    struct exit_flush {
        struct entry {
            std::uint64_t serial;
            pool_resource* pool;
            thread_cache* cache;
        };
        std::vector<entry> entries;

        static exit_flush& of_this_thread() {
            thread_local exit_flush flush;
            return flush;
        }
        void add(entry e) {
            std::lock_guard lock(live_pools().mutex);
            std::erase_if(entries, [](const entry& old) { return !live_pools().has(old.serial); });
            entries.push_back(e);
        }
        ~exit_flush() {
            // The registry's mutex keeps a pool from being destroyed mid-flush.
            std::lock_guard lock(live_pools().mutex);
            for (const entry& e : entries) {
                if (!live_pools().has(e.serial)) continue;
                e.pool->flush(*e.cache);
                e.cache->owned.store(false, std::memory_order_release);  // see thread_cache::owned
            }
        }
    };

    struct pool_registry {
        std::mutex mutex;
        std::vector<std::uint64_t> serials;
        bool has(std::uint64_t serial) const {
            return std::find(serials.begin(), serials.end(), serial) != serials.end();
        }
    };
    static pool_registry& live_pools() {
        static pool_registry registry;
        return registry;
    }
    static std::uint64_t next_serial() noexcept {
        static std::atomic<std::uint64_t> serial{0};
        return serial.fetch_add(1, std::memory_order_relaxed) + 1;  // 0 means "no pool"
    }

    // ---- size classes --------------------------------------------------------

    static constexpr bool common_request(std::size_t bytes, std::size_t align) noexcept {
        return align <= granularity && bytes - 1 < max_block;  // bytes == 0 wraps: not common
    }

    static std::size_t class_of(std::size_t bytes, std::size_t align) {
        const std::size_t unit = std::max(align, granularity);
        const std::size_t size = (std::max<std::size_t>(bytes, 1) + unit - 1) / unit * unit;
        if (size > max_block || align > max_block) [[unlikely]] {
            throw std::length_error("pool_resource: " + std::to_string(bytes) +
                                    " bytes aligned to " + std::to_string(align) +
                                    " exceed the largest block (4096)");
        }
        return size / granularity - 1;
    }

    static constexpr std::size_t class_size(std::size_t c) noexcept {
        return (c + 1) * granularity;
    }
    /// The largest power of two that divides the class size.
    static constexpr std::size_t class_align(std::size_t c) noexcept {
        const std::size_t size = class_size(c);
        return size & (~size + 1);
    }

    static std::uint64_t elapsed_ns(std::chrono::steady_clock::time_point since) noexcept {
        return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                              std::chrono::steady_clock::now() - since)
                                              .count());
    }

    static const pool_options& checked(const pool_options& options) {
        if (options.capacity == 0)
            throw std::invalid_argument("pool_resource: capacity must be > 0");
        const std::size_t word = options.shared_word_offset;
        if (word != 0 && (word < sizeof(detail::free_block) || word % sizeof(std::uint64_t) != 0))
            throw std::invalid_argument(
                "pool_resource: shared_word_offset must be 0 or a multiple of 8 of at least 16");
        return options;
    }
    static std::size_t effective_magazine_size(const pool_options& options) noexcept {
        const std::size_t most = std::max<std::size_t>(1, options.capacity / 64);
        // A chain's length must fit the depot's 16-bit count.
        return std::clamp<std::size_t>(options.magazine_size, 1,
                                       std::min<std::size_t>(most, 65535));
    }

    const pool_options options_;
    const std::size_t magazine_;
    std::pmr::memory_resource* const upstream_;
    const std::uint64_t serial_;
    std::array<core::padded<detail::depot>, class_count> depots_{};
    alignas(core::false_sharing_range) std::atomic<std::size_t> carved_{0};
    std::atomic<std::int64_t> depot_blocks_{0};
    std::atomic<std::uint64_t> in_use_peak_{0};
    std::atomic<bool> stop_{false};
    std::atomic<on_empty> when_empty_{options_.when_empty};
    std::atomic<int> waiting_{0};
    std::atomic<std::uint64_t> waits_served_{0};
    mutable std::mutex mutex_;  // guards caches_ and slabs_ (slow paths only)
    std::vector<std::unique_ptr<thread_cache>> caches_;
    std::vector<slab> slabs_;
};

}  // namespace smr::alloc
