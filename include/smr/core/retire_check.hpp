// A node retired twice, caught at the second retire.
//
// Retiring a node twice puts it in a limbo bag (or retire list) twice, and
// the scheme frees it twice, long after the bug and on whichever thread frees
// it: a crash inside the free loop, or a corrupted heap. The nodes of most
// schemes carry no header (core/retired_node.hpp), so there is no bit in the
// node to test; a debug build keeps instead the set of nodes retired and not
// yet freed, and the second retire of a node stops the program with one line.
//
// SMR_CHECK_RETIRE (0 or 1) switches it; by default it is on where NDEBUG is
// not defined, except under a sanitizer: AddressSanitizer reports the double
// free itself, with the stacks of both frees, and under ThreadSanitizer the
// set's locks would order the retiring and the freeing thread, hiding a
// missing acquire the scheme should have. The cost, in a debug build: a lock
// of one of 64 shards and a hash-set insert per retire, an erase per free.
// Like NDEBUG, it must be the same in every translation unit of a program (a
// node retired where it is on and freed where it is off stays in the set).
#pragma once

#include "smr/core/check.hpp"
#include "smr/core/mutant.hpp"

#ifndef SMR_CHECK_RETIRE
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SMR_SANITIZED_BUILD 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SMR_SANITIZED_BUILD 1
#endif
#if !defined(NDEBUG) && !defined(SMR_SANITIZED_BUILD)
#define SMR_CHECK_RETIRE 1
#else
#define SMR_CHECK_RETIRE 0
#endif
#undef SMR_SANITIZED_BUILD
#endif

#if SMR_CHECK_RETIRE
#include <array>
#include <cstdint>
#include <mutex>
#include <new>
#include <unordered_set>
#endif

namespace smr::core {

#if SMR_CHECK_RETIRE

/// The nodes retired and not yet freed, in shards by address.
class retired_set {
  public:
    /// False if `node` is in the set already.
    bool insert(const void* node) {
        shard& s = shard_of(node);
        const std::lock_guard<std::mutex> lock(s.mutex);
        return s.nodes.insert(node).second;
    }
    void erase(const void* node) noexcept {
        shard& s = shard_of(node);
        const std::lock_guard<std::mutex> lock(s.mutex);
        s.nodes.erase(node);
    }

    /// Made at first use and never destroyed: domains free nodes while
    /// static destructors run.
    static retired_set& instance() {
        static retired_set* const set = new retired_set();
        return *set;
    }

  private:
    struct alignas(64) shard {
        std::mutex mutex;
        std::unordered_set<const void*> nodes;
    };
    shard& shard_of(const void* node) noexcept {
        // Nodes are at least 16-byte aligned: the low bits carry nothing.
        return shards_[(reinterpret_cast<std::uintptr_t>(node) >> 4) % shards_.size()];
    }
    std::array<shard, 64> shards_;
};

/// At every retire: stops the program if `node` was retired and not freed.
inline void note_retired(const void* node) noexcept {
    bool fresh = true;
    try {
        fresh = retired_set::instance().insert(node);
    } catch (const std::bad_alloc&) {
        return;  // no memory for the check: the retire itself goes on
    }
    SMR_CHECK(fresh || SMR_MUTANT("double_retire_unnoticed"),
              "a node was retired twice (retired again before it was freed): retire each node "
              "once, from the thread whose unlink succeeded");
}

/// Before a node's memory goes back: it may be allocated and retired again.
inline void note_freed(const void* node) noexcept { retired_set::instance().erase(node); }

#else

inline void note_retired(const void*) noexcept {}
inline void note_freed(const void*) noexcept {}

#endif

}  // namespace smr::core
