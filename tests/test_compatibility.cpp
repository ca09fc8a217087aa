// The reclaimer x data structure compatibility table (smr/compatibility.hpp):
// its rules, what smrbench --list reports, and docs/compatibility.md, which
// must hold exactly what `smrbench --list --markdown` prints.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "smr/compatibility.hpp"
#include "smr/ds/abtree.hpp"
#include "smr/ds/cr_hash_set.hpp"
#include "smr/ds/cr_list.hpp"
#include "smr/ds/dgt_bst.hpp"
#include "smr/ds/harris_list.hpp"
#include "smr/ds/hash_set.hpp"
#include "smr/ds/hm_list.hpp"
#include "smr/ds/lazylist.hpp"
#include "smr/ds/lock_list.hpp"
#include "smr/ds/ms_queue.hpp"
#include "smr/ds/occ_avl.hpp"
#include "smr/ds/stm_hash_set.hpp"
#include "smr/ds/stm_list.hpp"
#include "smr/ds/stm_rbtree.hpp"
#include "smr/reclaim/measured.hpp"
#include "smr/reclaim/none.hpp"

namespace {

namespace fs = std::filesystem;

// ---- the capabilities each scheme has (smr/reclaim/domain_concepts.hpp) --------

template <class... Domains>
constexpr bool all_follow_their_traits(std::tuple<Domains...>* /*domains*/) {
    return (
        (smr::reclamation_domain<Domains> && smr::detail::hooks_follow_traits<Domains>::value) &&
        ...);
}
static_assert(all_follow_their_traits(static_cast<smr::measured_domains*>(nullptr)));
static_assert(smr::protects_pointers<smr::hp_domain> && smr::protects_pointers<smr::ibr_domain> &&
              smr::protects_pointers<smr::lfrc_domain> && !smr::protects_pointers<smr::ebr_domain>);
static_assert(smr::neutralizes<smr::nbr_domain> && smr::neutralizes<smr::nbrplus_domain> &&
              !smr::splits_read_phases<smr::debra_domain>);
static_assert(smr::declares_quiescent_states<smr::qsbr_domain> &&
              smr::declares_quiescent_states<smr::qsbr_ibr_domain> &&
              !smr::declares_quiescent_states<smr::ebr_domain>);
static_assert(smr::goes_offline<smr::nebr_domain> && smr::goes_offline<smr::token_naive_domain> &&
              !smr::goes_offline<smr::hp_domain>);
static_assert(smr::keeps_allocation_clock<smr::he_domain> &&
              smr::keeps_allocation_clock<smr::rcu_epoch_domain> &&
              !smr::keeps_allocation_clock<smr::hp_domain>);
static_assert(smr::holds_garbage<smr::token_periodic_domain> &&
              smr::holds_garbage<smr::wfe_domain> && !smr::holds_garbage<smr::leak_domain> &&
              !smr::holds_garbage<smr::lfrc_domain>);
static_assert(smr::counts_links<smr::lfrc_domain> && !smr::counts_links<smr::hp_domain>);

// ---- the rules, family by family ----------------------------------------------

constexpr smr::reclaimer_traits of_family(smr::reclaimer_family family) {
    return smr::reclaimer_traits{.name = "test",
                                 .family = family,
                                 .garbage_bounded = false,
                                 .needs_restart_from_root = false,
                                 .uses_signals = false,
                                 .needs_quiescent_states = false};
}

using smr::reclaimer_family;
template <template <class...> class DS>
constexpr smr::ds_traits traits_of = smr::ds_traits_of<DS<smr::leak_domain>>();

constexpr bool safe(const smr::ds_traits& ds, reclaimer_family family) {
    return smr::check(ds, of_family(family)).safe;
}

// Epoch and leak schemes protect everything; reservations only structures
// whose readers never leave an unlinked node; neutralization every structure
// here (all have the read/write-phase form and restart from the root when
// asked). NBR paper, Table 1, with HL01 x HP as the one departure (see
// harris_list.hpp).
static_assert(safe(traits_of<smr::ds::lazylist>, reclaimer_family::epoch));
static_assert(safe(traits_of<smr::ds::lazylist>, reclaimer_family::leak));
static_assert(!safe(traits_of<smr::ds::lazylist>, reclaimer_family::reservation));
static_assert(safe(traits_of<smr::ds::lazylist>, reclaimer_family::neutralization));
static_assert(!safe(traits_of<smr::ds::dgt_bst>, reclaimer_family::reservation));
static_assert(safe(traits_of<smr::ds::dgt_bst>, reclaimer_family::neutralization));
static_assert(!safe(traits_of<smr::ds::harris_list>, reclaimer_family::reservation));
static_assert(safe(traits_of<smr::ds::harris_list>, reclaimer_family::neutralization));
static_assert(safe(traits_of<smr::ds::harris_list>, reclaimer_family::epoch));
static_assert(safe(traits_of<smr::ds::hm_list>, reclaimer_family::reservation));
// HP++: a reservation scheme that invalidates unlinked nodes, on the structures
// that name their frontiers (harris_list, lazylist, dgt_bst), and not on the others.
constexpr smr::reclaimer_traits invalidating = [] {
    smr::reclaimer_traits t = of_family(reclaimer_family::reservation);
    t.invalidates_unlinked = true;
    return t;
}();
static_assert(smr::check(traits_of<smr::ds::harris_list>, invalidating).safe);
static_assert(smr::check(traits_of<smr::ds::lazylist>, invalidating).safe);
static_assert(smr::check(traits_of<smr::ds::hm_list>, invalidating).safe);
static_assert(smr::check(traits_of<smr::ds::dgt_bst>, invalidating).safe);
static_assert(!smr::check(traits_of<smr::ds::occ_avl>, invalidating).safe);
static_assert(!smr::check(traits_of<smr::ds::abtree>, invalidating).safe);
static_assert(safe(traits_of<smr::ds::hm_list>, reclaimer_family::neutralization));
static_assert(safe(traits_of<smr::ds::hm_list>, reclaimer_family::epoch));
// Reference counting needs counted links; structures that do not declare
// them cannot even be built with lfrc (smr::buildable).
static_assert(safe(traits_of<smr::ds::hm_list>, reclaimer_family::reference_count));
static_assert(!safe(traits_of<smr::ds::lazylist>, reclaimer_family::reference_count));
static_assert(!safe(traits_of<smr::ds::dgt_bst>, reclaimer_family::reference_count));
static_assert(smr::buildable<smr::ds::hm_list<smr::lfrc_domain>>());
static_assert(!smr::buildable<smr::ds::lazylist<smr::lfrc_domain>>());
static_assert(smr::buildable<smr::ds::lazylist<smr::hp_domain>>());
// The trees' searches pass through nodes an update already unlinked (no
// reservation can protect them); the queue and the hash set's buckets never
// do. All four have read/write phases and restart from the root.
static_assert(!safe(traits_of<smr::ds::abtree>, reclaimer_family::reservation));
static_assert(safe(traits_of<smr::ds::abtree>, reclaimer_family::neutralization));
static_assert(safe(traits_of<smr::ds::abtree>, reclaimer_family::epoch));
static_assert(!safe(traits_of<smr::ds::occ_avl>, reclaimer_family::reservation));
static_assert(safe(traits_of<smr::ds::occ_avl>, reclaimer_family::neutralization));
static_assert(safe(traits_of<smr::ds::occ_avl>, reclaimer_family::epoch));
static_assert(safe(traits_of<smr::ds::ms_queue>, reclaimer_family::reservation));
static_assert(safe(traits_of<smr::ds::ms_queue>, reclaimer_family::neutralization));
static_assert(safe(traits_of<smr::ds::hash_set>, reclaimer_family::reservation));
static_assert(safe(traits_of<smr::ds::hash_set>, reclaimer_family::neutralization));
static_assert(safe(traits_of<smr::ds::ms_queue>, reclaimer_family::reference_count));
static_assert(safe(traits_of<smr::ds::hash_set>, reclaimer_family::reference_count));
static_assert(!safe(traits_of<smr::ds::abtree>, reclaimer_family::reference_count));

// The concurrently readable list's readers validate (and its writers mark)
// only under a reservation scheme: its declaration depends on the domain,
// and so does what it costs (Hart et al.'s Listings 2 and 3).
static_assert(smr::check<smr::ds::cr_list<smr::hp_domain>>().safe);
static_assert(smr::check<smr::ds::cr_list<smr::he_domain>>().safe);
static_assert(!smr::ds::cr_list<smr::hp_domain>::traverses_unlinked_nodes);
static_assert(smr::ds::cr_list<smr::debra_domain>::traverses_unlinked_nodes);
static_assert(smr::check<smr::ds::cr_list<smr::debra_domain>>().safe);
static_assert(smr::check<smr::ds::cr_list<smr::nbr_domain>>().safe);
static_assert(smr::check<smr::ds::cr_hash_set<smr::hp_domain>>().safe);
static_assert(!smr::buildable<smr::ds::cr_list<smr::lfrc_domain>>());
static_assert(!smr::buildable<smr::ds::cr_hash_set<smr::lfrc_domain>>());
// The lock-based list is safe with every scheme it can be built with, for
// the one reason that no scheme is involved.
static_assert(smr::check<smr::ds::lock_list<smr::leak_domain>>().reason ==
              smr::compatibility_reasons::locked);
static_assert(smr::check<smr::ds::lock_list<smr::nbr_domain>>().safe);
static_assert(smr::check<smr::ds::lock_list<smr::hp_domain>>().safe);
static_assert(!smr::buildable<smr::ds::lock_list<smr::lfrc_domain>>());

// The transactional list: only schemes that protect whole operations serve
// its STM; the others are refused and cannot be built.
static_assert(smr::check<smr::ds::stm_list<smr::debra_domain>>().safe);
static_assert(smr::check<smr::ds::stm_list<smr::debra_domain>>().reason ==
              smr::compatibility_reasons::transactional_epoch);
static_assert(smr::check<smr::ds::stm_list<smr::leak_domain>>().safe);
static_assert(smr::buildable<smr::ds::stm_list<smr::qsbr_domain>>());
static_assert(!smr::check<smr::ds::stm_list<smr::hp_domain>>().safe);
static_assert(smr::check<smr::ds::stm_list<smr::hp_domain>>().reason ==
              smr::compatibility_reasons::transactional_reservation);
static_assert(!smr::buildable<smr::ds::stm_list<smr::hp_domain>>());
static_assert(!smr::check<smr::ds::stm_list<smr::nbr_domain>>().safe);
static_assert(!smr::buildable<smr::ds::stm_list<smr::nbrplus_domain>>());
static_assert(!smr::check<smr::ds::stm_list<smr::lfrc_domain>>().safe);
static_assert(!smr::buildable<smr::ds::stm_list<smr::lfrc_domain>>());
static_assert(smr::check<smr::ds::stm_hash_set<smr::rcu_epoch_domain>>().safe);
static_assert(!smr::buildable<smr::ds::stm_hash_set<smr::he_domain>>());
static_assert(smr::check<smr::ds::stm_rbtree<smr::qsbr_domain>>().safe);
static_assert(!smr::buildable<smr::ds::stm_rbtree<smr::nbr_domain>>());

// Crystalline-W's helpers keep the node a source lies in: it runs where the
// structure names that node (passes_parents) and its readers validate, and
// is refused elsewhere, with the reason that names what is missing.
static_assert(smr::check<smr::ds::hm_list<smr::crystalline_domain>>().safe);
static_assert(smr::check<smr::ds::ms_queue<smr::crystalline_domain>>().safe);
static_assert(smr::check<smr::ds::cr_list<smr::crystalline_domain>>().safe);
static_assert(smr::check<smr::ds::hash_set<smr::crystalline_domain>>().safe);
static_assert(smr::check<smr::ds::cr_hash_set<smr::crystalline_domain>>().safe);
static_assert(smr::check<smr::ds::lock_list<smr::crystalline_domain>>().safe);
static_assert(smr::check<smr::ds::lazylist<smr::crystalline_domain>>().reason ==
              smr::compatibility_reasons::reservation_no_parents);
static_assert(smr::check<smr::ds::abtree<smr::crystalline_domain>>().reason ==
              smr::compatibility_reasons::reservation_no_parents);
// A structure that names parents but reads through unlinked nodes is still
// refused as for every era scheme.
struct parents_through_unlinked {
    static constexpr std::string_view name = "parents_through_unlinked";
    static constexpr bool traverses_unlinked_nodes = true;
    static constexpr bool passes_parents = true;
};
static_assert(smr::check(smr::ds_traits_of<parents_through_unlinked>(),
                         smr::crystalline_domain::traits)
                  .reason == smr::compatibility_reasons::reservation_unlinked);

// The template form agrees with the value form.
static_assert(!smr::check<smr::ds::lazylist<smr::hp_domain>>().safe);
static_assert(smr::check<smr::ds::hm_list<smr::hp_domain>>().safe);
static_assert(smr::check<smr::ds::harris_list<smr::debra_domain>>().safe);

/// A structure that declares nothing about phases: not safe with NBR.
struct undeclared {
    static constexpr std::string_view name = "undeclared";
    static constexpr bool traverses_unlinked_nodes = false;
};
/// Phases, but a read phase may resume from a node of the previous one
/// (Michael's original list).
struct resumes {
    static constexpr std::string_view name = "resumes";
    static constexpr bool traverses_unlinked_nodes = false;
    static constexpr bool has_read_write_phases = true;
    static constexpr bool read_phases_start_at_root = false;
};

TEST(Compatibility, NeutralizationNeedsPhasesAndRootRestarts) {
    const auto none =
        smr::check(smr::ds_traits_of<undeclared>(), of_family(reclaimer_family::neutralization));
    EXPECT_FALSE(none.safe);
    EXPECT_EQ(none.reason, smr::compatibility_reasons::neutralization_no_phases);
    const auto resuming =
        smr::check(smr::ds_traits_of<resumes>(), of_family(reclaimer_family::neutralization));
    EXPECT_FALSE(resuming.safe);
    EXPECT_EQ(resuming.reason, smr::compatibility_reasons::neutralization_no_root_restart);
    // Reservation schemes only care whether readers leave unlinked nodes.
    EXPECT_TRUE(
        smr::check(smr::ds_traits_of<resumes>(), of_family(reclaimer_family::reservation)).safe);
}

TEST(Compatibility, EveryReasonIsOneSentence) {
    for (auto family : {reclaimer_family::leak, reclaimer_family::epoch,
                        reclaimer_family::reservation, reclaimer_family::neutralization,
                        reclaimer_family::reference_count, reclaimer_family::external}) {
        for (const auto& ds : {traits_of<smr::ds::lazylist>, traits_of<smr::ds::dgt_bst>,
                               traits_of<smr::ds::harris_list>, traits_of<smr::ds::hm_list>,
                               smr::ds_traits_of<undeclared>(), smr::ds_traits_of<resumes>()}) {
            const auto c = smr::check(ds, of_family(family));
            EXPECT_FALSE(c.reason.empty()) << ds.name << " x " << smr::to_string(family);
            EXPECT_EQ(c.reason.find('\n'), std::string_view::npos) << c.reason;
            EXPECT_EQ(c.reason.back(), '.') << c.reason;
        }
    }
}

// ---- what a structure declares beyond the rules -----------------------------------

// smrbench reads a structure's operations, options and memory from ds_traits
// alone; each is picked up from the structure's declaration, and a structure
// that declares none gets the defaults.
static_assert(traits_of<smr::ds::ms_queue>.is_queue);
static_assert(!traits_of<smr::ds::hm_list>.is_queue);
static_assert(traits_of<smr::ds::hm_list>.restart_from_head_option);
static_assert(traits_of<smr::ds::hash_set>.restart_from_head_option);
static_assert(!traits_of<smr::ds::lazylist>.restart_from_head_option);
static_assert(traits_of<smr::ds::hash_set>.buckets_option);
static_assert(traits_of<smr::ds::stm_hash_set>.buckets_option);
static_assert(!traits_of<smr::ds::hm_list>.buckets_option);
static_assert(traits_of<smr::ds::hm_list>.holds_first);
static_assert(traits_of<smr::ds::ms_queue>.holds_first);
static_assert(!traits_of<smr::ds::dgt_bst>.holds_first);
static_assert(traits_of<smr::ds::dgt_bst>.nodes_per_key == 2);
static_assert(traits_of<smr::ds::abtree>.keys_per_node_at_most > 1);
static_assert(traits_of<smr::ds::lazylist>.nodes_per_key == 1);
static_assert(traits_of<smr::ds::lazylist>.keys_per_node_at_most == 1);
static_assert(traits_of<smr::ds::lazylist>.node_size ==
              smr::ds::lazylist<smr::leak_domain>::node_size);

// ---- smrbench --list and docs/compatibility.md -----------------------------------

struct run_result {
    int exit_code = -1;
    std::string out;
};

run_result smrbench(const std::string& args) {
    run_result result;
    const std::string command = std::string(SMRBENCH_PATH) + " " + args + " 2>/dev/null";
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return result;
    char buffer[4096];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
    const int status = ::pclose(pipe);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
}

/// Every (ds, reclaimer) name pair smrbench compiles, with smr::check's verdict.
template <template <class> class DS, class... Domains>
void add_verdicts(std::map<std::pair<std::string, std::string>, smr::compatibility>& out,
                  std::tuple<Domains...>*) {
    ((out[{std::string(DS<Domains>::name), std::string(Domains::traits.name)}] =
          smr::check<DS<Domains>, Domains>()),
     ...);
}

template <class Domain>
using lazylist_of = smr::ds::lazylist<Domain>;
template <class Domain>
using dgt_bst_of = smr::ds::dgt_bst<Domain>;
template <class Domain>
using harris_list_of = smr::ds::harris_list<Domain>;
template <class Domain>
using hm_list_of = smr::ds::hm_list<Domain>;
template <class Domain>
using cr_list_of = smr::ds::cr_list<Domain>;
template <class Domain>
using cr_hash_set_of = smr::ds::cr_hash_set<Domain>;
template <class Domain>
using lock_list_of = smr::ds::lock_list<Domain>;
template <class Domain>
using stm_list_of = smr::ds::stm_list<Domain>;
template <class Domain>
using stm_hash_set_of = smr::ds::stm_hash_set<Domain>;
template <class Domain>
using stm_rbtree_of = smr::ds::stm_rbtree<Domain>;
template <class Domain>
using abtree_of = smr::ds::abtree<Domain>;
template <class Domain>
using hash_set_of = smr::ds::hash_set<Domain>;
template <class Domain>
using ms_queue_of = smr::ds::ms_queue<Domain>;
template <class Domain>
using occ_avl_of = smr::ds::occ_avl<Domain>;

TEST(Compatibility, ListJsonReportsTheVerdictOfCheck) {
    std::map<std::pair<std::string, std::string>, smr::compatibility> expected;
    auto* all = static_cast<smr::measured_domains*>(nullptr);
    add_verdicts<lazylist_of>(expected, all);
    add_verdicts<dgt_bst_of>(expected, all);
    add_verdicts<harris_list_of>(expected, all);
    add_verdicts<hm_list_of>(expected, all);
    add_verdicts<cr_list_of>(expected, all);
    add_verdicts<cr_hash_set_of>(expected, all);
    add_verdicts<lock_list_of>(expected, all);
    add_verdicts<stm_list_of>(expected, all);
    add_verdicts<stm_hash_set_of>(expected, all);
    add_verdicts<stm_rbtree_of>(expected, all);
    add_verdicts<abtree_of>(expected, all);
    add_verdicts<hash_set_of>(expected, all);
    add_verdicts<ms_queue_of>(expected, all);
    add_verdicts<occ_avl_of>(expected, all);

    const run_result r = smrbench("--list --json");
    ASSERT_EQ(r.exit_code, 0);
    const auto list = nlohmann::json::parse(r.out);
    std::size_t seen = 0;
    for (const auto& combo : list["combinations"]) {
        const std::pair<std::string, std::string> key{combo["ds"], combo["reclaimer"]};
        const auto it = expected.find(key);
        // A structure smrbench registers must be added above, so its verdicts are compared.
        ASSERT_NE(it, expected.end())
            << "not compared with smr::check: " << key.first << " x " << key.second;
        ++seen;
        EXPECT_EQ(combo["safe"].get<bool>(), it->second.safe) << key.first << " x " << key.second;
        EXPECT_EQ(combo["valid"].get<bool>(), it->second.safe) << key.first << " x " << key.second;
        EXPECT_EQ(combo["reason"].get<std::string>(), it->second.reason);
    }
    EXPECT_EQ(seen, expected.size());
    EXPECT_EQ(seen, list["combinations"].size());
}

TEST(Compatibility, DocumentHoldsTheGeneratedTable) {
    const run_result r = smrbench("--list --markdown");
    ASSERT_EQ(r.exit_code, 0);
    ASSERT_NE(r.out.find("| reclaimer |"), std::string::npos) << r.out;
    const fs::path doc = fs::path(SMR_SOURCE_DIR) / "docs" / "compatibility.md";
    std::ifstream in(doc);
    ASSERT_TRUE(in) << "cannot read " << doc;
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_NE(text.str().find(r.out), std::string::npos)
        << doc << " does not hold the table smr/compatibility.hpp gives. Regenerate it: replace "
        << "the lines from <!-- BEGIN generated ... --> to <!-- END generated --> with the "
        << "output of `smrbench --list --markdown` (docs/compatibility.md says how). Expected:\n"
        << r.out;
}

}  // namespace
