// A configuration map under C++26-style RCU (smr/rcu.hpp, P2545's shape):
// many readers look settings up without locks or atomic read-modify-writes
// while one writer publishes new versions, copy on write; each old version
// is retired and deleted once no reader can still hold it. Nothing here
// names a reclaimer, a thread id or a slot: the rcu_domain registers each
// thread at its first read-side section.
//
// Rules it follows: a reader keeps the pointer only inside its read-side
// section (std::scoped_lock on the domain); the writer retires a version
// once, after it unpublished it; rcu_barrier() at the end waits until every
// retired version has been deleted. Exit status 0 when no reader saw a torn
// or deleted version and every retired version was deleted exactly once.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "smr/rcu.hpp"

namespace {

std::atomic<std::uint64_t> versions_deleted{0};

/// One immutable version of the configuration: every setting of version v
/// holds v, so a reader can tell a torn or deleted version.
struct settings : smr::rcu_obj_base<settings> {
    explicit settings(std::uint64_t v) : version(v) {
        for (const char* key : {"threads", "timeout_ms", "log_level", "cache_mb"}) values[key] = v;
    }
    ~settings() {
        // A reader that sees this read a deleted version (volatile: the
        // optimizer would drop a plain store to an object about to die).
        *static_cast<volatile std::uint64_t*>(&version) = ~std::uint64_t{0};
        versions_deleted.fetch_add(1, std::memory_order_relaxed);
    }
    std::uint64_t version;
    std::map<std::string, std::uint64_t> values;
};

std::atomic<settings*> current{nullptr};

/// A reader's lookup: the whole read inside one read-side section.
bool lookup_is_consistent(const std::string& key) {
    std::scoped_lock section(smr::rcu_default_domain());
    const settings* s = current.load(std::memory_order_acquire);
    const auto it = s->values.find(key);
    return it != s->values.end() && it->second == s->version;
}

}  // namespace

int main() {
    constexpr std::uint64_t versions = 5'000;
    current.store(new settings(0));
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> bad_reads{0};
    std::atomic<std::uint64_t> reads{0};

    std::vector<std::thread> readers;
    for (int r = 0; r < 5; ++r) {
        readers.emplace_back([&, r] {
            const std::string key = r % 2 == 0 ? "threads" : "cache_mb";
            while (!stop.load(std::memory_order_relaxed)) {
                if (!lookup_is_consistent(key)) bad_reads.fetch_add(1);
                reads.fetch_add(1, std::memory_order_relaxed);
            }
        });
    }
    for (std::uint64_t v = 1; v <= versions; ++v) {
        // acq_rel: publishes the new version (readers load it with acquire)
        // and takes the old one to retire it.
        settings* old = current.exchange(new settings(v), std::memory_order_acq_rel);
        old->retire();  // `delete old` after every reader that could hold it
    }
    stop.store(true, std::memory_order_relaxed);
    for (auto& reader : readers) reader.join();
    smr::rcu_barrier();  // every retired version is deleted now

    const std::uint64_t deleted = versions_deleted.load();
    delete current.load();  // never retired: its owner deletes it
    const bool ok = bad_reads.load() == 0 && deleted == versions;
    std::printf("rcu_config_map: %s (%llu reads, %llu versions retired, %llu deleted)\n",
                ok ? "ok" : "FAILED", static_cast<unsigned long long>(reads.load()),
                static_cast<unsigned long long>(versions),
                static_cast<unsigned long long>(deleted));
    return ok ? 0 : 1;
}
