// What every application's transactional view (tx_view) does to a field of
// an object: read it through the transaction, and write it naming the object,
// written once.
#pragma once

#include <type_traits>

#include "smr/stm/transaction.hpp"

namespace smrbench::stamp {

class tx_fields {
  public:
    explicit tx_fields(smr::stm::transaction& tx) noexcept : tx_(tx) {}

  protected:
    template <class O, class T>
    T get(O* object, T O::*field) {
        return tx_.load(&(object->*field));
    }
    /// A store names its object, so that a conflict between two words of one
    /// object counts as true, and only a neighbour's in the stripe as false
    /// (stm_stats::false_aborts, the allocator study's measure).
    template <class O, class T>
    void set(O* object, T O::*field, std::type_identity_t<T> value) {
        tx_.store(&(object->*field), value, {object, sizeof(O)});
    }

    smr::stm::transaction& tx_;
};

}  // namespace smrbench::stamp
