// Where a domain's nodes meet the allocator: their memory taken and given
// back (std::malloc, a std::pmr resource, with or without owner tags), and
// the free path every scheme ends in -- a safe bag freed at once (batch) or
// queued and freed a few nodes per operation (amortized), one free in
// time_frees_every timed, and the frees of a traced run recorded on the
// timeline. domain_base holds one and calls it; a scheme reaches it only
// through domain_base::dispose_safe.
//
// Everything here runs on the thread that owns the slot it is given, except
// the constructor and the destructor's release of what is left.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <memory_resource>
#include <new>

#include "smr/core/clock.hpp"
#include "smr/core/compiler.hpp"
#include "smr/core/limbo_bag.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/owner_tag.hpp"
#include "smr/core/padded.hpp"
#include "smr/core/retired_node.hpp"
#include "smr/reclaim/domain_config.hpp"
#include "smr/reclaim/statistics.hpp"
#include "smr/trace/latency_histogram.hpp"
#include "smr/trace/timeline.hpp"

namespace smr::detail {

/// What the free path keeps in a thread's slot (domain_base::slot), all of
/// it the owner's alone.
template <class Slot>
concept free_path_slot = requires(Slot& s) {
    { s.freeable } -> std::same_as<core::limbo_bag&>;  // amortized: safe, not yet freed
    { s.counts } -> std::same_as<thread_counters&>;
    { s.owner_tag } -> std::same_as<std::uint32_t&>;  // count_remote_frees
    { s.frees_until_timed } -> std::same_as<std::uint32_t&>;
    { s.timing_rng } -> std::same_as<std::uint32_t&>;  // xorshift32 state, non-zero
};

template <free_path_slot Slot>
class free_path {
  public:
    explicit free_path(const domain_config& config)
        : policy_(config.free),
          memory_(config.memory),
          count_remote_frees_(config.count_remote_frees),
          direct_(config.memory == nullptr && !config.count_remote_frees),
          latency_(config.time_frees ? std::make_unique<core::padded<trace::latency_histogram>[]>(
                                           config.max_threads)
                                     : nullptr),
          ticks_(config.time_frees ? core::ns_per_tick() : 1.0),
          timing_gaps_(2 * std::clamp<std::uint32_t>(config.time_frees_every, 1, 1u << 30) - 1) {}

    /// Seeds slot `index`'s draws of the gaps between timed frees.
    static void seed(Slot& s, std::size_t index) noexcept {
        // Any odd multiple of index + 1 is non-zero, as xorshift needs.
        s.timing_rng = static_cast<std::uint32_t>((index + 1) * 0x9e3779b9u);
    }

    /// Every free call becomes an event of `timeline` (null: none).
    void attach(trace::timeline* timeline) noexcept {
        timeline_ = timeline;
        if (timeline != nullptr) timing_gaps_ = 1;  // every call is an event
    }
    /// The free latencies of slots 0 to limit - 1, merged into `out`.
    void merge_latency(trace::latency_histogram& out, int limit) const noexcept {
        if (latency_ == nullptr) return;
        for (int i = 0; i < limit; ++i) out.merge(*latency_[static_cast<std::size_t>(i)]);
    }

    // ---- memory ----------------------------------------------------------------

    /// `bytes` for a node of slot `s`'s thread. Throws std::bad_alloc. The
    /// direct case (no resource, no owner tags) is tested first and inlined:
    /// a run with the system allocator pays one predicted branch per node.
    /// The other paths are out of line and cold (a pool or owner tags: runs
    /// that pay a virtual call or a tag per node anyway), so that they weigh
    /// nothing on the inlining of allocate into its structure's operations:
    /// as plain out-of-line calls they kept dgt_bst's insert from being
    /// inlined into smrbench's loop (+10 instructions per operation).
    void* allocate(const Slot& s, std::size_t bytes, std::size_t align) {
        if (direct_) [[likely]]
            return allocate_from_system(bytes, align);
        return allocate_indirect(s.owner_tag, bytes, align);
    }
    /// Gives `m` back untimed and uncounted: a node never published, or one
    /// freed where no thread runs.
    void release(core::node_memory m) noexcept {
        if (direct_) [[likely]] {
            std::free(m.address);
        } else {
            release_indirect(m);
        }
    }

    // ---- freeing ---------------------------------------------------------------

    /// Every node of `safe` may be freed: free it now (batch) or queue it on
    /// the freeable list (amortized). `safe` ends empty. In batch mode
    /// `between()` runs after every `every` frees (0: never).
    template <class Between>
    void dispose(int tid, Slot& s, core::limbo_bag& safe, std::uint32_t every, Between&& between) {
        if (policy_.mode == free_mode::amortized) {
            s.freeable.splice_back(safe);
            return;
        }
        if (timeline_ != nullptr) [[unlikely]] {
            free_batch<true>(tid, s, safe, every, between);
        } else {
            free_batch<false>(tid, s, safe, every, between);
        }
    }

    /// Amortized free's step: k nodes of the freeable list plus the
    /// catch-up share.
    [[gnu::noinline]] void amortized_free(int tid, Slot& s) noexcept {
        std::size_t quota = policy_.k;
        if (policy_.catchup_divisor != 0) quota += s.freeable.size() / policy_.catchup_divisor;
        if (SMR_MUTANT("amortized_frees_whole_list")) quota = s.freeable.size();
        std::size_t freed = 0;
        for (; freed != quota; ++freed) {
            const core::retired_entry entry = s.freeable.pop_front();
            if (!entry) break;
            free_timed(tid, s, entry);
        }
        s.counts.freed.add(freed);
    }

