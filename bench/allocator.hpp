// Run-time allocator selection for smrbench.
//
// smrbench is linked against glibc malloc only. Another allocator is chosen by name: the binary
// re-executes itself with LD_PRELOAD naming the Debian library that replaces malloc, and after the
// re-exec it checks which shared object really serves malloc, so a result is never labelled with
// an allocator that was not in use.
//
// Typical use at the top of main():
//
//     smrbench::reexec_with_allocator_if_needed(kind, argc, argv);  // may not return
//     const auto identity = smrbench::identify_malloc();
//     smrbench::verify_allocator(kind, identity);                    // throws on mismatch
//
// Child processes inherit LD_PRELOAD and SMRBENCH_ALLOC_REEXEC: anything smrbench spawns after
// the re-exec runs with the selected allocator too.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace smrbench {

enum class allocator_kind { glibc, jemalloc, tcmalloc, mimalloc, tbbmalloc };

std::optional<allocator_kind> parse_allocator(std::string_view name);
std::string_view to_string(allocator_kind kind);
std::vector<std::string_view> allocator_names();

// The shared library that replaces malloc for `kind` when preloaded (libjemalloc.so.2, ...), or
// nullopt when it is not installed or `kind` is glibc. Searched in order: each directory of the
// colon-separated SMRBENCH_ALLOC_DIR, then /usr/lib/<multiarch>, /usr/lib64, /usr/lib,
// /usr/local/lib, /lib/<multiarch>.
std::optional<std::string> find_allocator_library(allocator_kind kind);

// The Debian package that ships find_allocator_library(kind); empty for glibc.
std::string_view debian_package(allocator_kind kind);

struct allocator_identity {
    std::string name;     // "glibc", "jemalloc", ..., or "unknown"
    std::string version;  // as reported by the allocator itself where it can; may be empty
    std::string library;  // canonical path of the shared object whose malloc is called
};

// Which shared object serves `malloc` in this process, and its version.
allocator_identity identify_malloc();

// False in AddressSanitizer/ThreadSanitizer builds: the sanitizer replaces malloc itself, so no
// other allocator can be selected there.
bool allocator_selection_supported();

// For any kind but glibc, and unless this process is already the re-executed one (environment
// variable SMRBENCH_ALLOC_REEXEC names `kind`): sets LD_PRELOAD=<library>[:<previous LD_PRELOAD>]
// and SMRBENCH_ALLOC_REEXEC=<name>, then replaces the process with /proc/self/exe and the same
// arguments. Returns normally only when no re-exec is needed. Throws std::runtime_error with a
// one-line message when the library is missing, selection is unsupported, or execv fails.
void reexec_with_allocator_if_needed(allocator_kind kind, int argc, char** argv);

// Throws std::runtime_error with a one-line message unless `actual` is the allocator `expected`.
// In sanitizer builds the sanitizer's allocator counts as the default (glibc) one.
void verify_allocator(allocator_kind expected, const allocator_identity& actual);

}  // namespace smrbench
