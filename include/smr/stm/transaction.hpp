// One thread's transaction descriptor: the read set, the buffered write set,
// the locks it holds, the blocks it allocated and the frees it defers, and
// the protocol that keeps them consistent (stm.hpp says why this design).
//
// ---- Reading a word ---------------------------------------------------------
//
// A seqlock read against the word's versioned lock: load the lock (acquire);
// if another transaction holds it, abort (read_locked); load the word; fence
// (acquire); load the lock again. If it changed, a commit wrote the stripe
// meanwhile: read again (a few times, then abort). If the version is newer
// than the snapshot, extend the snapshot: read the clock, check that every
// lock in the read set still shows the version recorded, and move the
// snapshot up; else abort (validation). Every value a transaction returns is
// therefore part of one consistent state, the one at its snapshot, even in a
// transaction that is doomed to abort (opacity): a body never sees a total
// that does not add up, never follows a pointer that was never stored.
//
// ---- Writing a word ---------------------------------------------------------
//
// Encounter-time locking: the first store to a stripe takes its lock at once
// (CAS); a lock held by another transaction aborts this one (write_locked).
// The value goes into the write set only; memory is written at commit. A
// later load of the address returns the buffered value; a load of another
// address of a stripe we locked reads memory, which nobody else can change
// while we hold the lock (we extend the snapshot before locking a stripe whose
// version is newer than it, so that memory belongs to our snapshot too).
//
// ---- Committing -------------------------------------------------------------
//
// A read-only transaction has nothing to do: its reads were consistent at its
// snapshot. An update transaction takes a commit version from the clock
// (fetch_add), validates its read set unless nobody committed since its
// snapshot (commit version == snapshot + 1), writes its buffered values and
// releases each lock with the commit version. An abort releases each lock
// with the version it had before: memory was never written, so readers that
// saw that version before still read what it covers.
//
// ---- Memory ordering --------------------------------------------------------
//
// Data words are std::atomic_ref<T> of the word's own type, relaxed (the same
// instructions as std::atomic_ref<std::uint64_t>, without reading a pointer
// through an integer glvalue). The seqlock discipline makes that enough:
//   - A commit's release fence comes before its data stores. If a reader's
//     relaxed data load reads one of them, that fence synchronizes with the
//     reader's acquire fence, so the commit's lock CAS happens before the
//     reader's second lock load: the reader sees the lock or a newer version
//     and retries. A reader that passes the check read the version the commit
//     released, with acquire, so it also sees everything the committer wrote
//     before (the fields of a node it allocated and published).
//   - The clock is only ever incremented by an acq_rel fetch_add, so every
//     increment continues the release sequence of every earlier one. A
//     snapshot read (acquire) that returns c therefore happens after the
//     lock CASes of every commit whose version is <= c: a later lock load
//     sees those locks or their released versions, never the versions below
//     them. That is why a version <= snapshot may be accepted without
//     validation, and why two commits that each read what the other writes
//     cannot both skip seeing the other's locks: their fetch_adds are ordered,
//     and the later one validates after it.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "smr/core/counters.hpp"
#include "smr/core/fence.hpp"
#include "smr/core/mutant.hpp"
#include "smr/core/padded.hpp"
#include "smr/stm/orec_table.hpp"

