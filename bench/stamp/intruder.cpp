// STAMP's Intruder on smrlab's STM: the stream, the sensor's transactions,
// the clients and the verification (bench/stamp/intruder.hpp says what and
// why).
#include "stamp/intruder.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "smr/core/mutant.hpp"
#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/guards.hpp"
#include "stamp/named_inputs.hpp"
#include "stamp/tx_fields.hpp"
#include "stamp/words.hpp"

namespace smrbench::stamp {

using smr::ds::stm_rb_node;
using smr::ds::stm_rb_view;
using smr::ds::validation_result;
using smr::stm::transaction;

namespace {

/// A state that an opaque STM never shows a transaction (STAMP returns an
/// error its main asserts never comes): stops the run with the reason.
[[noreturn]] void impossible(const std::string& what) {
    throw std::logic_error("intruder: " + what);
}

/// STAMP draws with random_generate() % bound (genrand_int32).
std::int64_t draw(std::mt19937& g, std::int64_t bound) {
    return static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(bound));
}

/// "n flows", "1 flow": the verification's counts.
std::string count_of(std::int64_t n, const std::string& what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

/// STAMP's decoded queue starts at 1024 slots (see the header on growth).
constexpr std::int64_t decoded_slots = 1024;
/// STAMP's random flows: characters ' ' to '~'.
constexpr std::int64_t printable = '~' - ' ' + 1;

// The dictionary is STAMP's input data: its 71 signatures in its order.
constexpr std::array<std::string_view, 71> signatures{
    "about", "after", "all",   "also",   "and",  "any",   "back",  "because", "but",
    "can",   "come",  "could", "day",    "even", "first", "for",   "from",    "get",
    "give",  "good",  "have",  "him",    "how",  "into",  "its",   "just",    "know",
    "like",  "look",  "make",  "most",   "new",  "not",   "now",   "one",     "only",
    "other", "out",   "over",  "people", "say",  "see",   "she",   "some",    "take",
    "than",  "that",  "their", "them",   "then", "there", "these", "they",    "think",
    "this",  "time",  "two",   "use",    "want", "way",   "well",  "what",    "when",
    "which", "who",   "will",  "with",   "work", "would", "year",  "your"};
// An empty signature would be found in every flow.
static_assert(std::none_of(signatures.begin(), signatures.end(),
                           [](std::string_view word) { return word.empty(); }));

const std::array<named_input<intruder_params>, 3>& named_inputs() {
    // intruder/README: -a10 -l4 -n2038 -s1 (simulator), -a10 -l128 -n262144
    // -s1 (native runs); the paper's Table IV adds intruder+ at -l16 -n4096.
    static const std::array<named_input<intruder_params>, 3> inputs{{
        {"intruder", {10, 4, 2038, 1}},
        {"intruder+", {10, 16, 4096, 1}},
        {"intruder++", {10, 128, 262144, 1}},
    }};
    return inputs;
}

/// One flow's bytes appended to `text`: a signature, or a random printable
/// string. True if it is an attack (a random one that holds a signature is).
bool draw_flow(std::mt19937& g, const intruder_params& p, std::string& text) {
    if (draw(g, 100) < p.percent_attack) {
        const auto count = static_cast<std::int64_t>(signatures.size());
        text += signatures[static_cast<std::size_t>(draw(g, count))];
        return true;
    }
    const std::int64_t length = draw(g, p.max_length) + 1;
    std::string flow(static_cast<std::size_t>(length), ' ');
    for (char& c : flow) c = static_cast<char>(' ' + draw(g, printable));
    text += flow;
    return intruder_detect(flow);  // lowercases our copy only
}

/// STAMP's split: 1..(bytes) fragments of bytes / k each, the last also
/// taking the remainder.
void split_flow(std::mt19937& g, intruder_stream& s, std::int64_t flow) {
    const auto f = static_cast<std::size_t>(flow);
    const std::int64_t begin = s.flow_begin[f];
    const std::int64_t bytes = s.flow_begin[f + 1] - begin;
    const std::int64_t fragments = draw(g, bytes) + 1;
    const std::int64_t each = bytes / fragments;
    for (std::int64_t i = 0; i != fragments; ++i) {
        const std::int64_t length = i + 1 == fragments ? each + bytes % fragments : each;
        s.packets.push_back({flow, i, fragments, length, begin + i * each});
    }
}

/// STAMP's queue_shuffle: as many swaps of two drawn positions as packets.
void shuffle_packets(std::mt19937& g, std::vector<intruder_packet>& packets) {
    const auto n = static_cast<std::int64_t>(packets.size());
    for (std::int64_t i = 0; i != n; ++i) {
        const auto a = static_cast<std::size_t>(draw(g, n));
        const auto b = static_cast<std::size_t>(draw(g, n));
        std::swap(packets[a], packets[b]);
    }
}

template <class T>
intruder_queue<T>* make_queue(std::int64_t capacity) {
    auto* q = ::new (checked_malloc(sizeof(intruder_queue<T>)))
        intruder_queue<T>{0, 0, capacity, nullptr};
    try {
        q->slots =
            static_cast<T**>(checked_malloc(static_cast<std::size_t>(capacity) * sizeof(T*)));
    } catch (...) {
        std::free(q);
        throw;
    }
    return q;
}

template <class T>
void free_queue(intruder_queue<T>* q) noexcept {
    if (q == nullptr) return;
    std::free(q->slots);
    std::free(q);
}

/// Quiescent: a list's nodes and header.
void free_fragments(fragment_list* list) noexcept {
    for (fragment_node* n = list->head.next; n != nullptr;) {
        fragment_node* next = n->next;
        std::free(n);
        n = next;
    }
    std::free(list);
}

struct free_deleter {
    void operator()(char* p) const noexcept { std::free(p); }
};

}  // namespace

const std::vector<std::string_view>& intruder_inputs() {
    static const std::vector<std::string_view> names = input_names(named_inputs());
    return names;
}

intruder_params intruder_input(std::string_view name) {
    return find_input(named_inputs(), "Intruder", name);
}

void intruder_params::check(long clients) const {
    const auto refuse = [](const std::string& what) {
        throw std::invalid_argument("intruder: " + what);
    };
    if (clients < 1) refuse("clients (-t) must be at least 1");
    if (percent_attack < 0 || percent_attack > 100) {
        refuse("the attack percentage (-a) must be in [0, 100]");
    }
    if (max_length < 1 || max_length > (1L << 16)) {
        refuse("the max data length (-l) must be in [1, 65536]");
    }
    if (flows < 1 || flows > (1L << 24)) refuse("flows (-n) must be in [1, 2^24]");
}

std::span<const std::string_view> intruder_signatures() { return signatures; }

bool intruder_detect(std::span<char> text) {
    for (char& c : text) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');  // tolower, "C" locale
    }
    const std::string_view lowered(text.data(), text.size());
    return std::any_of(signatures.begin(), signatures.end(), [&](std::string_view signature) {
        return lowered.find(signature) != std::string_view::npos;
    });
}

