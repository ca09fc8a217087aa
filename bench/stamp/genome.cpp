// STAMP's Genome on smrlab's STM: the sample, the sequencer's transactions
// and steps, and the verification (bench/stamp/genome.hpp says what and why).
#include "stamp/genome.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "smr/core/mutant.hpp"
#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/guards.hpp"
#include "stamp/named_inputs.hpp"
#include "stamp/tx_fields.hpp"
#include "stamp/words.hpp"

namespace smrbench::stamp {

using smr::ds::validation_result;
using smr::stm::transaction;

namespace {

/// A state that an opaque STM never shows (STAMP asserts, or spins): stops
/// the run with the reason.
[[noreturn]] void impossible(const std::string& what) { throw std::logic_error("genome: " + what); }

/// STAMP draws with genrand_int32() % bound.
long draw(std::mt19937& g, long bound) {
    return static_cast<long>(g() % static_cast<std::uint64_t>(bound));
}

/// STAMP's one hash for every string (sdbm), continued from `hash`: so the
/// hash of a prefix grows one nucleotide at a time.
std::uint64_t sdbm(const char* text, long length, std::uint64_t hash = 0) noexcept {
    for (long i = 0; i != length; ++i) {
        const auto c = static_cast<std::uint64_t>(static_cast<unsigned char>(text[i]));
        hash = c + (hash << 6) + (hash << 16) - hash;
    }
    return hash;
}

const char* key_of(const void* data) noexcept {
    return static_cast<const segment_pair*>(data)->key;
}

/// STAMP's share of `count` items: equal shares, rounded, the last client
/// taking the rest; clamped to `count` (see the header).
struct share {
    long begin;
    long end;
};
share share_of(long count, int clients, int client) {
    const long size = (count + clients / 2) / clients;
    const long begin = std::min(count, size * client);
    return {begin, client == clients - 1 ? count : std::min(count, begin + size)};
}

/// Quiescent: every node of the table's chains, their data too if `pairs`.
void free_table(std::vector<chain*>& table, bool pairs) noexcept {
    for (chain* c : table) {
        if (c == nullptr) continue;
        for (chain_node* n = c->head.next; n != nullptr;) {
            chain_node* next = n->next;
            if (pairs) std::free(n->data);
            std::free(n);
            n = next;
        }
        std::free(c);
    }
    table.clear();
}

const std::array<named_input<genome_params>, 3>& named_inputs() {
    // genome/README: -g256 -s16 -n16384 (simulator), -g16384 -s64 -n16777216
    // (native runs); the paper's Table IV adds genome+ at -g512 -s32 -n32768.
    static const std::array<named_input<genome_params>, 3> inputs{{
        {"genome", {256, 16, 16384, 0}},
        {"genome+", {512, 32, 32768, 0}},
        {"genome++", {16384, 64, 16777216, 0}},
    }};
    return inputs;
}

}  // namespace

const std::vector<std::string_view>& genome_inputs() {
    static const std::vector<std::string_view> names = input_names(named_inputs());
    return names;
}

genome_params genome_input(std::string_view name) {
    return find_input(named_inputs(), "Genome", name);
}

void genome_params::check(long clients) const {
    const auto refuse = [](const std::string& what) {
        throw std::invalid_argument("genome: " + what);
    };
    if (clients < 1) refuse("clients (-t) must be at least 1");
    if (gene_length < 2 || gene_length > (1L << 30)) {
        refuse("the gene length (-g) must be in [2, 2^30]");
    }
    if (segment_length < 2 || segment_length > gene_length) {
        refuse("the segment length (-s) must be in [2, the gene length]");
    }
    if (segments < 1 || segments > (1L << 30)) refuse("segments (-n) must be in [1, 2^30]");
}

genome_sample sample_genome(const genome_params& params) {
    static constexpr std::array<char, 4> nucleotides{'a', 'c', 'g', 't'};  // STAMP's letters
    std::mt19937 g(params.seed);
    genome_sample out;
    out.segment_length = params.segment_length;
    out.gene.resize(static_cast<std::size_t>(params.gene_length));
    for (char& n : out.gene) n = nucleotides[static_cast<std::size_t>(draw(g, 4))];

    const long starts = params.starts();
    const long longest_gap = params.segment_length - 1;  // starts without one, at most
    const long most = params.segments + starts / longest_gap + 2;
    out.nucleotides.reserve(static_cast<std::size_t>(most * params.segment_length));
    std::vector<bool> started(static_cast<std::size_t>(starts), false);
    const auto add = [&](long at) {
        started[static_cast<std::size_t>(at)] = true;
        const char* from = out.gene.data() + at;
        out.nucleotides.insert(out.nucleotides.end(), from, from + params.segment_length);
        ++out.count;
    };
    for (long i = 0; i != params.segments; ++i) add(draw(g, starts));
    if (!started[0]) add(0);
    for (long i = 0; i < starts; ++i) {
        const long stop = std::min(i + longest_gap, starts);
        while (i < stop && !started[static_cast<std::size_t>(i)]) ++i;
        if (i == stop) add(--i);  // a run without a start: one at its last position
    }
    return out;
}

/// The sequencer's meeting point between steps (STAMP's thread_barrier_wait).
/// Every client leaves it once, when done or early, so that nobody waits for
/// a client that is gone; one that leaves early makes the others stop.
template <class Domain>
class genome_sequencer<Domain>::phases {
  public:
    explicit phases(int clients) : barrier_(clients) {}

