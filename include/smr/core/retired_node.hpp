// The base every reclaimable node derives from, and how a retired node is
// destroyed.
#pragma once

#include <cstdint>
#include <type_traits>

#include "smr/core/retire_check.hpp"

namespace smr::core {

/// Where a destroyed node's memory goes back to, and the size and alignment
/// it was allocated with (a std::pmr::memory_resource needs both to free it).
/// Two 8-byte words: returned in registers, so the malloc path pays nothing
/// for the fields it ignores.
struct node_memory {
    void* address;
    std::uint32_t bytes;
    std::uint32_t align;
};

struct retired_node;

/// The type-erased destructor of a retired node: runs the most-derived
/// destructor and returns the memory the node was allocated in, which the
/// domain hands back to its allocator (a null address: the object's own
/// deleter freed it, smr::obj_base).
using destroy_fn = node_memory (*)(retired_node*);

/// The base of every reclaimable node. Empty: a domain adds the fields its
/// scheme needs (rcu a retire epoch, the era schemes a birth and a retire
/// era, lfrc a count), and the none, epoch, token, hp and nbr families add
/// nothing, so their nodes are as small as the structure's fields.
///
/// How a retired node is destroyed travels beside it, in its limbo bag's
/// entry (core/limbo_bag.hpp), made at retire from the node's static type
/// (entry_of below), not in a header: a bag link and a destroy function
/// in every node cost 16 bytes, a jemalloc size class for the DGT node;
/// docs/design.md, "Node header", gives what removing them saved.
struct retired_node {};

/// A destroy word kept in the node, for the schemes that free nodes whose
/// static type they do not know when they free them: lfrc releases the nodes
/// a freed node linked to, and the urcu domains get nodes back from liburcu's
/// callback. domain.allocate stamps it.
struct destroy_word : retired_node {
    destroy_fn destroy = nullptr;
};

/// The size and alignment the domain allocates a T with: what destroy_as<T>
/// reports when it frees one.
template <class T>
inline constexpr node_memory memory_of_type{nullptr, static_cast<std::uint32_t>(sizeof(T)),
                                            static_cast<std::uint32_t>(alignof(T))};

/// The destroy function for a node of type T.
template <class T>
node_memory destroy_as(retired_node* node) noexcept {
    T* object = static_cast<T*>(node);
    object->~T();
    return {object, memory_of_type<T>.bytes, memory_of_type<T>.align};
}

/// One retired node and the function that destroys it. Carrying the destroy
/// function here, not in the node, costs the node nothing and lets a batch
/// free run through the entries of a block without loading a line of any
/// node (a node's memory is cold by the time its grace period ends;
/// jemalloc's and mimalloc's free do not touch it either).
struct retired_entry {
    retired_node* node = nullptr;
    destroy_fn destroy = nullptr;

    /// Runs the destructor; returns the memory to give back to the allocator.
    node_memory release() const noexcept {
        note_freed(node);  // debug builds: the address may be retired again
        return destroy(node);
    }
    explicit operator bool() const noexcept { return node != nullptr; }
};

/// The entry of a node about to be retired, from its static type T:
/// - T names its own destroy function (`static node_memory smr_destroy(
///   retired_node*)`: smr::obj_base, whose deleter frees the object, and the
///   rcu facade's synchronize marker);
/// - or T is final, so a T* is the whole object domain.allocate<T> made;
/// - or the node carries a destroy word (lfrc, urcu), stamped at allocate.
/// A node type that is none of these is refused at compile time: a pointer
/// to a base of the allocated type would free the wrong size.
template <class T>
retired_entry entry_of(T* node) noexcept {
    if constexpr (requires { &T::smr_destroy; }) {
        return {node, &T::smr_destroy};  // its retire() checks what the deleter destroys
    } else if constexpr (std::is_final_v<T>) {
        static_assert(std::is_nothrow_destructible_v<T>,
                      "a retired node's destructor must not throw: it runs in the domain's "
                      "noexcept free path, on whichever thread frees the node, and would end "
                      "the program");
        return {node, &destroy_as<T>};
    } else {
        static_assert(std::is_base_of_v<destroy_word, T>,
                      "a retired node's type must be final (declare `struct node final : "
                      "Domain::node_base`), so that retire knows the type domain.allocate made");
        return {node, node->destroy};
    }
}

}  // namespace smr::core
