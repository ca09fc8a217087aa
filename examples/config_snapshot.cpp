// RCU-style publication of objects you allocate yourself: readers read the
// current configuration without locks while a writer replaces it now and
// then; each old version is retired and deleted once no reader can still
// hold it. The configuration is an ordinary class made with `new`: it
// derives from smr::obj_base, which keeps its deleter and lets the domain
// free it (README, "Using the library"; docs/design.md, "Objects the domain
// did not allocate").
//
// Rules it follows: readers read inside an smr::op_guard and do not keep
// the pointer past it; the writer retires a version once, after it
// unpublished it; a thread attaches before it touches the domain, and
// domain.barrier(self) at the end waits until every retired version has been
// deleted. Exit status 0 when no reader saw a torn or deleted version and
// every retired version was deleted exactly once.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/reclaim/obj_base.hpp"

namespace {

using domain_type = smr::debra_domain;

std::atomic<std::uint64_t> versions_deleted{0};

struct config : smr::obj_base<config, domain_type> {
    config(std::uint64_t v, std::string n) : version(v), name(std::move(n)), check(v * 31 + 7) {}
    ~config() {
        // A reader that sees 0 read a deleted version (volatile: the
        // optimizer would drop a plain store to an object about to die).
        *static_cast<volatile std::uint64_t*>(&check) = 0;
        versions_deleted.fetch_add(1, std::memory_order_relaxed);
    }
    std::uint64_t version;
    std::string name;
    std::uint64_t check;
};

/// The name of version v, "v<v>". Appended rather than written
/// "v" + std::to_string(v), which GCC 12 flags falsely at -O3 (-Wrestrict,
/// GCC bug 105329).
std::string name_of(std::uint64_t version) {
    std::string name = "v";
    name += std::to_string(version);
    return name;
}

/// What a reader does with the configuration: reads it whole, inside one
/// operation. False if the version was torn.
bool read_config(domain_type& domain, smr::context_ref<domain_type> self,
                 const std::atomic<config*>& current) {
    smr::op_guard op(domain, self);
    const auto c = op.protect(current);
    return c->check == c->version * 31 + 7 && c->name == name_of(c->version);
}

}  // namespace

int main() {
    smr::domain_config settings;
    settings.max_threads = 8;
    settings.bag_threshold = 16;
    domain_type domain(settings);
    std::atomic<config*> current{new config(0, "v0")};
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> bad_reads{0};
    std::atomic<std::uint64_t> reads{0};
    constexpr std::uint64_t versions = 5'000;

    std::vector<std::thread> readers;
    for (int r = 0; r < 5; ++r) {
        readers.emplace_back([&] {
            const auto self = smr::attach(domain);
            while (!stop.load(std::memory_order_relaxed)) {
                if (!read_config(domain, self, current)) bad_reads.fetch_add(1);
                reads.fetch_add(1, std::memory_order_relaxed);
            }
        });
    }
    {
        const auto writer = smr::attach(domain);
        for (std::uint64_t v = 1; v <= versions; ++v) {
            auto* fresh = new config(v, name_of(v));
            // acq_rel: publishes fresh to readers (their protect is an
            // acquire load) and takes the old version to retire it.
            config* old = current.exchange(fresh, std::memory_order_acq_rel);
            old->retire(domain, writer);  // `delete old` once it is safe
        }
        stop.store(true, std::memory_order_relaxed);
        for (auto& reader : readers) reader.join();
        domain.barrier(writer);  // every retired version is deleted now
    }
    const std::uint64_t deleted = versions_deleted.load();
    delete current.load();  // never retired: its owner deletes it
    const bool ok = bad_reads.load() == 0 && deleted == versions;
    std::printf("config_snapshot x debra: %s (%llu reads, %llu versions retired, %llu deleted)\n",
                ok ? "ok" : "FAILED", static_cast<unsigned long long>(reads.load()),
                static_cast<unsigned long long>(versions),
                static_cast<unsigned long long>(deleted));
    return ok ? 0 : 1;
}
