// STAMP's Intruder on smrlab's STM: signature-based network intrusion
// detection, which captures packets from a shared queue, reassembles each
// flow from its fragments in a shared map and scans the whole flow for known
// attack signatures. Minh, Chung, Kozyrakis and Olukotun, "STAMP: Stanford
// Transactional Applications for Multi-Processing", IISWC 2008
// (doi:10.1109/IISWC.2008.4636089), Section III (their design 5 of
// Haagdorens et al.'s multithreaded sensors); the allocator/STM study
// (Baldassin, Borin and Araujo, TRANSACT 2014) finds it among the
// applications whose speed depends on the allocator (Table 5). Written from
// the paper's description and the public suite's structure (intruder/
// intruder.c, decoder.c, detector.c, dictionary.c, packet.h, preprocessor.c,
// stream.c and lib/rbtree.c, queue.c, list.c, map.h of STAMP 0.9.10); no code
// is copied.
//
// ---- The workload ----------------------------------------------------------------
//
// Untimed, the stream: n flows, ids 1..n, each drawn from one Mersenne
// Twister seeded -s (STAMP's draws in STAMP's order). With probability a %, a
// flow is one of the dictionary's 71 signatures (common English words of 3
// to 7 letters: an attack); otherwise a string of 1..l printable characters,
// an attack too if the detector finds a signature in it. Each flow is cut
// into 1..(its length) fragments of equal length, the last taking the rest,
// and all the packets of all flows are shuffled into one queue. Then the
// clients, each in a loop until the queue is empty (STAMP's processPackets):
//
//   1. capture: one transaction pops a packet from the shared queue;
//   2. reassembly: one transaction hands it to the decoder. A flow of one
//      fragment is complete at once; otherwise the fragment goes into its
//      flow's list (sorted by fragment index) in the fragment map, a
//      transactional red-black tree from flow id to list, created by the
//      flow's first fragment to arrive. The fragment that completes the list
//      has the flow reassembled into one buffer, the list freed and the flow
//      removed from the map. A reassembled flow goes onto the decoder's
//      queue;
//   3. detection: one transaction pops a reassembled flow, if there is one,
//      and outside transactions the client lowercases it and looks for every
//      signature in it; an attack's id goes into the client's own list
//      (STAMP's per-thread error vectors).
//
// The allocator sees, inside transactions (tx.alloc, tx.make), per flow of
// several fragments: a 32-byte fragment list (STAMP's list_t) and a 48-byte
// map node (STAMP's rbtree node) when its first fragment arrives, a 16-byte
// list node (STAMP's list_node_t) per fragment; per flow: the reassembled
// buffer of its length + 1 bytes (2 to l + 1 for a random flow, 4 to 8 for a
// signature) and a 16-byte decoded record (STAMP's decoded_t). Freed inside
// transactions (tx.free, deferred through the domain): the list's nodes and
// header and one map node when the flow completes, the decoded record when a
// client pops it. The buffer is freed by the client that popped it, after
// detection, outside transactions (std::free; STAMP's P_FREE), usually
// another thread than the one whose transaction allocated it. Before the
// clients start: the stream, the packet queue's slots, the decoded queue's
// 1024 slots, the queues' and the map's headers.
//
// ---- Where this port differs from STAMP 0.9.10 -------------------------------------
//
// - The stream's text is one string and the packets one array of 40-byte
//   records (flow, fragment, fragments, length, offset into the text); STAMP
//   mallocs every flow's string and every packet (its header and a copy of
//   its bytes) separately. Both are constant during the run and read plainly,
//   as STAMP reads them. The draws are STAMP's, in its order, so the flows
//   and the queue's order should be STAMP's for the same seed (not checked
//   against a STAMP build).
// - The decoded queue never grows: it holds at most one flow per client
//   (every client pops after it pushes), and it has 1024 slots (STAMP's
//   initial capacity) or one more than the domain has threads. STAMP's grows
//   by doubling inside the pushing transaction, which its inputs never reach.
//   A full queue stops the run with the reason.
// - A malformed packet, a flow whose fragments disagree on their count, or a
//   complete list whose fragments are not 0..k-1 (STAMP: an error code that
//   its main asserts never comes) stops the run with the reason naming the
//   flow, as does any other "cannot happen" case: the client that met it
//   stops, the others before their next packet, and the run fails.
// - The detector is one function over one constant dictionary, shared by the
//   clients; STAMP allocates a detector with its own copy of the dictionary
//   per thread, at the start of the timed phase.
// - The verification (below) needs each client to keep what it reassembled:
//   before the detector lowercases a flow in place (as STAMP's), the client
//   appends its id and bytes to its own log, vectors that grow by doubling.
//   STAMP keeps only the attacks' ids and checks that each is an attack and
//   that their count is the stream's.
// - A flow's reassembled buffer keeps STAMP's terminating NUL (its size
//   class); the client measures it with strlen, as STAMP's strstr does.
//   Printable flows have no NUL of their own.
//
// The verification, after the run: every flow reassembled exactly once,
// byte for byte the flow generated; the attacks the clients detected exactly
// the flows generated as attacks; the packet queue, the decoded queue and
// the fragment map empty (the map a valid red-black tree); as many packets
// taken as the stream has; no versioned lock held.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "smr/ds/stm_rb_core.hpp"
#include "smr/ds/validation.hpp"
#include "smr/stm/stm.hpp"
#include "stamp/clients.hpp"

