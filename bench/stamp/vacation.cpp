// STAMP's Vacation on smrlab's STM: the manager's transactions, the clients
// and the verification (bench/stamp/vacation.hpp says what and why).
#include "stamp/vacation.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "smr/core/mutant.hpp"
#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/guards.hpp"
#include "stamp/named_inputs.hpp"
#include "stamp/tx_fields.hpp"
#include "stamp/words.hpp"

namespace smrbench::stamp {

using smr::ds::stm_rb_node;
using smr::ds::stm_rb_view;
using smr::ds::validation_result;
using smr::stm::transaction;

namespace {

/// A state that an opaque STM never shows a transaction (STAMP restarts the
/// transaction there): stops the run with the reason.
[[noreturn]] void impossible(const std::string& what) {
    throw std::logic_error("vacation: " + what);
}

/// STAMP draws with genrand_int32() % bound.
std::int64_t draw(std::mt19937& g, long bound) {
    return static_cast<std::int64_t>(g() % static_cast<std::uint32_t>(bound));
}
std::int64_t draw_price(std::mt19937& g) { return draw(g, 5) * 10 + 50; }
bool valid_price(std::int64_t p) { return p >= 50 && p <= 90 && p % 10 == 0; }

/// An item's place in a customer's list: by kind, then id.
bool before(const reservation_item& a, const reservation_item& b) {
    return a.kind != b.kind ? a.kind < b.kind : a.id < b.id;
}

const std::array<named_input<vacation_params>, 6>& named_inputs() {
    // STAMP's README and web page: low -n2 -q90 -u98, high -n4 -q60 -u90;
    // -r16384 -t4096 (simulator), -r1048576 -t4096 (+), -r1048576 -t4194304 (++).
    static const std::array<named_input<vacation_params>, 6> inputs{{
        {"vacation-low", {2, 90, 16384, 4096, 98}},
        {"vacation-high", {4, 60, 16384, 4096, 90}},
        {"vacation-low+", {2, 90, 1048576, 4096, 98}},
        {"vacation-high+", {4, 60, 1048576, 4096, 90}},
        {"vacation-low++", {2, 90, 1048576, 4194304, 98}},
        {"vacation-high++", {4, 60, 1048576, 4194304, 90}},
    }};
    return inputs;
}

}  // namespace

const std::vector<std::string_view>& vacation_inputs() {
    static const std::vector<std::string_view> names = input_names(named_inputs());
    return names;
}

vacation_params vacation_input(std::string_view name) {
    return find_input(named_inputs(), "Vacation", name);
}

/// One transaction's view of the manager: STAMP's manager.c, reservation.c,
/// customer.c and the list's insert, every mutable field through `tx`.
template <class Domain>
class vacation_manager<Domain>::tx_view : tx_fields {
  public:
    tx_view(vacation_manager& m, transaction& tx) noexcept : tx_fields(tx), m_(m) {}

    reservation* record(std::int64_t kind, std::int64_t id) {
        stm_rb_view table{m_.tables_[kind]->root, tx_};
        stm_rb_node* n = table.find(id);
        return n == nullptr ? nullptr : as_pointer<reservation>(table.value_of(n));
    }

    customer* find_customer(std::int64_t id) {
        stm_rb_view table{m_.customers_->root, tx_};
        stm_rb_node* n = table.find(id);
        return n == nullptr ? nullptr : as_pointer<customer>(table.value_of(n));
    }

    /// manager_query*: free places, or -1 without a record.
    std::int64_t query_free(std::int64_t kind, std::int64_t id) {
        reservation* r = record(kind, id);
        return r == nullptr ? -1 : get(r, &reservation::free);
    }
    /// manager_query*Price: a second lookup, as STAMP's client makes it.
    std::int64_t query_price(std::int64_t kind, std::int64_t id) {
        reservation* r = record(kind, id);
        return r == nullptr ? -1 : get(r, &reservation::price);
    }