intruder_stream generate_intruder_stream(const intruder_params& params) {
    std::mt19937 g(params.seed);
    intruder_stream s;
    s.flow_begin.assign(2, 0);  // flow 0: none, as STAMP's ids start at 1
    s.attack.assign(1, false);
    for (std::int64_t flow = 1; flow <= params.flows; ++flow) {
        const bool attack = draw_flow(g, params, s.text);
        s.flow_begin.push_back(static_cast<std::int64_t>(s.text.size()));
        s.attack.push_back(attack);
        if (attack) ++s.attacks;
        split_flow(g, s, flow);
    }
    shuffle_packets(g, s.packets);
    return s;
}

void intruder_log::add(std::int64_t flow, std::string_view data) {
    flows.push_back(flow);
    bytes.insert(bytes.end(), data.begin(), data.end());
    ends.push_back(bytes.size());
}

/// One transaction's view of the sensor: STAMP's TMqueue_pop and push,
/// TMdecoder_process and TMdecoder_getComplete, every mutable word through
/// `tx`. Packets and a node's packet pointer are constant: read plainly.
template <class Domain>
class intruder_sensor<Domain>::tx_view : tx_fields {
  public:
    tx_view(intruder_sensor& s, transaction& tx) noexcept : tx_fields(tx), s_(s) {}

