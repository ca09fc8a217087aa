// The keys a ready-made structure accepts: [min_key, max_key], the key
// type's range less its lowest and highest values, which the sets keep for
// their sentinels (a list's head and tail, the trees' leftmost and rightmost
// leaves). A sentinel's key taken as a user's would answer for the sentinel:
// contains(max) true on an empty list, erase(max) retiring the list's own
// tail. Every operation checks its key, in every build: a compare and a
// never-taken branch, the key already in a register.
#pragma once

#include "smr/core/check.hpp"

namespace smr::ds::detail {

template <class Key>
[[gnu::always_inline]] inline void check_key(Key key, Key min_key, Key max_key) noexcept {
    SMR_CHECK(!(key < min_key) && !(max_key < key),
              "key outside the structure's range [min_key, max_key]: its lowest and highest "
              "keys belong to its sentinels (docs/library.md, section 2b, \"Keys\")");
}

}  // namespace smr::ds::detail
