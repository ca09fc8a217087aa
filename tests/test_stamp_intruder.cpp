// STAMP's Intruder on smrlab's STM (bench/stamp/intruder.hpp): the stream is
// STAMP's split and shuffle of its flows, a quick size verifies at 1, 2 and
// 4 clients and STAMP's simulator inputs at 4; the verification fails on a
// corrupted result, naming the flow.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/guards.hpp"
#include "stamp/intruder.hpp"

namespace smrbench::stamp {

/// The tests' way into a sensor's result (befriended by intruder_sensor).
struct intruder_testing {
    template <class Domain>
    static std::vector<intruder_log>& logs(intruder_sensor<Domain>& s) {
        return s.logs_;
    }
    template <class Domain>
    static intruder_queue<const intruder_packet>& packet_queue(intruder_sensor<Domain>& s) {
        return *s.packets_;
    }
};

namespace {

constexpr smr::stm::stm_config small_table{.ort_bits = 16, .shift = 5};

/// STAMP's simulator input with a quarter of its flows: 948 packets, 264
/// flows of several fragments (which the mutant
/// intruder_fragment_count_read_uninstrumented never completes) and 48
/// attacks; small enough for ASan and TSan.
intruder_params quick() {
    intruder_params p;
    p.percent_attack = 10;
    p.max_length = 4;
    p.flows = 512;
    p.seed = 1;
    return p;
}

std::string refusal(const intruder_params& params, long clients) {
    try {
        params.check(clients);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "accepted";
}

TEST(Intruder, NamedInputsAreStamps) {
    const intruder_params simulator = intruder_input("intruder");
    EXPECT_EQ(simulator.percent_attack, 10);
    EXPECT_EQ(simulator.max_length, 4);
    EXPECT_EQ(simulator.flows, 2038);  // intruder/README's -n2038
    EXPECT_EQ(simulator.seed, 1U);
    const intruder_params plus = intruder_input("intruder+");
    EXPECT_EQ(plus.percent_attack, 10);
    EXPECT_EQ(plus.max_length, 16);
    EXPECT_EQ(plus.flows, 4096);
    EXPECT_EQ(plus.seed, 1U);
    const intruder_params plus_plus = intruder_input("intruder++");
    EXPECT_EQ(plus_plus.percent_attack, 10);
    EXPECT_EQ(plus_plus.max_length, 128);
    EXPECT_EQ(plus_plus.flows, 262144);
    EXPECT_EQ(plus_plus.seed, 1U);
    const std::vector<std::string_view> expected{"intruder", "intruder+", "intruder++"};
    EXPECT_EQ(intruder_inputs(), expected);
    for (const std::string_view name : intruder_inputs()) {
        EXPECT_EQ(refusal(intruder_input(name), 4), "accepted") << name;
    }
    try {
        intruder_input("intruder+++");
        FAIL() << "an unknown input was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()),
                  "unknown Intruder input 'intruder+++' (one of intruder, intruder+, intruder++)");
    }
}

TEST(Intruder, ParametersOutOfRangeAreRefused) {
    const intruder_params ok = quick();
    EXPECT_EQ(refusal(ok, 1), "accepted");
    EXPECT_NE(refusal(ok, 0).find("clients (-t)"), std::string::npos);
    intruder_params p = ok;
    p.percent_attack = -1;
    EXPECT_NE(refusal(p, 1).find("attack percentage (-a)"), std::string::npos) << refusal(p, 1);
    p.percent_attack = 101;
    EXPECT_NE(refusal(p, 1).find("attack percentage (-a)"), std::string::npos) << refusal(p, 1);
    p = ok;
    p.max_length = 0;
    EXPECT_NE(refusal(p, 1).find("max data length (-l)"), std::string::npos) << refusal(p, 1);
    p.max_length = 65537;
    EXPECT_NE(refusal(p, 1).find("max data length (-l)"), std::string::npos) << refusal(p, 1);
    p = ok;
    p.flows = 0;
    EXPECT_NE(refusal(p, 1).find("flows (-n)"), std::string::npos) << refusal(p, 1);
    EXPECT_THROW(run_intruder(p, 1, small_table), std::invalid_argument);
    EXPECT_THROW(run_intruder(ok, 0, small_table), std::invalid_argument);
}

/// STAMP's detector: its one preprocessor lowercases the flow in place,
/// then any signature anywhere in it is an attack.
TEST(Intruder, TheDetectorLowercasesThenFindsAnySignature) {
    std::string mixed = "xxABoutYY";
    EXPECT_TRUE(intruder_detect(mixed));
    EXPECT_EQ(mixed, "xxaboutyy");
    std::string spaced = "a-b-o-u-t";
    EXPECT_FALSE(intruder_detect(spaced));
    EXPECT_EQ(intruder_signatures().size(), 71U);
    for (const std::string_view signature : intruder_signatures()) {
        std::string word(signature);
        EXPECT_TRUE(intruder_detect(word)) << signature;
    }
}

/// Every flow's packets are 1..(its length) fragments of equal length, the
/// last with the remainder, which put together in order give the flow; the
/// attacks are the flows the detector flags; the queue is shuffled; the
/// same params give the same stream. The counts are those of STAMP's
/// stream_generate at seed 1, as a separate transcription of it (Python,
/// from intruder/stream.c and a Mersenne Twister) computed them: the same
/// draws in the same order.
TEST(Intruder, TheStreamIsEveryFlowSplitAndShuffled) {
    const intruder_stream s = generate_intruder_stream(quick());
    ASSERT_EQ(s.flows(), 512);
    std::vector<std::vector<const intruder_packet*>> by_flow(513);
    for (const intruder_packet& p : s.packets) {
        ASSERT_TRUE(p.flow >= 1 && p.flow <= 512) << p.flow;
        by_flow[static_cast<std::size_t>(p.flow)].push_back(&p);
    }
    long several = 0;
    long attacks = 0;
    for (std::int64_t flow = 1; flow <= 512; ++flow) {
        auto& parts = by_flow[static_cast<std::size_t>(flow)];
        std::sort(parts.begin(), parts.end(),
                  [](const auto* a, const auto* b) { return a->fragment < b->fragment; });
        const auto k = static_cast<std::int64_t>(parts.size());
        const auto bytes = static_cast<std::int64_t>(s.flow(flow).size());
        ASSERT_TRUE(k >= 1 && k <= bytes) << "flow " << flow;
        std::string joined;
        for (std::int64_t i = 0; i != k; ++i) {
            const intruder_packet& p = *parts[static_cast<std::size_t>(i)];
            EXPECT_EQ(p.fragment, i) << "flow " << flow;
            EXPECT_EQ(p.fragments, k) << "flow " << flow;
            EXPECT_EQ(p.length, bytes / k + (i + 1 == k ? bytes % k : 0)) << "flow " << flow;
            joined.append(s.data(p), static_cast<std::size_t>(p.length));
        }
        EXPECT_EQ(joined, s.flow(flow));
        std::string copy(s.flow(flow));
        EXPECT_EQ(s.is_attack(flow), intruder_detect(copy)) << "flow " << flow;
        several += k > 1 ? 1 : 0;
        attacks += s.is_attack(flow) ? 1 : 0;
    }
    EXPECT_EQ(attacks, s.attacks);
    EXPECT_EQ(s.attacks, 48);
    EXPECT_EQ(several, 264);
    EXPECT_EQ(s.packets.size(), 948U);
    EXPECT_FALSE(std::is_sorted(s.packets.begin(), s.packets.end(),
                                [](const auto& a, const auto& b) { return a.flow < b.flow; }));
    const intruder_stream again = generate_intruder_stream(quick());
    EXPECT_EQ(again.text, s.text);
    ASSERT_EQ(again.packets.size(), s.packets.size());
    for (std::size_t i = 0; i != s.packets.size(); ++i) {
        EXPECT_EQ(again.packets[i].flow, s.packets[i].flow) << "packet " << i;
        EXPECT_EQ(again.packets[i].fragment, s.packets[i].fragment) << "packet " << i;
    }
}

/// Every packet is three committed transactions (pop, decode, pop a
/// reassembled flow, empty or not) and every client's last pop a fourth.
void expect_quick_run_verifies(int clients) {
    const app_run run = run_intruder(quick(), clients, small_table);
    EXPECT_TRUE(run.validation.ok) << clients << " clients: " << run.validation.error;
    const auto packets = static_cast<long>(generate_intruder_stream(quick()).packets.size());
    EXPECT_EQ(run.tasks, packets);
    EXPECT_EQ(run.stm.commits, static_cast<std::uint64_t>(3 * packets + clients));
    EXPECT_GT(run.seconds, 0.0);
}

TEST(Intruder, QuickSizeVerifiesWithOneClient) { expect_quick_run_verifies(1); }
TEST(Intruder, QuickSizeVerifiesWithTwoClients) { expect_quick_run_verifies(2); }
TEST(Intruder, QuickSizeVerifiesWithFourClients) { expect_quick_run_verifies(4); }

TEST(Intruder, SimulatorInputsVerifyWithFourClients) {
    for (const char* name : {"intruder", "intruder+"}) {
        const app_run run = run_intruder(intruder_input(name), 4, small_table);
        EXPECT_TRUE(run.validation.ok) << name << ": " << run.validation.error;
        EXPECT_GT(run.tasks, intruder_input(name).flows) << name;
    }
}

/// A sensor after one client's run of the quick size, for corrupting.
struct ran {
    intruder_stream stream = generate_intruder_stream(quick());
    smr::debra_domain domain{[] {
        smr::domain_config c;
        c.max_threads = 2;
        return c;
    }()};
    intruder_sensor<smr::debra_domain> sensor{domain, small_table, stream};
    client_phase phase = sensor.run(1);

