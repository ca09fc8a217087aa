// The client phase every STAMP application shares: `clients` threads, each
// attached to the domain, started together; only their phase is timed
// (STAMP's TIMER_READ around thread_start .. thread_join). A client that
// throws (an application's "cannot happen", or the STM's) records why and
// raises `stop`, which the others poll between tasks, so that a run that met
// an STM bug ends with its reason instead of running on.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "smr/ds/validation.hpp"
#include "smr/reclaim/context.hpp"
#include "smr/reclaim/guards.hpp"
#include "smr/stm/stm.hpp"

namespace smrbench::stamp {

/// What one run of an application reports: its clients' phase, their work
/// (the application's unit: a task, a packet, a segment, an element...), the
/// STM's counts over the phase, and the application's verification.
struct app_run {
    double seconds = 0;  ///< the clients' phase, wall time
    long tasks = 0;      ///< units of work of all clients
    smr::stm::stm_stats stm;
    smr::ds::validation_result validation;
};

struct client_phase {
    double seconds = 0;               ///< wall time from the start signal to the last join
    std::vector<std::string> errors;  ///< per client, empty if it finished

    /// The clients' errors as a failed validation (the first named), else ok.
    smr::ds::validation_result validation() const {
        smr::ds::validation_result out;
        for (std::size_t client = 0; client != errors.size(); ++client) {
            if (!errors[client].empty()) {
                out.fail("client " + std::to_string(client) + ": " + errors[client]);
            }
        }
        return out;
    }
};

/// Runs body(self, client, stop) on `clients` threads, client numbers 0..n-1,
/// each attached to `domain` for the call; returns the phase's wall time
/// and each client's error. A client's exception flushes its deferred frees
/// (stm.flush) before its context detaches. Throws what thread creation
/// throws, after the clients already started have stopped and joined.
template <class Domain, class Body>
client_phase run_clients(Domain& domain, smr::stm::stm<Domain>& stm, int clients, Body body) {
    std::atomic<bool> go{false};
    std::atomic<bool> stop{false};
    client_phase phase;
    phase.errors.resize(static_cast<std::size_t>(clients));
    const auto release = [&] {
        go.store(true, std::memory_order_release);  // pairs with the clients' acquire wait
        go.notify_all();
    };
    std::vector<std::thread> threads;
    threads.reserve(static_cast<std::size_t>(clients));
    const auto join_all = [&] {
        for (std::thread& t : threads) t.join();
    };
    try {
        for (int client = 0; client < clients; ++client) {
            threads.emplace_back([&, client] {
                std::string& error = phase.errors[static_cast<std::size_t>(client)];
                try {
                    const smr::context<Domain> self(domain);
                    go.wait(false, std::memory_order_acquire);
                    try {
                        body(self, client, stop);
                    } catch (...) {
                        stm.flush(self);
                        throw;
                    }
                } catch (const std::exception& e) {
                    error = e.what();
                    stop.store(true, std::memory_order_relaxed);
                } catch (...) {
                    error = "an exception that is not a std::exception";
                    stop.store(true, std::memory_order_relaxed);
                }
            });
        }
    } catch (...) {  // a thread that cannot be created: the others stop, then the error
        stop.store(true, std::memory_order_relaxed);
        release();
        join_all();
        throw;
    }
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    release();
    join_all();
    phase.seconds = std::chrono::duration<double>(clock::now() - start).count();
    return phase;
}

/// One run of an application whose object gives transactional_memory(),
/// run(clients) (its client phase) and validate() (quiescent): the phase's
/// time, the STM's counts over it, tasks as its commits (an application
/// whose unit is another sets its own), and the application's verification
/// once every client finished (else the clients' errors).
template <class App>
app_run measured_run(App& app, int clients) {
    auto& stm = app.transactional_memory();
    const smr::stm::stm_stats before = stm.stats();
    const client_phase phase = app.run(clients);
    app_run run;
    run.seconds = phase.seconds;
    run.stm = stm.stats() - before;
    run.tasks = static_cast<long>(run.stm.commits);
    run.validation = phase.validation();
    if (run.validation.ok) run.validation = app.validate();
    return run;
}

}  // namespace smrbench::stamp
