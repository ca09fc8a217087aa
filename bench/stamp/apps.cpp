#include "stamp/apps.hpp"

#include <stdexcept>

#include "stamp/genome.hpp"
#include "stamp/intruder.hpp"
#include "stamp/kmeans.hpp"
#include "stamp/labyrinth.hpp"
#include "stamp/ssca2.hpp"
#include "stamp/vacation.hpp"
#include "stamp/yada.hpp"

namespace smrbench::stamp {
namespace {

nlohmann::json vacation_parameters(std::string_view input, int clients) {
    const vacation_params p = vacation_input(input);
    return {{"clients", clients},
            {"queries", p.queries},
            {"percent_queried", p.percent_queried},
            {"relations", p.relations},
            {"tasks", p.tasks},
            {"percent_user", p.percent_user},
            {"query_range", p.query_range()}};
}

app_run vacation_run_input(std::string_view input, int clients,
                           const smr::stm::stm_config& stm_config) {
    return run_vacation(vacation_input(input), clients, stm_config);
}

nlohmann::json kmeans_parameters(std::string_view input, int clients) {
    const kmeans_params p = kmeans_input(input);
    return {{"clients", clients},
            {"max_clusters", p.max_clusters},
            {"min_clusters", p.min_clusters},
            {"threshold", p.threshold},
            {"points", p.points},
            {"dimensions", p.dimensions},
            {"generated_clusters", p.generated_clusters},
            {"seed", p.seed}};
}

app_run kmeans_run_input(std::string_view input, int clients,
                         const smr::stm::stm_config& stm_config) {
    return run_kmeans(kmeans_input(input), clients, stm_config);
}

nlohmann::json genome_parameters(std::string_view input, int clients) {
    const genome_params p = genome_input(input);
    return {{"clients", clients},
            {"gene_length", p.gene_length},
            {"segment_length", p.segment_length},
            {"segments", p.segments},
            {"seed", p.seed}};
}

app_run genome_run_input(std::string_view input, int clients,
                         const smr::stm::stm_config& stm_config) {
    return run_genome(genome_input(input), clients, stm_config);
}

nlohmann::json intruder_parameters(std::string_view input, int clients) {
    const intruder_params p = intruder_input(input);
    return {{"clients", clients},
            {"percent_attack", p.percent_attack},
            {"max_length", p.max_length},
            {"flows", p.flows},
            {"seed", p.seed}};
}

app_run intruder_run_input(std::string_view input, int clients,
                           const smr::stm::stm_config& stm_config) {
    return run_intruder(intruder_input(input), clients, stm_config);
}

nlohmann::json labyrinth_parameters(std::string_view input, int clients) {
    const labyrinth_params p = labyrinth_input(input);
    return {{"clients", clients}, {"width", p.width},   {"height", p.height},
            {"depth", p.depth},   {"paths", p.paths},   {"x_cost", p.x_cost},
            {"y_cost", p.y_cost}, {"z_cost", p.z_cost}, {"bend_cost", p.bend_cost},
            {"seed", p.seed}};
}

app_run labyrinth_run_input(std::string_view input, int clients,
                            const smr::stm::stm_config& stm_config) {
    return run_labyrinth(labyrinth_input(input), clients, stm_config);
}

nlohmann::json ssca2_parameters(std::string_view input, int clients) {
    const ssca2_params p = ssca2_input(input);
    return {{"clients", clients},
            {"scale", p.scale},
            {"inter_clique", p.inter_clique},
            {"unidirectional", p.unidirectional},
            {"max_path_length", p.max_path_length},
            {"max_parallel_edges", p.max_parallel_edges},
            {"int_weight_share", p.int_weight_share},
            {"seed", p.seed}};
}

app_run ssca2_run_input(std::string_view input, int clients,
                        const smr::stm::stm_config& stm_config) {
    return run_ssca2(ssca2_input(input), clients, stm_config);
}

nlohmann::json yada_parameters(std::string_view input, int clients) {
    const yada_params p = yada_input(input);
    return {{"clients", clients},
            {"angle", p.angle},
            {"points", p.points},
            {"boundary_segments", p.boundary_segments},
            {"seed", p.seed}};
}

app_run yada_run_input(std::string_view input, int clients,
                       const smr::stm::stm_config& stm_config) {
    return run_yada(yada_input(input), clients, stm_config);
}

}  // namespace

const std::vector<application>& applications() {
    static const std::vector<application> apps{
        {"genome", genome_inputs, genome_parameters, genome_run_input},
        {"intruder", intruder_inputs, intruder_parameters, intruder_run_input},
        {"kmeans", kmeans_inputs, kmeans_parameters, kmeans_run_input},
        {"labyrinth", labyrinth_inputs, labyrinth_parameters, labyrinth_run_input},
        {"ssca2", ssca2_inputs, ssca2_parameters, ssca2_run_input},
        {"vacation", vacation_inputs, vacation_parameters, vacation_run_input},
        {"yada", yada_inputs, yada_parameters, yada_run_input},
    };
    return apps;
}

const application& application_of(std::string_view input) {
    for (const application& app : applications()) {
        for (std::string_view name : app.inputs()) {
            if (name == input) return app;
        }
    }
    throw std::invalid_argument("unknown STAMP input '" + std::string(input) + "' (one of " +
                                std::string(input_choices()) + ")");
}

std::string_view input_choices() {
    static const std::string choices = [] {
        std::string out;
        for (const application& app : applications()) {
            for (std::string_view name : app.inputs()) {
                if (!out.empty()) out += ' ';
                out += name;
            }
        }
        return out;
    }();
    return choices;
}

}  // namespace smrbench::stamp
