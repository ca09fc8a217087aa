// An application's named inputs (STAMP's names: vacation-low, genome++, ...):
// the table each port declares, and the two things every port does with it,
// written once: its names in order, and the lookup that refuses an unknown
// name by listing the known ones.
#pragma once

#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace smrbench::stamp {

template <class Params>
struct named_input {
    std::string_view name;
    Params params;
};

/// The names of `inputs`, in order.
template <class Params, std::size_t N>
std::vector<std::string_view> input_names(const std::array<named_input<Params>, N>& inputs) {
    std::vector<std::string_view> out;
    out.reserve(N);
    for (const auto& input : inputs) out.push_back(input.name);
    return out;
}

/// The parameters of the input called `name`. Throws std::invalid_argument
/// "unknown <application> input 'NAME' (one of a, b, c)" for any other name.
template <class Params, std::size_t N>
Params find_input(const std::array<named_input<Params>, N>& inputs, std::string_view application,
                  std::string_view name) {
    for (const auto& input : inputs) {
        if (input.name == name) return input.params;
    }
    std::string known;
    for (const auto& input : inputs) {
        if (!known.empty()) known += ", ";
        known += input.name;
    }
    throw std::invalid_argument("unknown " + std::string(application) + " input '" +
                                std::string(name) + "' (one of " + known + ")");
}

}  // namespace smrbench::stamp
