// Single-threaded tests of every set data structure under the leak and DEBRA
// domains: a long random run against std::set, edge cases, and the counts of
// nodes allocated and retired per operation.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ds_variants.hpp"
#include "smr/ds/abtree.hpp"
#include "smr/ds/cr_hash_set.hpp"
#include "smr/ds/cr_list.hpp"
#include "smr/ds/dgt_bst.hpp"
#include "smr/ds/harris_list.hpp"
#include "smr/ds/hash_set.hpp"
#include "smr/ds/hm_list.hpp"
#include "smr/ds/lazylist.hpp"
#include "smr/ds/list_validation.hpp"
#include "smr/ds/lock_list.hpp"
#include "smr/ds/ms_queue.hpp"
#include "smr/ds/occ_avl.hpp"
#include "smr/ds/stm_hash_set.hpp"
#include "smr/ds/stm_list.hpp"
#include "smr/ds/stm_rbtree.hpp"
#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/hp.hpp"
#include "smr/reclaim/lfrc.hpp"
#include "smr/reclaim/nbr.hpp"
#include "smr/reclaim/none.hpp"
#include "smr/reclaim/qsbr.hpp"

namespace {

using key_t = std::int64_t;

/// Everything a single-threaded history must keep: validate(), plus exact
/// heights and balance where a structure checks those apart (the OCC AVL
/// tree, whose concurrent histories may leave stale balance hints).
template <class S>
smr::ds::validation_result full_validate(const S& s) {
    if constexpr (requires { s.validate_balance(); }) {
        return s.validate_balance();
    } else {
        return s.validate();
    }
}

/// What each structure allocates per successful insert and retires per
/// successful erase, and how many distinct keys a long run may keep in it
/// (the list is linear: a large range spreads few keys far apart).
template <class DS>
struct ds_facts;

/// A list's operation walks half the list: 100,000 random operations (not
/// the default 200,000) still insert and erase each key of 2,048 about
/// twelve times and of the 4,096-key pool about six, and halve the lists'
/// share of the ASan stage (38 test-seconds of random runs).
inline constexpr int list_random_ops = 100000;

template <class Domain>
struct ds_facts<smr::ds::lazylist<Domain>> {
    static constexpr std::uint64_t allocated_per_insert = 1;
    static constexpr std::uint64_t retired_per_erase = 1;
    static constexpr std::uint64_t large_range_keys = 4096;
    static constexpr int random_ops = list_random_ops;
};

template <class Domain>
struct ds_facts<smr::ds::dgt_bst<Domain>> {
    static constexpr std::uint64_t allocated_per_insert = 2;
    static constexpr std::uint64_t retired_per_erase = 2;
    static constexpr std::uint64_t large_range_keys = 0;  // any key of the allowed range
};

template <class Domain>
struct ds_facts<smr::ds::harris_list<Domain>> {
    static constexpr std::uint64_t allocated_per_insert = 1;
    static constexpr std::uint64_t retired_per_erase = 1;
    static constexpr std::uint64_t large_range_keys = 4096;
    static constexpr int random_ops = list_random_ops;
};

template <class Domain>
struct ds_facts<smr::ds::hm_list<Domain>> {
    static constexpr std::uint64_t allocated_per_insert = 1;
    static constexpr std::uint64_t retired_per_erase = 1;
    static constexpr std::uint64_t large_range_keys = 4096;
    static constexpr int random_ops = list_random_ops;
};

using smr::test::hm_list_restarting;

template <class Domain>
struct ds_facts<hm_list_restarting<Domain>> : ds_facts<smr::ds::hm_list<Domain>> {};

/// The default table (1024 buckets) keeps buckets short even with keys
/// spread over the whole range.
template <class Domain>
struct ds_facts<smr::ds::hash_set<Domain>> {
    static constexpr std::uint64_t allocated_per_insert = 1;
    static constexpr std::uint64_t retired_per_erase = 1;
    static constexpr std::uint64_t large_range_keys = 0;
};

using smr::test::hash_set_3_buckets;

template <class Domain>
struct ds_facts<hash_set_3_buckets<Domain>> : ds_facts<smr::ds::hm_list<Domain>> {};

template <class Domain>
struct ds_facts<smr::ds::cr_list<Domain>> : ds_facts<smr::ds::hm_list<Domain>> {};

template <class Domain>
struct ds_facts<smr::ds::cr_hash_set<Domain>> : ds_facts<smr::ds::hash_set<Domain>> {};

using smr::test::cr_hash_set_4_buckets;

template <class Domain>
struct ds_facts<cr_hash_set_4_buckets<Domain>> : ds_facts<smr::ds::hm_list<Domain>> {};

/// The lock-based list frees what it erases at once, under any domain.
template <class Domain>
struct ds_facts<smr::ds::lock_list<Domain>> : ds_facts<smr::ds::hm_list<Domain>> {
    static constexpr bool frees_at_once = true;
};

/// The transactional list's nodes are the STM's plain malloc blocks: the
/// domain sees only the pointer blocks that carry erased nodes to it.
template <class Domain>
struct ds_facts<smr::ds::stm_list<Domain>> {
    static constexpr bool transactional = true;
    /// Every node visited costs two transactional loads: a list of 512 keys
    /// keeps the run to seconds under a sanitizer.
    static constexpr std::uint64_t large_range_keys = 512;
    /// For the same reason a quarter of the random operations: on 2,048
    /// keys 50,000 still insert and erase each key about six times (with
    /// 200,000, one test took 14 s under ASan, and the transactional lists'
    /// tests a third of the suite's time).
    static constexpr int random_ops = 50000;
};

template <class Domain>
struct ds_facts<smr::ds::stm_hash_set<Domain>> : ds_facts<smr::ds::stm_list<Domain>> {};

/// The tree takes any key of the range, and each erase frees one node (a
/// node with two children takes its successor's key; the successor goes).
template <class Domain>
struct ds_facts<smr::ds::stm_rbtree<Domain>> {
    static constexpr bool transactional = true;
    static constexpr std::uint64_t large_range_keys = 0;
};

using smr::test::stm_hash_set_4_buckets;

template <class Domain>
struct ds_facts<stm_hash_set_4_buckets<Domain>> : ds_facts<smr::ds::stm_list<Domain>> {};

/// The (a,b)-tree copies a leaf on every update and rebalances: an insert
/// or erase allocates one node (three on a split, more when it rebalances)
/// and retires what it replaced, so the counts are checked as bounds.
template <class Domain>
struct ds_facts<smr::ds::abtree<Domain>> {
    static constexpr bool copy_on_write = true;
    static constexpr std::uint64_t allocated_per_insert = 1;  // at least
    static constexpr std::uint64_t retired_per_erase = 1;     // at least
    static constexpr std::uint64_t large_range_keys = 0;
};

/// The OCC AVL tree is partially external: erasing a node with two children
/// keeps it as a routing node (nothing retired), inserting its key again
/// revives it (nothing allocated), and repairs splice out routing nodes
/// (retired by whichever operation's repair does it), so only bounds hold
/// per operation.
template <class Domain>
struct ds_facts<smr::ds::occ_avl<Domain>> {
    static constexpr bool partially_external = true;
    static constexpr std::uint64_t allocated_per_insert = 1;  // at most
    static constexpr std::uint64_t retired_per_erase = 0;     // at least
    static constexpr std::uint64_t large_range_keys = 0;
};

template <class DS>
class DsSequential : public ::testing::Test {
  protected:
    using domain_type = typename DS::domain_type;