    /// The queue's first element, or null if it is empty.
    template <class T>
    T* pop(intruder_queue<T>* q) {
        const std::int64_t head = get(q, &intruder_queue<T>::head);
        const std::int64_t tail = get(q, &intruder_queue<T>::tail);
        const std::int64_t capacity = get(q, &intruder_queue<T>::capacity);
        if (head == tail) return nullptr;
        T** const slots = get(q, &intruder_queue<T>::slots);
        T* const item = tx_.load(&slots[head]);
        set(q, &intruder_queue<T>::head, (head + 1) % capacity);
        return item;
    }

    /// STAMP's TMdecoder_process: the packet into its flow's list, or, if it
    /// completes the flow, the flow onto the decoded queue.
    void decode(const intruder_packet& p) {
        if (p.flow < 1 || p.fragment < 0 || p.fragment >= p.fragments || p.length < 0) {
            impossible("a malformed packet of flow " + std::to_string(p.flow));
        }
        if (p.fragments == 1) {
            char* data = buffer(p.length);
            append(data, p);
            return queue_decoded(p.flow, data);
        }
        stm_rb_view map{s_.map_->root, tx_};
        stm_rb_node* entry = map.find(p.flow);
        if (entry == nullptr) {  // the flow's first fragment to arrive: STAMP's order
            auto* list = tx_.make<fragment_list>(fragment_node{nullptr, nullptr}, 0, 0);
            insert(list, &p);
            map.insert(p.flow, as_value(list));
            return;
        }
        auto* list = as_pointer<fragment_list>(map.value_of(entry));
        if (first(list)->packet->fragments != p.fragments) {
            impossible("flow " + std::to_string(p.flow) +
                       ": its fragments disagree on their count");
        }
        insert(list, &p);
        if (received(list) == p.fragments) complete(map, list, p.flow);
    }

    /// STAMP's TMdecoder_getComplete: the first reassembled flow, its record
    /// freed; data null if there is none.
    decoded_flow take_decoded() {
        decoded_flow* d = pop(s_.decoded_);
        if (d == nullptr) return {-1, nullptr};
        const decoded_flow out = *d;  // written before it was queued, never again
        tx_.free(d);
        return out;
    }

  private:
    /// STAMP's TMlist_insert: before the first node of a fragment not below
    /// the packet's, and the count one more.
    void insert(fragment_list* list, const intruder_packet* p) {
        fragment_node* previous = &list->head;
        fragment_node* node = first(list);
        while (node != nullptr && node->packet->fragment < p->fragment) {
            previous = node;
            node = next(node);
        }
        auto* added = tx_.make<fragment_node>(p, node);
        if (previous == &list->head) {
            tx_.store(&list->head.next, added, {list, sizeof(fragment_list)});
        } else {
            set(previous, &fragment_node::next, added);
        }
        tx_.store(&list->size, tx_.load(&list->size) + 1, {list, sizeof(fragment_list)});
    }

    /// The list's count, read after this transaction's own insert (STAMP's
    /// TMLIST_GETSIZE). Mutant: read without the transaction. The STM writes
    /// back at commit, so memory still holds the count before the insert
    /// this transaction just buffered: the fragment that completes a flow
    /// counts one short, and no flow of several fragments is ever complete.
    /// Each stays in the map, never reassembled nor detected, and the
    /// verification names the first. Deterministic: it misses our own store,
    /// not another client's, so it fails every run at any client count,
    /// given one flow of two fragments (the quick size has hundreds).
    std::int64_t received(fragment_list* list) {
        return SMR_MUTANT("intruder_fragment_count_read_uninstrumented") ? list->size
                                                                         : tx_.load(&list->size);
    }

    /// All fragments are in: the flow reassembled and queued, the list
    /// freed, the flow removed from the map (STAMP's order).
    void complete(stm_rb_view& map, fragment_list* list, std::int64_t flow) {
        queue_decoded(flow, reassemble(list, flow));
        for (fragment_node* n = first(list); n != nullptr;) {
            fragment_node* following = next(n);
            tx_.free(n);
            n = following;
        }
        tx_.free(list);
        map.erase(flow);
    }

