// The STAMP applications smrbench runs, by input name: what `smrbench stamp
// --app NAME` looks up. Each application gives its named inputs (STAMP's
// README names: vacation-low, kmeans-high+, genome++, ...), its parameters as
// JSON (STAMP's command line), and its run; bench/stamp.cpp times, folds and
// prints every application alike.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "smr/stm/stm.hpp"
#include "stamp/clients.hpp"

namespace smrbench::stamp {

struct application {
    std::string_view name;  ///< STAMP's directory name: "vacation", "kmeans", ...
    /// Its named inputs, in order.
    const std::vector<std::string_view>& (*inputs)();
    /// The input's parameters as STAMP's command line gives them, with the
    /// client count (-c or -t).
    nlohmann::json (*parameters)(std::string_view input, int clients);
    /// One run at the input. Throws std::invalid_argument for parameters the
    /// client count does not fit, what thread creation throws.
    app_run (*run)(std::string_view input, int clients, const smr::stm::stm_config& stm_config);
};

/// Every application, in STAMP's alphabetical order.
const std::vector<application>& applications();

/// The application whose inputs include `input`. Throws std::invalid_argument
/// naming every input otherwise.
const application& application_of(std::string_view input);

/// Every application's inputs, space-separated, in order: the choices of
/// smrbench's --app.
std::string_view input_choices();

}  // namespace smrbench::stamp