    domain_type domain{smr::domain_config{}};
    DS set{domain};
    smr::context<domain_type> self{domain};

    /// validate() must hold and agree with the model.
    void expect_matches(const std::set<key_t>& model, const std::string& where) {
        const smr::ds::validation_result v = full_validate(set);
        ASSERT_TRUE(v.ok) << where << ": " << v.error;
        std::uint64_t sum = 0;
        for (key_t k : model) sum += static_cast<std::uint64_t>(k);
        EXPECT_EQ(v.key_sum, static_cast<std::int64_t>(sum)) << where;
        EXPECT_EQ(v.size, model.size()) << where;
    }

    /// `ops` random operations (40% insert, 40% erase, 20% contains) on keys
    /// from `draw`, each result checked against std::set.
    template <class Draw>
    void random_run(std::uint64_t seed, int ops, Draw&& draw) {
        std::mt19937_64 rng(seed);
        std::set<key_t> model;
        for (int i = 0; i < ops; ++i) {
            const key_t key = draw(rng);
            const auto dice = rng() % 100;
            if (dice < 40) {
                const bool expected = model.insert(key).second;
                ASSERT_EQ(set.insert(self, key, key), expected) << "insert " << key << " op " << i;
            } else if (dice < 80) {
                const bool expected = model.erase(key) == 1;
                ASSERT_EQ(set.erase(self, key), expected) << "erase " << key << " op " << i;
            } else {
                const bool expected = model.count(key) == 1;
                ASSERT_EQ(set.contains(self, key), expected) << "contains " << key << " op " << i;
            }
            if ((i + 1) % 20000 == 0) {
                expect_matches(model, "op " + std::to_string(i));
                if (HasFatalFailure()) return;
            }
        }
        expect_matches(model, "end");
        // Empty it again through erase: every node goes through retire.
        for (key_t k : model) ASSERT_TRUE(set.erase(self, k)) << k;
        expect_matches({}, "emptied");
    }
};

using structures =
    ::testing::Types<smr::ds::lazylist<smr::leak_domain>, smr::ds::lazylist<smr::debra_domain>,
                     smr::ds::dgt_bst<smr::leak_domain>, smr::ds::dgt_bst<smr::debra_domain>,
                     smr::ds::harris_list<smr::leak_domain>,
                     smr::ds::harris_list<smr::debra_domain>, smr::ds::hm_list<smr::leak_domain>,
                     smr::ds::hm_list<smr::debra_domain>, smr::ds::hm_list<smr::lfrc_domain>,
                     hm_list_restarting<smr::debra_domain>, smr::ds::hash_set<smr::leak_domain>,
                     smr::ds::hash_set<smr::debra_domain>, smr::ds::hash_set<smr::lfrc_domain>,
                     hash_set_3_buckets<smr::debra_domain>, smr::ds::abtree<smr::leak_domain>,
                     smr::ds::abtree<smr::debra_domain>, smr::ds::occ_avl<smr::leak_domain>,
                     smr::ds::occ_avl<smr::debra_domain>, smr::ds::cr_list<smr::leak_domain>,
                     smr::ds::cr_list<smr::debra_domain>, smr::ds::cr_list<smr::hp_domain>,
                     smr::ds::cr_hash_set<smr::debra_domain>, smr::ds::cr_hash_set<smr::hp_domain>,
                     cr_hash_set_4_buckets<smr::qsbr_domain>, smr::ds::lock_list<smr::leak_domain>,
                     smr::ds::lock_list<smr::debra_domain>, smr::ds::stm_list<smr::leak_domain>,
                     smr::ds::stm_list<smr::debra_domain>, smr::ds::stm_hash_set<smr::leak_domain>,
                     smr::ds::stm_hash_set<smr::debra_domain>,
                     stm_hash_set_4_buckets<smr::qsbr_domain>,
                     smr::ds::stm_rbtree<smr::leak_domain>, smr::ds::stm_rbtree<smr::debra_domain>>;

struct structure_names {
    template <class DS>
    static std::string GetName(int) {
        return std::string(DS::name) + "_" + std::string(DS::domain_type::traits.name);
    }
};

TYPED_TEST_SUITE(DsSequential, structures, structure_names);

/// The operations of each random run: 200,000, or what the structure's
/// facts say.
template <class DS>
constexpr int random_ops() {
    if constexpr (requires { ds_facts<DS>::random_ops; }) {
        return ds_facts<DS>::random_ops;
    } else {
        return 200000;
    }
}

TYPED_TEST(DsSequential, RandomSmallRange) {
    this->random_run(1, random_ops<TypeParam>(),
                     [](std::mt19937_64& rng) { return key_t(rng() % 64); });
}

TYPED_TEST(DsSequential, RandomMediumRange) {
    this->random_run(2, random_ops<TypeParam>(),
                     [](std::mt19937_64& rng) { return key_t(rng() % 2048); });
}

TYPED_TEST(DsSequential, RandomLargeRange) {
    using facts = ds_facts<TypeParam>;
    constexpr key_t lo = TypeParam::min_key;
    constexpr key_t hi = TypeParam::max_key;
    if constexpr (facts::large_range_keys == 0) {
        // Keys anywhere in the allowed range, extremes included.
        this->random_run(3, random_ops<TypeParam>(), [](std::mt19937_64& rng) {
            const auto r = rng();
            if (r % 1000 == 0) return lo;
            if (r % 1000 == 1) return hi;
            return std::uniform_int_distribution<key_t>(lo, hi)(rng);
        });
    } else {
        // A fixed pool of keys spread over the whole range, extremes included.
        std::mt19937_64 pool_rng(33);
        std::vector<key_t> pool{lo, hi};
        while (pool.size() < facts::large_range_keys) {
            pool.push_back(std::uniform_int_distribution<key_t>(lo, hi)(pool_rng));
        }
        this->random_run(3, random_ops<TypeParam>(),
                         [&pool](std::mt19937_64& rng) { return pool[rng() % pool.size()]; });
    }
}

TYPED_TEST(DsSequential, Empty) {
    auto& set = this->set;
    auto& self = this->self;
    this->expect_matches({}, "fresh");
    for (key_t k : {TypeParam::min_key, key_t(-1), key_t(0), key_t(1), TypeParam::max_key}) {
        EXPECT_FALSE(set.contains(self, k)) << k;
        EXPECT_FALSE(set.erase(self, k)) << k;
    }
    this->expect_matches({}, "after misses");
    EXPECT_EQ(this->domain.stats().allocated, 0u);
    EXPECT_EQ(this->domain.stats().retired, 0u);
}

TYPED_TEST(DsSequential, MinAndMaxKeys) {
    auto& set = this->set;
    auto& self = this->self;
    constexpr key_t lo = TypeParam::min_key;
    constexpr key_t hi = TypeParam::max_key;
    static_assert(lo == std::numeric_limits<key_t>::min() + 1);
    static_assert(hi == std::numeric_limits<key_t>::max() - 1);

    EXPECT_TRUE(set.insert(self, hi, 2));
    EXPECT_TRUE(set.insert(self, lo, 1));
    EXPECT_TRUE(set.insert(self, 0, 0));
    EXPECT_TRUE(set.contains(self, lo));
    EXPECT_TRUE(set.contains(self, hi));
    EXPECT_FALSE(set.contains(self, lo + 1));
    EXPECT_FALSE(set.contains(self, hi - 1));
    EXPECT_FALSE(set.insert(self, lo, 3));
    EXPECT_FALSE(set.insert(self, hi, 3));
    this->expect_matches({lo, 0, hi}, "three keys");  // key sum wraps to -1
    EXPECT_EQ(set.size(), 3u);

    EXPECT_TRUE(set.erase(self, lo));
    EXPECT_FALSE(set.contains(self, lo));
    EXPECT_TRUE(set.contains(self, hi));
    this->expect_matches({0, hi}, "min erased");
    EXPECT_TRUE(set.erase(self, hi));
    EXPECT_FALSE(set.erase(self, hi));
    EXPECT_TRUE(set.erase(self, 0));
    this->expect_matches({}, "all erased");
    EXPECT_EQ(set.size(), 0u);
}

// The lowest and highest keys belong to the sentinels: every build refuses
// them (ds/key_range.hpp). Before, an empty hm_list said it contained the
// highest key, and erasing it retired the list's own tail.
TYPED_TEST(DsSequential, KeysOutsideTheRangeStopTheProgram) {
    auto& set = this->set;
    auto& self = this->self;
    constexpr key_t below = std::numeric_limits<key_t>::min();
    constexpr key_t above = std::numeric_limits<key_t>::max();
    GTEST_FLAG_SET(death_test_style, "fast");  // one thread: fork is enough
    const char* message = "outside the structure's range";
    EXPECT_DEATH(set.insert(self, below, 0), message);
    EXPECT_DEATH(set.erase(self, above), message);
    EXPECT_DEATH(set.contains(self, above), message);
    this->expect_matches({}, "untouched");
}

TYPED_TEST(DsSequential, DuplicateInsert) {
    auto& set = this->set;
    auto& self = this->self;
    EXPECT_TRUE(set.insert(self, 7, 70));
    EXPECT_FALSE(set.insert(self, 7, 71));
    EXPECT_FALSE(set.insert(self, 7, 70));
    EXPECT_TRUE(set.contains(self, 7));
    this->expect_matches({7}, "duplicate");
    EXPECT_TRUE(set.erase(self, 7));
    EXPECT_TRUE(set.insert(self, 7, 72));  // a new node after the erase
    this->expect_matches({7}, "reinserted");
    // A failed insert allocates nothing (it returns after the traversal).
    EXPECT_EQ(this->domain.stats().discarded, 0u);
}

TYPED_TEST(DsSequential, EraseMissing) {
    auto& set = this->set;
    auto& self = this->self;
    EXPECT_FALSE(set.erase(self, 5));
    for (key_t k : {10, 20, 30}) ASSERT_TRUE(set.insert(self, k, k));
    for (key_t k : {5, 15, 25, 35, -10}) EXPECT_FALSE(set.erase(self, k)) << k;
    EXPECT_TRUE(set.erase(self, 20));
    EXPECT_FALSE(set.erase(self, 20));
    this->expect_matches({10, 30}, "after erases");
}

TYPED_TEST(DsSequential, SortedInsertions) {
    // Ascending and descending keys: the list's worst case walks, the BST's
    // degenerate (linear-depth) shapes; validate() and the destructor must
    // cope with deep trees.
    auto& set = this->set;
    auto& self = this->self;
    constexpr key_t n = 3000;
    std::set<key_t> model;
    for (key_t k = 0; k < n; ++k) {
        ASSERT_TRUE(set.insert(self, k, k));
        model.insert(k);
    }
    for (key_t k = -1; k >= -n; --k) {
        ASSERT_TRUE(set.insert(self, k, k));
        model.insert(k);
    }
    this->expect_matches(model, "sorted inserts");
    for (key_t k = 0; k < n; k += 2) {
        ASSERT_TRUE(set.erase(self, k));
        model.erase(k);
    }
    this->expect_matches(model, "every other erased");
    for (key_t k = -n; k < n; ++k) ASSERT_EQ(set.contains(self, k), model.count(k) == 1) << k;
    // The rest is freed by the destructor (LeakSanitizer checks it).
}

TYPED_TEST(DsSequential, NodesAllocatedAndRetired) {
    using facts = ds_facts<TypeParam>;
    auto& set = this->set;
    auto& domain = this->domain;
    auto& self = this->self;

    if constexpr (requires { facts::copy_on_write; }) {
        // Copy-on-write: every successful update allocates and retires at
        // least one node; a failed one touches none.
        for (key_t k = 0; k < 3000; ++k) {
            const auto before = domain.stats();
            const bool inserted = set.insert(self, (k * 7919) % 1000, k);
            const auto after = domain.stats();
            ASSERT_EQ(after.allocated > before.allocated, inserted) << k;
            ASSERT_EQ(after.retired > before.retired || !inserted || k == 0, true) << k;
            const auto before_erase = domain.stats();
            const bool erased = set.erase(self, (k * 104729) % 1000);
            const auto after_erase = domain.stats();
            ASSERT_EQ(after_erase.retired > before_erase.retired, erased) << k;
            ASSERT_EQ(after_erase.allocated > before_erase.allocated, erased) << k;
        }
        EXPECT_EQ(domain.stats().discarded, 0u);
        return;
    }

    if constexpr (requires { facts::transactional; }) {
        // Inserts allocate nothing from the domain; erased nodes travel in
        // pointer blocks, one retired per `per_block` erases, the last partly
        // filled one at flush. Every operation is one committed transaction.
        constexpr std::uint64_t per_block =
            smr::stm::stm<typename TypeParam::domain_type>::pointers_per_block;
        constexpr std::uint64_t n = 2 * per_block + per_block / 2;
        for (key_t k = 0; k < key_t(n); ++k) ASSERT_TRUE(set.insert(self, k, k));
        EXPECT_EQ(domain.stats().allocated, 0u);
        for (key_t k = 0; k < key_t(n); ++k) ASSERT_TRUE(set.erase(self, k));
        EXPECT_EQ(domain.stats().allocated, 3u);
        EXPECT_EQ(domain.stats().retired, 2u);
        set.flush(self);
        EXPECT_EQ(domain.stats().retired, 3u);
        EXPECT_EQ(domain.stats().discarded, 0u);
        EXPECT_EQ(set.stm_stats().commits, 2 * n);
        EXPECT_EQ(set.stm_stats().aborts, 0u);
        this->expect_matches({}, "all erased");
        return;
    }

    if constexpr (requires { facts::partially_external; }) {
        // A failed update allocates and retires nothing; a successful insert
        // allocates at most one node, a successful erase none; once the tree
        // is empty again, every node allocated has been retired exactly once.
        std::set<key_t> model;
        for (key_t k = 0; k < 3000; ++k) {
            const key_t ins = (k * 7919) % 1000;
            const auto before = domain.stats();
            const bool inserted = set.insert(self, ins, k);
            const auto after = domain.stats();
            ASSERT_EQ(inserted, model.insert(ins).second) << k;
            ASSERT_LE(after.allocated - before.allocated, inserted ? 1u : 0u) << k;
            if (!inserted) {
                ASSERT_EQ(after.retired, before.retired) << k;
            }
            const key_t del = (k * 104729) % 1000;
            const auto before_erase = domain.stats();
            const bool erased = set.erase(self, del);
            const auto after_erase = domain.stats();
            ASSERT_EQ(erased, model.erase(del) == 1) << k;
            ASSERT_EQ(after_erase.allocated, before_erase.allocated) << k;
            if (!erased) {
                ASSERT_EQ(after_erase.retired, before_erase.retired) << k;
            }
        }
        this->expect_matches(model, "after updates");
        for (key_t k : model) ASSERT_TRUE(set.erase(self, k)) << k;
        this->expect_matches({}, "all erased");
        EXPECT_EQ(domain.stats().retired, domain.stats().allocated);
        EXPECT_EQ(domain.stats().discarded, 0u);
        return;
    }

    if constexpr (!requires { facts::transactional; }) {  // one node per key
        constexpr std::uint64_t n = 100;
        for (key_t k = 0; k < key_t(n); ++k) ASSERT_TRUE(set.insert(self, k * 3, k));
        EXPECT_EQ(domain.stats().allocated, n * facts::allocated_per_insert);
        for (key_t k = 0; k < key_t(n); ++k) ASSERT_FALSE(set.insert(self, k * 3, k));
        EXPECT_EQ(domain.stats().allocated, n * facts::allocated_per_insert);
        EXPECT_EQ(domain.stats().retired, 0u);

        std::uint64_t erased = 0;
        for (key_t k = 0; k < key_t(3 * n); ++k) {  // 2 of every 3 keys are missing
            const std::uint64_t before = domain.stats().retired;
            const bool hit = set.erase(self, k);
            ASSERT_EQ(hit, k % 3 == 0) << k;
            erased += hit ? 1 : 0;
            ASSERT_EQ(domain.stats().retired - before, hit ? facts::retired_per_erase : 0) << k;
        }
        EXPECT_EQ(erased, n);
        const smr::reclaimer_stats stats = domain.stats();
        EXPECT_EQ(stats.retired, n * facts::retired_per_erase);
        EXPECT_EQ(stats.discarded, 0u);
        EXPECT_LE(stats.freed, stats.retired);
        if constexpr (requires { facts::frees_at_once; }) {
            EXPECT_EQ(stats.freed, stats.retired);
            EXPECT_EQ(stats.garbage, 0u);
        } else if constexpr (std::is_same_v<typename TypeParam::domain_type, smr::leak_domain>) {
            EXPECT_EQ(stats.freed, 0u);
        }
        this->expect_matches({}, "all erased");
    }
}

// ---- the sorted-list checks every list's validate() shares ------------------------

struct plain_node {
    std::int64_t key;
    const plain_node* next = nullptr;
    bool defective = false;
};

smr::ds::validation_result check_list(const plain_node& head, const plain_node& tail) {
    return smr::ds::detail::validate_sorted_list(
        head, tail, [](const plain_node* n) { return n->next; },
        [](const plain_node* n) { return std::string(n->defective ? "defective node" : ""); });
}

TEST(ListValidation, ReportsEachDefectAndSumsAValidList) {
    constexpr auto lo = std::numeric_limits<std::int64_t>::min();
    constexpr auto hi = std::numeric_limits<std::int64_t>::max();
    plain_node tail{hi}, b{7, &tail}, a{3, &b}, head{lo, &a};
    auto v = check_list(head, tail);
    ASSERT_TRUE(v.ok) << v.error;
    EXPECT_EQ(v.size, 2u);
    EXPECT_EQ(v.key_sum, 10);

    a.key = 9;  // 9 then 7
    v = check_list(head, tail);
    EXPECT_FALSE(v.ok);
    EXPECT_EQ(v.error, "keys not strictly ascending: 9 then 7");
    a.key = 3;

    b.defective = true;
    EXPECT_EQ(check_list(head, tail).error, "defective node, key 7");
    b.defective = false;

    b.next = nullptr;  // the tail is never reached
    EXPECT_EQ(check_list(head, tail).error, "list ends before the tail sentinel");
    b.next = &a;  // a cycle: stopped by the order check, not followed forever
    EXPECT_EQ(check_list(head, tail).error, "keys not strictly ascending: 7 then 3");
    b.next = &tail;

    tail.next = &a;
    EXPECT_EQ(check_list(head, tail).error, "tail sentinel has a successor");
    tail.next = nullptr;
    head.key = 0;
    EXPECT_EQ(check_list(head, tail).error, "head sentinel key changed");
}

/// debra, with a concurrent eraser in miniature: when `mark_key` is set, the
/// first traversal that reaches the node holding it marks that node's next
/// (a logical delete whose unlink has not happened yet), so the search must
/// unlink it itself: an auxiliary unlink. Counts the pointers read.
struct scripted_domain : smr::debra_domain {
    using smr::debra_domain::debra_domain;
    key_t mark_key = -1;
    int protects = 0;