    /// STAMP's two walks of the list: the fragments must be 0..k-1 in order
    /// (its check), their lengths add up to the buffer's; then the copy.
    char* reassemble(fragment_list* list, std::int64_t flow) {
        std::int64_t bytes = 0;
        std::int64_t expected = 0;
        for (fragment_node* n = first(list); n != nullptr; n = next(n), ++expected) {
            if (n->packet->fragment != expected) {
                impossible("flow " + std::to_string(flow) + ": fragment " +
                           std::to_string(n->packet->fragment) + " where " +
                           std::to_string(expected) + " belongs");
            }
            bytes += n->packet->length;
        }
        char* const data = buffer(bytes);
        char* to = data;
        for (fragment_node* n = first(list); n != nullptr; n = next(n)) to = append(to, *n->packet);
        return data;
    }

    /// A NUL-terminated buffer of `bytes` from the transaction; unpublished
    /// until the commit, so written plainly.
    char* buffer(std::int64_t bytes) {
        auto* data = static_cast<char*>(tx_.alloc(static_cast<std::size_t>(bytes) + 1));
        data[bytes] = '\0';
        return data;
    }

    char* append(char* to, const intruder_packet& p) {
        std::memcpy(to, s_.stream_.data(p), static_cast<std::size_t>(p.length));
        return to + p.length;
    }

    /// STAMP's decoded record onto the decoded queue (TMqueue_push).
    void queue_decoded(std::int64_t flow, char* data) {
        auto* decoded = tx_.make<decoded_flow>(flow, data);
        intruder_queue<decoded_flow>* q = s_.decoded_;
        const std::int64_t head = get(q, &intruder_queue<decoded_flow>::head);
        const std::int64_t tail = get(q, &intruder_queue<decoded_flow>::tail);
        const std::int64_t capacity = get(q, &intruder_queue<decoded_flow>::capacity);
        const std::int64_t after = (tail + 1) % capacity;
        if (after == head)
            impossible("the decoded queue is full at " + count_of(capacity - 1, "flow"));
        decoded_flow** const slots = get(q, &intruder_queue<decoded_flow>::slots);
        // A slot is its own object: pushes to neighbouring slots of one
        // stripe conflict falsely.
        tx_.store(&slots[tail], decoded, {&slots[tail], sizeof(decoded_flow*)});
        set(q, &intruder_queue<decoded_flow>::tail, after);
    }

    fragment_node* first(fragment_list* list) { return tx_.load(&list->head.next); }
    fragment_node* next(fragment_node* n) { return get(n, &fragment_node::next); }

    intruder_sensor& s_;
};

template <class Domain>
intruder_sensor<Domain>::intruder_sensor(Domain& domain, const smr::stm::stm_config& config,
                                         const intruder_stream& stream)
    : stream_(stream), stm_(domain, config) {
    const auto packets = static_cast<std::int64_t>(stream.packets.size());
    const auto threads = static_cast<std::int64_t>(domain.config().max_threads);
    try {
        map_ = ::new (checked_malloc(sizeof(fragment_map))) fragment_map{nullptr, 0};
        packets_ = make_queue<const intruder_packet>(packets + 1);
        decoded_ = make_queue<decoded_flow>(std::max(decoded_slots, threads + 1));
    } catch (...) {
        free_all();
        throw;
    }
    for (std::int64_t i = 0; i != packets; ++i) {
        packets_->slots[i] = &stream.packets[static_cast<std::size_t>(i)];
    }
    packets_->tail = packets;
}

template <class Domain>
intruder_sensor<Domain>::~intruder_sensor() {
    free_all();
}

