// The STAMP applications on smrlab's STM (bench/stamp/): each runs at STAMP's
// simulator size with four clients and verifies itself, and each
// verification fails on a corrupted state, naming what is wrong.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/guards.hpp"
#include "stamp/vacation.hpp"

namespace smrbench::stamp {

/// The tests' way into the manager's tables (befriended by vacation_manager).
struct vacation_testing {
    template <class Domain>
    static smr::ds::stm_rb_node* table(vacation_manager<Domain>& m, int kind) {
        return m.tables_[kind]->root;
    }
    template <class Domain>
    static smr::ds::stm_rb_node* customers(vacation_manager<Domain>& m) {
        return m.customers_->root;
    }
};

namespace {

constexpr smr::stm::stm_config small_table{.ort_bits = 16, .shift = 5};

TEST(Vacation, NamedInputsAreStamps) {
    const vacation_params low = vacation_input("vacation-low");
    EXPECT_EQ(low.queries, 2);
    EXPECT_EQ(low.percent_queried, 90);
    EXPECT_EQ(low.percent_user, 98);
    EXPECT_EQ(low.relations, 16384);
    EXPECT_EQ(low.tasks, 4096);
    EXPECT_EQ(low.query_range(), 14746);
    const vacation_params high = vacation_input("vacation-high++");
    EXPECT_EQ(high.queries, 4);
    EXPECT_EQ(high.percent_queried, 60);
    EXPECT_EQ(high.relations, 1048576);
    EXPECT_EQ(high.tasks, 4194304);
    EXPECT_EQ(high.query_range(), 629146);
    EXPECT_EQ(vacation_inputs().size(), 6U);
    try {
        vacation_input("vacation-medium");
        FAIL() << "an unknown input was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()),
                  "unknown Vacation input 'vacation-medium' (one of vacation-low, vacation-high, "
                  "vacation-low+, vacation-high+, vacation-low++, vacation-high++)");
    }
}

TEST(Vacation, LowAndHighVerifyWithFourClients) {
    for (const char* name : {"vacation-low", "vacation-high"}) {
        const vacation_params params = vacation_input(name);
        const vacation_run run = run_vacation(params, 4, small_table);
        EXPECT_TRUE(run.validation.ok) << name << ": " << run.validation.error;
        EXPECT_EQ(run.tasks, params.tasks);
        EXPECT_EQ(run.stm.commits, static_cast<std::uint64_t>(params.tasks)) << name;
        EXPECT_GT(run.seconds, 0.0);
    }
}

/// Few relations and many updates: clients meet on the same records and
/// customers, so transactions abort, records are created and removed, and
/// customers are deleted while others reserve for them.
TEST(Vacation, ContendedTablesVerify) {
    vacation_params params;
    params.queries = 4;
    params.percent_queried = 90;
    params.relations = 64;
    params.tasks = 40000;
    params.percent_user = 60;
    const vacation_run run = run_vacation(params, 4, small_table);
    EXPECT_TRUE(run.validation.ok) << run.validation.error;
    EXPECT_EQ(run.stm.commits, static_cast<std::uint64_t>(params.tasks));
}

/// A manager after one client's run of vacation-high, for corrupting.
struct ran {
    smr::debra_domain domain{[] {
        smr::domain_config c;
        c.max_threads = 2;
        return c;
    }()};
    vacation_params params = [] {
        vacation_params p = vacation_input("vacation-high");
        p.relations = 2048;
        p.tasks = 2000;
        return p;
    }();
    vacation_manager<smr::debra_domain> manager{domain, small_table};
    std::vector<std::vector<initial_record>> initial;
    std::array<std::int64_t, 3> added{};

    ran() {
        const smr::context<smr::debra_domain> self(domain);
        initial = manager.populate(self, params.relations);
        const std::atomic<bool> stop{false};
        added = manager.run_client(self, 0, params, params.tasks, stop);
    }

    smr::ds::validation_result validate() const { return manager.validate(params, initial, added); }

    /// The record of `id` in table `kind` (null if absent).
    reservation* record(int kind, std::int64_t id) {
        reservation* found = nullptr;
        smr::ds::for_each_stm_rb_node(vacation_testing::table(manager, kind),
                                      [&](const smr::ds::stm_rb_node& n) {
                                          if (n.key == id) {
                                              found = reinterpret_cast<reservation*>(n.value);
                                          }
                                      });
        return found;
    }

    /// A customer holding at least one item.
    customer* holder() {
        customer* found = nullptr;
        smr::ds::for_each_stm_rb_node(vacation_testing::customers(manager),
                                      [&](const smr::ds::stm_rb_node& n) {
                                          auto* c = reinterpret_cast<customer*>(n.value);
                                          if (found == nullptr && c->items->size > 0) found = c;
                                      });
        return found;
    }

