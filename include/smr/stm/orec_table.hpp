// The ownership-record table (ORT) of the word-based STM: one versioned lock
// per entry, and the mapping from a memory address to its entry.
//
// ---- The trade-off ----------------------------------------------------------
//
// A word-based STM cannot keep a lock beside every word of the program, so it
// keeps a fixed table of versioned locks and maps every address onto it:
// entry = (address >> shift) mod 2^bits (TinySTM 1.0.4's default: 2^20
// entries, shift 5, so the 32 bytes of an aligned stripe share one lock).
// The mapping decides two costs that pull in opposite directions (Baldassin,
// Borin and Araujo, TRANSACT 2014, Sections 2 and 5.4):
//
//   - A large stripe (large shift) means fewer entries touched per object:
//     smaller read and write sets, fewer locks to take, fewer cache misses on
//     the table.
//   - But data that share an entry conflict although they share no word: a
//     *false* abort. Neighbouring 16-byte nodes of a size-class allocator
//     (Hoard, TBBMalloc, TCMalloc) share a 32-byte stripe; glibc's arenas,
//     64 MB aligned, put nodes of different threads on the same entry once
//     the high bits are dropped (the paper's Figure 5 and Section 5.2). Which
//     mapping is best depends on the allocator.
//
// So the table also records, for a locked entry, the word its owner locked it
// for: a transaction that meets the lock can tell a true conflict (the word it
// accessed is in the 16-byte granule, so the object, the owner writes) from a
// false one (another object: of the same stripe -- the paper's Figure 5b,
// 16-byte nodes in one 32-byte stripe -- or of another stripe that merely
// collides in the table -- Section 5.2's arena-aligned glibc nodes), which is
// what the study counts.
//
// ---- Lock words -------------------------------------------------------------
//
// Bit 0 clear: unlocked, and the rest is the version (the global clock value
// of the last commit that wrote a stripe of the entry). Bit 0 set: locked, and
// the rest names the owner -- its thread id (owner_bits bits) and the index of
// the owner's lock record for this entry (the rest), so the owner finds its
// buffered writes without a search and nobody ever dereferences another
// thread's memory to learn who owns an entry.
//
// ---- Storage ----------------------------------------------------------------
//
// The table is plain words from calloc, reached through std::atomic_ref: for
// a table of any size the allocator hands out fresh pages that the kernel
// zeroes when first touched, so a table costs the memory of the entries used,
// as TinySTM's static lock array (zero pages of the BSS) does. An array of
// std::atomic would be written whole by its constructors: 2^30 entries, 16
// GiB, took 28 s and all of that memory before a 1-s run began.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

namespace smr::stm {

/// The mapping of addresses to versioned locks (TinySTM 1.0.4's defaults).
struct stm_config {
    /// log2 of the number of entries (2^20 = 1M entries, 8 MB of locks).
    unsigned ort_bits = 20;
    /// Address bits dropped before indexing: stripes of 2^shift bytes share
    /// an entry (5: 32-byte stripes).
    unsigned shift = 5;

    /// Throws std::invalid_argument unless 1 <= ort_bits <= 30 and shift <= 12.
    void validate() const {
        if (ort_bits == 0 || ort_bits > 30) {
            throw std::invalid_argument("stm_config: ort_bits must be in [1, 30], got " +
                                        std::to_string(ort_bits));
        }
        if (shift > 12) {
            throw std::invalid_argument("stm_config: shift must be at most 12, got " +
                                        std::to_string(shift));
        }
    }
};

/// 2^ort_bits versioned locks plus, parallel to them, the word each lock was
/// last taken for. Entries are packed (8 bytes each), as in TinySTM: a padded
/// entry would multiply the table's cache footprint by 8 or 16.
class orec_table {
    using lock_ref = std::atomic_ref<std::uint64_t>;
    using owner_ref = std::atomic_ref<std::uintptr_t>;
    // calloc's alignment is max_align_t's; the words need no more, and every
    // access is a plain load, store or CAS, never a lock inside the library.
    static_assert(lock_ref::required_alignment <= alignof(std::max_align_t) &&
                  owner_ref::required_alignment <= alignof(std::max_align_t));
    static_assert(lock_ref::is_always_lock_free && owner_ref::is_always_lock_free);

