// STAMP's Genome on smrlab's STM: gene sequencing, which rebuilds a gene from
// overlapping segments sampled out of it. Minh, Chung, Kozyrakis and
// Olukotun, "STAMP: Stanford Transactional Applications for
// Multi-Processing", IISWC 2008 (doi:10.1109/IISWC.2008.4636089), Section
// III. Written from the paper's description and the public suite's structure
// (genome/genome.c, gene.c, segments.c, sequencer.c, table.c and lib/
// hashtable.c, list.c, pair.c of STAMP 0.9.10); no code is copied.
//
// ---- The workload ----------------------------------------------------------------
//
// A random gene of g nucleotides (a, c, g, t) and n segments of s nucleotides
// copied from random start positions, both drawn from one Mersenne Twister
// (seeded 0, as STAMP), then more segments where needed so that position 0
// starts one and no s - 1 positions in a row start none: consecutive starts
// then overlap by at least one nucleotide. That is STAMP's gene and segment
// creation, sequential and untimed. The clients' phase is STAMP's sequencer,
// the clients meeting at a barrier after every step:
//
//   1. duplicates out: each client inserts its share of the segments into a
//      shared hash set (g buckets, each a sorted chain), 12 inserts per
//      transaction (STAMP's CHUNK_STEP1);
//   2. each client takes a share of the set's buckets; per segment, one
//      transaction claims a free construct entry (an array of g - s + 1:
//      every possible start), then s transactions insert the entry into the
//      start tables, one per prefix length 1..s-1 keyed by the prefix's hash,
//      and one keyed by the whole segment's (STAMP's, which nothing reads);
//   3. for each overlap from s - 1 down to 1, each client takes a share of
//      the entries that have no successor yet (the ends) and walks the start
//      table of that length at the hash of the end's suffix: per candidate,
//      one transaction checks that the candidate still starts a chain, that
//      it is not the head of the end's own chain (a cycle) and that its
//      prefix is the end's suffix, and then links them: the candidate no
//      longer starts a chain, the merged chain's head and tail point at each
//      other, and the head's length grows. Then client 0 alone rehashes the
//      remaining ends' suffixes one nucleotide shorter and sets the jumps
//      over entries that are no longer ends (STAMP found this not worth
//      parallelizing);
//   4. client 0 concatenates the chains into the sequence.
//
// The allocator sees, inside transactions (tx.make), a 16-byte pair and a
// 16-byte chain node per unique segment in step 1 and s more 16-byte chain
// nodes per unique segment in step 2, STAMP's pair_t and list_node_t; before
// the clients start, (s + 1) x g chain headers of 32 bytes (STAMP's list_t,
// one malloc each), the construct entries (64 bytes each) and the end infos
// (16 bytes each) in one array apiece. Step 3 allocates nothing.
//
// ---- Where this port differs from STAMP 0.9.10 -------------------------------------
//
// - All steps run inside one phase of run_clients (clients.hpp), the clients
//   meeting at a std::barrier (STAMP's thread_barrier_wait). A client that
//   throws, or sees stop, leaves the barrier (arrive_and_drop), so that the
//   others are not left waiting: they stop at their next meeting and the run
//   fails with the reason. STAMP's extra barrier before step 4 is left out:
//   the last barrier of step 3 already orders it.
// - A link's transaction returns whether it linked, and the end's flag is
//   cleared after the commit (only its client reads it); STAMP writes the
//   flag, and the end's next entry, as local writes inside the transaction.
//   Here every word of a construct entry that a transaction writes goes
//   through it.
// - Bounds that STAMP leaves to its inputs: shares are clamped to the work
//   when clients outnumber the items (STAMP reads past the segments or the
//   entries), a client's first entry wraps around, and step 3's scan for the
//   first end stops at the last entry (STAMP reads one past the array when
//   every start position is a unique segment and entry 0 the only end). A
//   client that finds no free construct entry (STAMP spins forever), a
//   unique set that counts more segments than the gene has start positions,
//   an entry without a segment or a chain whose length word is wrong stops
//   the run with the reason.
// - Segments are stored back to back without terminators; a pair's key is a
//   pointer into them, compared with memcmp over s nucleotides (STAMP:
//   strcmp). The hashes are STAMP's (sdbm) over the same lowercase letters,
//   so every segment and entry lands in the bucket it lands in with STAMP.
// - Everything is freed at the end (STAMP leaks the chains' nodes, the unique
//   set and the segments added to cover the gene). The unique set has no
//   spare bucket (STAMP allocates one for its iterator).
// - The verification is STAMP's (the sequence equals the gene), plus the
//   unique set's own checks and no versioned lock left held.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "smr/ds/validation.hpp"
#include "smr/stm/stm.hpp"
#include "stamp/clients.hpp"

