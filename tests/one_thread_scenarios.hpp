// What the deterministic scenario tests share (test_nested_operations,
// test_retire_outside_operation): several registered slots driven in turn by
// one OS thread, so that an interleaving that frees a held node happens every
// run instead of once in many, and a node that reports its own destruction,
// so that the test finds out without reading freed memory.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "smr/reclaim/all.hpp"
#include "smr/reclaim/guards.hpp"

namespace smr::test {

/// The domains of `Tuple` whose traits satisfy `Keep` (a captureless lambda
/// taking smr::reclaimer_traits).
template <class Tuple, auto Keep>
struct domains_where;
template <class... Ds, auto Keep>
struct domains_where<std::tuple<Ds...>, Keep> {
    using type = decltype(std::tuple_cat(
        std::declval<std::conditional_t<Keep(Ds::traits), std::tuple<Ds>, std::tuple<>>>()...));
};

template <class Tuple>
struct gtest_types_of;
template <class... Ts>
struct gtest_types_of<std::tuple<Ts...>> {
    using type = ::testing::Types<Ts...>;
};

/// Typed-test names: the reclaimer's name.
struct domain_names {
    template <class D>
    static std::string GetName(int) {
        return std::string(D::traits.name);
    }
};

/// A node that says when it is destroyed.
template <class Domain>
struct flagged_node final : Domain::node_base {
    bool* destroyed;
    explicit flagged_node(bool* flag) : destroyed(flag) {}
    ~flagged_node() {
        if (destroyed != nullptr) *destroyed = true;
    }
};

/// Every scheme reclaims as early as it may: each operation advances the
/// epoch or era when it can and each retire scans.
inline domain_config eager_config() {
    domain_config config;
    config.max_threads = 4;
    config.bag_threshold = 1;
    config.check_every = 1;
    config.advance_every = 1;
    config.epoch_freq = 1;
    config.token_check_every = 1;
    return config;
}

/// One operation of a writer: replaces the cell's node with a fresh one and
/// retires the old one; then a quiescent state (qsbr's end of operation).
template <class Domain>
void replace(Domain& domain, context_ref<Domain> writer, std::atomic<flagged_node<Domain>*>& cell) {
    {
        op_guard op(domain, writer);
        auto* fresh = domain.template allocate<flagged_node<Domain>>(writer, nullptr);
        domain.retire(writer, cell.exchange(fresh, std::memory_order_acq_rel));
    }
    domain.quiescent(writer);
}

/// Reads the object `cell` points to inside one operation (an NBR read phase
/// that reserves nothing: nothing is used after it) and tells whether its
/// seal (T::intact until its destructor) was intact: the readers of the
/// publish-and-retire tests.
template <class Domain, class T>
bool read_intact(Domain& domain, context_ref<Domain> self, const std::atomic<T*>& cell) {
    std::uint64_t seal = 0;
    {
        op_guard op(domain, self);
        SMR_READ_PHASE_BEGIN(domain, self);
        seal = domain.protect(self, 0, cell)->seal;
        domain.read_phase_end(self);
    }
    domain.quiescent(self);
    return seal == T::intact;
}

}  // namespace smr::test