    /// Waits for the others; false if the run is to stop.
    bool wait(const std::atomic<bool>& stop) {
        // Set before the clients start if run_clients could not start them
        // all: the barrier would wait for clients that never come.
        if (stop.load(std::memory_order_relaxed)) return false;
        barrier_.arrive_and_wait();
        // relaxed: a leaver's store happens before its arrival, which happens
        // before the phase completes and this wait returns.
        return !abandoned_.load(std::memory_order_relaxed) && !stop.load(std::memory_order_relaxed);
    }

    void leave(bool early) {
        if (early) abandoned_.store(true, std::memory_order_relaxed);
        barrier_.arrive_and_drop();
    }

  private:
    std::barrier<> barrier_;
    std::atomic<bool> abandoned_{false};
};

/// One transaction's view of the sequencer: STAMP's TMhashtable_insert,
/// TMtable_insert (TMlist_insert) and the claim and link of sequencer_run,
/// every mutable word through `tx`.
template <class Domain>
class genome_sequencer<Domain>::tx_view : tx_fields {
  public:
    tx_view(genome_sequencer& s, transaction& tx) noexcept : tx_fields(tx), s_(s) {}

    /// Step 1: false if the segment is in the set already. STAMP's order: a
    /// search, the pair, then the chain's insert, which searches again.
    bool insert_unique(const char* segment) {
        chain* c = s_.unique_[static_cast<std::size_t>(s_.bucket_of(sdbm(segment, s_.length_)))];
        const auto before = [&](const void* data) { return s_.compare(key_of(data), segment) < 0; };
        const auto same = [&](const void* data) { return s_.compare(key_of(data), segment) == 0; };
        const position found = locate(c, before);
        if (found.node != nullptr && same(found.node->data)) return false;
        auto* pair = tx_.make<segment_pair>(segment, segment);
        if (!insert(c, pair, before, same)) {
            tx_.free(pair);  // as STAMP; the search above makes it unreachable
            return false;
        }
        return true;
    }

    /// Step 2: `entry` into a start table's chain, ordered by address.
    bool insert_entry(chain* c, construct_entry* entry) {
        const auto before = [&](const void* data) {
            return std::less<const void*>{}(data, static_cast<const void*>(entry));
        };
        const auto same = [&](const void* data) { return data == entry; };
        return insert(c, entry, before, same);
    }

    /// Step 2: the first free entry from `from` on, wrapping around, now
    /// holding `segment`.
    long claim(long from, long count, const char* segment) {
        for (long seen = 0, i = from; seen != count; ++seen, i = (i + 1) % count) {
            construct_entry* e = &s_.entry(i);
            if (get(e, &construct_entry::segment) != nullptr) continue;
            set(e, &construct_entry::segment, segment);
            return i;
        }
        impossible("no free construct entry for a segment");
    }