namespace smrbench::stamp {

/// STAMP's command line for Intruder (-t is the thread count); the defaults
/// are intruder.c's.
struct intruder_params {
    long percent_attack = 10;  ///< -a: share of the flows drawn from the dictionary
    long max_length = 16;      ///< -l: a random flow's characters, at most
    long flows = 1L << 20;     ///< -n
    std::uint32_t seed = 1;    ///< -s: the stream's generator

    /// Throws std::invalid_argument naming the first parameter out of range
    /// (STAMP would divide by zero, or draw a percentage it cannot meet).
    void check(long clients) const;
};

/// STAMP's named inputs: intruder (-a10 -l4 -n2038 -s1, its README's
/// simulator input), intruder+ (-a10 -l16 -n4096 -s1) and intruder++ (-a10
/// -l128 -n262144 -s1, its native-run input). Throws std::invalid_argument
/// naming the inputs for any other name.
intruder_params intruder_input(std::string_view name);

/// The names intruder_input accepts, in order.
const std::vector<std::string_view>& intruder_inputs();

/// STAMP's dictionary of attack signatures, in its order.
std::span<const std::string_view> intruder_signatures();

/// STAMP's detector with its one preprocessor: `text` lowercased in place,
/// then searched for every signature; true if one occurs.
bool intruder_detect(std::span<char> text);

/// A fragment of a flow: constant once generated, read plainly.
struct intruder_packet {
    std::int64_t flow;       ///< 1..n
    std::int64_t fragment;   ///< 0..fragments-1
    std::int64_t fragments;  ///< of its flow
    std::int64_t length;     ///< bytes
    std::int64_t offset;     ///< of its first byte in the stream's text
};
static_assert(sizeof(intruder_packet) == 40);

/// The stream as STAMP's stream_generate makes it.
struct intruder_stream {
    std::string text;                      ///< every flow's bytes, back to back, by id
    std::vector<std::int64_t> flow_begin;  ///< flow f is text[flow_begin[f], flow_begin[f + 1])
    std::vector<bool> attack;              ///< per flow id ([0] unused)
    long attacks = 0;                      ///< flows generated as attacks
    std::vector<intruder_packet> packets;  ///< in the queue's order (shuffled)