    template <class T>
    T* protect(lent self, int slot, const std::atomic<T*>& source) noexcept {
        ++protects;
        T* read = smr::debra_domain::protect(self, slot, source);
        T* node = smr::ds::detail::without_mark(read);
        if (node != nullptr && node->key == mark_key) {
            mark_key = -1;
            node->next.store(smr::ds::detail::with_mark(node->next.load()));
        }
        return read;
    }
    /// Traversals protect through a reader: it must forward here, not to
    /// debra's protect.
    smr::detail::forwarding_reader<scripted_domain> reader(lent self) noexcept {
        return {*this, self};
    }
};

/// Pointers a search for `target` reads when it meets a node marked at key
/// 50 on the way (keys 0..99 in one list): about 90 when it resumes from
/// the marked node's predecessor after unlinking it, 50 more when it
/// restarts from the head. The marked key is gone afterwards.
template <class Set>
int reads_past_a_marked_node(bool restart_from_head, std::size_t buckets) {
    scripted_domain domain{smr::domain_config{}};
    Set set(domain, {.restart_from_head = restart_from_head, .buckets = buckets});
    EXPECT_EQ(set.restarts_from_head(), restart_from_head);
    smr::context self(domain);
    for (key_t k = 0; k < 100; ++k) EXPECT_TRUE(set.insert(self, k, k));
    domain.mark_key = 50;
    domain.protects = 0;
    EXPECT_TRUE(set.contains(self, 90));
    const int reads = domain.protects;
    EXPECT_EQ(domain.mark_key, -1) << "the traversal never reached key 50";
    EXPECT_FALSE(set.contains(self, 50));
    const auto v = set.validate();
    EXPECT_TRUE(v.ok) << v.error;
    EXPECT_EQ(v.size, 99u);
    return reads;
}

// hm_list resumes from the predecessor after an auxiliary unlink unless
// asked to restart from the head (the option, or a reclaimer that needs it).
TEST(HmList, RestartPolicy) {
    static_assert(!smr::debra_domain::traits.needs_restart_from_root);
    using list = smr::ds::hm_list<scripted_domain>;
    const int resuming = reads_past_a_marked_node<list>(false, 1);
    const int restarting = reads_past_a_marked_node<list>(true, 1);
    EXPECT_LT(resuming, 100);
    EXPECT_GE(restarting - resuming, 45) << resuming << " vs " << restarting;
}

/// hp, with traversals protecting through a reader that checks Michael's
/// hand-over-hand rule: a protect never takes the slot of either node the
/// traversal protected just before it (curr, whose successor it reads, and
/// prev, which the write phase's CAS and the window need).
struct hand_over_hand_domain : smr::hp_domain {
    using smr::hp_domain::hp_domain;
    int protects = 0;
    int overwrites = 0;  ///< protects into the slot of one of the last two