    /// Step 3: links `start` after `end` if it still starts a chain other
    /// than the end's and its first `overlap` nucleotides end `end`.
    bool link(construct_entry* end, construct_entry* start, long overlap) {
        if (get(start, &construct_entry::is_start) == 0) return false;
        if (get(end, &construct_entry::start) == start) return false;  // a cycle
        if (!s_.overlaps(*end, *start, overlap)) return false;  // segments: fixed since step 2
        set(start, &construct_entry::is_start, 0);
        construct_entry* const tail = get(start, &construct_entry::end);
        construct_entry* const head = get(end, &construct_entry::start);
        set(tail, &construct_entry::start, head);
        set(end, &construct_entry::next, start);
        set(head, &construct_entry::end, tail);
        set(end, &construct_entry::overlap, overlap);
        set(head, &construct_entry::length,
            get(head, &construct_entry::length) + get(start, &construct_entry::length) - overlap);
        return true;
    }

  private:
    struct position {
        chain_node* previous;
        chain_node* node;  ///< the first node not before the key, or null
    };

    /// STAMP's findPrevious. A node's data was written before it was
    /// published: read plainly.
    template <class Before>
    position locate(chain* c, Before before) {
        chain_node* previous = &c->head;
        chain_node* node = first(c);
        while (node != nullptr && before(node->data)) {
            previous = node;
            node = tx_.load(&node->next);
        }
        return {previous, node};
    }

    /// The chain's first node. Mutant: read without the transaction, which
    /// then misses what an earlier insert of its own chunk put at the head
    /// (buffered until the commit), and a concurrent client's insert there:
    /// both searches of a duplicate find nothing, the second insert at the
    /// head overwrites the first (which leaks), and the size word counts both.
    /// The set then counts more segments than it holds, and step 2 stops the
    /// run. Own chunks make it deterministic: one client loses three inserts
    /// at the quick size (the seed decides which chunks).
    chain_node* first(chain* c) {
        return SMR_MUTANT("genome_chain_head_read_uninstrumented") ? c->head.next
                                                                   : tx_.load(&c->head.next);
    }

    /// STAMP's TMlist_insert without duplicates: a new node at its place and
    /// the size one more.
    template <class Before, class Same>
    bool insert(chain* c, void* data, Before before, Same same) {
        const position at = locate(c, before);
        if (at.node != nullptr && same(at.node->data)) return false;
        auto* added = tx_.make<chain_node>(data, at.node);
        if (at.previous == &c->head) {
            tx_.store(&c->head.next, added, {c, sizeof(chain)});
        } else {
            set(at.previous, &chain_node::next, added);
        }
        tx_.store(&c->size, tx_.load(&c->size) + 1, {c, sizeof(chain)});
        return true;
    }