    long flows() const noexcept { return static_cast<long>(flow_begin.size()) - 2; }
    std::string_view flow(std::int64_t f) const noexcept {
        const auto i = static_cast<std::size_t>(f);
        return std::string_view(text).substr(
            static_cast<std::size_t>(flow_begin[i]),
            static_cast<std::size_t>(flow_begin[i + 1] - flow_begin[i]));
    }
    const char* data(const intruder_packet& p) const noexcept { return text.data() + p.offset; }
    bool is_attack(std::int64_t f) const noexcept { return attack[static_cast<std::size_t>(f)]; }
};

/// The stream of params, deterministic (params.seed decides it). Call
/// params.check first.
intruder_stream generate_intruder_stream(const intruder_params& params);

/// STAMP's queue: a ring of `capacity` slots from `head` (the next to pop)
/// to `tail` (the next to fill), so it holds capacity - 1 at most. 32 bytes
/// from malloc, as STAMP's queue_t; the slots another block. Every word is
/// read and written through the transaction, as STAMP's TMqueue.
template <class T>
struct intruder_queue {
    std::int64_t head;
    std::int64_t tail;
    std::int64_t capacity;
    T** slots;
};
static_assert(sizeof(intruder_queue<int>) == 32);

/// STAMP's list node: 16 bytes, allocated by the transaction that inserts
/// it; `packet` is written before the node is published and never again.
struct fragment_node {
    const intruder_packet* packet;
    fragment_node* next;
};
/// STAMP's list header: the head node, its comparator's word (unused here,
/// kept for the allocator's size class) and the count: 32 bytes.
struct fragment_list {
    fragment_node head;
    std::int64_t comparator_unused;
    std::int64_t size;
};
/// STAMP's decoded_t: a reassembled flow, written before it is queued and
/// never again.
struct decoded_flow {
    std::int64_t flow;
    char* data;  ///< NUL-terminated, from tx.alloc
};
static_assert(sizeof(fragment_node) == 16 && sizeof(fragment_list) == 32 &&
              sizeof(decoded_flow) == 16);

/// One client's record of its run, on its own cache lines: the packets it
/// took, every flow it reassembled (its id and bytes, before detection) and
/// the attacks it detected.
struct alignas(64) intruder_log {
    long packets = 0;
    std::vector<std::int64_t> flows;  ///< in the order popped
    std::vector<std::size_t> ends;    ///< flows[i]'s bytes end at bytes[ends[i]]
    std::vector<char> bytes;
    std::vector<std::int64_t> attacks;

    void add(std::int64_t flow, std::string_view data);
    std::string_view bytes_of(std::size_t i) const noexcept {
        const std::size_t begin = i == 0 ? 0 : ends[i - 1];
        return {bytes.data() + begin, ends[i] - begin};
    }
};

/// STAMP's sensor: the packet queue, the decoder (fragment map and decoded
/// queue) and the clients' logs, over one STM. Instantiated for
/// smr::debra_domain (bench/stamp/intruder.cpp), the reclaimer of the
/// allocator study's runs.
template <class Domain>
class intruder_sensor {
  public:
    /// STAMP's decoder_alloc and the stream's queue, filled in the stream's
    /// order. `stream` must outlive it.
    intruder_sensor(Domain& domain, const smr::stm::stm_config& config,
                    const intruder_stream& stream);
    ~intruder_sensor();
    intruder_sensor(const intruder_sensor&) = delete;
    intruder_sensor& operator=(const intruder_sensor&) = delete;

    /// The clients' phase (run_clients): `clients` threads, which the domain
    /// needs room for, until the packet queue is empty. Once per sensor
    /// (std::logic_error otherwise). Throws what thread creation throws.
    client_phase run(int clients);

    /// Quiescent, after run: the checks at the top of this header, the first
    /// failure named.
    smr::ds::validation_result validate() const;

    /// Packets the clients took from the queue.
    long packets_processed() const noexcept;
    smr::stm::stm<Domain>& transactional_memory() noexcept { return stm_; }

  private:
    friend struct intruder_testing;  // tests corrupt the result
    class tx_view;

    /// STAMP's rbtree_t: the root and its comparator's word (unused here),
    /// 16 bytes from malloc.
    struct fragment_map {
        smr::ds::stm_rb_node* root;
        std::int64_t comparator_unused;
    };

    void run_client(smr::context_ref<Domain> self, intruder_log& log,
                    const std::atomic<bool>& stop);
    void check_flows(smr::ds::validation_result& result) const;
    void check_attacks(smr::ds::validation_result& result) const;
    void check_queues(smr::ds::validation_result& result) const;
    void check_map(smr::ds::validation_result& result) const;
    const fragment_list* held_fragments(std::int64_t flow) const noexcept;
    void free_all() noexcept;

    const intruder_stream& stream_;
    fragment_map* map_ = nullptr;
    intruder_queue<const intruder_packet>* packets_ = nullptr;
    intruder_queue<decoded_flow>* decoded_ = nullptr;
    std::vector<intruder_log> logs_;  // per client
    bool ran_ = false;
    smr::stm::stm<Domain> stm_;
};

/// One run as STAMP's main makes it: the stream generated (untimed), then
/// the clients started together; only their phase is timed. app_run::tasks
/// counts the packets they took (STAMP reports none); stm.commits is three
/// per packet and one per client (its last, empty pop). Then the
/// verification; a client that met a state no transaction may see ends the
/// run, and its reason is the verification's failure. Throws
/// std::invalid_argument for bad params, and what thread creation throws.
app_run run_intruder(const intruder_params& params, int clients,
                     const smr::stm::stm_config& stm_config);

}  // namespace smrbench::stamp
