// The search for a linearization: Wing and Gong's backtracking algorithm
// (J. M. Wing and C. Gong, "Testing and Verifying Concurrent Objects", JPDC
// 17(1-2), 1993, doi:10.1006/jpdc.1993.1015) with Lowe's memoization of the
// configurations already tried (G. Lowe, "Testing for Linearizability",
// Concurrency and Computation: Practice and Experience 29(4), 2017,
// doi:10.1002/cpe.3928).
//
// The history is a list of call and return events in time order. The search
// walks it from the front: a call whose operation the specification accepts
// in the current state is linearized (taken out of the list with its return,
// and pushed on a stack), and the walk starts again at the front; reaching a
// return means an operation still in the list must have taken effect before
// now and none can: undo the last choice and try the next call after it. A
// configuration (the set of operations linearized, the state) seen before is
// not explored again, which keeps histories of thousands of operations
// checkable when few operations overlap.
//
// A Spec is built from the history it checks (`Spec(const history&)`, which
// lets it look ahead: see queue_spec) and provides `state`, `std::optional<
// state> step(const state&, const operation&) const` (nullopt when the answer
// is impossible in that state, or the step cannot lead to a linearization; a
// pending operation takes any answer) and `static std::size_t hash(const
// state&)`; states compare with ==.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_set>
#include <utility>
#include <vector>

#include "history.hpp"

namespace smr::lincheck {

enum class verdict { linearizable, not_linearizable, too_hard };

template <class Spec>
struct search_result {
    verdict answer = verdict::linearizable;
    /// The state after the linearization found (when linearizable).
    typename Spec::state final_state{};
    std::size_t configurations = 0;  // distinct configurations explored
};

namespace detail {

struct event {
    std::uint64_t time = 0;
    std::size_t op = 0;
    bool is_call = false;
    event* prev = nullptr;
    event* next = nullptr;
    event* match = nullptr;  // a call's return, a return's call
};

/// The operations' events in one doubly linked list, in time order (a call
/// before a return at the same time: equal timestamps count as overlap).
/// Pending operations return after everything else.
class event_list {
  public:
    explicit event_list(const history& h) : events_(2 * h.size()) {
        std::uint64_t last = 0;
        for (const operation& op : h) {
            last = std::max(last, op.call);
            if (!op.is_pending()) last = std::max(last, op.ret);
        }
        for (std::size_t i = 0; i < h.size(); ++i) {
            event& call = events_[2 * i];
            event& ret = events_[2 * i + 1];
            call = {h[i].call, i, true, nullptr, nullptr, &ret};
            ret = {h[i].is_pending() ? last + 1 : h[i].ret, i, false, nullptr, nullptr, &call};
        }
        std::vector<event*> order;
        order.reserve(events_.size());
        for (event& e : events_) order.push_back(&e);
        std::stable_sort(order.begin(), order.end(), [](const event* a, const event* b) {
            return a->time != b->time ? a->time < b->time : a->is_call && !b->is_call;
        });
        event* prev = &head_;
        for (event* e : order) {
            prev->next = e;
            e->prev = prev;
            prev = e;
        }
        prev->next = nullptr;
    }
    event_list(const event_list&) = delete;
    event_list& operator=(const event_list&) = delete;

    event* first() const noexcept { return head_.next; }
    event& call_of(std::size_t op) noexcept { return events_[2 * op]; }

    /// Takes a call and its return out of the list (dancing links: they keep
    /// their neighbours, so unlift puts them back in reverse order).
    static void lift(event& call) noexcept {
        for (event* e : {&call, call.match}) {
            e->prev->next = e->next;
            if (e->next != nullptr) e->next->prev = e->prev;
        }
    }
    static void unlift(event& call) noexcept {
        for (event* e : {call.match, &call}) {
            e->prev->next = e;
            if (e->next != nullptr) e->next->prev = e;
        }
    }

  private:
    std::vector<event> events_;
    event head_;
};

/// The operations linearized so far, as a bit set: with the state, the key
/// of the memo.
struct bitset {
    std::vector<std::uint64_t> words;
    explicit bitset(std::size_t n) : words((n + 63) / 64) {}
    void set(std::size_t i) noexcept { words[i / 64] |= std::uint64_t{1} << (i % 64); }
    void reset(std::size_t i) noexcept { words[i / 64] &= ~(std::uint64_t{1} << (i % 64)); }
    bool operator==(const bitset&) const = default;
    std::size_t hash() const noexcept {
        std::size_t h = 0xcbf29ce484222325u;
        for (std::uint64_t w : words) h = (h ^ w) * 0x100000001b3u;
        return h;
    }
};

/// A configuration with its hash, computed once: a queue's state hashes in
/// time linear in its length, and the memo rehashes every entry as it grows.
/// The hash comes first, so that most unequal entries differ at once.
template <class Spec>
struct configuration {
    std::size_t hash;
    bitset done;
    typename Spec::state state;

    configuration(bitset done_, typename Spec::state state_)
        : hash(done_.hash() ^ (Spec::hash(state_) * 0x9e3779b97f4a7c15u)),
          done(std::move(done_)),
          state(std::move(state_)) {}
    bool operator==(const configuration&) const = default;
};

template <class Spec>
struct configuration_hash {
    std::size_t operator()(const configuration<Spec>& c) const noexcept { return c.hash; }
};

}  // namespace detail

/// Searches for a linearization of `h` from `initial`. Gives up with
/// too_hard after `max_configurations` distinct configurations.
template <class Spec>
search_result<Spec> linearize(const history& h, const typename Spec::state& initial,
                              std::size_t max_configurations = 4'000'000) {
    using state = typename Spec::state;
    const Spec spec(h);
    detail::event_list events(h);
    detail::bitset done(h.size());
    std::unordered_set<detail::configuration<Spec>, detail::configuration_hash<Spec>> seen;
    std::vector<std::pair<std::size_t, state>> stack;  // linearized op, state before it
    state current = initial;

    detail::event* at = events.first();
    while (events.first() != nullptr) {
        if (at->is_call) {
            const std::size_t op = at->op;
            if (std::optional<state> next = spec.step(current, h[op])) {
                done.set(op);
                if (seen.insert({done, *next}).second) {
                    if (seen.size() > max_configurations)
                        return {verdict::too_hard, {}, seen.size()};
                    stack.emplace_back(op, std::move(current));
                    current = std::move(*next);
                    detail::event_list::lift(*at);
                    at = events.first();
                    continue;
                }
                done.reset(op);
            }
            at = at->next;
        } else {
            // The return of an operation not yet linearized: it cannot come
            // after the ones still in the list, so undo the last choice.
            if (stack.empty()) return {verdict::not_linearizable, {}, seen.size()};
            auto [op, before] = std::move(stack.back());
            stack.pop_back();
            done.reset(op);
            current = std::move(before);
            detail::event& call = events.call_of(op);
            detail::event_list::unlift(call);
            at = call.next;
        }
    }
    return {verdict::linearizable, std::move(current), seen.size()};
}

}  // namespace smr::lincheck
