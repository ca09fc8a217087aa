#pragma once

#include <string>
#include <vector>

/// Every STAMP application's inputs (smrbench::stamp::applications()), in
/// order, as strings.
std::vector<std::string> stamp_inputs();
