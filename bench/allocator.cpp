#include "allocator.hpp"

#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace smrbench {
namespace {

namespace fs = std::filesystem;

// Sanitizer runtimes interpose malloc themselves and insist on being first in the link order, so
// an LD_PRELOADed allocator cannot take over. GCC defines __SANITIZE_*__; clang answers through
// __has_feature.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::string_view sanitizer_allocator = "asan";
#elif defined(__SANITIZE_THREAD__)
constexpr std::string_view sanitizer_allocator = "tsan";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr std::string_view sanitizer_allocator = "asan";
#elif __has_feature(thread_sanitizer)
constexpr std::string_view sanitizer_allocator = "tsan";
#else
constexpr std::string_view sanitizer_allocator = "";
#endif
#else
constexpr std::string_view sanitizer_allocator = "";
#endif

// Debian's multiarch directory for the target this file is compiled for.
#if defined(__x86_64__)
constexpr std::string_view multiarch = "x86_64-linux-gnu";
#elif defined(__aarch64__)
constexpr std::string_view multiarch = "aarch64-linux-gnu";
#else
constexpr std::string_view multiarch = "";  // only the multiarch-free directories are searched
#endif

// Marks a process that already is the re-executed one; its value is the allocator's name.
constexpr const char* reexec_marker = "SMRBENCH_ALLOC_REEXEC";

struct allocator_info {
    allocator_kind kind;
    std::string_view name;
    std::string_view preload_library;  // replaces malloc when preloaded; empty for glibc
    std::string_view library_prefix;   // file-name prefix of the object that then serves malloc
    std::string_view debian_package;
};

// tbbmalloc replaces malloc only through its proxy; libtbbmalloc itself exports scalable_malloc.
constexpr std::array<allocator_info, 5> allocators{{
    {allocator_kind::glibc, "glibc", "", "libc.so", ""},
    {allocator_kind::jemalloc, "jemalloc", "libjemalloc.so.2", "libjemalloc", "libjemalloc2"},
    {allocator_kind::tcmalloc, "tcmalloc", "libtcmalloc_minimal.so.4", "libtcmalloc",
     "libtcmalloc-minimal4"},
    {allocator_kind::mimalloc, "mimalloc", "libmimalloc.so.2", "libmimalloc", "libmimalloc2.0"},
    {allocator_kind::tbbmalloc, "tbbmalloc", "libtbbmalloc_proxy.so.2", "libtbbmalloc",
     "libtbbmalloc2"},
}};

constexpr bool table_is_indexed_by_kind() {
    for (std::size_t i = 0; i < allocators.size(); ++i) {
        if (static_cast<std::size_t>(allocators[i].kind) != i) return false;
    }
    return true;
}
static_assert(table_is_indexed_by_kind(), "allocators[] must be in allocator_kind order");

const allocator_info& info(allocator_kind kind) {
    return allocators[static_cast<std::size_t>(kind)];
}

std::vector<fs::path> library_search_dirs() {
    std::vector<fs::path> dirs;
    if (const char* extra = std::getenv("SMRBENCH_ALLOC_DIR")) {
        std::string_view rest = extra;
        while (!rest.empty()) {
            const std::size_t colon = std::min(rest.find(':'), rest.size());
            if (colon > 0) dirs.emplace_back(rest.substr(0, colon));
            rest.remove_prefix(std::min(colon + 1, rest.size()));
        }
    }
    if (!multiarch.empty()) dirs.push_back(fs::path("/usr/lib") / multiarch);
    dirs.insert(dirs.end(), {"/usr/lib64", "/usr/lib", "/usr/local/lib"});
    if (!multiarch.empty()) dirs.push_back(fs::path("/lib") / multiarch);
    return dirs;
}

// The file that defines `malloc` for this process, as a canonical path when it can be resolved.
std::string library_serving_malloc() {
    void* malloc_address = dlsym(RTLD_DEFAULT, "malloc");
    Dl_info where{};
    if (malloc_address == nullptr || dladdr(malloc_address, &where) == 0 ||
        where.dli_fname == nullptr) {
        return {};
    }
    std::error_code error;
    const fs::path canonical = fs::canonical(where.dli_fname, error);
    return error ? std::string(where.dli_fname) : canonical.string();
}

std::optional<allocator_kind> kind_of_library(const std::string& library) {
    const std::string file_name = fs::path(library).filename().string();
    for (const auto& allocator : allocators) {
        if (file_name.starts_with(allocator.library_prefix)) return allocator.kind;
    }
    return std::nullopt;
}

// "libtbbmalloc_proxy.so.2.8" -> "2.8"; empty when the name carries no version.
std::string soname_version(const std::string& library) {
    const std::string file_name = fs::path(library).filename().string();
    const std::size_t so = file_name.find(".so.");
    return so == std::string::npos ? std::string() : file_name.substr(so + 4);
}

// A handle on a library that is already loaded (RTLD_NOLOAD never loads anything), so a version
// query reaches exactly the object that serves malloc and no other library exporting the name.
class loaded_library {
  public:
    explicit loaded_library(const std::string& path)
        : handle_(dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {}
    ~loaded_library() {
        if (handle_ != nullptr) dlclose(handle_);
    }
    loaded_library(const loaded_library&) = delete;
    loaded_library& operator=(const loaded_library&) = delete;

    template <typename Function>
    Function* symbol(const char* name) const {
        return handle_ == nullptr ? nullptr : reinterpret_cast<Function*>(dlsym(handle_, name));
    }

  private:
    void* handle_;
};

// jemalloc reports "5.3.0-0-g<commit>"; the part before the first '-' is the release.
std::string jemalloc_version(const loaded_library& library) {
    using mallctl_fn = int(const char*, void*, std::size_t*, void*, std::size_t);
    auto* mallctl = library.symbol<mallctl_fn>("mallctl");
    const char* version = nullptr;
    std::size_t size = sizeof version;
    if (mallctl == nullptr || mallctl("version", &version, &size, nullptr, 0) != 0 ||
        version == nullptr) {
        return {};
    }
    const std::string_view full = version;
    return std::string(full.substr(0, full.find('-')));
}

std::string tcmalloc_version(const loaded_library& library) {
    using tc_version_fn = const char*(int*, int*, const char**);
    auto* tc_version = library.symbol<tc_version_fn>("tc_version");
    if (tc_version == nullptr) return {};
    int major = 0;
    int minor = 0;
    const char* patch = nullptr;  // a suffix such as "" or ".1"
    tc_version(&major, &minor, &patch);
    return std::to_string(major) + "." + std::to_string(minor) + (patch ? patch : "");
}

// mi_version() packs one digit each of major, minor and patch: 209 is mimalloc 2.0.9.
std::string mimalloc_version(const loaded_library& library) {
    using mi_version_fn = int();
    auto* mi_version = library.symbol<mi_version_fn>("mi_version");
    if (mi_version == nullptr) return {};
    const int packed = mi_version();
    return std::to_string(packed / 100) + "." + std::to_string(packed / 10 % 10) + "." +
           std::to_string(packed % 10);
}

// The version the allocator reports about itself; empty if it has no way to.
std::string reported_version(allocator_kind kind, const std::string& library) {
    if (kind == allocator_kind::glibc) return gnu_get_libc_version();
    const loaded_library loaded(library);
    switch (kind) {
        case allocator_kind::jemalloc:
            return jemalloc_version(loaded);
        case allocator_kind::tcmalloc:
            return tcmalloc_version(loaded);
        case allocator_kind::mimalloc:
            return mimalloc_version(loaded);
        case allocator_kind::glibc:
        case allocator_kind::tbbmalloc:  // exports no version; the file name carries one
            break;
    }
    return {};
}

std::string version_of(std::optional<allocator_kind> kind, const std::string& library) {
    const std::string reported = kind ? reported_version(*kind, library) : std::string();
    return reported.empty() ? soname_version(library) : reported;
}

std::string name_for(std::optional<allocator_kind> kind) {
    if (kind.has_value()) return std::string(to_string(*kind));
    // In a sanitizer build whatever serves malloc, unless it is a known allocator, is the
    // sanitizer runtime (a shared libasan/libtsan, or the executable when linked statically).
    return sanitizer_allocator.empty() ? "unknown" : std::string(sanitizer_allocator);
}

bool already_reexecuted_for(allocator_kind kind) {
    const char* marker = std::getenv(reexec_marker);
    return marker != nullptr && marker == to_string(kind);
}

void set_environment(const char* variable, const std::string& value) {
    if (setenv(variable, value.c_str(), /*overwrite=*/1) != 0) {
        throw std::runtime_error(std::string("cannot set ") + variable + ": " +
                                 std::system_category().message(errno));
    }
}

// Ours goes first so that it, not an earlier preload, defines malloc.
void prepend_to_ld_preload(const std::string& library) {
    const char* previous = std::getenv("LD_PRELOAD");
    const bool has_previous = previous != nullptr && *previous != '\0';
    set_environment("LD_PRELOAD", has_previous ? library + ":" + previous : library);
}

std::string missing_library_message(allocator_kind kind) {
    const allocator_info& allocator = info(kind);
    return "allocator '" + std::string(allocator.name) + "' needs " +
           std::string(allocator.preload_library) + " (Debian package " +
           std::string(allocator.debian_package) + "), which was not found; run scripts/bootstrap";
}

bool identity_matches(allocator_kind expected, const allocator_identity& actual) {
    if (actual.name == to_string(expected)) return true;
    // A sanitizer build has no other default allocator than the sanitizer's.
    return expected == allocator_kind::glibc && !sanitizer_allocator.empty() &&
           actual.name == sanitizer_allocator;
}

}  // namespace

std::optional<allocator_kind> parse_allocator(std::string_view name) {
    for (const auto& allocator : allocators) {
        if (allocator.name == name) return allocator.kind;
    }
    return std::nullopt;
}

std::string_view to_string(allocator_kind kind) { return info(kind).name; }

std::vector<std::string_view> allocator_names() {
    std::vector<std::string_view> names;
    for (const auto& allocator : allocators) names.push_back(allocator.name);
    return names;
}

std::string_view debian_package(allocator_kind kind) { return info(kind).debian_package; }

std::optional<std::string> find_allocator_library(allocator_kind kind) {
    const std::string_view file_name = info(kind).preload_library;
    if (file_name.empty()) return std::nullopt;
    for (const fs::path& dir : library_search_dirs()) {
        const fs::path candidate = dir / file_name;
        std::error_code error;
        if (fs::is_regular_file(candidate, error)) return candidate.string();
    }
    return std::nullopt;
}

allocator_identity identify_malloc() {
    const std::string library = library_serving_malloc();
    const std::optional<allocator_kind> kind = kind_of_library(library);
    return {name_for(kind), version_of(kind, library), library};
}

bool allocator_selection_supported() { return sanitizer_allocator.empty(); }

void reexec_with_allocator_if_needed(allocator_kind kind, int argc, char** argv) {
    if (kind == allocator_kind::glibc || already_reexecuted_for(kind)) return;
    if (!allocator_selection_supported()) {
        throw std::runtime_error(
            "allocator selection is unavailable in sanitizer builds: the sanitizer replaces "
            "malloc (requested '" +
            std::string(to_string(kind)) + "')");
    }
    const std::optional<std::string> library = find_allocator_library(kind);
    if (!library) throw std::runtime_error(missing_library_message(kind));

    prepend_to_ld_preload(*library);
    set_environment(reexec_marker, std::string(to_string(kind)));
    std::vector<char*> arguments(argv, argv + argc);
    arguments.push_back(nullptr);
    execv("/proc/self/exe", arguments.data());
    throw std::runtime_error("cannot re-execute /proc/self/exe with allocator '" +
                             std::string(to_string(kind)) +
                             "': " + std::system_category().message(errno));
}

void verify_allocator(allocator_kind expected, const allocator_identity& actual) {
    if (identity_matches(expected, actual)) return;
    std::string message = "allocator '" + std::string(to_string(expected)) +
                          "' was requested but malloc is served by " + actual.name + " (" +
                          (actual.library.empty() ? "unresolved" : actual.library) + ")";
    if (const char* preload = std::getenv("LD_PRELOAD"); preload != nullptr && *preload != '\0') {
        message += "; LD_PRELOAD=" + std::string(preload) + " overrides it";
    }
    throw std::runtime_error(message);
}

}  // namespace smrbench
