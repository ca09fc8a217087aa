// A trial's threads, stopped and joined whatever ends the trial.
//
// A std::thread destroyed while joinable calls std::terminate ("terminate
// called without an active exception"): a trial whose fifth thread cannot be
// created (ulimit -u, ulimit -v, too little memory for a stack) would abort
// the process with the first four running. A thread_group started with
// `start` instead, if destroyed with threads still running, runs `stop`
// (which must make every thread of the group return soon: set the trial's
// stop flags, release whatever the threads wait on) and joins them; the
// exception then reaches the caller, which reports one line.
#pragma once

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "output_file.hpp"

namespace smrbench {

class thread_group {
  public:
    explicit thread_group(std::function<void()> stop) : stop_(std::move(stop)) {}
    thread_group(const thread_group&) = delete;
    thread_group& operator=(const thread_group&) = delete;

    ~thread_group() {
        bool running = false;
        for (const auto& t : threads_) running = running || t.joinable();
        if (!running) return;
        stop_();
        for (auto& t : threads_) {
            if (t.joinable()) t.join();
        }
    }

    /// Starts thread number size() running `f`; if the system refuses, a
    /// std::runtime_error says which thread and why.
    template <class F>
    void start(F&& f) {
        // The thread starts with SIGINT, SIGTERM, SIGHUP and SIGQUIT blocked
        // (it inherits the mask), so they reach the main thread, whose
        // handler removes a half-written output (output_file.hpp) and is
        // never racing it from another thread.
        const stop_signals_blocked blocked;
        try {
            threads_.emplace_back(std::forward<F>(f));
        } catch (const std::system_error& e) {
            throw std::runtime_error("cannot start thread " + std::to_string(threads_.size() + 1) +
                                     ": " + e.code().message() +
                                     " (too many threads for ulimit -u, or too little memory "
                                     "for their stacks)");
        }
    }

    std::size_t size() const { return threads_.size(); }

    /// Joins threads [first, last) in order.
    void join(std::size_t first, std::size_t last) {
        for (std::size_t i = first; i < last; ++i) threads_[i].join();
    }
    void join_all() { join(0, threads_.size()); }

  private:
    std::function<void()> stop_;
    std::vector<std::thread> threads_;
};

}  // namespace smrbench
