#pragma once

#include <string>
#include <vector>

/// smrbench::stamp::vacation_inputs(), as strings.
std::vector<std::string> stamp_vacation_inputs();
