// Must not compile: under qsbr a thread outside a read-side section holds up
// every grace period until it declares a quiescent state, so rcu_synchronize
// would wait for idle threads.
#include "smr/rcu.hpp"
#include "smr/reclaim/qsbr.hpp"

void read() { std::scoped_lock section(smr::rcu_default_domain<smr::qsbr_domain>()); }