    /// manager_addCustomer: false if the customer exists.
    bool add_customer(std::int64_t id) {
        stm_rb_view table{m_.customers_->root, tx_};
        if (table.find(id) != nullptr) return false;
        // STAMP's order: the customer, its list, then the tree's node.
        auto* c = tx_.make<customer>(id, nullptr);
        c->items = tx_.make<item_list>(item_node{nullptr, nullptr}, 0, 0);  // not yet published
        if (!table.insert(id, as_value(c))) impossible("customer " + std::to_string(id) + " twice");
        return true;
    }

    /// manager_reserve: one place of (kind, id) for the customer.
    bool reserve(std::int64_t kind, std::int64_t customer_id, std::int64_t id) {
        customer* c = find_customer(customer_id);
        if (c == nullptr) return false;
        reservation* r = record(kind, id);
        if (r == nullptr) return false;
        const std::int64_t free = get(r, &reservation::free);
        if (free < 1) return false;
        set(r, &reservation::used, get(r, &reservation::used) + 1);
        set(r, &reservation::free, free - 1);
        check_record(r);
        auto* item = tx_.make<reservation_item>(kind, id, get(r, &reservation::price));
        if (!insert_item(get(c, &customer::items), item)) {
            tx_.free(item);  // STAMP leaks it
            cancel(r);
            return false;
        }
        return true;
    }

    /// The customer's bill, or -1 without the customer.
    std::int64_t bill(std::int64_t customer_id) {
        customer* c = find_customer(customer_id);
        if (c == nullptr) return -1;
        std::int64_t sum = 0;
        for (item_node* n = first_item(get(c, &customer::items)); n != nullptr;
             n = get(n, &item_node::next)) {
            sum += n->item->price;  // written before the item was published
        }
        return sum;
    }

    /// manager_deleteCustomer: cancels what the customer holds, frees its
    /// items, list and record.
    bool delete_customer(std::int64_t customer_id) {
        customer* c = find_customer(customer_id);
        if (c == nullptr) return false;
        item_list* items = get(c, &customer::items);
        for (item_node* n = first_item(items); n != nullptr; n = get(n, &item_node::next)) {
            const reservation_item* item = n->item;
            reservation* r = record(item->kind, item->id);
            if (r == nullptr) impossible("a customer holds an item without a record");
            cancel(r);
            tx_.free(const_cast<reservation_item*>(item));
        }
        if (!stm_rb_view{m_.customers_->root, tx_}.erase(customer_id)) {
            impossible("customer " + std::to_string(customer_id) + " vanished");
        }
        // STAMP's TMfreeList recurses: the last node is freed first.
        std::vector<item_node*> nodes;
        for (item_node* n = first_item(items); n != nullptr; n = get(n, &item_node::next)) {
            nodes.push_back(n);
        }
        for (auto n = nodes.rbegin(); n != nodes.rend(); ++n) tx_.free(*n);
        tx_.free(items);
        tx_.free(c);
        return true;
    }

    /// manager_add* / delete car or room: `places` more (or fewer) of
    /// (kind, id), a new record if absent, removed when none is left; a new
    /// price unless `price` is negative.
    bool add_places(std::int64_t kind, std::int64_t id, std::int64_t places, std::int64_t price) {
        reservation* r = record(kind, id);
        if (r == nullptr) {
            if (places < 1 || price < 0) return false;
            auto* added = tx_.make<reservation>(id, 0, places, places, price);
            check_record(added);  // as STAMP's reservation_alloc: five reads
            if (!stm_rb_view{m_.tables_[kind]->root, tx_}.insert(id, as_value(added))) {
                impossible("record " + std::to_string(id) + " twice");
            }
            return true;
        }
        const std::int64_t free = get(r, &reservation::free);
        if (free + places < 0) return false;
        set(r, &reservation::free, free + places);
        set(r, &reservation::total, get(r, &reservation::total) + places);
        check_record(r);
        // Mutant: the read of total without the transaction, which then sees
        // the value before this transaction's buffered store.
        const std::int64_t total = SMR_MUTANT("vacation_total_read_uninstrumented")
                                       ? r->total
                                       : get(r, &reservation::total);
        if (total == 0) {
            if (!stm_rb_view{m_.tables_[kind]->root, tx_}.erase(id)) impossible("record vanished");
            tx_.free(r);
        } else if (price >= 0) {
            set(r, &reservation::price, price);  // written even when unchanged, as STAMP
            check_record(r);
        }
        return true;
    }

