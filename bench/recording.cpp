#include "recording.hpp"

#include <filesystem>

#include "output_file.hpp"

namespace smrbench {
namespace {

namespace fs = std::filesystem;

std::int64_t relative_ns(std::uint64_t ticks, std::uint64_t start_ticks, double ns_per_tick) {
    const double delta = static_cast<double>(static_cast<std::int64_t>(ticks - start_ticks));
    return static_cast<std::int64_t>(delta * ns_per_tick);
}

}  // namespace

std::string per_trial_path(const std::string& path, int trial, int trials) {
    if (trials <= 1) return path;
    const fs::path p(path);
    fs::path result = p.parent_path() / p.stem();
    result += ".t" + std::to_string(trial) + p.extension().string();
    return result.string();
}

void write_timeline(const std::string& path, nlohmann::json header,
                    const smr::trace::timeline& timeline, std::uint64_t start_ticks,
                    std::uint64_t end_ticks, double ns_per_tick) {
    nlohmann::json truncated = nlohmann::json::array();
    std::size_t events = 0;
    int used_threads = 0;
    for (std::size_t t = 0; t < timeline.threads(); ++t) {
        const int tid = static_cast<int>(t);
        events += timeline.size(tid);
        if (timeline.truncated(tid)) truncated.push_back(tid);
        if (timeline.size(tid) != 0) used_threads = tid + 1;
    }
    header["format"] = "smrlab-timeline";
    header["version"] = 1;
    header["threads"] = used_threads;
    header["capacity_per_thread"] = timeline.capacity();
    header["min_free_ns"] =
        static_cast<std::uint64_t>(static_cast<double>(timeline.min_free_ticks()) * ns_per_tick);
    header["measured_start_ns"] = 0;
    header["measured_end_ns"] = relative_ns(end_ticks, start_ticks, ns_per_tick);
    header["truncated_threads"] = truncated;
    header["events"] = events;
    write_file_atomically(path, [&](std::ostream& out) {
        out << header.dump() << "\nthread,kind,start_ns,end_ns,value\n";
        for (int tid = 0; tid < used_threads; ++tid) {
            const smr::trace::event* e = timeline.events(tid);
            for (std::size_t i = 0; i < timeline.size(tid); ++i) {
                out << tid << ',' << smr::trace::to_string(e[i].kind) << ','
                    << relative_ns(e[i].start_ticks, start_ticks, ns_per_tick) << ','
                    << relative_ns(e[i].end_ticks, start_ticks, ns_per_tick) << ',' << e[i].value
                    << '\n';
            }
        }
    });
}

void write_garbage_series(const std::string& path, nlohmann::json header,
                          const smr::trace::garbage_series& series, std::uint64_t start_ticks,
                          double ns_per_tick) {
    const auto points = series.merged();
    header["format"] = "smrlab-garbage-series";
    header["version"] = 2;
    header["points"] = points.size();
    write_file_atomically(path, [&](std::ostream& out) {
        out << header.dump() << "\ntime_ns,epoch,thread,garbage\n";
        for (const auto& p : points) {
            out << relative_ns(p.ticks, start_ticks, ns_per_tick) << ',' << p.epoch << ','
                << p.thread << ',' << p.garbage << '\n';
        }
    });
}

}  // namespace smrbench
