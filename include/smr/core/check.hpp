// Contracts checked in every build, for the few rules whose violation would
// otherwise write out of bounds or call through a null pointer: the program
// stops with one line saying which rule, instead of corrupting memory. Rules
// whose violation a debug build can catch without a cost on the hot path
// stay `assert`s.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace smr::core {

/// Prints "smr: <what>" and aborts. Out of line and cold, so a check costs
/// its caller a compare and a never-taken branch.
[[noreturn, gnu::cold, gnu::noinline]] inline void contract_failed(const char* what) noexcept {
    std::fprintf(stderr, "smr: %s\n", what);
    std::abort();
}

}  // namespace smr::core

/// Stops the program with `what` unless `condition` holds; in every build,
/// noexcept functions included.
#define SMR_CHECK(condition, what)              \
    do {                                        \
        if (!(condition)) [[unlikely]]          \
            ::smr::core::contract_failed(what); \
    } while (false)