namespace smr::stm {

// The seqlock's fences (core::fence) only decide which reads must retry: a
// read that passes the check read the lock word a commit released, with
// acquire, which TSan does model, and that edge orders everything a reader
// then uses (the published node's fields).

/// Why a transaction attempt was abandoned.
enum class abort_cause : std::uint8_t {
    validation,       ///< a value read changed (at extension, commit, or a busy re-read)
    write_locked,     ///< a store met a lock held by another transaction
    read_locked,      ///< a load met a lock held by another transaction
    explicit_restart  ///< the body called transaction::restart()
};

/// Totals over all threads. aborts is the sum of the four aborts_* causes.
///
/// false_aborts counts the aborts the allocator study calls false: the
/// conflict was on a lock, not on data the transaction used. Two kinds, both
/// classified by what the lock's last owner recorded it wrote
/// (orec_table::classify: another 16-byte granule than the one accessed, so
/// another object, or the object it named):
///   - false_aborts_lock_meet: a load or store met the lock of an owner that
///     writes another object (a subset of aborts_write_locked +
///     aborts_read_locked);
///   - false_aborts_validation: a word read was still unchanged, but its
///     lock's version had moved on because the last owner wrote another
///     object under it (the paper's Figure 5b once the neighbour's writer
///     commits first; a subset of aborts_validation). Every entry that failed
///     validation must be such a neighbour's for the abort to count.
/// false_aborts_collision counts those (of either kind) where the word is not
/// even in the owner's stripe: the two stripes only share the table entry.
/// Best effort: an owner that wrote several words under one lock makes its
/// conflicts count as true, and a validation abort is classified by the
/// entry's latest owner, which may have locked it again since. An exception
/// thrown by a body is neither a commit nor an abort.
struct stm_stats {
    std::uint64_t commits = 0;
    std::uint64_t aborts = 0;
    std::uint64_t aborts_validation = 0;
    std::uint64_t aborts_write_locked = 0;
    std::uint64_t aborts_read_locked = 0;
    std::uint64_t aborts_explicit = 0;
    std::uint64_t false_aborts = 0;  ///< false_aborts_lock_meet + false_aborts_validation
    std::uint64_t false_aborts_lock_meet = 0;
    std::uint64_t false_aborts_validation = 0;
    std::uint64_t false_aborts_collision = 0;

    /// The counts of an interval: these totals less an earlier reading.
    friend stm_stats operator-(stm_stats later, const stm_stats& earlier) noexcept {
        later.commits -= earlier.commits;
        later.aborts -= earlier.aborts;
        later.aborts_validation -= earlier.aborts_validation;
        later.aborts_write_locked -= earlier.aborts_write_locked;
        later.aborts_read_locked -= earlier.aborts_read_locked;
        later.aborts_explicit -= earlier.aborts_explicit;
        later.false_aborts -= earlier.false_aborts;
        later.false_aborts_lock_meet -= earlier.false_aborts_lock_meet;
        later.false_aborts_validation -= earlier.false_aborts_validation;
        later.false_aborts_collision -= earlier.false_aborts_collision;
        return later;
    }
};

template <class Domain>
class stm;

/// What a transaction body receives. Transactional words are 8 bytes, 8-byte
/// aligned, trivially copyable (pointers, std::int64_t, double), and while a
/// transaction may run they are read and written only through load and store.
class alignas(core::false_sharing_range) transaction {
  public:
    transaction(const transaction&) = delete;
    transaction& operator=(const transaction&) = delete;

    /// The value of *address in this transaction's snapshot (or its own
    /// buffered store). Aborts the attempt if the word is locked by another
    /// transaction or changed beyond what the snapshot can be extended over.
    template <class T>
    T load(const T* address) {
        check_word<T>(address);
        const std::size_t index = orecs_->index_of(address);
        const auto lock = orecs_->lock(index);
        for (unsigned attempt = 0; attempt != read_attempts; ++attempt) {
            // acquire: pairs with the release store that unlocked the entry at
            // a commit, so that commit's data, and everything its committer
            // wrote before (fields of nodes it published), is visible.
            const std::uint64_t before = lock.load(std::memory_order_acquire);
            if (orec_table::is_locked(before)) return load_locked(address, index, before);
            const T value = word_ref(address).load(std::memory_order_relaxed);
            // acquire fence: synchronizes with the release fence of the commit
            // whose data store the load above may have read, so the re-read
            // below sees that commit's lock (or a newer version).
            core::fence<std::memory_order_acquire>();
            if (lock.load(std::memory_order_relaxed) != before) continue;  // written meanwhile
            record_read(index, before, address);
            return value;
        }
        validation_abort(index, address);
    }

