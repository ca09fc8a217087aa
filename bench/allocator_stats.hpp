// Bytes the allocator itself says are in use, where it offers a way to ask.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace smrbench {

/// `allocator` is allocator_identity::name. jemalloc: stats.allocated;
/// tcmalloc: generic.current_allocated_bytes; mimalloc: committed bytes
/// (mi_process_info; it has no cheaper allocated-bytes figure); glibc:
/// mallinfo2 in-use bytes. nullopt for allocators without such an API
/// (tbbmalloc) or when the call fails.
std::optional<std::uint64_t> allocator_bytes_in_use(std::string_view allocator);

}  // namespace smrbench
