// Allocator selection in each build: under AddressSanitizer and ThreadSanitizer
// the sanitizer replaces malloc, so smrbench refuses another allocator with a
// one-line message that names the cause, and takes the sanitizer's runtime for
// the default allocator; a release build supports selection. (smrbench itself
// is built only in the release stage, so this checks its allocator layer,
// bench/allocator.cpp, in every stage.)
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "allocator.hpp"

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif

TEST(allocator_selection, is_refused_with_one_line_in_sanitizer_builds_only) {
    EXPECT_EQ(smrbench::allocator_selection_supported(), !sanitized);
    if constexpr (sanitized) {
        char program[] = "smrbench";
        char* argv[] = {program, nullptr};
        try {
            smrbench::reexec_with_allocator_if_needed(smrbench::allocator_kind::jemalloc, 1, argv);
            FAIL() << "a sanitizer build accepted --alloc jemalloc";
        } catch (const std::runtime_error& refused) {
            const std::string message = refused.what();
            EXPECT_NE(message.find("sanitizer"), std::string::npos) << message;
            EXPECT_NE(message.find("jemalloc"), std::string::npos) << message;
            EXPECT_EQ(message.find('\n'), std::string::npos) << message;
        }
    }
}

TEST(allocator_selection, the_default_allocator_is_what_serves_malloc) {
    // glibc needs no re-exec in any build; a sanitizer build's malloc is the
    // sanitizer's, which verify_allocator takes for the default.
    char program[] = "smrbench";
    char* argv[] = {program, nullptr};
    EXPECT_NO_THROW(
        smrbench::reexec_with_allocator_if_needed(smrbench::allocator_kind::glibc, 1, argv));
    const smrbench::allocator_identity identity = smrbench::identify_malloc();
    EXPECT_EQ(identity.name, sanitized ? (
#if defined(__SANITIZE_ADDRESS__)
                                             "asan"
#else
                                             "tsan"
#endif
                                             )
                                       : "glibc");
    EXPECT_NO_THROW(smrbench::verify_allocator(smrbench::allocator_kind::glibc, identity));
}

}  // namespace