    /// The object a stored word belongs to (its first byte and size): a
    /// transaction that meets the lock on another word of it has a true
    /// conflict, on a word outside it a false one (stm_stats::false_aborts).
    struct object_extent {
        const void* base;
        std::size_t bytes;
    };

    /// Buffers *address = value until commit, locking the word's entry now.
    /// Without `object`, conflicts on the entry are classified at malloc's
    /// 16-byte granularity (orec_table::granule).
    template <class T>
    void store(T* address, std::type_identity_t<T> value) {
        check_word<T>(address);
        const std::size_t record = lock_for_write(orecs_->index_of(address), address);
        buffer(record, address, std::bit_cast<std::uint64_t>(value), &write_as<T>);
    }

    /// As store(address, value), naming the object the word belongs to.
    template <class T>
    void store(T* address, std::type_identity_t<T> value, object_extent object) {
        check_word<T>(address);
        const auto* base = static_cast<const std::byte*>(object.base);
        [[maybe_unused]] const auto* word = reinterpret_cast<const std::byte*>(address);
        assert(word >= base && word + 8 <= base + object.bytes && "the word is in its object");
        const auto* stripe = reinterpret_cast<const std::byte*>(orecs_->stripe_of(address));
        const std::byte* first = std::max(base, stripe);
        const std::byte* end =
            std::min(base + object.bytes, stripe + (std::size_t{1} << orecs_->shift()));
        const std::size_t record = lock_for_write(orecs_->index_of(address), first,
                                                  static_cast<std::uintptr_t>(end - first + 7) / 8);
        buffer(record, address, std::bit_cast<std::uint64_t>(value), &write_as<T>);
    }

    /// std::malloc(bytes), freed again (std::free) if the attempt aborts. No
    /// header in front of the block: its address is the allocator's choice.
    void* alloc(std::size_t bytes) {
        allocated_.push_back(nullptr);  // the slot first: recording cannot fail after malloc
        void* block = std::malloc(bytes);
        if (block == nullptr) {
            allocated_.pop_back();
            if (bytes != 0) throw std::bad_alloc();
            return nullptr;
        }
        allocated_.back() = block;
        return block;
    }

    /// alloc(sizeof(T)) and placement new. Its fields are plain until the
    /// commit that publishes the node; only trivially destructible types,
    /// since memory is released by std::free without a destructor.
    template <class T, class... Args>
    T* make(Args&&... args) {
        static_assert(std::is_trivially_destructible_v<T>,
                      "freed by std::free: no destructor runs");
        static_assert(alignof(T) <= alignof(std::max_align_t), "std::malloc's alignment");
        void* block = alloc(sizeof(T));  // if the constructor throws, rollback frees it
        if constexpr (std::is_aggregate_v<T>) {
            return ::new (block) T{std::forward<Args>(args)...};  // Clang < 16: no T(...) for these
        } else {
            return ::new (block) T(std::forward<Args>(args)...);
        }
    }

    /// Frees `block` (from std::malloc) once this attempt commits and every
    /// transaction that may still read it has finished; nothing if it aborts.
    ///
    /// Given its size, the block's words are also locked until the commit (no
    /// value written), as TinySTM's stm_free does: its commit then gives them
    /// a new version, so a transaction that read the block fails validation
    /// instead of going on from memory on its way out. A transaction that
    /// meets one of those locks on the block's own words has a true conflict;
    /// on a neighbour's word in the same stripe, a false one -- the effect
    /// the allocator study measures. Without a size (an untyped block), only
    /// the free is deferred.
    void free(void* block, std::size_t bytes = 0) {
        if (block == nullptr) return;
        lock_block(static_cast<const std::byte*>(block), bytes);
        freed_.push_back(block);
    }

    /// free(object, sizeof(T)).
    template <class T>
    requires(!std::is_void_v<T>) void free(T* object) {
        free(const_cast<void*>(static_cast<const void*>(object)), sizeof(T));
    }

    /// Abandons this attempt and runs the body again.
    [[noreturn]] void restart() { abort_attempt(abort_cause::explicit_restart); }