    class checking_reader {
      public:
        using slot_type = smr::detail::hazard_reader::slot_type;
        checking_reader(hand_over_hand_domain& domain, smr::detail::hazard_reader inner)
            : domain_(&domain), inner_(inner) {}
        checking_reader shifted(int first) const { return {*domain_, inner_.shifted(first)}; }
        slot_type slot(int index) const { return inner_.slot(index); }
        int index(slot_type slot) const { return inner_.index(slot); }
        template <class T>
        T* protect(slot_type slot, const std::atomic<T*>& source) const {
            const int taken = inner_.index(slot);
            ++domain_->protects;
            if (taken == last_[0] || taken == last_[1]) ++domain_->overwrites;
            last_[1] = last_[0];
            last_[0] = taken;
            return inner_.protect(slot, source);
        }
        template <class T>
        T* protect(int index, const std::atomic<T*>& source) const {
            return protect(slot(index), source);
        }

      private:
        hand_over_hand_domain* domain_;
        smr::detail::hazard_reader inner_;
        mutable int last_[2] = {-1, -1};
    };
    checking_reader reader(lent self) { return {*this, smr::hp_domain::reader(self)}; }
};

// hm_list's traversal keeps prev and curr protected while it protects next,
// over every phase of its three-node rounds and after resuming from prev.
TEST(HmList, HandOverHandNeverOverwritesPrevOrCurr) {
    hand_over_hand_domain domain{smr::domain_config{}};
    smr::ds::hm_list<hand_over_hand_domain> list(domain);
    smr::context self(domain);
    for (key_t k = 0; k < 40; ++k) EXPECT_TRUE(list.insert(self, 2 * k, k));
    for (key_t k = 0; k < 80; ++k) {
        EXPECT_EQ(list.contains(self, k), k % 2 == 0) << k;
        if (k % 3 == 0) {
            EXPECT_EQ(list.erase(self, k), k % 2 == 0) << k;
        }
    }
    EXPECT_GT(domain.protects, 1000);
    EXPECT_EQ(domain.overwrites, 0);
    const auto v = list.validate();
    EXPECT_TRUE(v.ok) << v.error;
}

// ---- long random runs of the trees against std::set ----------------------------

/// A long single-thread run against std::set in phases that grow, shrink and
/// churn the tree (70, 20, 45 % inserts; 10 % contains), so it gains and
/// loses levels and every rebalancing step happens; validate() and the size
/// are checked every `validate_every` operations, and the tree is emptied
/// through erase at the end.
struct long_run {
    int ops;
    int phase_length;
    key_t key_range;
    /// Key range of the second half (a small one makes the tree shrink and
    /// churn near the root); the same as key_range for none.
    key_t late_key_range;
    int validate_every;
};

template <template <class> class Tree, class Domain>
void long_random_run(Domain& domain, Tree<Domain>& tree, const long_run& run) {
    auto self = smr::attach(domain);
    std::mt19937_64 rng(42);
    std::set<key_t> model;
    for (int i = 0; i < run.ops; ++i) {
        const int phase = (i / run.phase_length) % 3;
        const key_t key = key_t(rng() % (i < run.ops / 2 ? run.key_range : run.late_key_range));
        const auto dice = rng() % 100;
        const unsigned insert_pct = phase == 0 ? 70 : phase == 1 ? 20 : 45;
        if (dice < insert_pct) {
            ASSERT_EQ(tree.insert(self, key, key), model.insert(key).second) << i;
        } else if (dice < 90) {
            ASSERT_EQ(tree.erase(self, key), model.erase(key) == 1) << i;
        } else {
            ASSERT_EQ(tree.contains(self, key), model.count(key) == 1) << i;
        }
        if ((i + 1) % run.validate_every == 0) {
            const auto v = full_validate(tree);
            ASSERT_TRUE(v.ok) << "op " << i << ": " << v.error;
            ASSERT_EQ(v.size, model.size()) << i;
        }
    }
    for (key_t k : model) ASSERT_TRUE(tree.erase(self, k)) << k;
    const auto v = full_validate(tree);
    ASSERT_TRUE(v.ok) << v.error;
    EXPECT_EQ(v.size, 0u);
}

// The (a,b)-tree over enough keys for several levels: splits, tags, absorbs
// and distributes all happen, and validate() (no tag or degree violation
// left) is checked along the way.
TEST(Abtree, LongRandomAgainstStdSet) {
    smr::debra_domain domain{smr::domain_config{}};
    smr::ds::abtree<smr::debra_domain> tree(domain);
    long_random_run(domain, tree,
                    long_run{.ops = 1000000,
                             .phase_length = 100000,
                             .key_range = 20000,
                             .late_key_range = 20000,
                             .validate_every = 50000});
}

// ---- occ_avl: routing nodes, long runs ---------------------------------------------

// Erase of a node with two children leaves a routing node (nothing retired);
// insert of its key revives it (nothing allocated); when a routing node loses
// a child, the repair splices it out and retires it.
TEST(OccAvl, RoutingNodeLifeCycle) {
    smr::debra_domain domain{smr::domain_config{}};
    smr::ds::occ_avl<smr::debra_domain> tree(domain);
    auto self = smr::attach(domain);
    for (key_t k : {2, 1, 3}) ASSERT_TRUE(tree.insert(self, k, k));  // 2 at the root
    ASSERT_EQ(domain.stats().allocated, 3u);
    ASSERT_TRUE(tree.erase(self, 2));  // two children: becomes a routing node
    EXPECT_FALSE(tree.contains(self, 2));
    EXPECT_FALSE(tree.erase(self, 2));
    EXPECT_EQ(domain.stats().retired, 0u);
    auto v = full_validate(tree);
    ASSERT_TRUE(v.ok) << v.error;
    EXPECT_EQ(v.size, 2u);
    ASSERT_TRUE(tree.insert(self, 2, 20));  // revived in place
    EXPECT_FALSE(tree.insert(self, 2, 21));
    EXPECT_TRUE(tree.contains(self, 2));
    EXPECT_EQ(domain.stats().allocated, 3u);
    ASSERT_TRUE(tree.erase(self, 2));  // routing again
    ASSERT_TRUE(tree.erase(self, 1));  // a leaf: retired; the routing root is spliced out
    EXPECT_EQ(domain.stats().retired, 2u);
    v = full_validate(tree);
    ASSERT_TRUE(v.ok) << v.error;
    EXPECT_EQ(v.size, 1u);
    EXPECT_EQ(v.key_sum, 3);
    EXPECT_TRUE(tree.contains(self, 3));
    EXPECT_EQ(domain.stats().discarded, 0u);
}

// Every protect of a search and of a repair step (rotations included) names
// a position in the block the operation's guard lends, which a scheme with
// slots checks (a position outside it stops the program). smrbench never
// builds this tree under such a scheme (reservations cannot protect its
// searches), so this is where the block's slot path is compiled and run:
// one thread, inserts and lookups only, so nothing is retired or freed.
TEST(OccAvl, ProtectsThroughTheBlockItsGuardLends) {
    static_assert(smr::hp_domain::traits.protect_uses_slots);
    smr::hp_domain domain{smr::domain_config{}};
    smr::ds::occ_avl<smr::hp_domain> tree(domain);
    auto self = smr::attach(domain);
    for (key_t k = 0; k < 500; ++k) ASSERT_TRUE(tree.insert(self, k, k));  // rotates at each level
    for (key_t k = 0; k < 500; ++k) ASSERT_TRUE(tree.contains(self, k)) << k;
    EXPECT_FALSE(tree.contains(self, 500));
    const auto v = tree.validate_balance();
    ASSERT_TRUE(v.ok) << v.error;
    EXPECT_EQ(v.size, 500u);
}

// The OCC AVL tree over enough keys for a deep tree, then a small range, so
// every kind of rotation and routing-node splice happens; validate_balance() (exact
// heights, AVL balance, no routing node with a missing child) is checked
// along the way, and every node allocated is retired by the end. With NBR
// the repair finds each node by a search from the root instead of walking
// parent pointers.
template <class Domain>
void occ_avl_long_random_run() {
    Domain domain{smr::domain_config{}};
    smr::ds::occ_avl<Domain> tree(domain);
    long_random_run(domain, tree,
                    long_run{.ops = 600000,
                             .phase_length = 60000,
                             .key_range = 20000,
                             .late_key_range = 300,
                             .validate_every = 20000});
    if (::testing::Test::HasFatalFailure()) return;
    EXPECT_EQ(domain.stats().retired, domain.stats().allocated);
}

TEST(OccAvl, LongRandomAgainstStdSetDebra) { occ_avl_long_random_run<smr::debra_domain>(); }

TEST(OccAvl, LongRandomAgainstStdSetNbrRepairsFromRoot) {
    static_assert(smr::nbr_domain::traits.needs_restart_from_root);
    occ_avl_long_random_run<smr::nbr_domain>();
}

// ---- hash_set: options and bucket placement -------------------------------------

TEST(HashSet, BucketCountAndPlacement) {
    smr::debra_domain domain{smr::domain_config{}};
    auto self = smr::attach(domain);
    EXPECT_THROW(smr::ds::hash_set<smr::debra_domain>(domain, {.buckets = 0}),
                 std::invalid_argument);
    smr::ds::hash_set<smr::debra_domain> one(domain, {.buckets = 1});
    EXPECT_EQ(one.bucket_count(), 1u);
    smr::ds::hash_set<smr::debra_domain> set(domain, {.buckets = 97});
    EXPECT_EQ(set.bucket_count(), 97u);
    // Every key maps into the table, extremes included; consecutive keys
    // spread over (almost) every bucket.
    std::vector<int> load(97);
    for (key_t k = 0; k < 97 * 4; ++k) ++load[set.bucket_of(k)];
    for (key_t k : {smr::ds::hash_set<smr::debra_domain>::min_key, key_t(-1),
                    smr::ds::hash_set<smr::debra_domain>::max_key}) {
        EXPECT_LT(set.bucket_of(k), 97u) << k;
        EXPECT_EQ(one.bucket_of(k), 0u) << k;
    }
    for (int n : load) EXPECT_GE(n, 1);
    // Keys in many buckets add up across them.
    std::set<key_t> model;
    for (key_t k = -500; k < 500; k += 3) {
        ASSERT_TRUE(set.insert(self, k, k));
        ASSERT_TRUE(one.insert(self, k, k));
        model.insert(k);
    }
    for (auto* s : {&set, &one}) {
        const auto v = full_validate(*s);
        ASSERT_TRUE(v.ok) << v.error;
        EXPECT_EQ(v.size, model.size());
    }
    // The table is packed: a bucket is far smaller than a padded lone list.
    static_assert(sizeof(smr::ds::hash_set<smr::debra_domain>::bucket_type) <= 128);
    static_assert(sizeof(smr::ds::hm_list<smr::debra_domain>) >= 256);
}

// The option reaches every bucket's list (one bucket here, so the keys share it).
TEST(HashSet, RestartFromHeadPassesThrough) {
    using set = smr::ds::hash_set<scripted_domain>;
    const int resuming = reads_past_a_marked_node<set>(false, 1);
    const int restarting = reads_past_a_marked_node<set>(true, 1);
    EXPECT_GE(restarting - resuming, 45) << resuming << " vs " << restarting;
}

// ---- ms_queue against std::deque ------------------------------------------------

template <class Q>
class MsQueueSequential : public ::testing::Test {
  protected:
    using domain_type = typename Q::domain_type;

