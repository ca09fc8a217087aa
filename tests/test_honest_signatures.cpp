// What the reclaimers' signatures promise: a noexcept hook allocates nothing
// (the scans of hp, he, ibr and wfe used to grow a std::vector inside
// retire), registration either succeeds or gives its slot back, and a
// hazard-slot index out of range stops the program in every build instead
// of writing past the slot array.
//
// This binary replaces the global operator new to count the allocations
// made on the calling thread while a test watches.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <tuple>
#include <vector>

#include "one_thread_scenarios.hpp"
#include "smr/reclaim/all.hpp"
#include "smr/reclaim/guards.hpp"

// The replacements below pair operator new with std::free by design (they
// allocate with malloc); GCC's inliner sees only the pairing.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {

thread_local bool watching = false;
thread_local std::size_t allocations_seen = 0;
thread_local bool fail_allocations = false;

/// Every replaced form of operator new ends here; null only when failing.
void* counted_new(std::size_t bytes, std::size_t align = alignof(std::max_align_t)) noexcept {
    if (watching) ++allocations_seen;
    if (fail_allocations) return nullptr;
    bytes = bytes == 0 ? 1 : bytes;
    if (align <= alignof(std::max_align_t)) return std::malloc(bytes);
    return std::aligned_alloc(align, (bytes + align - 1) / align * align);
}

void* counted_new_or_throw(std::size_t bytes, std::size_t align = alignof(std::max_align_t)) {
    if (void* p = counted_new(bytes, align)) return p;
    throw std::bad_alloc();
}

}  // namespace

// Every form, so that each new meets the matching delete (ASan checks it).
void* operator new(std::size_t n) { return counted_new_or_throw(n); }
void* operator new[](std::size_t n) { return counted_new_or_throw(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted_new(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted_new(n); }
void* operator new(std::size_t n, std::align_val_t a) {
    return counted_new_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
    return counted_new_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return counted_new(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return counted_new(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

using smr::test::domain_names;
using smr::test::flagged_node;

template <auto Keep>
using domains_where = typename smr::test::gtest_types_of<
    typename smr::test::domains_where<smr::all_domains, Keep>::type>::type;

template <class Domain>
class signature_test : public ::testing::Test {};
TYPED_TEST_SUITE(signature_test, smr::test::gtest_types_of<smr::all_domains>::type, domain_names);

// lfrc retires only inside the unlinking operation and scans nothing; nbr's
// readers would be signalled on this very thread (nbr sizes its scan buffer
// at registration, test_nbr).
template <class Domain>
class scan_test : public ::testing::Test {};
TYPED_TEST_SUITE(scan_test, domains_where<[](smr::reclaimer_traits t) {
                     return t.family != smr::reclaimer_family::reference_count && !t.uses_signals;
                 }>,
                 domain_names);

// Every scheme: those whose protect indexes an array with the caller's slot
// number, and those that ignore it (code tested under debra used to be
// accepted and then stop once switched to hp).
template <class Domain>
class slot_test : public ::testing::Test {};
TYPED_TEST_SUITE(slot_test, domains_where<[](smr::reclaimer_traits) { return true; }>,
                 domain_names);

// Every other slot holds an operation open with every hazard slot it has
// protecting something, so that a scan of the watched thread collects the
// most reservations the domain can hold; then the watched thread retires
// with a scan on every retire. Nothing may reach operator new: before, hp,
// he, ibr and wfe grew their scan's vector there (inside a noexcept retire).
TYPED_TEST(scan_test, retire_and_the_scan_it_runs_allocate_nothing) {
    using Domain = TypeParam;
    using node = flagged_node<Domain>;
    {
        smr::domain_config config = smr::test::eager_config();
        config.max_threads = 4;
        Domain domain(config);
        std::vector<smr::context<Domain>> threads;
        for (int i = 0; i < 4; ++i) threads.emplace_back(domain);
        const auto writer = threads[0].lent();
        constexpr int slots = smr::max_protect_slots;
        std::vector<std::atomic<node*>> cells(slots);
        for (auto& cell : cells)
            cell.store(domain.template allocate_outside_op<node>(writer, nullptr));
        for (std::size_t r = 1; r < threads.size(); ++r) {
            domain.begin_op(threads[r]);
            for (int s = 0; s < (Domain::traits.protect_uses_slots ? slots : 1); ++s)
                (void)domain.protect(threads[r], s, cells[static_cast<std::size_t>(s)]);
        }
        std::atomic<node*> churn{domain.template allocate_outside_op<node>(writer, nullptr)};
        std::size_t seen = 0;
        for (int i = 0; i < 200; ++i) {
            node* fresh = domain.template allocate_outside_op<node>(writer, nullptr);
            watching = true;
            allocations_seen = 0;
            domain.begin_op(writer);
            domain.retire(writer, churn.exchange(fresh));
            domain.end_op(writer);
            domain.quiescent(writer);
            watching = false;
            seen += allocations_seen;
        }
        EXPECT_EQ(seen, 0u) << "operator new was called inside begin_op/retire/end_op";
        // The domain frees what is still retired when it is destroyed (a
        // barrier would wait for the other slots' next operations).
        for (std::size_t r = 1; r < threads.size(); ++r) domain.end_op(threads[r]);
        threads.clear();  // detaches
        for (auto& cell : cells) domain.free_unshared(cell.load());
        domain.free_unshared(churn.load());
    }
}

// A registration whose scheme runs out of memory setting the thread up
// throws and gives the slot back: every slot can still be registered.
TYPED_TEST(signature_test, a_registration_that_throws_gives_its_slot_back) {
    using Domain = TypeParam;
    smr::domain_config config;
    config.max_threads = 3;
    Domain domain(config);
    std::vector<smr::context<Domain>> threads;
    threads.reserve(config.max_threads);  // so that only attaching can fail below
    fail_allocations = true;
    try {
        threads.emplace_back(domain);  // a scheme that allocates nothing there attaches
    } catch (const std::bad_alloc&) {
    }
    fail_allocations = false;
    for (std::size_t i = threads.size(); i < config.max_threads; ++i) threads.emplace_back(domain);
    EXPECT_EQ(threads.size(), config.max_threads);
}

// hp, he, wfe and lfrc index a fixed array of hazard slots with the caller's
// number: a number out of range stops the program with a message in every
// build (it was a debug-only assert, and a release build wrote past the
// array into the next thread's state), whether it is given to protect or to
// a reader's slot (hp checks it there, once per traversal).
template <class Domain>
void protect_out_of_range(int index, bool through_a_reader_slot) {
    Domain domain(smr::domain_config{});
    smr::context self(domain);
    std::atomic<flagged_node<Domain>*> cell{nullptr};
    smr::op_guard op(domain, self);
    if (through_a_reader_slot) {
        const auto reader = domain.reader(self);
        (void)reader.protect(reader.slot(index), cell);
    } else {
        (void)domain.protect(self, index, cell);
    }
}

TYPED_TEST(slot_test, a_hazard_slot_out_of_range_stops_the_program) {
    using Domain = TypeParam;
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    for (const bool through_a_reader_slot : {false, true}) {
        EXPECT_DEATH(protect_out_of_range<Domain>(smr::max_protect_slots, through_a_reader_slot),
                     "hazard slot");
        EXPECT_DEATH(protect_out_of_range<Domain>(-1, through_a_reader_slot), "hazard slot");
    }
}

}  // namespace