    int tid() const noexcept { return static_cast<int>(owner_); }
    /// No store so far in this attempt.
    bool read_only() const noexcept { return locks_.empty(); }

  private:
    template <class Domain>
    friend class stm;

    /// Thrown by an abort, caught only by stm::atomically. A body must let it
    /// pass (no catch (...) that swallows it).
    struct abort_signal {};

    struct read_entry {
        std::size_t orec;
        std::uint64_t word;   // the unlocked word seen
        const void* address;  // the first word read under it (in its granule): to classify
    };
    using word_writer = void (*)(void*, std::uint64_t) noexcept;
    struct write_entry {
        void* address;
        std::uint64_t bits;
        word_writer write;  // stores bits as the word's own type
        std::size_t next;   // the previous write under the same lock, or no_write
    };
    struct lock_record {
        std::size_t orec;
        std::uint64_t previous;   // the unlocked word replaced: restored on abort
        std::size_t last_write;   // the latest write under this lock (a chain)
        std::uintptr_t recorded;  // our value of orec_table::owner_word
    };

    static constexpr std::size_t no_write = static_cast<std::size_t>(-1);
    /// Re-reads of a word whose stripe keeps being committed before giving up.
    static constexpr unsigned read_attempts = 8;

    transaction() = default;

    void bind(orec_table& orecs, std::atomic<std::uint64_t>& clock, int tid) noexcept {
        orecs_ = &orecs;
        clock_ = &clock;
        owner_ = static_cast<std::uint32_t>(tid);
    }

    void begin() noexcept {
        assert(!active_ && "one transaction at a time per thread id");
        active_ = true;
        // acquire: see the clock argument at the top of the file.
        snapshot_ = clock_->load(std::memory_order_acquire);
    }

    /// Makes the attempt's stores visible, or throws abort_signal (validation)
    /// with nothing written. Frees stay in freed_ for the caller.
    void commit() {
        if (locks_.empty()) return;  // read-only: consistent at its snapshot
        // acq_rel: release makes our lock CASes visible to every snapshot
        // read that returns our version or later; acquire orders the lock
        // CASes of every earlier commit before our validation.
        const std::uint64_t version = clock_->fetch_add(1, std::memory_order_acq_rel) + 1;
        if (version != snapshot_ + 1 && !SMR_MUTANT("stm_commit_skips_read_validation") &&
            !read_set_valid()) {
            validation_abort();
        }
        // release fence: see load(); a reader that sees one of the stores
        // below sees our locks at its re-read.
        core::fence<std::memory_order_release>();
        for (const write_entry& w : writes_) w.write(w.address, w.bits);
        const std::uint64_t released = orec_table::unlocked_word(version);
        for (const lock_record& r : locks_) {
            // release: pairs with the acquire lock loads of readers and of the
            // next owner's CAS, publishing the stores above.
            orecs_->lock(r.orec).store(released, std::memory_order_release);
        }
        locks_.clear();
    }

    /// After a successful commit and once the caller took freed_.
    void end_committed() noexcept {
        commits_.add();
        clear();
    }

    /// Undoes an attempt: locks back to their previous versions, allocations
    /// freed, deferred frees forgotten.
    void rollback() noexcept {
        for (const lock_record& r : locks_) {
            // release: our loads under the lock happen before the next owner's
            // stores (its CAS acquires this).
            orecs_->lock(r.orec).store(r.previous, std::memory_order_release);
        }
        for (void* block : allocated_) std::free(block);
        clear();
    }

    const std::vector<void*>& deferred_frees() const noexcept { return freed_; }

    void add_stats_to(stm_stats& out) const noexcept {
        out.commits += commits_.get();
        out.aborts += aborts_.get();
        out.aborts_validation += aborts_validation_.get();
        out.aborts_write_locked += aborts_write_locked_.get();
        out.aborts_read_locked += aborts_read_locked_.get();
        out.aborts_explicit += aborts_explicit_.get();
        out.false_aborts += false_aborts_lock_meet_.get() + false_aborts_validation_.get();
        out.false_aborts_lock_meet += false_aborts_lock_meet_.get();
        out.false_aborts_validation += false_aborts_validation_.get();
        out.false_aborts_collision += false_aborts_collision_.get();
    }

