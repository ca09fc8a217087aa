// The three limbo bags of the epoch family (Fraser's EBR, DEBRA, NEBR, QSBR).
#pragma once

#include <cstddef>
#include <cstdint>

#include "smr/core/limbo_bag.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/orphanage.hpp"

namespace smr::detail {

/// One thread's retired nodes, sorted by the thread's local epoch at retire.
///
/// Why three epochs: a thread's local epoch lags the global epoch by at most
/// one. A node retired by a thread in local epoch e may be unlinked while the
/// global epoch is already e+1, and a reader that entered e+1 may hold it;
/// the global epoch can reach e+2 with that reader still inside. Only when
/// the retiring thread has seen e+3 has every operation that overlapped the
/// unlink finished (Hart et al., Section 2.2, Fig. 4). So a bag becomes safe
/// when its owner's local epoch is at least three past the bag's epoch, and
/// three bags (indexed by epoch mod 3) suffice.
///
/// The bag of the owner's current epoch is kept as a pointer, so retire is a
/// push onto it (no epoch mod 3 per node); advance() moves it.
class epoch_bags {
  public:
    epoch_bags() = default;
    epoch_bags(const epoch_bags&) = delete;
    epoch_bags& operator=(const epoch_bags&) = delete;

    /// Retires into the bag of the owner's local epoch (the one last passed
    /// to advance(); 0 before the first).
    void add(core::retired_entry entry) noexcept { current_->push_back(entry); }

    /// A bag retired in local epoch `label` is safe for a thread that has
    /// seen epoch `epoch`: the global epoch has been at least `epoch`, so it
    /// passed label + 2, and every operation that overlapped the unlinks has
    /// ended (whichever thread's bag it is).
    static bool safe_at(std::uint64_t label, std::uint64_t epoch) noexcept {
        if (SMR_MUTANT("epoch_bags_free_one_epoch_early")) return label + 2 <= epoch;
        return label + 3 <= epoch;
    }

    /// The owner's local epoch is now `epoch` (it only grows): moves every bag
    /// retired three or more epochs ago to `safe`, with the orphaned bags that
    /// are (adopted: safe_at holds for any thread's bag), and makes epoch's
    /// bag the current one. Call on every change of local epoch.
    void advance(std::uint64_t epoch, core::limbo_bag& safe, core::orphanage& orphans,
                 int taker) noexcept {
        rotate_to(epoch, epoch, safe, orphans, taker);
    }

    /// As advance, for bags labelled with the owner's count of epoch changes
    /// it observed (`rotations`, Brown's DEBRA: a bag is freed at the third
    /// rotation after it was current) rather than with epochs; orphans carry
    /// global epochs and are judged against `global_epoch`.
    void rotate_to(std::uint64_t rotations, std::uint64_t global_epoch, core::limbo_bag& safe,
                   core::orphanage& orphans, int taker) noexcept {
        for (std::size_t i = 0; i < 3; ++i) {
            if (!bags_[i].empty() && safe_at(epoch_of_[i], rotations)) safe.splice_back(bags_[i]);
        }
        orphans.take_safe(
            safe, [global_epoch](std::uint64_t label) { return safe_at(label, global_epoch); },
            taker);
        // rotations' bag held rotations - 3 or older (same residue, lower
        // label): it was just emptied into `safe`.
        const std::size_t i = rotations % 3;
        current_ = &bags_[i];
        epoch_of_[i] = rotations;
    }

    /// The owner unregisters: every non-empty bag goes to `orphans`, labelled
    /// with its epoch (a bag no memory is left for stays, for the slot's next
    /// owner).
    void orphan_into(core::orphanage& orphans) noexcept {
        for (std::size_t i = 0; i < 3; ++i) orphans.give(bags_[i], epoch_of_[i]);
    }
    /// The same with one `label` for every bag: for bags labelled by
    /// rotations (rotate_to), the global epoch that bounds them all.
    void orphan_into(core::orphanage& orphans, std::uint64_t label) noexcept {
        for (auto& bag : bags_) orphans.give(bag, label);
    }

    void drain_into(core::limbo_bag& out) noexcept {
        for (auto& bag : bags_) out.splice_back(bag);
    }

    std::size_t size() const noexcept {
        return bags_[0].size() + bags_[1].size() + bags_[2].size();
    }

  private:
    core::limbo_bag bags_[3];
    std::uint64_t epoch_of_[3] = {0, 0, 0};
    core::limbo_bag* current_ = &bags_[0];
};

}  // namespace smr::detail
