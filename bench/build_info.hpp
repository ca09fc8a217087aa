// What a result was measured with: the build object of smrbench's JSON.
//
// Two results compare only if the code that produced them is known: the version, the commit
// and whether the tree differed from it when smrbench was built (read at build time, not at
// configure time, so a commit made since configuring is the one reported), the compiler and
// its version, the flags, the build type and the sanitizer. smrlab keys stored results by the
// binary itself (smrlab.provenance), so a rebuilt smrbench never reuses an older build's rows
// unless asked; this object is what a reader sees of it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace smrbench {

// version, commit (null when unknown), dirty (null when unknown), compiler, compiler_version,
// flags, build_type, sanitizer ("address", "thread" or null).
nlohmann::json build_json();

// smrbench --version: "smrbench 1.2.0 (commit 0123456789, uncommitted changes; GNU 12.2.0,
// Release)".
std::string version_line();

}  // namespace smrbench