/// Whatever a run left (nothing, if it verified): the map's lists, the
/// decoded queue's flows, then the blocks themselves.
template <class Domain>
void intruder_sensor<Domain>::free_all() noexcept {
    if (map_ != nullptr) {
        smr::ds::for_each_stm_rb_node(map_->root, [](const stm_rb_node& n) {
            free_fragments(as_pointer<fragment_list>(n.value));
        });
        smr::ds::free_stm_rb_tree(map_->root);
        std::free(map_);
    }
    if (decoded_ != nullptr) {
        for (std::int64_t i = decoded_->head; i != decoded_->tail;
             i = (i + 1) % decoded_->capacity) {
            std::free(decoded_->slots[i]->data);
            std::free(decoded_->slots[i]);
        }
    }
    free_queue(decoded_);
    free_queue(packets_);
}

template <class Domain>
client_phase intruder_sensor<Domain>::run(int clients) {
    if (ran_) throw std::logic_error("intruder: a sensor runs once");
    ran_ = true;
    logs_ = std::vector<intruder_log>(static_cast<std::size_t>(clients));
    return run_clients(
        stm_.domain(), stm_, clients,
        [&](smr::context_ref<Domain> self, int client, const std::atomic<bool>& stop) {
            run_client(self, logs_[static_cast<std::size_t>(client)], stop);
        });
}

/// STAMP's processPackets: capture, reassembly, then detection outside
/// transactions, until the packet queue is empty.
template <class Domain>
void intruder_sensor<Domain>::run_client(smr::context_ref<Domain> self, intruder_log& log,
                                         const std::atomic<bool>& stop) {
    while (!stop.load(std::memory_order_relaxed)) {
        const intruder_packet* p = stm_.atomically(self, [&](transaction& tx) {
            return tx_view{*this, tx}.pop(packets_);
        });
        if (p == nullptr) break;
        ++log.packets;
        stm_.atomically(self, [&](transaction& tx) { tx_view{*this, tx}.decode(*p); });
        const decoded_flow d = stm_.atomically(self, [&](transaction& tx) {
            return tx_view{*this, tx}.take_decoded();
        });
        if (d.data == nullptr) continue;
        const std::unique_ptr<char, free_deleter> data(d.data);
        const std::size_t length = std::strlen(data.get());
        log.add(d.flow, {data.get(), length});  // before the detector lowercases it
        if (intruder_detect({data.get(), length})) log.attacks.push_back(d.flow);
    }
    stm_.flush(self);
}

template <class Domain>
long intruder_sensor<Domain>::packets_processed() const noexcept {
    long packets = 0;
    for (const intruder_log& log : logs_) packets += log.packets;
    return packets;
}

template <class Domain>
validation_result intruder_sensor<Domain>::validate() const {
    validation_result result;
    check_flows(result);
    check_attacks(result);
    check_queues(result);
    check_map(result);
    const auto packets = static_cast<long>(stream_.packets.size());
    if (packets_processed() != packets) {
        result.fail("the clients took " + count_of(packets_processed(), "packet") +
                    ", the stream has " + std::to_string(packets));
    }
    if (const std::size_t locked = stm_.orecs().locked_entries(); locked != 0) {
        result.fail(std::to_string(locked) + " versioned locks still held");
    }
    return result;
}

/// Every flow reassembled once, with the bytes generated.
template <class Domain>
void intruder_sensor<Domain>::check_flows(validation_result& result) const {
    const long flows = stream_.flows();
    std::vector<bool> seen(static_cast<std::size_t>(flows) + 1, false);
    for (const intruder_log& log : logs_) {
        for (std::size_t i = 0; i != log.flows.size(); ++i) {
            const std::int64_t flow = log.flows[i];
            const std::string what = "flow " + std::to_string(flow);
            if (flow < 1 || flow > flows) return result.fail(what + " is not in the stream");
            if (seen[static_cast<std::size_t>(flow)]) {
                return result.fail(what + " was reassembled twice");
            }
            seen[static_cast<std::size_t>(flow)] = true;
            if (log.bytes_of(i) != stream_.flow(flow)) {
                return result.fail(what + " was reassembled as \"" + std::string(log.bytes_of(i)) +
                                   "\", generated as \"" + std::string(stream_.flow(flow)) + "\"");
            }
        }
    }
    for (std::int64_t flow = 1; flow <= flows; ++flow) {
        if (seen[static_cast<std::size_t>(flow)]) continue;
        std::string where;
        const fragment_list* list = held_fragments(flow);
        if (list != nullptr && list->head.next != nullptr) {
            where = ": " + std::to_string(list->size) + " of its " +
                    std::to_string(list->head.next->packet->fragments) +
                    " fragments are in the fragment map";
        }
        return result.fail("flow " + std::to_string(flow) + " was never reassembled" + where);
    }
}