    domain_type domain{smr::domain_config{}};
    Q queue{domain};
    smr::context<domain_type> self{domain};

    struct entry {
        key_t key;
        std::int64_t value;
    };

    void expect_matches(const std::deque<entry>& model, const std::string& where) {
        const smr::ds::validation_result v = full_validate(queue);
        ASSERT_TRUE(v.ok) << where << ": " << v.error;
        std::uint64_t sum = 0;
        for (const entry& e : model) sum += static_cast<std::uint64_t>(e.key);
        EXPECT_EQ(v.key_sum, static_cast<std::int64_t>(sum)) << where;
        EXPECT_EQ(v.size, model.size()) << where;
    }
};

using queues =
    ::testing::Types<smr::ds::ms_queue<smr::leak_domain>, smr::ds::ms_queue<smr::debra_domain>,
                     smr::ds::ms_queue<smr::hp_domain>, smr::ds::ms_queue<smr::lfrc_domain>>;
TYPED_TEST_SUITE(MsQueueSequential, queues, structure_names);

TYPED_TEST(MsQueueSequential, RandomAgainstStdDeque) {
    auto& queue = this->queue;
    auto& self = this->self;
    std::mt19937_64 rng(7);
    std::deque<typename TestFixture::entry> model;
    constexpr int ops = 300000;
    for (int i = 0; i < ops; ++i) {
        // Phases that grow, drain (often past empty) and hover.
        const int phase = (i / 20000) % 3;
        const unsigned enqueue_pct = phase == 0 ? 70 : phase == 1 ? 25 : 50;
        if (rng() % 100 < enqueue_pct) {
            const key_t key =
                std::uniform_int_distribution<key_t>(TypeParam::min_key, TypeParam::max_key)(rng);
            ASSERT_TRUE(queue.insert(self, key, i));
            model.push_back({key, i});
        } else {
            const auto item = queue.dequeue(self);
            if (model.empty()) {
                ASSERT_FALSE(item.has_value()) << "op " << i;
            } else {
                ASSERT_TRUE(item.has_value()) << "op " << i;
                ASSERT_EQ(item->key, model.front().key) << "op " << i;
                ASSERT_EQ(item->value, model.front().value) << "op " << i;
                model.pop_front();
            }
        }
        if ((i + 1) % 20000 == 0) {
            this->expect_matches(model, "op " + std::to_string(i));
            if (this->HasFatalFailure()) return;
        }
    }
    // The rest is freed by the destructor (LeakSanitizer checks it).
}

TYPED_TEST(MsQueueSequential, EmptyQueueAndNodeCounts) {
    auto& queue = this->queue;
    auto& domain = this->domain;
    auto& self = this->self;
    this->expect_matches({}, "fresh");
    EXPECT_FALSE(queue.dequeue(self).has_value());
    EXPECT_FALSE(queue.dequeue(self).has_value());
    EXPECT_EQ(domain.stats().allocated, 0u);
    EXPECT_EQ(domain.stats().retired, 0u);

    constexpr std::uint64_t n = 100;
    for (key_t k = 0; k < key_t(n); ++k) ASSERT_TRUE(queue.insert(self, k, -k));
    EXPECT_EQ(domain.stats().allocated, n);  // one node per enqueue
    std::deque<typename TestFixture::entry> model;
    for (key_t k = 0; k < key_t(n); ++k) model.push_back({k, -k});
    this->expect_matches(model, "filled");

    for (key_t k = 0; k < key_t(n); ++k) {
        const std::uint64_t before = domain.stats().retired;
        const auto item = queue.dequeue(self);
        ASSERT_TRUE(item.has_value()) << k;
        EXPECT_EQ(item->key, k);
        EXPECT_EQ(item->value, -k);
        // Each dequeue retires the old dummy, except the first: the first
        // dummy lives in the queue object.
        ASSERT_EQ(domain.stats().retired - before, k == 0 ? 0u : 1u) << k;
    }
    EXPECT_FALSE(queue.dequeue(self).has_value());
    this->expect_matches({}, "drained");
    const smr::reclaimer_stats stats = domain.stats();
    EXPECT_EQ(stats.retired, n - 1);
    EXPECT_EQ(stats.discarded, 0u);
    EXPECT_LE(stats.freed, stats.retired);

    // Refill after draining: the last dequeued node is the dummy now.
    ASSERT_TRUE(queue.insert(self, 5, 50));
    this->expect_matches({{5, 50}}, "refilled");
    const auto item = queue.dequeue(self);
    ASSERT_TRUE(item.has_value());
    EXPECT_EQ(item->key, 5);
    EXPECT_EQ(domain.stats().retired, n);
}

template <class Q>
concept erases_keys = requires(Q& q, typename Q::context_type& self) {
    q.erase(self, key_t{});
};
template <class Q>
concept has_contains = requires(Q& q, typename Q::context_type& self) {
    q.contains(self, key_t{});
};

TEST(MsQueue, DeclaresAQueue) {
    using queue = smr::ds::ms_queue<smr::debra_domain>;
    static_assert(queue::is_queue);
    static_assert(!queue::traverses_unlinked_nodes);
    static_assert(queue::has_read_write_phases && queue::read_phases_start_at_root);
    // Not a set: no erase of a given key, no contains.
    static_assert(!erases_keys<queue> && !has_contains<queue>);
    static_assert(erases_keys<smr::ds::hm_list<smr::debra_domain>>);
}

}  // namespace