namespace smrbench::stamp {

/// STAMP's command line for Genome (-t is the thread count); the defaults
/// are genome.c's (its README's native-run input has -n16777216 instead).
struct genome_params {
    long gene_length = 1L << 14;    ///< -g: nucleotides of the gene
    long segment_length = 1L << 6;  ///< -s: nucleotides of a segment
    long segments = 1L << 22;       ///< -n: segments drawn; more are added to cover the gene
    std::uint32_t seed = 0;         ///< the gene's and the segments' generator (STAMP's: 0)

    /// Where a segment can start: g - s + 1, the most unique segments.
    long starts() const noexcept { return gene_length - segment_length + 1; }
    /// Throws std::invalid_argument naming the first parameter out of range
    /// (STAMP would copy a segment from position -1, or divide by zero).
    void check(long clients) const;
};

/// STAMP's named inputs: genome (-g256 -s16 -n16384, its simulator input),
/// genome+ (-g512 -s32 -n32768) and genome++ (-g16384 -s64 -n16777216, its
/// native-run input). Throws std::invalid_argument naming the inputs for any
/// other name.
genome_params genome_input(std::string_view name);

/// The names genome_input accepts, in order.
const std::vector<std::string_view>& genome_inputs();

/// STAMP's CHUNK_STEP1: segments inserted per transaction in step 1.
inline constexpr long genome_chunk = 12;

/// The gene and its segments, as STAMP creates them.
struct genome_sample {
    std::string gene;  ///< g nucleotides: a, c, g, t
    long segment_length = 0;
    long count = 0;                 ///< segments: n drawn, then those that cover the gene
    std::vector<char> nucleotides;  ///< the segments back to back, no terminator

    const char* segment(long i) const noexcept {
        return nucleotides.data() + static_cast<std::size_t>(i * segment_length);
    }
};

/// The sample of params, deterministic (params.seed decides it). Call
/// params.check first.
genome_sample sample_genome(const genome_params& params);

/// STAMP's constructEntry: eight words, 64 bytes, one per possible start. A
/// chain of linked entries (a stretch of the sequence) is reached from its
/// head, the entry that still starts one; the head's `end` is the chain's
/// tail and the tail's `start` the head (other entries' are stale), and the
/// head's `length` counts the chain's nucleotides.
struct construct_entry {
    std::int64_t is_start;   ///< no entry links to this one
    const char* segment;     ///< claimed in step 2; null: free
    std::uint64_t end_hash;  ///< the suffix step 3 looks for (plain: its client's)
    construct_entry* start;  ///< a tail's head
    construct_entry* next;   ///< the entry linked after this one
    construct_entry* end;    ///< a head's tail
    std::int64_t overlap;    ///< nucleotides shared with `next`
    std::int64_t length;     ///< a head's chain, in nucleotides
};
static_assert(sizeof(construct_entry) == 64);

/// STAMP's endInfoEntry: plain, read and written by the client whose share
/// holds it in step 3 and by client 0 between overlaps.
struct end_info {
    std::int64_t is_end;  ///< nothing linked after this entry yet
    std::int64_t jump;    ///< to the next entry that may still be an end
};
static_assert(sizeof(end_info) == 16);

/// STAMP's list node: 16 bytes, allocated by the transaction that inserts
/// it. `data` is written before the node is published and never again.
struct chain_node {
    void* data;
    chain_node* next;
};
/// STAMP's list header: the head node, its comparator's word (unused here,
/// kept for malloc's size class) and the length: 32 bytes from malloc.
struct chain {
    chain_node head;
    std::int64_t comparator_unused;
    std::int64_t size;
};
/// STAMP's pair, the unique set's element: key and value the same segment.
struct segment_pair {
    const char* key;
    const char* value;
};
static_assert(sizeof(chain_node) == 16 && sizeof(chain) == 32 && sizeof(segment_pair) == 16);

/// STAMP's sequencer over one STM. Instantiated for smr::debra_domain
/// (bench/stamp/genome.cpp), the reclaimer of the allocator study's runs.
template <class Domain>
class genome_sequencer {
  public:
    /// STAMP's sequencer_alloc: the unique set's g chains, s - 1 start tables
    /// and the whole-segment table of g chains each, g - s + 1 construct
    /// entries and end infos. `sample` must outlive it.
    genome_sequencer(Domain& domain, const smr::stm::stm_config& config,
                     const genome_sample& sample);
    ~genome_sequencer();
    genome_sequencer(const genome_sequencer&) = delete;
    genome_sequencer& operator=(const genome_sequencer&) = delete;

