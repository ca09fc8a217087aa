// Every reclaimer the library implements, and their list. Nothing here needs
// more than a C++20 compiler: the liburcu adapters are apart
// (smr/reclaim/urcu.hpp, target smrlab::urcu), and smr/reclaim/measured.hpp
// adds them for the benchmark and the tests.
#pragma once

#include <tuple>

#include "smr/reclaim/crystalline.hpp"
#include "smr/reclaim/crystalline_w.hpp"
#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/ebr.hpp"
#include "smr/reclaim/epoch_pop.hpp"
#include "smr/reclaim/he.hpp"
#include "smr/reclaim/hp.hpp"
#include "smr/reclaim/hp_pop.hpp"
#include "smr/reclaim/hp_pp.hpp"
#include "smr/reclaim/hyaline.hpp"
#include "smr/reclaim/ibr.hpp"
#include "smr/reclaim/lfrc.hpp"
#include "smr/reclaim/nbr.hpp"
#include "smr/reclaim/nebr.hpp"
#include "smr/reclaim/none.hpp"
#include "smr/reclaim/obj_base.hpp"
#include "smr/reclaim/qsbr.hpp"
#include "smr/reclaim/rcu.hpp"
#include "smr/reclaim/token.hpp"
#include "smr/reclaim/wfe.hpp"

namespace smr {

/// Every reclaimer domain type of the library, in the order smrbench --list
/// prints them. Adding a reclaimer: include its header above and add it here;
/// smrbench and the stress tests pick it up from this list.
using all_domains =
    std::tuple<leak_domain, ebr_domain, nebr_domain, debra_domain, qsbr_domain, rcu_epoch_domain,
               qsbr_ibr_domain, token_naive_domain, token_passfirst_domain, token_periodic_domain,
               hp_domain, hp_pop_domain, hp_pp_domain, he_domain, he_pop_domain, epoch_pop_domain,
               ibr_domain, wfe_domain, hyaline_domain, crystalline_l_domain, crystalline_domain,
               lfrc_domain, nbr_domain, nbrplus_domain>;

}  // namespace smr
