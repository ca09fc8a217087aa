// Run-time options of the data structures, one struct for all of them (like
// smr::domain_config for the reclaimers): each structure reads the fields it
// documents and has no constructor taking the struct if it reads none.
#pragma once

namespace smr::ds {

struct ds_options {
    /// hm_list: after unlinking a marked node, start the next read phase from
    /// the head instead of from the unlinked node's predecessor (the NBR
    /// paper's E4 "restarts" variant). Forced on with a reclaimer whose
    /// traits.needs_restart_from_root is set (NBR, NBR+).
    bool restart_from_head = false;
};

}  // namespace smr::ds