    /// The clients' phase (run_clients): steps 1 to 4 on `clients` threads,
    /// which the domain needs room for. Once per sequencer. Throws what
    /// thread creation throws.
    client_phase run(int clients);

    /// Quiescent, after run: the checks of docs/smrbench.md ("stamp"): the
    /// sequence equals the gene; every bucket of the unique set holds its own
    /// segments in strictly ascending order, as many as its size word says,
    /// and every sampled segment is among them; no versioned lock held.
    smr::ds::validation_result validate() const;

    const std::string& sequence() const noexcept { return sequence_; }
    smr::stm::stm<Domain>& transactional_memory() noexcept { return stm_; }

  private:
    friend struct genome_testing;  // tests corrupt the result
    class tx_view;
    class phases;

    void run_client(smr::context_ref<Domain> self, int client, int clients, phases& meet,
                    const std::atomic<bool>& stop);
    bool run_steps(smr::context_ref<Domain> self, int client, int clients, phases& meet,
                   const std::atomic<bool>& stop);
    void remove_duplicates(smr::context_ref<Domain> self, int client, int clients);
    long count_unique() const;
    void index_segments(smr::context_ref<Domain> self, int client, int clients, long unique);
    void index_entry(smr::context_ref<Domain> self, construct_entry& slot, const char* segment);
    void match_ends(smr::context_ref<Domain> self, int client, int clients, long unique,
                    long overlap);
    void next_ends(long unique, long overlap);
    void rehash(long index, long from);
    void assemble(long unique);
    void append_chain(long head, long unique);

    void check_sequence(smr::ds::validation_result& result) const;
    void check_unique_set(smr::ds::validation_result& result) const;
    void check_bucket(long bucket, std::unordered_set<std::string_view>& held,
                      smr::ds::validation_result& result) const;

    void reset_entries() noexcept;
    void add_table(std::vector<chain*>& table);
    void free_all() noexcept;

    construct_entry& entry(long i) noexcept { return entries_[static_cast<std::size_t>(i)]; }
    const construct_entry& entry(long i) const noexcept {
        return entries_[static_cast<std::size_t>(i)];
    }
    end_info& end_at(long i) noexcept { return ends_[static_cast<std::size_t>(i)]; }
    /// Entry i, which must have a segment by now (else the run stops).
    construct_entry& claimed(long i);
    long bucket_of(std::uint64_t hash) const noexcept;
    int compare(const char* a, const char* b) const noexcept;
    bool overlaps(const construct_entry& end, const construct_entry& start, long overlap) const;

    const genome_sample& sample_;
    long length_;   // s
    long buckets_;  // g: every table's chains
    std::vector<construct_entry> entries_;
    std::vector<end_info> ends_;
    std::vector<chain*> unique_;
    std::vector<std::vector<chain*>> starts_;  // [prefix length] 1..s-1; [0] unused, as STAMP
    std::vector<chain*> whole_;                // STAMP's hashToConstructEntryTable
    std::string sequence_;
    smr::stm::stm<Domain> stm_;
};

/// One run as STAMP's main makes it: the gene and segments created
/// (untimed), then the sequencer's clients started together; only their
/// phase is timed. app_run::tasks counts the transactions they committed
/// (STAMP reports none). Then the verification; a client that met a state no
/// transaction may see ends the run, and its reason is the verification's
/// failure. Throws std::invalid_argument for bad params, and what thread
/// creation throws.
app_run run_genome(const genome_params& params, int clients,
                   const smr::stm::stm_config& stm_config);

}  // namespace smrbench::stamp