    /// manager_deleteFlight: only a flight nobody holds, all its places.
    /// Returns the places removed (0: none).
    std::int64_t delete_flight(std::int64_t id) {
        reservation* r = record(flight, id);
        if (r == nullptr || get(r, &reservation::used) > 0) return 0;
        const std::int64_t total = get(r, &reservation::total);
        return add_places(flight, id, -total, -1) ? total : 0;
    }

  private:
    void cancel(reservation* r) {
        const std::int64_t used = get(r, &reservation::used);
        if (used < 1) impossible("cancelling a place nobody holds");
        set(r, &reservation::used, used - 1);
        set(r, &reservation::free, get(r, &reservation::free) + 1);
        check_record(r);
    }

    /// STAMP's checkReservation: all five words read again.
    void check_record(reservation* r) {
        const std::int64_t used = get(r, &reservation::used);
        const std::int64_t free = get(r, &reservation::free);
        const std::int64_t total = get(r, &reservation::total);
        const std::int64_t price = get(r, &reservation::price);
        if (used < 0 || free < 0 || total < 0 || used + free != total || price < 0) {
            impossible("record " + std::to_string(get(r, &reservation::id)) +
                       " inconsistent inside a transaction");
        }
    }

    item_node* first_item(item_list* items) { return get(&items->head, &item_node::next); }

    /// The list's sorted insert without duplicates (STAMP's TMlist_insert).
    bool insert_item(item_list* items, reservation_item* item) {
        item_node* previous = &items->head;
        item_node* n = get(previous, &item_node::next);
        for (; n != nullptr; previous = n, n = get(n, &item_node::next)) {
            const reservation_item& there = *n->item;  // written before it was published
            if (!before(there, *item)) {
                if (!before(*item, there)) return false;
                break;
            }
        }
        auto* added = tx_.make<item_node>(item, n);
        if (previous == &items->head) {
            tx_.store(&previous->next, added, {items, sizeof(item_list)});
        } else {
            set(previous, &item_node::next, added);
        }
        tx_.store(&items->size, tx_.load(&items->size) + 1, {items, sizeof(item_list)});
        return true;
    }