/// The attacks detected are the flows generated as attacks, each once.
template <class Domain>
void intruder_sensor<Domain>::check_attacks(validation_result& result) const {
    const long flows = stream_.flows();
    std::vector<bool> detected(static_cast<std::size_t>(flows) + 1, false);
    for (const intruder_log& log : logs_) {
        for (const std::int64_t flow : log.attacks) {
            const std::string what = "flow " + std::to_string(flow);
            if (flow < 1 || flow > flows) return result.fail(what + " is not in the stream");
            if (detected[static_cast<std::size_t>(flow)])
                return result.fail(what + " was detected twice");
            if (!stream_.is_attack(flow))
                return result.fail(what + " was detected as an attack, it is none");
            detected[static_cast<std::size_t>(flow)] = true;
        }
    }
    for (std::int64_t flow = 1; flow <= flows; ++flow) {
        if (stream_.is_attack(flow) && !detected[static_cast<std::size_t>(flow)]) {
            return result.fail("flow " + std::to_string(flow) +
                               " is an attack the detector missed");
        }
    }
}

/// Both queues empty; what is left named by its first element.
template <class Domain>
void intruder_sensor<Domain>::check_queues(validation_result& result) const {
    const auto left = [](const auto* q) { return (q->tail - q->head + q->capacity) % q->capacity; };
    if (const std::int64_t n = left(packets_); n != 0) {
        result.fail("the packet queue still holds " + count_of(n, "packet") +
                    ", the first of flow " + std::to_string(packets_->slots[packets_->head]->flow));
    }
    if (const std::int64_t n = left(decoded_); n != 0) {
        result.fail("the decoded queue still holds " + count_of(n, "flow") + ", the first flow " +
                    std::to_string(decoded_->slots[decoded_->head]->flow));
    }
}

/// The map a valid red-black tree, and empty.
template <class Domain>
void intruder_sensor<Domain>::check_map(validation_result& result) const {
    validation_result tree;
    smr::ds::check_stm_rb_tree(map_->root, tree);
    if (!tree.ok) return result.fail("the fragment map: " + tree.error);
    if (tree.size != 0) {
        result.fail("the fragment map still holds " +
                    count_of(static_cast<std::int64_t>(tree.size), "flow"));
    }
}

/// Quiescent: the flow's list in the map, or null.
template <class Domain>
const fragment_list* intruder_sensor<Domain>::held_fragments(std::int64_t flow) const noexcept {
    for (const stm_rb_node* n = map_->root; n != nullptr; n = flow < n->key ? n->left : n->right) {
        if (n->key == flow) return as_pointer<const fragment_list>(n->value);
    }
    return nullptr;
}

template class intruder_sensor<smr::debra_domain>;

app_run run_intruder(const intruder_params& params, int clients,
                     const smr::stm::stm_config& stm_config) {
    params.check(clients);
    const intruder_stream stream = generate_intruder_stream(params);  // untimed, as STAMP
    smr::domain_config domain_config;
    domain_config.max_threads = static_cast<std::size_t>(clients) + 1;  // as run_vacation
    smr::debra_domain domain(domain_config);
    intruder_sensor<smr::debra_domain> sensor(domain, stm_config, stream);
    auto& stm = sensor.transactional_memory();
    const smr::stm::stm_stats before = stm.stats();
    const client_phase phase = sensor.run(clients);
    app_run run;
    run.seconds = phase.seconds;
    run.stm = stm.stats() - before;
    run.tasks = sensor.packets_processed();
    run.validation = phase.validation();
    if (!run.validation.ok) return run;
    run.validation = sensor.validate();
    return run;
}

}  // namespace smrbench::stamp
