// The asymmetric fence: a reader's side that is only a compiler barrier, and
// a reclaimer's side that makes every running thread of the process execute a
// full memory barrier (Linux's membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED).
//
// The reservation schemes' Dekker pair is: a reader stores its announcement,
// then loads the source again; a reclaimer unlinks (a store), then loads every
// announcement. With a full fence on both sides one of them sees the other's
// store. A reader runs its side once per node it visits, a reclaimer once per
// scan of thousands of retired nodes, so moving the whole cost to the
// reclaimer's side turns a fence per node into a system call per scan.
//
// Why the pair still holds. While membarrier runs, each thread of the process
// that is running executes a full barrier (an interrupt the kernel sends it),
// and a thread that is not running passes one when it is switched out or in.
// So each reader's execution is cut at one point P inside the call: what it
// did before P is visible to the reclaimer's loads after the call, and its
// loads after P see what the reclaimer stored before it. The reader's
// announcement and its re-read are kept in program order by the compiler
// barrier, so either the announcement comes before P (the scan sees it) or
// the re-read comes after P (it sees the unlink, and the protect retries).
// That is the kernel's documented guarantee (membarrier(2), and
// Documentation/memory-barriers.txt's pairing of barrier() with membarrier),
// the one folly's asymmetric_thread_fence and liburcu's urcu-memb rely on; the
// C++ abstract machine has no such call, so the argument is the kernel's and
// the compiler barrier's, not the standard's.
//
// Registration. Private expedited membarrier needs one registration per
// process (MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED), made here at the first
// asymmetric_fence_available() call. Where it fails (not Linux, a kernel
// before 4.14, a seccomp filter), asymmetric_fence_available() says so and
// every domain that asked for the asymmetric mode uses the symmetric one;
// heavy_fence() is reached only through a domain whose mode resolved to
// asymmetric, so it never runs unregistered.
//
// ThreadSanitizer models neither side. It need not: as with core::fence, the
// pair only decides which values a scan sees; every edge from a reader's use
// of a node to its free is a release store and an acquire load, which TSan
// checks.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string_view>

#include "smr/core/check.hpp"
#include "smr/core/fence.hpp"

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace smr {

/// How a reservation scheme orders a reader's announcement before its next
/// load (domain_config::fence).
enum class fence_mode : std::uint8_t {
    /// A full fence on both sides: Michael's protect, every node visited.
    symmetric,
    /// A compiler barrier on the reader's side, membarrier on the
    /// reclaimer's (once per scan). Falls back to symmetric where the
    /// process cannot use private expedited membarrier.
    asymmetric,
};

inline constexpr std::string_view to_string(fence_mode mode) noexcept {
    return mode == fence_mode::asymmetric ? "asymmetric" : "symmetric";
}

/// The mode a name gives ("symmetric", "asymmetric"), or nothing.
inline constexpr std::optional<fence_mode> parse_fence_mode(std::string_view name) noexcept {
    if (name == "symmetric") return fence_mode::symmetric;
    if (name == "asymmetric") return fence_mode::asymmetric;
    return std::nullopt;
}

namespace core {
namespace detail {

inline bool register_private_expedited_membarrier() noexcept {
#if defined(__linux__) && defined(__NR_membarrier)
    const long commands = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (commands < 0 || (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
    return syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
    return false;
#endif
}

}  // namespace detail

/// Whether this process can use the asymmetric fence; the first call
/// registers it (thread-safe, once per process).
inline bool asymmetric_fence_available() noexcept {
    static const bool available = detail::register_private_expedited_membarrier();
    return available;
}

/// The mode a domain that asks for `requested` uses.
inline fence_mode effective_fence(fence_mode requested) noexcept {
    if (requested == fence_mode::asymmetric && !asymmetric_fence_available()) {
        return fence_mode::symmetric;
    }
    return requested;
}

/// The reader's side: keeps program order against the compiler only.
inline void light_fence() noexcept { std::atomic_signal_fence(std::memory_order_seq_cst); }

/// The reader's side for one store-then-load pair: keeps the store to
/// `announced` before the next load of `validated` against the compiler, and
/// nothing else, so the pointers and flags a protect loop keeps in registers
/// stay there (a full compiler barrier reloads them at every protect). The
/// empty asm claims to read and write both objects: the store cannot sink
/// below it, the load cannot rise above it. It writes neither.
template <class A, class B>
inline void light_fence(A& announced, const B& validated) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    asm volatile("" : "+m"(announced), "+m"(const_cast<B&>(validated)));
#else
    (void)announced;
    (void)validated;
    light_fence();
#endif
}

/// The reclaimer's side: returns after every running thread of the process
/// has executed a full barrier. Only after asymmetric_fence_available()
/// returned true.
inline void heavy_fence() noexcept {
    // The caller's own store-before-load order, in the C++ model (the kernel
    // also fences on entry and exit; this does not rely on it).
    fence();
#if defined(__linux__) && defined(__NR_membarrier)
    const long result = syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    SMR_CHECK(result == 0,
              "membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed after registration");
#else
    contract_failed("heavy_fence: no asymmetric fence on this platform");
#endif
}

/// The two sides of a reservation scheme's Dekker pair in the mode a domain
/// resolved at construction: reader() where a reader announces and re-reads,
/// reclaimer() where a scan is about to load the announcements.
class fence_pair {
  public:
    explicit fence_pair(fence_mode requested) noexcept
        : asymmetric_(effective_fence(requested) == fence_mode::asymmetric) {}

    void reader() const noexcept {
        if (asymmetric_) {
            light_fence();
        } else {
            fence();
        }
    }
    /// reader() for one announcement and the one source it validates.
    template <class A, class B>
    void reader(A& announced, const B& validated) const noexcept {
        if (asymmetric_) [[likely]] {  // the default: its path falls through
            light_fence(announced, validated);
        } else {
            fence();
        }
    }
    /// True if it issued a heavy barrier (for the domain's counter).
    bool reclaimer() const noexcept {
        if (asymmetric_) {
            heavy_fence();
            return true;
        }
        fence();
        return false;
    }
    fence_mode mode() const noexcept {
        return asymmetric_ ? fence_mode::asymmetric : fence_mode::symmetric;
    }

  private:
    bool asymmetric_;
};

}  // namespace core
}  // namespace smr
