// STAMP's Vacation on smrlab's STM: a travel agency's database of cars,
// flights, rooms and customers, which client threads query and update in
// transactions. Minh, Chung, Kozyrakis and Olukotun, "STAMP: Stanford
// Transactional Applications for Multi-Processing", IISWC 2008
// (doi:10.1109/IISWC.2008.4636089), Section III; the allocator/STM study
// (Baldassin, Borin and Araujo, TRANSACT 2014) finds it among the
// applications whose speed depends on the allocator (Figure 7, Table 5).
// Written from the paper's description and the public suite's structure
// (vacation/, lib/rbtree.c, lib/list.c of STAMP 0.9.10); no code is copied.
//
// ---- The workload ----------------------------------------------------------------
//
// Four red-black trees map ids 1..r to records: three tables of
// reservations (a record of five words: id, used, free, total, price) and
// one of customers (an id and a sorted list of what the customer reserved:
// 16-byte list nodes pointing at 24-byte items of type, id and price). Every
// client runs its share of the tasks, each one transaction of one of three
// kinds, drawn before the transaction begins from a generator seeded with the
// client's number (Mersenne Twister, as STAMP):
//
//   make a reservation (u % of tasks): look up 1..n random items, two reads
//     of each (free places, then price), keep the dearest of each type, add
//     the customer if absent, and reserve each kept item for the customer;
//   delete a customer (half of the rest): sum the bill, cancel every item
//     the customer holds, free the list and remove the customer;
//   update the tables (the other half): add 100 places to 1..n random items
//     (creating the record if absent, setting a new price) or remove 100
//     (a flight only when nobody holds it, all its places at once); a record
//     left with none is removed and freed.
//
// Ids are drawn from 1..q % of r, so the last (100 - q) % of each table is
// never touched: the verification checks that it is as the initialization
// left it. Every allocation and free of a transaction goes through it
// (tx.make, tx.free: the allocator study's point), 16- to 48-byte blocks.
//
// ---- Where this port differs from STAMP 0.9.10 -------------------------------------
//
// - A transaction's "dearest so far" starts afresh at every attempt. STAMP
//   sets it before TM_BEGIN, so a retried attempt (a longjmp back) starts
//   from what the aborted one found.
// - An item whose customer already holds it is freed (tx.free, which locks
//   its stripes until the commit); STAMP leaks it.
// - A record found inconsistent inside a transaction (STAMP restarts the
//   transaction, which under an opaque STM never happens) stops the run with
//   the reason, as does any other "cannot happen" case, so that an STM bug
//   is reported instead of retried forever: the client that met it stops,
//   the others stop before their next task, and the run fails.
// - The item's fields, written before the item is published and never again,
//   are read plainly, as STAMP does; every other field is read and written
//   through the transaction.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "smr/ds/stm_rb_core.hpp"
#include "smr/ds/validation.hpp"
#include "smr/stm/stm.hpp"
#include "stamp/clients.hpp"

namespace smrbench::stamp {

/// STAMP's command line for Vacation (-c is the thread count).
struct vacation_params {
    long queries = 10;          ///< -n: items looked at per task, at most
    long percent_queried = 90;  ///< -q: ids are drawn from the first q % of each table
    long relations = 1 << 16;   ///< -r: records per table, and customers
    long tasks = 1 << 26;       ///< -t: tasks of all clients together
    long percent_user = 80;     ///< -u: share of the tasks that make reservations