    void expect_caught(const std::string& error, const std::function<void()>& corrupt,
                       const std::function<void()>& undo) {
        ASSERT_TRUE(validate().ok) << "valid before the corruption";
        corrupt();
        const smr::ds::validation_result r = validate();
        EXPECT_FALSE(r.ok);
        EXPECT_NE(r.error.find(error), std::string::npos) << "error: " << r.error;
        undo();
        EXPECT_TRUE(validate().ok) << "valid after the undo";
    }
};

/// Deterministic (one client): update tasks empty some flights, whose
/// records the transaction that emptied them removes.
TEST(Vacation, ARecordLeftWithNoPlacesIsRemoved) {
    ran r;
    const smr::ds::validation_result v = r.validate();
    EXPECT_TRUE(v.ok) << v.error;
    std::int64_t flights = 0;
    smr::ds::for_each_stm_rb_node(vacation_testing::table(r.manager, flight),
                                  [&](const smr::ds::stm_rb_node&) { ++flights; });
    EXPECT_LT(flights, r.params.relations) << "no flight was removed";
}

TEST(Vacation, ACustomersItemWithoutAPlaceIsCaught) {
    ran r;
    customer* c = r.holder();
    ASSERT_NE(c, nullptr);
    reservation* held =
        r.record(static_cast<int>(c->items->head.next->item->kind), c->items->head.next->item->id);
    ASSERT_NE(held, nullptr);
    r.expect_caught(
        "used, customers hold",
        [&] {
            --held->used;
            ++held->free;
        },
        [&] {
            ++held->used;
            --held->free;
        });
}

TEST(Vacation, UsedPlusFreeNotTotalIsCaught) {
    ran r;
    smr::ds::stm_rb_node* root = vacation_testing::table(r.manager, car);
    ASSERT_NE(root, nullptr);
    auto* rec = reinterpret_cast<reservation*>(root->value);
    r.expect_caught(
        "used + free != total", [&] { ++rec->free; }, [&] { --rec->free; });
}

TEST(Vacation, AListWhoseSizeIsWrongIsCaught) {
    ran r;
    customer* c = r.holder();
    ASSERT_NE(c, nullptr);
    r.expect_caught(
        "list size", [&] { ++c->items->size; }, [&] { --c->items->size; });
}

TEST(Vacation, ARecordNeverQueriedButChangedIsCaught) {
    ran r;
    const std::int64_t last = r.params.relations;  // above the query range
    ASSERT_GT(last, r.params.query_range());
    reservation* rec = r.record(room, last);
    ASSERT_NE(rec, nullptr);
    const std::int64_t price = rec->price;
    r.expect_caught(
        "never queried, yet changed", [&] { rec->price = price == 50 ? 60 : 50; },
        [&] { rec->price = price; });
}

TEST(Vacation, ALostUpdateOfPlacesIsCaught) {
    // A record whose free and total lost 100 places together keeps every
    // per-record invariant; only the balance of the updates sees it.
    ran r;
    smr::ds::stm_rb_node* root = vacation_testing::table(r.manager, room);
    ASSERT_NE(root, nullptr);
    auto* rec = reinterpret_cast<reservation*>(root->value);
    r.expect_caught(
        "rooms hold",
        [&] {
            rec->free += 100;
            rec->total += 100;
        },
        [&] {
            rec->free -= 100;
            rec->total -= 100;
        });
}

TEST(Vacation, ParametersOutOfRangeAreRefused) {
    const vacation_params low = vacation_input("vacation-low");
    EXPECT_THROW(low.check(0), std::invalid_argument);
    vacation_params p = low;
    p.percent_queried = 0;
    EXPECT_THROW(p.check(1), std::invalid_argument);
    p = low;
    p.queries = 0;
    EXPECT_THROW(p.check(1), std::invalid_argument);
    p = low;
    p.percent_queried = 101;
    EXPECT_THROW(p.check(1), std::invalid_argument);
    EXPECT_NO_THROW(low.check(1));
    EXPECT_THROW(run_vacation(p, 1, small_table), std::invalid_argument);
}

TEST(Vacation, ATreeOutOfOrderIsCaught) {
    ran r;
    smr::ds::stm_rb_node* root = vacation_testing::table(r.manager, flight);
    ASSERT_NE(root, nullptr);
    ASSERT_NE(root->left, nullptr);
    r.expect_caught(
        "keys not ascending", [&] { std::swap(root->key, root->left->key); },
        [&] { std::swap(root->key, root->left->key); });
}

}  // namespace
}  // namespace smrbench::stamp