    struct free_words {
        void operator()(void* words) const noexcept { std::free(words); }
    };
    /// n zeroed words (calloc creates the array of an implicit-lifetime type).
    template <class Word>
    static std::unique_ptr<Word[], free_words> zeroed_words(std::size_t n) {
        auto* words = static_cast<Word*>(std::calloc(n, sizeof(Word)));
        if (words == nullptr) throw std::bad_alloc();
        return std::unique_ptr<Word[], free_words>(words);
    }

  public:
    /// Bits of a lock word that hold the owner's thread id.
    static constexpr unsigned owner_bits = 20;
    /// Thread ids must be below this.
    static constexpr std::size_t max_owners = std::size_t{1} << owner_bits;
    /// Flags in the low bits of a recorded owner word (words are 8-byte
    /// aligned, so bits 0-2 of their address are free): the owner has written
    /// more than one word under the lock, all in the first word's stripe ...
    static constexpr std::uintptr_t several_words = 1;
    /// ... or words of more than one stripe.
    static constexpr std::uintptr_t several_stripes = 2;
    static constexpr std::uintptr_t owner_flags = several_words | several_stripes;
    /// When the owner did not say which object its word belongs to, conflicts
    /// are told apart at this granularity, malloc's alignment: no allocator
    /// puts two blocks in one aligned 16 bytes, so two words of one granule
    /// are one object's (a node's key and next), and a conflict between them
    /// would happen with any mapping -- it is counted true. Two granules may
    /// be two objects that only the mapping put under one lock (the paper's
    /// Figure 5b), or two parts of one larger object: counted false (best
    /// effort). A store given its object (transaction::object_extent) and a
    /// sized free record the object's words instead, which is exact.
    static constexpr std::uintptr_t granule = 16;
    /// A recorded owner word may cover a run of words (the words of the
    /// object written, or of a block freed, in the stripe): their number sits
    /// above this bit, 0 when unknown. User-space addresses on x86-64 and
    /// AArch64 stay below 2^48, so the bits are free.
    static constexpr unsigned span_shift = 52;
    static constexpr std::uintptr_t address_bits =
        ((std::uintptr_t{1} << span_shift) - 1) & ~owner_flags;

    /// The owner word for `words` words from `address`, all in one stripe
    /// (0: the object is unknown, the granule rule applies), no flag.
    static constexpr std::uintptr_t owner_word_for(std::uintptr_t address,
                                                   std::uintptr_t words = 0) noexcept {
        return address | (words << span_shift);
    }
    /// The first word a recorded owner word names (no flags, no span).
    static constexpr std::uintptr_t first_word_of(std::uintptr_t recorded) noexcept {
        return recorded & address_bits;
    }
    /// Whether `address` is among the words the recorded owner word names.
    static constexpr bool covers(std::uintptr_t recorded, std::uintptr_t address) noexcept {
        const std::uintptr_t first = first_word_of(recorded);
        const std::uintptr_t words = recorded >> span_shift;
        return address >= first && address - first < 8 * (words == 0 ? 1 : words);
    }

    explicit orec_table(const stm_config& config)
        : shift_((config.validate(), config.shift)),
          mask_((std::size_t{1} << config.ort_bits) - 1),
          locks_(zeroed_words<std::uint64_t>(mask_ + 1)),
          owner_words_(zeroed_words<std::uintptr_t>(mask_ + 1)) {}

    orec_table(const orec_table&) = delete;
    orec_table& operator=(const orec_table&) = delete;

    // ---- mapping ------------------------------------------------------------

    std::size_t index_of(const void* address) const noexcept {
        return (reinterpret_cast<std::uintptr_t>(address) >> shift_) & mask_;
    }
    /// The stripe-aligned address of `address`'s stripe (its first byte).
    std::uintptr_t stripe_of(std::uintptr_t address) const noexcept {
        return (address >> shift_) << shift_;
    }
    std::uintptr_t stripe_of(const void* address) const noexcept {
        return stripe_of(reinterpret_cast<std::uintptr_t>(address));
    }
    std::size_t size() const noexcept { return mask_ + 1; }
    unsigned shift() const noexcept { return shift_; }

