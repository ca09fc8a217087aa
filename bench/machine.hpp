// What a result was measured on: the machine object of smrbench's JSON.
//
// A number is worth what its machine is known to be: a reviewer comparing two stored results
// needs the CPU, its sockets, cores and hyperthreads, the NUMA nodes, the caches, the kernel,
// whether a hypervisor or a container sat between the benchmark and the hardware, how loaded
// the machine was when the run began, and the frequency governor. smrlab keys stored results
// by the machine's stable fields (smrlab.provenance), so a result from another machine is
// never taken for this one's.
//
// Everything is read from files under a root directory ("/" for this machine): /proc and
// /sys, never a system call that could not be replayed, so a test reads a recorded tree of a
// machine it does not have. A field the machine does not expose is null, never a guess.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace smrbench {

// The logical CPUs in a cpulist file's format ("0-3,8,10-11"), ascending; nullopt for text
// that is not one.
std::optional<std::vector<int>> parse_cpu_list(const std::string& text);

// Bytes of a sysfs cache size ("32K", "1024K", "32M"); nullopt for anything else.
std::optional<long long> parse_cache_size(const std::string& text);

// The machine object: cpu_model, sockets, cores, threads, threads_per_core, numa_nodes,
// caches[] (level, type, size_bytes, shared_by), memory_bytes, kernel, hostname,
// virtualization {hypervisor, system, container}, load_average[3], governor. `root` is the
// directory /proc and /sys are under.
nlohmann::json machine_json(const std::filesystem::path& root = "/");

// This machine's object, plus hardware_threads and cpus (the CPUs this process may run on:
// taskset or a container may allow fewer than the machine has). Taken at the first call and
// the same after: smrbench calls it before its first trial, so the load average is the one the
// run began with, not one its own threads raised.
const nlohmann::json& this_machine_json();

}  // namespace smrbench