    // ---- reads --------------------------------------------------------------

    /// `word` is locked: by us (read our buffered value, or memory we hold
    /// locked), or by another transaction (abort).
    template <class T>
    T load_locked(const T* address, std::size_t index, std::uint64_t word) {
        if (orec_table::owner_of(word) != owner_) {
            conflict(abort_cause::read_locked, address, index);
        }
        const std::size_t w = find_write(orec_table::record_of(word), address);
        if (w != no_write) return std::bit_cast<T>(writes_[w].bits);
        return word_ref(address).load(std::memory_order_relaxed);  // only we may write it
    }

    /// Another word under the same lock and version needs no new entry to be
    /// validated, only to be classified: one per granule keeps what an abort
    /// is told apart by (orec_table::granule) at the cost of a second entry
    /// for a traversal that reads two neighbours in one stripe.
    void record_read(std::size_t index, std::uint64_t word, const void* address) {
        if (reads_.empty() || reads_.back().orec != index || reads_.back().word != word ||
            !same_granule(reads_.back().address, address)) {
            reads_.push_back({index, word, address});
        }
        // Written after our snapshot: extend (which also checks this entry).
        if (orec_table::version_of(word) > snapshot_) extend();
    }

    /// Moves the snapshot to the current clock if nothing read has changed;
    /// else aborts (validation).
    void extend() {
        // acquire: see the clock argument at the top of the file.
        const std::uint64_t now = clock_->load(std::memory_order_acquire);
        if (!read_set_valid()) validation_abort();
        snapshot_ = now;
    }

    /// Every entry read still shows the word recorded, or is locked by us
    /// over that word.
    bool read_set_valid() const noexcept {
        for (const read_entry& r : reads_) {
            if (!entry_valid(r)) return false;
        }
        return true;
    }

    bool entry_valid(const read_entry& r) const noexcept {
        // relaxed: only the word is compared, no data is read after it.
        // The clock read (or fetch_add) just before already ordered the
        // lock CASes of every commit up to it before this load, so it
        // cannot return a version those commits replaced.
        const std::uint64_t now = orecs_->lock(r.orec).load(std::memory_order_relaxed);
        if (now == r.word) return true;
        if (!orec_table::is_locked(now) || orec_table::owner_of(now) != owner_) return false;
        return locks_[orec_table::record_of(now)].previous == r.word;
    }

    static bool same_granule(const void* a, const void* b) noexcept {
        return reinterpret_cast<std::uintptr_t>(a) / orec_table::granule ==
               reinterpret_cast<std::uintptr_t>(b) / orec_table::granule;
    }

    // ---- writes -------------------------------------------------------------

    /// Locks entry `index` for this transaction (or finds that it already
    /// holds it) and returns the index of its lock record.
    /// `words` words from `address`, all in one stripe, are what we lock the
    /// entry for (recorded for the classification of others' conflicts; 0:
    /// the word at `address`, its object unknown).
    std::size_t lock_for_write(std::size_t index, const void* address, std::uintptr_t words = 0) {
        const auto lock = orecs_->lock(index);
        // acquire: as in load (memory under the lock is read from here on).
        std::uint64_t word = lock.load(std::memory_order_acquire);
        for (;;) {
            if (orec_table::is_locked(word)) {
                if (orec_table::owner_of(word) == owner_) return orec_table::record_of(word);
                conflict(abort_cause::write_locked, address, index);
            }
            // Newer than the snapshot: extend first, so the rest of the
            // stripe, which we will read from memory, is in our snapshot.
            if (orec_table::version_of(word) > snapshot_) extend();
            const std::size_t record = locks_.size();
            const std::uintptr_t recorded =
                orec_table::owner_word_for(reinterpret_cast<std::uintptr_t>(address), words);
            // Recorded before the CAS, so nothing can fail once we hold the lock.
            locks_.push_back({index, word, no_write, recorded});
            // acq_rel: acquire pairs with the release that unlocked the entry
            // (we read its memory from now on); release orders our earlier
            // accesses before whoever acquires the entry after us.
            if (lock.compare_exchange_weak(word, orec_table::locked_word(owner_, record),
                                           std::memory_order_acq_rel, std::memory_order_acquire)) {
                orecs_->set_owner_word(index, recorded);
                return record;
            }
            locks_.pop_back();  // word now holds the entry's current value
        }
    }