    // ---- entries ------------------------------------------------------------

    /// Entry `index`'s versioned lock. Every access to an entry goes through
    /// such a reference (a plain access beside it would be a data race).
    lock_ref lock(std::size_t index) noexcept { return lock_ref(locks_[index]); }
    /// A recent value of entry `index` (relaxed): for tests and diagnostics.
    std::uint64_t word(std::size_t index) const noexcept {
        return lock_ref(locks_[index]).load(std::memory_order_relaxed);
    }

    /// Entries locked now (relaxed reads of the whole table): zero whenever
    /// no transaction runs. For validation and tests.
    std::size_t locked_entries() const noexcept {
        std::size_t locked = 0;
        for (std::size_t i = 0; i <= mask_; ++i) locked += is_locked(word(i)) ? 1u : 0u;
        return locked;
    }

    /// The first word the owner of entry `index` wrote under its lock (or the
    /// run of words of a block it frees), with owner_flags. Written by the owner between locking
    /// and releasing the entry, read by a transaction that met the lock. Relaxed on both sides: the
    /// value only classifies an abort, so a stale one (the previous owner's word, read between the
    /// new owner's CAS and its store here) misclassifies that one abort and nothing else.
    void set_owner_word(std::size_t index, std::uintptr_t recorded) noexcept {
        owner_ref(owner_words_[index]).store(recorded, std::memory_order_relaxed);
    }
    std::uintptr_t owner_word(std::size_t index) const noexcept {
        return owner_ref(owner_words_[index]).load(std::memory_order_relaxed);
    }

    /// How an access to `address`, which met a lock held by another
    /// transaction, relates to the owner word recorded for the entry.
    enum class conflict_kind : std::uint8_t {
        true_or_unknown,  ///< the owner writes that word (or its granule), or unknown
        shared_stripe,    ///< another granule of the owner's stripe (false)
        table_collision,  ///< another stripe on the same entry (false)
    };
    conflict_kind classify(std::uintptr_t recorded, const void* address) const noexcept {
        const std::uintptr_t word = first_word_of(recorded);
        if (word == 0 || (recorded & several_stripes) != 0) return conflict_kind::true_or_unknown;
        if (stripe_of(word) != stripe_of(address)) return conflict_kind::table_collision;
        const auto at = reinterpret_cast<std::uintptr_t>(address);
        const bool object_known = (recorded >> span_shift) != 0;
        const bool same_object =
            object_known ? covers(recorded, at) : word / granule == at / granule;
        if ((recorded & several_words) != 0 || same_object) return conflict_kind::true_or_unknown;
        return conflict_kind::shared_stripe;
    }

    // ---- lock words ---------------------------------------------------------

    static constexpr bool is_locked(std::uint64_t word) noexcept { return (word & 1) != 0; }
    static constexpr std::uint64_t version_of(std::uint64_t word) noexcept { return word >> 1; }
    static constexpr std::uint64_t unlocked_word(std::uint64_t version) noexcept {
        return version << 1;
    }
    /// Locked by thread `owner`, whose lock record for the entry is `record`.
    static constexpr std::uint64_t locked_word(std::uint32_t owner, std::uint64_t record) noexcept {
        return (((record << owner_bits) | owner) << 1) | 1;
    }
    static constexpr std::uint32_t owner_of(std::uint64_t word) noexcept {
        return static_cast<std::uint32_t>((word >> 1) & (max_owners - 1));
    }
    static constexpr std::size_t record_of(std::uint64_t word) noexcept {
        return static_cast<std::size_t>(word >> (owner_bits + 1));
    }

  private:
    unsigned shift_;
    std::size_t mask_;
    std::unique_ptr<std::uint64_t[], free_words> locks_;         // zero: unlocked, version 0
    std::unique_ptr<std::uintptr_t[], free_words> owner_words_;  // zero: no owner yet
};

}  // namespace smr::stm
