// What a structure whose traversals follow links out of nodes that may
// already be unlinked tells its reclaimer, so that hazard pointers can
// protect those traversals (HP++: Jung, Lee, Kim, Kang, "Applying Hazard
// Pointers to More Concurrent Data Structures", SPAA 2023,
// DOI 10.1145/3558481.3591102). Two calls, which every other scheme turns
// into what the structure would have written without them:
//
//     // a step of a traversal: the link of `from`, a node that may be unlinked
//     const auto next = smr::protect_from(reader, slot, from->next, *from);
//     if (!next.valid) restart from the root;   // `from` was invalidated
//
//     // an unlink whose nodes' links are frozen (marked) and lead to `frontier`
//     auto unlink = smr::begin_unlink(domain, self, frontier);
//     if (CAS(pred->next, first, frontier)) for each node n unlinked: unlink.retire(n);
//
// The structure's duty (hp_pp.hpp says why): the frontier is the node every
// unlinked node's links lead to outside the unlinked set, it is known
// before the unlink and stays the same, and no unlinked node's link changes
// after the unlink. Under hp_pp the unlink's nodes are invalidated before
// they are retired; a reader that finds the node it reads from invalidated
// has nothing it may trust past it and restarts.
#pragma once

#include <atomic>
#include <type_traits>

#include "smr/reclaim/context.hpp"

namespace smr {

/// What protect_from read: the pointer, or `valid` false when the node it
/// was read from had been invalidated (unlinked and on its way to being
/// freed), and `ptr` must not be used.
template <class T>
struct link_read {
    T* ptr = nullptr;
    bool valid = true;
};

/// reader.protect(slot, source) for `source`, a link of node `from` that
/// the traversal holds but that may have been unlinked since it reached it.
/// A reader that can check `from` (hp_pp's) does; every other reader
/// protects as protect does and reads `valid` true, a constant its caller's
/// restart folds away on.
template <class Reader, class Slot, class T, class From>
[[gnu::always_inline]] inline link_read<T> protect_from(const Reader& reader, Slot slot,
                                                        const std::atomic<T*>& source,
                                                        const From& from) noexcept {
    if constexpr (requires { reader.protect_from(slot, source, from); }) {
        return reader.protect_from(slot, source, from);
    } else {
        static_assert(
            !requires { requires Reader::checks_sources; },
            "smr::protect_from: this reader checks the node it steps out of, but "
            "takes no such slot");
        return {reader.protect(slot, source), true};
    }
}

/// The unlink of a scheme that needs none of this: its retire.
template <class Domain>
class plain_unlink {
  public:
    plain_unlink(Domain& domain, context_ref<Domain> self) noexcept
        : domain_(domain), self_(self) {}
    plain_unlink(const plain_unlink&) = delete;
    plain_unlink& operator=(const plain_unlink&) = delete;

    template <class T>
    void retire(T* node) noexcept {
        domain_.retire(self_, node);
    }

  private:
    Domain& domain_;
    context_ref<Domain> self_;
};

/// Opens an unlink whose nodes' links lead to `frontier` (a node the caller
/// holds protected, or one no thread can unlink before the caller's unlink
/// succeeds). Call it before the write that unlinks; retire the unlinked
/// nodes through the returned object once that write succeeded, and let it
/// go without a retire when it failed. One unlink open at a time per thread.
template <class Domain, class Frontier>
[[gnu::always_inline]] inline auto begin_unlink(Domain& domain,
                                                std::type_identity_t<context_ref<Domain>> self,
                                                Frontier* frontier) noexcept {
    if constexpr (requires { domain.begin_unlink(self, frontier); }) {
        return domain.begin_unlink(self, frontier);
    } else {
        return plain_unlink<Domain>(domain, self);
    }
}

}  // namespace smr