    vacation_manager& m_;
};

template <class Domain>
vacation_manager<Domain>::vacation_manager(Domain& domain, const smr::stm::stm_config& config)
    : stm_(domain, config) {
    try {
        for (tree*& table : tables_) table = ::new (checked_malloc(sizeof(tree))) tree{};
        customers_ = ::new (checked_malloc(sizeof(tree))) tree{};
    } catch (...) {
        free_all();
        throw;
    }
}

template <class Domain>
vacation_manager<Domain>::~vacation_manager() {
    free_all();
}

template <class Domain>
void vacation_manager<Domain>::free_all() noexcept {
    for (tree* table : tables_) {
        if (table == nullptr) continue;
        smr::ds::for_each_stm_rb_node(
            table->root, [](const stm_rb_node& n) { std::free(as_pointer<reservation>(n.value)); });
        smr::ds::free_stm_rb_tree(table->root);
        std::free(table);
    }
    if (customers_ == nullptr) return;
    smr::ds::for_each_stm_rb_node(customers_->root, [](const stm_rb_node& n) {
        auto* c = as_pointer<customer>(n.value);
        for (item_node* i = c->items->head.next; i != nullptr;) {
            item_node* next = i->next;
            std::free(i->item);
            std::free(i);
            i = next;
        }
        std::free(c->items);
        std::free(c);
    });
    smr::ds::free_stm_rb_tree(customers_->root);
    std::free(customers_);
}

template <class Domain>
std::vector<std::vector<initial_record>> vacation_manager<Domain>::populate(
    smr::context_ref<Domain> self, long relations) {
    std::mt19937 g(0);
    std::vector<std::int64_t> ids(static_cast<std::size_t>(relations));
    for (std::size_t i = 0; i != ids.size(); ++i) ids[i] = static_cast<std::int64_t>(i) + 1;
    std::vector<std::vector<initial_record>> initial(
        reservation_kinds, std::vector<initial_record>(ids.size() + 1, initial_record{0, 0}));
    for (int table = 0; table != reservation_kinds + 1; ++table) {  // car, flight, room, customer
        for (long i = 0; i != relations; ++i) {  // the shuffle goes on from the last table's
            const auto x = static_cast<std::size_t>(draw(g, relations));
            const auto y = static_cast<std::size_t>(draw(g, relations));
            std::swap(ids[x], ids[y]);
        }
        for (const std::int64_t id : ids) {
            const std::int64_t places = (draw(g, 5) + 1) * 100;
            const std::int64_t price = draw_price(g);  // drawn for customers too, as STAMP
            stm_.atomically(self, [&](transaction& tx) {
                tx_view view{*this, tx};
                if (table == reservation_kinds) return view.add_customer(id);
                return view.add_places(table, id, places, price);
            });
            if (table != reservation_kinds) {
                initial[static_cast<std::size_t>(table)][static_cast<std::size_t>(id)] = {places,
                                                                                          price};
            }
        }
    }
    stm_.flush(self);
    return initial;
}

template <class Domain>
std::array<std::int64_t, 3> vacation_manager<Domain>::run_client(smr::context_ref<Domain> self,
                                                                 long client,
                                                                 const vacation_params& params,
                                                                 long tasks,
                                                                 const std::atomic<bool>& stop) {
    std::array<std::int64_t, reservation_kinds> added{};
    std::mt19937 g(static_cast<std::uint32_t>(client));
    const long range = params.query_range();
    const auto most = static_cast<std::size_t>(params.queries);
    std::vector<std::int64_t> kinds(most), ids(most), adds(most), prices(most);
    for (long task = 0; task != tasks && !stop.load(std::memory_order_relaxed); ++task) {
        const std::int64_t action = draw(g, 100);
        if (action < params.percent_user) {
            const auto queries = static_cast<std::size_t>(draw(g, params.queries) + 1);
            const std::int64_t customer_id = draw(g, range) + 1;
            for (std::size_t i = 0; i != queries; ++i) {
                kinds[i] = draw(g, reservation_kinds);
                ids[i] = draw(g, range) + 1;
            }
            stm_.atomically(self, [&](transaction& tx) {
                tx_view view{*this, tx};
                std::array<std::int64_t, reservation_kinds> dearest{-1, -1, -1};
                std::array<std::int64_t, reservation_kinds> chosen{-1, -1, -1};
                bool found = false;
                for (std::size_t i = 0; i != queries; ++i) {
                    const auto kind = static_cast<std::size_t>(kinds[i]);
                    if (view.query_free(kinds[i], ids[i]) < 0) continue;
                    const std::int64_t price = view.query_price(kinds[i], ids[i]);
                    if (price > dearest[kind]) {
                        dearest[kind] = price;
                        chosen[kind] = ids[i];
                        found = true;
                    }
                }
                if (found) view.add_customer(customer_id);
                for (std::int64_t kind = 0; kind != reservation_kinds; ++kind) {
                    const std::int64_t id = chosen[static_cast<std::size_t>(kind)];
                    if (id > 0) view.reserve(kind, customer_id, id);
                }
            });
        } else if ((action & 1) != 0) {
            const std::int64_t customer_id = draw(g, range) + 1;
            stm_.atomically(self, [&](transaction& tx) {
                tx_view view{*this, tx};
                if (view.bill(customer_id) >= 0) view.delete_customer(customer_id);
            });
        } else {
            const auto updates = static_cast<std::size_t>(draw(g, params.queries) + 1);
            for (std::size_t i = 0; i != updates; ++i) {
                kinds[i] = draw(g, reservation_kinds);
                ids[i] = draw(g, range) + 1;
                adds[i] = draw(g, 2);
                prices[i] = adds[i] != 0 ? draw_price(g) : -1;
            }
            const auto change = stm_.atomically(self, [&](transaction& tx) {
                tx_view view{*this, tx};
                std::array<std::int64_t, reservation_kinds> places{};  // this attempt's
                for (std::size_t i = 0; i != updates; ++i) {
                    const auto kind = static_cast<std::size_t>(kinds[i]);
                    if (adds[i] != 0) {
                        if (view.add_places(kinds[i], ids[i], 100, prices[i])) places[kind] += 100;
                    } else if (kinds[i] == flight) {
                        places[kind] -= view.delete_flight(ids[i]);
                    } else if (view.add_places(kinds[i], ids[i], -100, -1)) {
                        places[kind] -= 100;
                    }
                }
                return places;
            });
            for (std::size_t kind = 0; kind != added.size(); ++kind) added[kind] += change[kind];
        }
    }
    stm_.flush(self);
    return added;
}

template <class Domain>
validation_result vacation_manager<Domain>::validate(
    const vacation_params& params, const std::vector<std::vector<initial_record>>& initial,
    const std::array<std::int64_t, 3>& added) const {
    validation_result result;
    const auto ids = static_cast<std::size_t>(params.relations) + 1;
    for (const tree* table : tables_) smr::ds::check_stm_rb_tree(table->root, result);
    smr::ds::check_stm_rb_tree(customers_->root, result);
    if (!result.ok) return result;

    // Places each customer holds, per (kind, id).
    std::vector<std::vector<std::int64_t>> held(reservation_kinds,
                                                std::vector<std::int64_t>(ids, 0));
    std::vector<bool> customer_present(ids, false);
    smr::ds::for_each_stm_rb_node(customers_->root, [&](const stm_rb_node& n) {
        const auto* c = as_pointer<const customer>(n.value);
        const std::string who = "customer " + std::to_string(n.key);
        if (n.key < 1 || n.key > params.relations) return result.fail(who + ": id out of range");
        if (c->id != n.key) return result.fail(who + ": record says " + std::to_string(c->id));
        customer_present[static_cast<std::size_t>(n.key)] = true;
        std::int64_t length = 0;
        const reservation_item* previous = nullptr;
        for (const item_node* i = c->items->head.next; i != nullptr; i = i->next, ++length) {
            const reservation_item& item = *i->item;
            if (item.kind < 0 || item.kind >= reservation_kinds || item.id < 1 ||
                item.id > params.relations || !valid_price(item.price)) {
                return result.fail(who + ": an item out of range");
            }
            if (previous != nullptr && !before(*previous, item)) {
                return result.fail(who + ": items not strictly sorted");
            }
            previous = &item;
            ++held[static_cast<std::size_t>(item.kind)][static_cast<std::size_t>(item.id)];
        }
        if (length != c->items->size) {
            result.fail(who + ": list size " + std::to_string(c->items->size) + ", holds " +
                        std::to_string(length));
        }
        if (n.key > params.query_range() && length != 0) {
            result.fail(who + ": never queried, yet holds items");
        }
    });

    static constexpr std::array<const char*, reservation_kinds> kind_names{"car", "flight", "room"};
    const long untouched_from = params.query_range() + 1;
    for (std::size_t kind = 0; kind != reservation_kinds; ++kind) {
        std::vector<bool> present(ids, false);
        std::int64_t places = 0;
        smr::ds::for_each_stm_rb_node(tables_[kind]->root, [&](const stm_rb_node& n) {
            const auto* r = as_pointer<const reservation>(n.value);
            const std::string what =
                std::string(kind_names[kind]) + " " + std::to_string(n.key) + ": ";
            if (n.key < 1 || n.key > params.relations) return result.fail(what + "id out of range");
            if (r->id != n.key) return result.fail(what + "record says " + std::to_string(r->id));
            if (r->used < 0 || r->free < 0 || r->used + r->free != r->total) {
                return result.fail(what + "used + free != total");
            }
            if (r->total <= 0 || r->total % 100 != 0)
                return result.fail(what + "total not k x 100");
            if (!valid_price(r->price)) return result.fail(what + "price out of range");
            const auto id = static_cast<std::size_t>(n.key);
            if (r->used != held[kind][id]) {
                return result.fail(what + std::to_string(r->used) + " used, customers hold " +
                                   std::to_string(held[kind][id]));
            }
            const initial_record& first = initial[kind][id];
            if (n.key >= untouched_from &&
                (r->used != 0 || r->total != first.places || r->price != first.price)) {
                return result.fail(what + "never queried, yet changed");
            }
            present[id] = true;
            places += r->total;
        });
        // The balance: every committed update's places, none lost or twice.
        std::int64_t expected = added[kind];
        for (const initial_record& first : initial[kind]) expected += first.places;
        if (places != expected) {
            result.fail(std::string(kind_names[kind]) + "s hold " + std::to_string(places) +
                        " places, the initialization and the updates made " +
                        std::to_string(expected));
        }
        for (std::size_t id = 1; id != ids; ++id) {
            const std::string what =
                std::string(kind_names[kind]) + " " + std::to_string(id) + ": ";
            if (!present[id] && held[kind][id] != 0) result.fail(what + "held without a record");
            if (!present[id] && static_cast<long>(id) >= untouched_from) {
                result.fail(what + "never queried, yet removed");
            }
        }
    }
    for (auto id = static_cast<std::size_t>(untouched_from); id < ids; ++id) {
        if (!customer_present[id])
            result.fail("customer " + std::to_string(id) + ": never queried, yet removed");
    }
    if (const std::size_t locked = stm_.orecs().locked_entries(); locked != 0) {
        result.fail(std::to_string(locked) + " versioned locks still held");
    }
    return result;
}

template class vacation_manager<smr::debra_domain>;

void vacation_params::check(long clients) const {
    const auto refuse = [](const std::string& what) {
        throw std::invalid_argument("vacation: " + what);
    };
    if (clients < 1) refuse("clients (-c) must be at least 1");
    if (queries < 1) refuse("queries per task (-n) must be at least 1");
    if (relations < 1 || relations > (1L << 30)) refuse("relations (-r) must be in [1, 2^30]");
    if (percent_queried < 0 || percent_queried > 100 || query_range() < 1) {
        refuse("the queried share (-q) must be in [0, 100] and query at least one relation");
    }
    if (percent_user < 0 || percent_user > 100) refuse("the user share (-u) must be in [0, 100]");
    if (tasks < 0) refuse("tasks (-t) must not be negative");
}

vacation_run run_vacation(const vacation_params& params, int clients,
                          const smr::stm::stm_config& stm_config) {
    params.check(clients);
    smr::domain_config domain_config;
    domain_config.max_threads = static_cast<std::size_t>(clients) + 1;  // and the initializer
    smr::debra_domain domain(domain_config);
    vacation_manager<smr::debra_domain> manager(domain, stm_config);
    std::vector<std::vector<initial_record>> initial;
    {
        const smr::context<smr::debra_domain> self(domain);
        initial = manager.populate(self, params.relations);
    }
    auto& stm = manager.transactional_memory();
    const smr::stm::stm_stats before = stm.stats();

    std::vector<std::array<std::int64_t, reservation_kinds>> added(
        static_cast<std::size_t>(clients));
    const long tasks = params.tasks_per_client(clients);
    const client_phase phase = run_clients(
        domain, stm, clients,
        [&](smr::context_ref<smr::debra_domain> self, int client, const std::atomic<bool>& stop) {
            added[static_cast<std::size_t>(client)] =
                manager.run_client(self, client, params, tasks, stop);
        });
    vacation_run run;
    run.seconds = phase.seconds;
    run.stm = stm.stats() - before;
    run.tasks = static_cast<long>(run.stm.commits);
    run.validation = phase.validation();
    if (!run.validation.ok) return run;
    std::array<std::int64_t, reservation_kinds> total{};
    for (const auto& client : added) {
        for (std::size_t kind = 0; kind != total.size(); ++kind) total[kind] += client[kind];
    }
    run.validation = manager.validate(params, initial, total);
    return run;
}

}  // namespace smrbench::stamp
