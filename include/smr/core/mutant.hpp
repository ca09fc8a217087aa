// Seeded bugs for the mutation harness (scripts/mutants, docs/design.md
// "Tests and CI").
//
// A test suite earns trust by failing when the code is wrong. Each mutant is
// a named, deliberate bug at one line (a bag freed one epoch early, a protect
// that skips its re-validation, a validate() that always says yes); the
// harness switches one on at run time with the environment variable
// SMR_MUTANT=<name> and runs the tests that should catch it, many times.
//
// Mutants exist only in the `mutants` preset's build, which defines
// SMR_MUTANTS=1. Everywhere else -- release, the sanitizer test builds, any
// program that includes this library -- SMR_MUTANT(name) is the constant
// false, and the compiler removes the seeded branch entirely.
#pragma once

#ifndef SMR_MUTANTS
#define SMR_MUTANTS 0
#endif

#if SMR_MUTANTS
#include <cstdlib>
#include <string_view>

namespace smr::core {

/// The mutant this process runs with: $SMR_MUTANT, read once, or "".
inline std::string_view active_mutant() noexcept {
    static const std::string_view name = [] {
        const char* value = std::getenv("SMR_MUTANT");
        return std::string_view(value != nullptr ? value : "");
    }();
    return name;
}

}  // namespace smr::core

/// True when mutant `name` (a string literal) is switched on.
#define SMR_MUTANT(name) (::smr::core::active_mutant() == std::string_view(name))
#else
#define SMR_MUTANT(name) false
#endif
