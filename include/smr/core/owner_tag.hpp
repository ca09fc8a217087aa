// Which thread allocated a block: a 4-byte tag after the object, for counting
// remote frees (domain_config::count_remote_frees).
//
// A free is remote when the freeing thread is not the one that allocated the
// block: the frees the Epochs paper's remote batch free is made of (Kim, Brown
// and Singh, PPoPP'24, Section 3), which an allocator with per-thread caches
// sends back to another thread's bins. The tag sits after the object rather
// than before it, so the object keeps the block's address and alignment (a
// pool's type-stable word, lfrc's count, stays at its offset) and the block
// grows by 4 bytes rounded up to the alignment: a 40-byte DGT node becomes a
// 48-byte block, jemalloc's and mimalloc's size class for 40 bytes already.
// Nothing changes for a domain that does not count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace smr::core {

/// The tag's offset in a block holding an object of `bytes` bytes.
constexpr std::size_t owner_tag_offset(std::size_t bytes) noexcept {
    return (bytes + alignof(std::uint32_t) - 1) / alignof(std::uint32_t) * alignof(std::uint32_t);
}

/// The size of the block that holds an object of `bytes` bytes, aligned to
/// `align`, and its tag: a multiple of `align`, as aligned_alloc asks.
constexpr std::size_t tagged_block_bytes(std::size_t bytes, std::size_t align) noexcept {
    const std::size_t end = owner_tag_offset(bytes) + sizeof(std::uint32_t);
    return (end + align - 1) / align * align;
}

/// Writes `owner` into the tag of the block at `block` (object of `bytes`).
inline void stamp_owner(void* block, std::size_t bytes, std::uint32_t owner) noexcept {
    std::memcpy(static_cast<char*>(block) + owner_tag_offset(bytes), &owner, sizeof owner);
}

/// The tag stamp_owner wrote. The object may have been destroyed: the tag
/// lies outside it, in memory the block still owns.
inline std::uint32_t owner_of(const void* block, std::size_t bytes) noexcept {
    std::uint32_t owner;
    std::memcpy(&owner, static_cast<const char*>(block) + owner_tag_offset(bytes), sizeof owner);
    return owner;
}

}  // namespace smr::core
