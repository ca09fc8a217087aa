// Every data structure with every reclaimer of the library, explicitly
// instantiated (every member function compiled), so that the header hygiene
// test (tests/hygiene/check.cmake) sees the warnings that appear only on
// instantiation, as a user's strict build would.
#include <tuple>

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
#include "smr/reclaim/all.hpp"
#include "smr/reclaim/guards.hpp"
#ifdef SMR_HYGIENE_URCU
#include "smr/reclaim/urcu.hpp"
#endif

// Every reclaimer but lfrc, which builds only with structures that count
// their links (smr::buildable).
#define SMR_EVERY_UNCOUNTED_RECLAIMER(X, DS) \
    X(DS, smr::leak_domain)                  \
    X(DS, smr::ebr_domain)                   \
    X(DS, smr::nebr_domain)                  \
    X(DS, smr::debra_domain)                 \
    X(DS, smr::qsbr_domain)                  \
    X(DS, smr::rcu_epoch_domain)             \
    X(DS, smr::qsbr_ibr_domain)              \
    X(DS, smr::token_naive_domain)           \
    X(DS, smr::token_passfirst_domain)       \
    X(DS, smr::token_periodic_domain)        \
    X(DS, smr::hp_domain)                    \
    X(DS, smr::hp_pop_domain)                \
    X(DS, smr::hp_pp_domain)                 \
    X(DS, smr::he_domain)                    \
    X(DS, smr::he_pop_domain)                \
    X(DS, smr::epoch_pop_domain)             \
    X(DS, smr::ibr_domain)                   \
    X(DS, smr::wfe_domain)                   \
    X(DS, smr::hyaline_domain)               \
    X(DS, smr::crystalline_l_domain)         \
    X(DS, smr::crystalline_domain)           \
    X(DS, smr::nbr_domain)                   \
    X(DS, smr::nbrplus_domain)
// The list above and lfrc are every reclaimer of the library.
static_assert(std::tuple_size_v<smr::all_domains> == 23 + 1);

#define SMR_INSTANTIATE(DS, Domain) template class DS<Domain>;

#define SMR_EVERY_STRUCTURE(X, Domain) \
    X(smr::ds::lazylist, Domain)       \
    X(smr::ds::dgt_bst, Domain)        \
    X(smr::ds::harris_list, Domain)    \
    X(smr::ds::hm_list, Domain)        \
    X(smr::ds::abtree, Domain)         \
    X(smr::ds::occ_avl, Domain)        \
    X(smr::ds::ms_queue, Domain)       \
    X(smr::ds::hash_set, Domain)       \
    X(smr::ds::cr_list, Domain)        \
    X(smr::ds::cr_hash_set, Domain)    \
    X(smr::ds::lock_list, Domain)      \
    X(smr::context, Domain)

#define SMR_EVERY_STRUCTURE_WITH(DS, Domain) SMR_EVERY_STRUCTURE(SMR_INSTANTIATE, Domain)
SMR_EVERY_UNCOUNTED_RECLAIMER(SMR_EVERY_STRUCTURE_WITH, unused)

// The structures that count their links, with lfrc.
template class smr::ds::hm_list<smr::lfrc_domain>;
template class smr::ds::ms_queue<smr::lfrc_domain>;
template class smr::ds::hash_set<smr::lfrc_domain>;
template class smr::context<smr::lfrc_domain>;

// The transactional structures, with every reclaimer that protects whole
// operations (smr::protects_whole_operation).
#define SMR_EVERY_TRANSACTIONAL_STRUCTURE(X, Domain) \
    X(smr::ds::stm_list, Domain)                     \
    X(smr::ds::stm_hash_set, Domain)                 \
    X(smr::ds::stm_rbtree, Domain)
SMR_EVERY_TRANSACTIONAL_STRUCTURE(SMR_INSTANTIATE, smr::leak_domain)
SMR_EVERY_TRANSACTIONAL_STRUCTURE(SMR_INSTANTIATE, smr::ebr_domain)
SMR_EVERY_TRANSACTIONAL_STRUCTURE(SMR_INSTANTIATE, smr::nebr_domain)
SMR_EVERY_TRANSACTIONAL_STRUCTURE(SMR_INSTANTIATE, smr::debra_domain)
SMR_EVERY_TRANSACTIONAL_STRUCTURE(SMR_INSTANTIATE, smr::qsbr_domain)
SMR_EVERY_TRANSACTIONAL_STRUCTURE(SMR_INSTANTIATE, smr::rcu_epoch_domain)
SMR_EVERY_TRANSACTIONAL_STRUCTURE(SMR_INSTANTIATE, smr::token_naive_domain)
SMR_EVERY_TRANSACTIONAL_STRUCTURE(SMR_INSTANTIATE, smr::token_passfirst_domain)
SMR_EVERY_TRANSACTIONAL_STRUCTURE(SMR_INSTANTIATE, smr::token_periodic_domain)

#ifdef SMR_HYGIENE_URCU
SMR_EVERY_TRANSACTIONAL_STRUCTURE(SMR_INSTANTIATE, smr::urcu_qsbr_domain)
SMR_EVERY_TRANSACTIONAL_STRUCTURE(SMR_INSTANTIATE, smr::urcu_memb_domain)
SMR_EVERY_STRUCTURE(SMR_INSTANTIATE, smr::urcu_qsbr_domain)
SMR_EVERY_STRUCTURE(SMR_INSTANTIATE, smr::urcu_memb_domain)
#endif

int main() { return 0; }

// Members a user calls that no structure does (a strict build that called
// stats() failed on a sign conversion no structure instantiated), for every
// reclaimer.
template <class Domain>
void user_calls(Domain& domain, smr::context_ref<Domain> self) {
    (void)domain.stats();
    domain.barrier(self);
    domain.thread_offline(self);
    domain.thread_online(self);
}
#define SMR_USER_CALLS(DS, Domain) \
    template void user_calls<Domain>(Domain&, smr::context_ref<Domain>);
SMR_EVERY_UNCOUNTED_RECLAIMER(SMR_USER_CALLS, unused)
template void user_calls<smr::lfrc_domain>(smr::lfrc_domain&, smr::context_ref<smr::lfrc_domain>);