    /// Frees the freeable list at once, whatever the policy (a thread that
    /// hands its garbage over, a barrier).
    void free_now(int tid, Slot& s) noexcept {
        if (s.freeable.empty()) return;
        core::limbo_bag all = std::move(s.freeable);
        auto nothing = [] {};
        free_batch<false>(tid, s, all, 0, nothing);
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
    [[gnu::always_inline]] void free_timed(int tid, Slot& s, core::retired_entry entry) noexcept {
        const core::node_memory memory = entry.release();
        // Before the timed part: the tag's line is the node's, often cold.
        if (!direct_) [[unlikely]]
            count_if_remote(s, memory);
        if (latency_ == nullptr || --s.frees_until_timed != 0) {
            release(memory);  // time_frees off (the library's default), or not this one
            return;
        }
        s.frees_until_timed = next_timing_gap(s);
        const std::uint64_t start = core::now_ticks();
        release(memory);
        const std::uint64_t end = core::now_ticks();
        latency_[static_cast<std::size_t>(tid)]->record(ticks_.to_ns(end - start));
        if (MaybeTraced && timeline_ != nullptr && end - start >= timeline_->min_free_ticks())
            [[unlikely]] {
            timeline_->record(tid, trace::event_kind::free_call, start, end, 1);
        }
    }

  private:
    /// Batch free of `safe`, block by block (no per-node bag bookkeeping);
    /// between() may append to `safe`, so the bag is taken again until it
    /// stays empty. Traced: the timeline is attached (the untraced loop does
    /// not test for it at every node).
    template <bool Traced, class Between>
    void free_batch(int tid, Slot& s, core::limbo_bag& safe, std::uint32_t every,
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
                if (!SMR_MUTANT("batch_counts_freed_at_its_end")) s.counts.freed.add();
                ++batch_size;
                if (every != 0 && ++since_check == every) {
                    since_check = 0;
                    between();
                }
            });
        }
        if (SMR_MUTANT("batch_counts_freed_at_its_end")) s.counts.freed.add(batch_size);
        if constexpr (Traced) {
            if (batch_size != 0) {
                timeline_->record(tid, trace::event_kind::batch_free, batch_start,
                                  core::now_ticks(), batch_size);
            }
        }
    }

    SMR_SLOW_PATH void* allocate_indirect(std::uint32_t owner_tag, std::size_t bytes,
                                          std::size_t align) {
        if (!count_remote_frees_) return memory_->allocate(bytes, align);
        const std::size_t block = core::tagged_block_bytes(bytes, align);
        void* memory = memory_ == nullptr ? allocate_from_system(block, align)
                                          : memory_->allocate(block, align);
        core::stamp_owner(memory, bytes, owner_tag);
        return memory;
    }
    static void* allocate_from_system(std::size_t bytes, std::size_t align) {
        void* memory = align <= alignof(std::max_align_t) ? std::malloc(bytes)
                                                          : std::aligned_alloc(align, bytes);
        if (memory == nullptr) throw std::bad_alloc();
        return memory;
    }
    /// A null address is an smr::obj_base object that its deleter freed:
    /// free(nullptr) does nothing, a memory resource must not see it.
    SMR_SLOW_PATH void release_indirect(core::node_memory m) noexcept {
        if (m.address == nullptr) return;
        const std::size_t block =
            count_remote_frees_ ? core::tagged_block_bytes(m.bytes, m.align) : m.bytes;
        if (memory_ == nullptr) {
            std::free(m.address);
        } else {
            memory_->deallocate(m.address, block, m.align);
        }
    }
    /// With count_remote_frees: counts the free of `m` by the thread of slot
    /// `s` if another registration allocated it.
    SMR_SLOW_PATH void count_if_remote(Slot& s, core::node_memory m) noexcept {
        if (count_remote_frees_ && m.address != nullptr &&
            core::owner_of(m.address, m.bytes) != s.owner_tag &&
            !SMR_MUTANT("remote_frees_never_counted")) {
            s.counts.remote_frees.add();
        }
    }

    /// Frees until the next timed one: 1 + a uniform draw below timing_gaps_
    /// (xorshift32, then Lemire's multiply-shift; no division).
    std::uint32_t next_timing_gap(Slot& s) noexcept {
        if (timing_gaps_ == 1) return 1;
        std::uint32_t x = s.timing_rng;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        s.timing_rng = x;
        return 1 + static_cast<std::uint32_t>((std::uint64_t{x} * timing_gaps_) >> 32);
    }

    free_policy policy_;
    std::pmr::memory_resource* memory_;
    bool count_remote_frees_;
    /// Nodes come from std::malloc and go back to std::free as they are: no
    /// resource, no owner tags (count_remote_frees).
    bool direct_;
    /// Per-slot free() latency, only with config.time_frees (2.7 KB a slot).
    std::unique_ptr<core::padded<trace::latency_histogram>[]> latency_;
    core::tick_converter ticks_;
    /// How many gaps between timed frees are drawn from: 2 x time_frees_every
    /// - 1 (mean time_frees_every), 1 while a timeline is attached.
    std::uint32_t timing_gaps_;
    trace::timeline* timeline_ = nullptr;
};

}  // namespace smr::detail