    /// The ids clients draw from: 1..query_range() (STAMP rounds q % of r).
    long query_range() const noexcept {
        return static_cast<long>(
            static_cast<double>(percent_queried) / 100.0 * static_cast<double>(relations) + 0.5);
    }
    /// Each client's share of the tasks (rounded, as STAMP).
    long tasks_per_client(long clients) const noexcept {
        return static_cast<long>(static_cast<double>(tasks) / static_cast<double>(clients) + 0.5);
    }
    /// Throws std::invalid_argument naming the first parameter out of range
    /// (STAMP would divide by zero or draw ids outside the tables).
    void check(long clients) const;
};

/// STAMP's named inputs: vacation-low and vacation-high (its simulator
/// inputs: 16,384 relations, 4,096 tasks), with "+" (2^20 relations) and
/// "++" (2^20 relations, 2^22 tasks: its native-run input). Throws
/// std::invalid_argument naming the inputs for any other name.
vacation_params vacation_input(std::string_view name);

/// The names vacation_input accepts, in order.
const std::vector<std::string_view>& vacation_inputs();

enum reservation_kind : std::int64_t { car = 0, flight = 1, room = 2 };
inline constexpr int reservation_kinds = 3;

/// A table's record: five words, 40 bytes. used + free == total.
struct reservation {
    std::int64_t id;
    std::int64_t used;
    std::int64_t free;
    std::int64_t total;
    std::int64_t price;
};
static_assert(sizeof(reservation) == 40);

/// What a customer reserved, at the price of the moment: 24 bytes, written
/// before it is published and never again.
struct reservation_item {
    std::int64_t kind;
    std::int64_t id;
    std::int64_t price;
};
static_assert(sizeof(reservation_item) == 24);

/// STAMP's list node (16 bytes) and list header (32 bytes: the head node,
/// its comparator's word, unused here, kept for the allocator's size class,
/// and the length).
struct item_node {
    reservation_item* item;
    item_node* next;
};
struct item_list {
    item_node head;
    std::int64_t comparator_unused;
    std::int64_t size;
};
static_assert(sizeof(item_node) == 16 && sizeof(item_list) == 32);

struct customer {
    std::int64_t id;
    item_list* items;
};
static_assert(sizeof(customer) == 16);

/// The initial places and price of each id of the three tables, as the
/// initialization draws them (the verification's reference).
struct initial_record {
    std::int64_t places;
    std::int64_t price;
};

/// The database: four trees under one STM, so that one transaction spans
/// tables, records and lists. Instantiated for smr::debra_domain
/// (bench/stamp/vacation.cpp), the reclaimer of the allocator study's runs.
template <class Domain>
class vacation_manager {
  public:
    vacation_manager(Domain& domain, const smr::stm::stm_config& config);
    ~vacation_manager();
    vacation_manager(const vacation_manager&) = delete;
    vacation_manager& operator=(const vacation_manager&) = delete;

    /// STAMP's initialization, by the calling thread (attached as self):
    /// ids 1..r of each table in a shuffled order (one generator seeded 0 for
    /// all four tables, the shuffle continuing from the last), each record
    /// with (1..5) x 100 places at 50..90, each customer with an empty list.
    /// One transaction per insert. Returns each table's initial records,
    /// indexed [kind][id].
    std::vector<std::vector<initial_record>> populate(smr::context_ref<Domain> self,
                                                      long relations);

    /// One client's tasks (attached as self, client number `client`), until
    /// `stop` is set. Returns the places its committed tasks added to each
    /// table, less those they removed (the verification's balance).
    std::array<std::int64_t, 3> run_client(smr::context_ref<Domain> self, long client,
                                           const vacation_params& params, long tasks,
                                           const std::atomic<bool>& stop);

    /// Quiescent only: the checks of docs/smrbench.md ("stamp"); `added` is
    /// the sum of the clients' run_client results.
    smr::ds::validation_result validate(const vacation_params& params,
                                        const std::vector<std::vector<initial_record>>& initial,
                                        const std::array<std::int64_t, 3>& added) const;

    smr::stm::stm<Domain>& transactional_memory() noexcept { return stm_; }

  private:
    friend struct vacation_testing;  // tests corrupt the tables
    class tx_view;

    /// A tree's own block, as STAMP's rbtree_t (its root and its
    /// comparator's word, unused here): 16 bytes from malloc, so the four
    /// roots do not share a stripe.
    struct tree {
        smr::ds::stm_rb_node* root;
        std::int64_t comparator_unused;
    };
    void free_all() noexcept;

    tree* tables_[reservation_kinds] = {};
    tree* customers_ = nullptr;
    smr::stm::stm<Domain> stm_;
};

/// One run as STAMP's main makes it: the initialization by the calling
/// thread, then `clients` threads each running its share of the tasks,
/// started together; only their phase is timed. Then the verification; a
/// client that met a state no transaction may see ends the run, and its
/// reason is the verification's failure. Throws what thread creation throws.
using vacation_run = app_run;
vacation_run run_vacation(const vacation_params& params, int clients,
                          const smr::stm::stm_config& stm_config);

}  // namespace smrbench::stamp
