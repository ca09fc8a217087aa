// The header every reclaimable node starts with.
#pragma once

namespace smr::core {

/// Intrusive link and type-erased destructor. Retiring a node costs no
/// allocation (NBR forbids allocating in some phases, and an allocation per
/// retire would distort the allocator measurements this project exists to
/// make), and a limbo bag can hold nodes of several types (the (a,b)-tree has
/// leaves and internal nodes).
struct retired_node {
    retired_node* next_retired = nullptr;
    /// Runs the most-derived destructor and returns the address the node was
    /// allocated at, which the domain hands back to the allocator.
    void* (*destroy)(retired_node*) = nullptr;
};

/// The destroy function for a node of type T; stamped by domain allocate<T>.
template <class T>
void* destroy_as(retired_node* node) noexcept {
    T* object = static_cast<T*>(node);
    object->~T();
    return object;
}

}  // namespace smr::core