    intruder_log& log() { return intruder_testing::logs(sensor).at(0); }

    /// The first flow of the log that is no attack.
    std::int64_t harmless_flow() {
        for (const std::int64_t flow : log().flows) {
            if (!stream.is_attack(flow)) return flow;
        }
        ADD_FAILURE() << "no harmless flow in the log";
        return 0;
    }

    void expect_caught(const std::string& error, const std::function<void()>& corrupt,
                       const std::function<void()>& undo) {
        ASSERT_TRUE(phase.validation().ok) << phase.validation().error;
        ASSERT_TRUE(sensor.validate().ok) << "valid before the corruption";
        corrupt();
        const smr::ds::validation_result r = sensor.validate();
        EXPECT_FALSE(r.ok);
        EXPECT_NE(r.error.find(error), std::string::npos) << "error: " << r.error;
        undo();
        EXPECT_TRUE(sensor.validate().ok) << "valid after the undo";
    }
};

/// The log's last flow, taken out of it (and put back by restore).
struct last_record {
    std::int64_t flow;
    std::string bytes;

    explicit last_record(const intruder_log& log)
        : flow(log.flows.back()), bytes(log.bytes_of(log.flows.size() - 1)) {}

    void remove(intruder_log& log) const {
        log.flows.pop_back();
        log.ends.pop_back();
        log.bytes.resize(log.ends.empty() ? 0 : log.ends.back());
    }
    void restore(intruder_log& log) const { log.add(flow, bytes); }
};

TEST(Intruder, AFlowNeverReassembledIsCaught) {
    ran r;
    const last_record last(r.log());
    r.expect_caught(
        "flow " + std::to_string(last.flow) + " was never reassembled",
        [&] { last.remove(r.log()); }, [&] { last.restore(r.log()); });
}

TEST(Intruder, AFlowReassembledTwiceIsCaught) {
    ran r;
    const last_record last(r.log());
    r.expect_caught(
        "flow " + std::to_string(last.flow) + " was reassembled twice",
        [&] { last.restore(r.log()); }, [&] { last.remove(r.log()); });
}

TEST(Intruder, AWrongByteIsCaught) {
    ran r;
    char& byte = r.log().bytes.at(0);
    const char was = byte;
    r.expect_caught(
        "flow " + std::to_string(r.log().flows.at(0)) + " was reassembled as",
        [&] { byte = was == 'a' ? 'b' : 'a'; }, [&] { byte = was; });
}

TEST(Intruder, AMissedAttackIsCaught) {
    ran r;
    std::vector<std::int64_t>& attacks = r.log().attacks;
    ASSERT_FALSE(attacks.empty());
    const std::int64_t missed = attacks.back();
    r.expect_caught(
        "flow " + std::to_string(missed) + " is an attack the detector missed",
        [&] { attacks.pop_back(); }, [&] { attacks.push_back(missed); });
}

TEST(Intruder, AFalseDetectionIsCaught) {
    ran r;
    std::vector<std::int64_t>& attacks = r.log().attacks;
    const std::int64_t harmless = r.harmless_flow();
    r.expect_caught(
        "flow " + std::to_string(harmless) + " was detected as an attack, it is none",
        [&] { attacks.push_back(harmless); }, [&] { attacks.pop_back(); });
}

TEST(Intruder, APacketLeftInTheQueueIsCaught) {
    ran r;
    intruder_queue<const intruder_packet>& queue = intruder_testing::packet_queue(r.sensor);
    ASSERT_EQ(queue.head, queue.tail);
    r.expect_caught(
        "the packet queue still holds 1 packet, the first of flow", [&] { --queue.head; },
        [&] { ++queue.head; });
}

TEST(Intruder, ASensorRunsOnce) {
    ran r;
    EXPECT_THROW(r.sensor.run(1), std::logic_error);
}

}  // namespace
}  // namespace smrbench::stamp
