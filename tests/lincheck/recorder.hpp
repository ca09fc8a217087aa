// Records the operations of concurrent threads into per-thread logs of fixed
// capacity, each bracketed by two ticks of one shared clock.
//
// The clock is one atomic counter incremented with a seq_cst fetch_add. Why
// it is sound: when A's closing tick is below B's opening tick, A's
// fetch_add precedes B's in the counter's modification order, and since
// every later increment is a read-modify-write, B's reads a value in the
// release sequence A's heads: A's tick synchronizes with B's, so all of A
// happens before all of B, and B must see A's effects. An interval order
// read off the ticks is therefore one the memory model guarantees, on any
// architecture, with no assumption about synchronized TSCs.
//
// What it costs: two contended read-modify-writes per operation (the
// counter's line moves between cores twice), tens of nanoseconds, about as
// much as a short set operation. It also adds synchronization the structure
// does not have: the recorder is for checking answers (ASan builds), not for
// hunting data races with TSan, which it would partly hide. Memory is
// bounded: each thread's log is allocated up front and record() refuses an
// operation once it is full.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "history.hpp"
#include "smr/core/padded.hpp"

namespace smr::lincheck {

class recorder {
  public:
    recorder(int threads, std::size_t per_thread) : logs_(static_cast<std::size_t>(threads)) {
        for (auto& log : logs_) log->reserve(per_thread);
        capacity_ = per_thread;
    }

    /// Runs `op` (which returns the answer as a uint64_t) as thread
    /// `thread`'s next operation and logs it; false, without running it, when
    /// the thread's log is full. Only `thread` may record as `thread`.
    template <class Op>
    bool record(int thread, op_kind kind, std::uint64_t arg, Op&& op) {
        std::vector<operation>& log = *logs_[static_cast<std::size_t>(thread)];
        if (log.size() == capacity_) return false;
        operation entry;
        entry.thread = static_cast<std::uint32_t>(thread);
        entry.kind = kind;
        entry.arg = arg;
        entry.call = tick();
        entry.result = op();
        entry.ret = tick();
        log.push_back(entry);  // reserved: never reallocates
        return true;
    }

    /// Every thread's log, merged; call after the threads have joined.
    history merged() const {
        history all;
        for (const auto& log : logs_) all.insert(all.end(), log->begin(), log->end());
        return all;
    }

    std::size_t size() const {
        std::size_t n = 0;
        for (const auto& log : logs_) n += log->size();
        return n;
    }

  private:
    // seq_cst read-modify-write: see the comment at the top of the file for
    // what two ticks synchronize.
    std::uint64_t tick() noexcept { return clock_->fetch_add(1, std::memory_order_seq_cst); }

    core::padded<std::atomic<std::uint64_t>> clock_{1};
    std::vector<core::padded<std::vector<operation>>> logs_;
    std::size_t capacity_ = 0;
};

}  // namespace smr::lincheck