    genome_sequencer& s_;
};

template <class Domain>
genome_sequencer<Domain>::genome_sequencer(Domain& domain, const smr::stm::stm_config& config,
                                           const genome_sample& sample)
    : sample_(sample),
      length_(sample.segment_length),
      buckets_(static_cast<long>(sample.gene.size())),
      entries_(sample.gene.size() - static_cast<std::size_t>(sample.segment_length) + 1),
      ends_(entries_.size()),
      stm_(domain, config) {
    try {
        add_table(unique_);
        starts_.resize(static_cast<std::size_t>(length_));
        for (std::size_t j = 1; j < starts_.size(); ++j) add_table(starts_[j]);
        add_table(whole_);
    } catch (...) {
        free_all();
        throw;
    }
    reset_entries();
}

template <class Domain>
genome_sequencer<Domain>::~genome_sequencer() {
    free_all();
}

/// STAMP's initial entries: each its own chain of one segment, and an end.
template <class Domain>
void genome_sequencer<Domain>::reset_entries() noexcept {
    for (construct_entry& e : entries_) e = {1, nullptr, 0, &e, nullptr, &e, 0, length_};
    for (end_info& e : ends_) e = {1, 1};
}

/// g empty chains, one malloc each (STAMP's list_alloc), into `table` as
/// they come, so that free_all finds those made before a bad_alloc.
template <class Domain>
void genome_sequencer<Domain>::add_table(std::vector<chain*>& table) {
    table.assign(static_cast<std::size_t>(buckets_), nullptr);
    for (chain*& c : table) c = ::new (checked_malloc(sizeof(chain))) chain{};
}

template <class Domain>
void genome_sequencer<Domain>::free_all() noexcept {
    free_table(unique_, true);
    for (std::vector<chain*>& table : starts_) free_table(table, false);
    free_table(whole_, false);
}

template <class Domain>
client_phase genome_sequencer<Domain>::run(int clients) {
    phases meet(clients);
    return run_clients(
        stm_.domain(), stm_, clients,
        [&](smr::context_ref<Domain> self, int client, const std::atomic<bool>& stop) {
            run_client(self, client, clients, meet, stop);
        });
}

template <class Domain>
void genome_sequencer<Domain>::run_client(smr::context_ref<Domain> self, int client, int clients,
                                          phases& meet, const std::atomic<bool>& stop) {
    struct member {  // leaves the barrier however the client ends
        phases& meet;
        bool finished;
        ~member() { meet.leave(!finished); }
    } in{meet, false};
    in.finished = run_steps(self, client, clients, meet, stop);
    stm_.flush(self);
}

/// STAMP's sequencer_run; false if the run stopped early.
template <class Domain>
bool genome_sequencer<Domain>::run_steps(smr::context_ref<Domain> self, int client, int clients,
                                         phases& meet, const std::atomic<bool>& stop) {
    if (stop.load(std::memory_order_relaxed)) return false;
    remove_duplicates(self, client, clients);
    if (!meet.wait(stop)) return false;
    const long unique = count_unique();
    index_segments(self, client, clients, unique);
    if (!meet.wait(stop)) return false;
    for (long overlap = length_ - 1; overlap > 0; --overlap) {
        match_ends(self, client, clients, unique, overlap);
        if (!meet.wait(stop)) return false;
        if (client == 0 && overlap > 1) next_ends(unique, overlap);
        if (!meet.wait(stop)) return false;
    }
    if (client == 0) assemble(unique);
    return true;
}

/// Step 1: the client's share of the segments, genome_chunk per transaction.
template <class Domain>
void genome_sequencer<Domain>::remove_duplicates(smr::context_ref<Domain> self, int client,
                                                 int clients) {
    const share mine = share_of(sample_.count, clients, client);
    for (long first = mine.begin; first < mine.end; first += genome_chunk) {
        const long last = std::min(mine.end, first + genome_chunk);
        stm_.atomically(self, [&](transaction& tx) {
            tx_view view{*this, tx};
            for (long i = first; i != last; ++i) view.insert_unique(sample_.segment(i));
        });
    }
}

/// The unique set's size words added up (STAMP's hashtable_getSize), read
/// plainly: the set is constant after step 1.
template <class Domain>
long genome_sequencer<Domain>::count_unique() const {
    long unique = 0;
    for (const chain* c : unique_) unique += c->size;
    const auto starts = static_cast<long>(entries_.size());
    if (unique < 1 || unique > starts) {
        impossible("the unique set counts " + std::to_string(unique) + " segments, the gene has " +
                   std::to_string(starts) + " start positions");
    }
    return unique;
}

/// Step 2: each segment of the client's buckets claims an entry, then goes
/// into the start tables. A client looks for free entries from its share
/// of them on (STAMP's approximate share).
template <class Domain>
void genome_sequencer<Domain>::index_segments(smr::context_ref<Domain> self, int client,
                                              int clients, long unique) {
    const share buckets = share_of(buckets_, clients, client);
    long next = share_of(unique, clients, client).begin % unique;
    for (long b = buckets.begin; b != buckets.end; ++b) {
        const chain* c = unique_[static_cast<std::size_t>(b)];
        for (const chain_node* n = c->head.next; n != nullptr; n = n->next) {
            const char* segment = key_of(n->data);
            const long index = stm_.atomically(self, [&](transaction& tx) {
                return tx_view{*this, tx}.claim(next, unique, segment);
            });
            next = (index + 1) % unique;
            index_entry(self, entry(index), segment);
        }
    }
}

/// The hash of the suffix the first overlap looks for, then each prefix's
/// hash into its start table and the whole segment's into STAMP's last
/// table, one transaction each.
template <class Domain>
void genome_sequencer<Domain>::index_entry(smr::context_ref<Domain> self, construct_entry& slot,
                                           const char* segment) {
    slot.end_hash = sdbm(segment + 1, length_ - 1);  // plain: nobody else's until the barrier
    std::uint64_t hash = 0;
    for (long j = 1; j <= length_; ++j) {
        hash = sdbm(segment + j - 1, 1, hash);
        const std::vector<chain*>& table =
            j < length_ ? starts_[static_cast<std::size_t>(j)] : whole_;
        chain* c = table[static_cast<std::size_t>(bucket_of(hash))];
        const bool added = stm_.atomically(self, [&](transaction& tx) {
            return tx_view{*this, tx}.insert_entry(c, &slot);
        });
        if (!added) impossible("a construct entry twice in one start table");
    }
}

/// Step 3 at one overlap: each end of the client's share tries the
/// candidates of its suffix's chain, one transaction each, until one links.
/// The tables are constant since step 2: their chains are read plainly.
template <class Domain>
void genome_sequencer<Domain>::match_ends(smr::context_ref<Domain> self, int client, int clients,
                                          long unique, long overlap) {
    const share mine = share_of(unique, clients, client);
    const std::vector<chain*>& table = starts_[static_cast<std::size_t>(overlap)];
    for (long i = mine.begin; i < mine.end; i += end_at(i).jump) {
        if (end_at(i).is_end == 0) continue;
        construct_entry* end = &claimed(i);
        const chain* candidates = table[static_cast<std::size_t>(bucket_of(end->end_hash))];
        for (const chain_node* n = candidates->head.next; n != nullptr; n = n->next) {
            auto* start = static_cast<construct_entry*>(n->data);
            const bool linked = stm_.atomically(self, [&](transaction& tx) {
                return tx_view{*this, tx}.link(end, start, overlap);
            });
            if (linked) {
                end_at(i).is_end = 0;
                break;
            }
        }
    }
}

/// Between overlaps, client 0 alone: the ends left hash their suffix one
/// nucleotide shorter, and each end's jump leads to the next end.
template <class Domain>
void genome_sequencer<Domain>::next_ends(long unique, long overlap) {
    const long from = length_ - overlap + 1;  // the next suffix's first nucleotide
    long i = 1;
    while (i < unique && end_at(i).is_end == 0) i += end_at(i).jump;
    end_at(0).jump = i;
    if (end_at(0).is_end != 0) rehash(0, from);
    long last = 0;
    for (; i < unique; i += end_at(i).jump) {
        if (end_at(i).is_end == 0) continue;
        rehash(i, from);
        end_at(last).jump = std::max(1L, i - last);
        last = i;
    }
    end_at(last).jump = i - last;
}

template <class Domain>
void genome_sequencer<Domain>::rehash(long index, long from) {
    construct_entry& e = claimed(index);
    e.end_hash = sdbm(e.segment + from, length_ - from);
}

/// Step 4, client 0 alone: each chain in the order of its head's entry
/// (STAMP's: any order is as good when there are several).
template <class Domain>
void genome_sequencer<Domain>::assemble(long unique) {
    std::int64_t total = 0;
    for (long i = 0; i != unique; ++i) {
        if (entry(i).is_start != 0) total += entry(i).length;
    }
    sequence_.clear();
    sequence_.reserve(static_cast<std::size_t>(std::max<std::int64_t>(total, 0)));
    for (long i = 0; i != unique; ++i) {
        if (entry(i).is_start != 0) append_chain(i, unique);
    }
}

/// Each entry's segment but the nucleotides it shares with the next.
template <class Domain>
void genome_sequencer<Domain>::append_chain(long head, long unique) {
    const std::size_t before = sequence_.size();
    const std::string chain_name = "the chain from construct entry " + std::to_string(head);
    long walked = 0;
    for (const construct_entry* e = &claimed(head); e != nullptr; e = e->next) {
        if (++walked > unique) impossible(chain_name + " has a cycle");
        if (e->segment == nullptr) impossible(chain_name + " has an entry without a segment");
        if (e->overlap < 0 || e->overlap >= length_)
            impossible(chain_name + ": overlap out of range");
        sequence_.append(e->segment, static_cast<std::size_t>(length_ - e->overlap));
    }
    const auto held = static_cast<std::int64_t>(sequence_.size() - before);
    if (held != entry(head).length) {
        impossible(chain_name + " holds " + std::to_string(held) +
                   " nucleotides, its length says " + std::to_string(entry(head).length));
    }
}

template <class Domain>
construct_entry& genome_sequencer<Domain>::claimed(long i) {
    construct_entry& e = entry(i);
    if (e.segment == nullptr) {
        impossible("construct entry " + std::to_string(i) +
                   " has no segment: the unique set counts more segments than it holds");
    }
    return e;
}

template <class Domain>
long genome_sequencer<Domain>::bucket_of(std::uint64_t hash) const noexcept {
    return static_cast<long>(hash % static_cast<std::uint64_t>(buckets_));
}

template <class Domain>
int genome_sequencer<Domain>::compare(const char* a, const char* b) const noexcept {
    return std::memcmp(a, b, static_cast<std::size_t>(length_));
}

/// The first `overlap` nucleotides of start's segment end end's.
template <class Domain>
bool genome_sequencer<Domain>::overlaps(const construct_entry& end, const construct_entry& start,
                                        long overlap) const {
    return std::memcmp(start.segment, end.segment + (length_ - overlap),
                       static_cast<std::size_t>(overlap)) == 0;
}

template <class Domain>
validation_result genome_sequencer<Domain>::validate() const {
    validation_result result;
    check_sequence(result);
    check_unique_set(result);
    if (const std::size_t locked = stm_.orecs().locked_entries(); locked != 0) {
        result.fail(std::to_string(locked) + " versioned locks still held");
    }
    return result;
}

/// STAMP's check: the sequence is the gene.
template <class Domain>
void genome_sequencer<Domain>::check_sequence(validation_result& result) const {
    const std::string& gene = sample_.gene;
    const auto [in_gene, in_sequence] =
        std::mismatch(gene.begin(), gene.end(), sequence_.begin(), sequence_.end());
    if (in_gene != gene.end() && in_sequence != sequence_.end()) {
        return result.fail("the sequence differs from the gene at nucleotide " +
                           std::to_string(in_gene - gene.begin()) + " (gene '" + *in_gene +
                           "', sequence '" + *in_sequence + "')");
    }
    if (sequence_.size() != gene.size()) {
        result.fail("the sequence has " + std::to_string(sequence_.size()) +
                    " nucleotides, the gene " + std::to_string(gene.size()) +
                    " (the shorter is the other's beginning)");
    }
}

/// Step 1's result: each bucket consistent, and every sampled segment in it.
template <class Domain>
void genome_sequencer<Domain>::check_unique_set(validation_result& result) const {
    std::unordered_set<std::string_view> held;
    for (long b = 0; b != buckets_ && result.ok; ++b) check_bucket(b, held, result);
    for (long i = 0; i != sample_.count && result.ok; ++i) {
        const std::string_view segment(sample_.segment(i), static_cast<std::size_t>(length_));
        if (!held.contains(segment)) {
            result.fail("segment " + std::to_string(i) + " is missing from the unique set");
        }
    }
}

template <class Domain>
void genome_sequencer<Domain>::check_bucket(long bucket, std::unordered_set<std::string_view>& held,
                                            validation_result& result) const {
    const chain& c = *unique_[static_cast<std::size_t>(bucket)];
    const std::string where = "unique set bucket " + std::to_string(bucket) + ": ";
    std::int64_t count = 0;
    const char* previous = nullptr;
    for (const chain_node* n = c.head.next; n != nullptr; n = n->next, ++count) {
        const char* key = key_of(n->data);
        if (bucket_of(sdbm(key, length_)) != bucket) return result.fail(where + "a stray segment");
        if (previous != nullptr && compare(previous, key) >= 0) {
            return result.fail(where + "segments not strictly ascending");
        }
        previous = key;
        held.emplace(key, static_cast<std::size_t>(length_));
    }
    if (count != c.size) {
        result.fail(where + "size " + std::to_string(c.size) + ", holds " + std::to_string(count));
    }
}

template class genome_sequencer<smr::debra_domain>;

app_run run_genome(const genome_params& params, int clients,
                   const smr::stm::stm_config& stm_config) {
    params.check(clients);
    const genome_sample sample = sample_genome(params);  // untimed, as STAMP
    smr::domain_config domain_config;
    domain_config.max_threads = static_cast<std::size_t>(clients) + 1;  // as run_vacation
    smr::debra_domain domain(domain_config);
    genome_sequencer<smr::debra_domain> sequencer(domain, stm_config, sample);
    return measured_run(sequencer, clients);
}

}  // namespace smrbench::stamp