    void buffer(std::size_t record, void* address, std::uint64_t bits, word_writer write) {
        const std::size_t w = find_write(record, address);
        if (w != no_write) {
            writes_[w].bits = bits;
            return;
        }
        lock_record& lock = locks_[record];
        note_if_new_word(record, address);
        writes_.push_back({address, bits, write, lock.last_write});
        lock.last_write = writes_.size() - 1;
    }

    /// Locks the stripes of the `bytes` bytes (rounded up to words) at
    /// `block`, each for the run of the block's words in it.
    void lock_block(const std::byte* block, std::size_t bytes) {
        const std::byte* const end = block + (bytes + 7) / 8 * 8;
        for (const std::byte* word = block; word < end;) {
            const auto stripe_end = reinterpret_cast<const std::byte*>(
                orecs_->stripe_of(word) + (std::uintptr_t{1} << orecs_->shift()));
            const std::byte* const run_end = std::min(end, stripe_end);
            const std::size_t held = locks_.size();
            const std::size_t record = lock_for_write(
                orecs_->index_of(word), word, static_cast<std::uintptr_t>(run_end - word) / 8);
            if (record < held) note_if_new_word(record, word);
            word = run_end;
        }
    }

    /// Lock record `record` was already ours: if it was taken for other words
    /// than `address`, its recorded owner word is flagged.
    void note_if_new_word(std::size_t record, const void* address) noexcept {
        lock_record& lock = locks_[record];
        if (!orec_table::covers(lock.recorded, reinterpret_cast<std::uintptr_t>(address))) {
            note_second_word(lock, address);
        }
    }

    /// A new word under a lock we already hold for another: flag the recorded
    /// owner word, so conflicts on the entry are no longer called false.
    void note_second_word(lock_record& lock, const void* address) noexcept {
        const std::uintptr_t first = orec_table::first_word_of(lock.recorded);
        const std::uintptr_t flag = orecs_->stripe_of(first) == orecs_->stripe_of(address)
                                        ? orec_table::several_words
                                        : orec_table::several_stripes;
        if ((lock.recorded & flag) != 0) return;
        lock.recorded |= flag;
        orecs_->set_owner_word(lock.orec, lock.recorded);
    }

    /// Our buffered write to `address` under lock record `record`, or no_write.
    std::size_t find_write(std::size_t record, const void* address) const noexcept {
        for (std::size_t w = locks_[record].last_write; w != no_write; w = writes_[w].next) {
            if (writes_[w].address == address) return w;
        }
        return no_write;
    }

    template <class T>
    static void write_as(void* address, std::uint64_t bits) noexcept {
        std::atomic_ref<T>(*static_cast<T*>(address))
            .store(std::bit_cast<T>(bits), std::memory_order_relaxed);
    }

    // ---- aborts -------------------------------------------------------------

    /// A lock held by another transaction: counted false when the owner's
    /// recorded word shows it writes another word (orec_table::classify).
    /// Best effort: the owner records its word just after its CAS, so a
    /// victim that reads the entry in between sees the previous owner's.
    [[noreturn]] void conflict(abort_cause cause, const void* address, std::size_t index) {
        using kind = orec_table::conflict_kind;
        const kind k = orecs_->classify(orecs_->owner_word(index), address);
        if (k != kind::true_or_unknown) false_aborts_lock_meet_.add();
        if (k == kind::table_collision) false_aborts_collision_.add();
        abort_attempt(cause);
    }

