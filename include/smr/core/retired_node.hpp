// The header every reclaimable node starts with.
#pragma once

#include <cstdint>

#include "smr/core/check.hpp"

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

/// The destroy function of a node that neither domain.allocate made nor
/// smr::obj_base gave a deleter: the domain cannot know how to free it, so
/// it stops the program with a message instead of guessing (in every build;
/// a debug build already asserts at the retire).
[[noreturn]] inline node_memory no_deleter(retired_node*) noexcept {
    contract_failed(
        "a retired object has no deleter: make nodes with domain.allocate, or derive objects "
        "you allocate yourself from smr::obj_base");
}

/// The type-erased destructor every node carries. Retiring a node costs no
/// allocation per node (NBR forbids allocating in some phases, and an
/// allocation per retire would distort the allocator measurements this
/// project exists to make): limbo bags are blocks of (node, destroy) entries
/// (core/limbo_bag.hpp), and a bag can hold nodes of several types (the
/// (a,b)-tree has leaves and internal nodes).
struct retired_node {
    /// Runs the most-derived destructor and returns the memory the node was
    /// allocated in, which the domain hands back to its allocator (a null
    /// address: the object's own deleter freed it, smr::obj_base).
    node_memory (*destroy)(retired_node*) = &no_deleter;
};

/// The size and alignment the domain allocates a T with: what destroy_as<T>
/// reports when it frees one.
template <class T>
inline constexpr node_memory memory_of_type{nullptr, static_cast<std::uint32_t>(sizeof(T)),
                                            static_cast<std::uint32_t>(alignof(T))};

/// The destroy function for a node of type T; stamped by domain allocate<T>.
template <class T>
node_memory destroy_as(retired_node* node) noexcept {
    T* object = static_cast<T*>(node);
    object->~T();
    return {object, memory_of_type<T>.bytes, memory_of_type<T>.align};
}

}  // namespace smr::core
