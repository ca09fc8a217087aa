#include "build_info.hpp"

#include <string_view>

#include "git_state.hpp"  // generated at build time by cmake/git_state.cmake

// Set by bench/CMakeLists.txt from the configuration.
#ifndef SMRBENCH_COMPILER
#define SMRBENCH_COMPILER "unknown"
#endif
#ifndef SMRBENCH_FLAGS
#define SMRBENCH_FLAGS ""
#endif
#ifndef SMRBENCH_BUILD_TYPE
#define SMRBENCH_BUILD_TYPE ""
#endif
#ifndef SMRLAB_VERSION
#define SMRLAB_VERSION "unknown"
#endif

namespace smrbench {
namespace {

// The sanitizer this unit was compiled with, which is the whole program's: the build applies
// one set of flags to every target (Clang says so by __has_feature, GCC by a macro).
constexpr const char* sanitizer() {
#if defined(__SANITIZE_THREAD__)
    return "thread";
#elif defined(__SANITIZE_ADDRESS__)
    return "address";
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
    return "thread";
#elif __has_feature(address_sanitizer)
    return "address";
#else
    return nullptr;
#endif
#else
    return nullptr;
#endif
}

}  // namespace

nlohmann::json build_json() {
    using nlohmann::json;
    constexpr std::string_view commit = SMRBENCH_GIT_COMMIT;
    constexpr int dirty = SMRBENCH_GIT_DIRTY;
    const std::string_view build_type = SMRBENCH_BUILD_TYPE;
    return {
        {"version", SMRLAB_VERSION},
        {"commit", commit == "unknown" ? json(nullptr) : json(commit)},
        {"dirty", dirty < 0 ? json(nullptr) : json(dirty == 1)},
        {"compiler", SMRBENCH_COMPILER},
        {"compiler_version", __VERSION__},
        {"flags", SMRBENCH_FLAGS},
        {"build_type", build_type.empty() ? json(nullptr) : json(build_type)},
        {"sanitizer", sanitizer() == nullptr ? json(nullptr) : json(sanitizer())},
    };
}

std::string version_line() {
    const nlohmann::json build = build_json();
    std::string line = "smrbench " + build["version"].get<std::string>() + " (";
    line += build["commit"].is_null()
                ? std::string("unknown commit")
                : "commit " + build["commit"].get<std::string>().substr(0, 10);
    if (build["dirty"] == true) line += ", uncommitted changes";
    line += "; " + build["compiler"].get<std::string>() + " " +
            build["compiler_version"].get<std::string>();
    if (!build["build_type"].is_null()) line += ", " + build["build_type"].get<std::string>();
    if (!build["sanitizer"].is_null())
        line += ", " + build["sanitizer"].get<std::string>() + " sanitizer";
    return line + ")";
}

}  // namespace smrbench