    /// The read set failed validation: false when every entry that failed
    /// was last written by an owner of another object than the word we read
    /// under it (classified as a lock meet is, by the entry's recorded owner
    /// word, which the last committer left behind or a current owner wrote).
    /// An entry we now hold ourselves was changed by an owner whose word ours
    /// replaced: unknown, so true. Runs only on the abort path.
    [[noreturn]] void validation_abort() {
        using kind = orec_table::conflict_kind;
        bool any_failed = false, all_false = true, all_collisions = true;
        for (const read_entry& r : reads_) {
            if (entry_valid(r)) continue;
            any_failed = true;
            const std::uint64_t now = orecs_->lock(r.orec).load(std::memory_order_relaxed);
            const kind k = orec_table::is_locked(now) && orec_table::owner_of(now) == owner_
                               ? kind::true_or_unknown
                               : orecs_->classify(orecs_->owner_word(r.orec), r.address);
            all_false = SMR_MUTANT("stm_validation_one_false_entry_suffices")
                            ? any_failed
                            : all_false && k != kind::true_or_unknown;
            all_collisions = all_collisions && k == kind::table_collision;
        }
        // An entry that changed back before this second look: classified as
        // nothing, so the abort counts as true.
        count_false_validation(any_failed && all_false, any_failed && all_collisions);
        abort_attempt(abort_cause::validation);
    }

    /// A load whose word's lock kept moving: its own entry decides.
    [[noreturn]] void validation_abort(std::size_t index, const void* address) {
        using kind = orec_table::conflict_kind;
        const kind k = orecs_->classify(orecs_->owner_word(index), address);
        count_false_validation(k != kind::true_or_unknown, k == kind::table_collision);
        abort_attempt(abort_cause::validation);
    }

    void count_false_validation(bool is_false, bool collision) noexcept {
        if (is_false) false_aborts_validation_.add();
        if (is_false && collision) false_aborts_collision_.add();
    }

    [[noreturn]] void abort_attempt(abort_cause cause) {
        aborts_.add();
        switch (cause) {
            case abort_cause::validation:
                aborts_validation_.add();
                break;
            case abort_cause::write_locked:
                aborts_write_locked_.add();
                break;
            case abort_cause::read_locked:
                aborts_read_locked_.add();
                break;
            case abort_cause::explicit_restart:
                aborts_explicit_.add();
                break;
        }
        throw abort_signal{};
    }

    // ---- helpers ------------------------------------------------------------

    template <class T>
    static void check_word(const T* address) noexcept {
        static_assert(sizeof(T) == 8 && alignof(T) == 8, "transactional words are 8-byte words");
        static_assert(std::is_trivially_copyable_v<T>, "words are copied as bits");
        static_assert(std::atomic_ref<T>::is_always_lock_free);
        assert(reinterpret_cast<std::uintptr_t>(address) % 8 == 0 && "unaligned word");
        (void)address;
    }

    template <class T>
    static std::atomic_ref<T> word_ref(const T* address) noexcept {
        // Only loaded through this reference when address is const.
        return std::atomic_ref<T>(*const_cast<T*>(address));
    }

    void clear() noexcept {
        reads_.clear();
        writes_.clear();
        locks_.clear();
        allocated_.clear();
        freed_.clear();
        active_ = false;
    }

    orec_table* orecs_ = nullptr;
    std::atomic<std::uint64_t>* clock_ = nullptr;
    std::uint32_t owner_ = 0;
    bool active_ = false;
    std::uint64_t snapshot_ = 0;  // every value read is current at this clock value
    std::vector<read_entry> reads_;
    std::vector<write_entry> writes_;
    std::vector<lock_record> locks_;
    std::vector<void*> allocated_;  // this attempt's blocks: freed on abort
    std::vector<void*> freed_;      // this attempt's frees: handed over at commit
    core::owner_counter commits_, aborts_, aborts_validation_, aborts_write_locked_;
    core::owner_counter aborts_read_locked_, aborts_explicit_, false_aborts_lock_meet_;
    core::owner_counter false_aborts_validation_, false_aborts_collision_;
};

}  // namespace smr::stm
