// STAMP's Genome on smrlab's STM (bench/stamp/genome.hpp): a quick size
// verifies at 1, 2 and 4 clients, a sparse sample (links at every overlap)
// and STAMP's simulator inputs at 4; the verification fails on a corrupted
// result, naming what is wrong.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "smr/reclaim/debra.hpp"
#include "smr/reclaim/guards.hpp"
#include "stamp/genome.hpp"

namespace smrbench::stamp {

/// The tests' way into a sequencer's result (befriended by genome_sequencer).
struct genome_testing {
    template <class Domain>
    static std::string& sequence(genome_sequencer<Domain>& s) {
        return s.sequence_;
    }
    template <class Domain>
    static chain& unique_bucket(genome_sequencer<Domain>& s, long bucket) {
        return *s.unique_[static_cast<std::size_t>(bucket)];
    }
};

namespace {

constexpr smr::stm::stm_config small_table{.ort_bits = 16, .shift = 5};

/// STAMP's simulator gene and segments with a quarter of its samples: every
/// start position is still sampled (241 unique segments), about 17 copies
/// of each, so step 1's chunks meet duplicates, their own and other
/// clients'; small enough for ASan and TSan.
genome_params quick() {
    genome_params p;
    p.gene_length = 256;
    p.segment_length = 16;
    p.segments = 4096;
    return p;
}

/// Distinct segments of a sample: the entries step 2 claims.
long distinct_segments(const genome_sample& sample) {
    std::set<std::string_view> distinct;
    for (long i = 0; i != sample.count; ++i) {
        distinct.emplace(sample.segment(i), static_cast<std::size_t>(sample.segment_length));
    }
    return static_cast<long>(distinct.size());
}

std::string refusal(const genome_params& params, long clients) {
    try {
        params.check(clients);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "accepted";
}

TEST(Genome, NamedInputsAreStamps) {
    const genome_params simulator = genome_input("genome");
    EXPECT_EQ(simulator.gene_length, 256);
    EXPECT_EQ(simulator.segment_length, 16);
    EXPECT_EQ(simulator.segments, 16384);
    EXPECT_EQ(simulator.seed, 0U);
    const genome_params plus = genome_input("genome+");
    EXPECT_EQ(plus.gene_length, 512);
    EXPECT_EQ(plus.segment_length, 32);
    EXPECT_EQ(plus.segments, 32768);
    const genome_params plus_plus = genome_input("genome++");
    EXPECT_EQ(plus_plus.gene_length, 16384);
    EXPECT_EQ(plus_plus.segment_length, 64);
    EXPECT_EQ(plus_plus.segments, 16777216);
    const std::vector<std::string_view> expected{"genome", "genome+", "genome++"};
    EXPECT_EQ(genome_inputs(), expected);
    for (const std::string_view name : genome_inputs()) {
        EXPECT_EQ(refusal(genome_input(name), 4), "accepted") << name;
    }
    try {
        genome_input("genome+++");
        FAIL() << "an unknown input was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()),
                  "unknown Genome input 'genome+++' (one of genome, genome+, genome++)");
    }
}

/// STAMP's own test of its segments: each one is in the gene, position 0
/// and the last start are sampled, and no s - 1 positions in a row lack a
/// start; with few samples, the added ones make it so.
TEST(Genome, TheSampleCoversTheGene) {
    for (const long segments : {4096L, 1L}) {
        genome_params p = quick();
        p.segments = segments;
        const genome_sample sample = sample_genome(p);
        ASSERT_EQ(sample.gene.size(), 256U);
        EXPECT_EQ(sample.gene.find_first_not_of("acgt"), std::string::npos);
        EXPECT_GE(sample.count, segments);
        ASSERT_EQ(sample.nucleotides.size(), static_cast<std::size_t>(sample.count * 16));
        std::vector<bool> started(static_cast<std::size_t>(p.starts()), false);
        for (long i = 0; i != sample.count; ++i) {
            // The first occurrence is the only one: this gene repeats no 15 nucleotides.
            const std::size_t at = sample.gene.find(std::string_view(sample.segment(i), 16));
            ASSERT_NE(at, std::string::npos) << "segment " << i << " is not in the gene";
            started[at] = true;
        }
        EXPECT_TRUE(started.front());
        EXPECT_TRUE(started.back());
        long without = 0;
        for (const bool start : started) {
            without = start ? 0 : without + 1;
            ASSERT_LT(without, 15) << "with " << segments << " segments drawn";
        }
    }
    EXPECT_EQ(sample_genome(quick()).nucleotides, sample_genome(quick()).nucleotides);
}

/// Every transaction the algorithm must commit did: a claim and 16 table
/// inserts per unique segment, a link for each but the last, and step 1's
/// chunks; more for the candidates that did not link.
void expect_quick_run_verifies(int clients) {
    const app_run run = run_genome(quick(), clients, small_table);
    EXPECT_TRUE(run.validation.ok) << clients << " clients: " << run.validation.error;
    const genome_sample sample = sample_genome(quick());
    const long unique = distinct_segments(sample);
    EXPECT_EQ(unique, 241);
    const long chunks = (sample.count + genome_chunk - 1) / genome_chunk;
    EXPECT_GE(run.stm.commits, static_cast<std::uint64_t>(unique * 18 - 1 + chunks));
    EXPECT_EQ(run.tasks, static_cast<long>(run.stm.commits));
    EXPECT_GT(run.seconds, 0.0);
}

TEST(Genome, QuickSizeVerifiesWithOneClient) { expect_quick_run_verifies(1); }
TEST(Genome, QuickSizeVerifiesWithTwoClients) { expect_quick_run_verifies(2); }
TEST(Genome, QuickSizeVerifiesWithFourClients) { expect_quick_run_verifies(4); }

/// 60 samples of 241 starts: 53 unique segments, which overlap their
/// successors by 3 to 15 nucleotides, so most links wait for lower overlaps
/// and client 0's rehashes and jumps between overlaps matter. No end of this
/// gene ever has two candidates to choose from, so the result does not
/// depend on the clients' order (with fewer samples, ends do).
TEST(Genome, ASparseSampleVerifiesAtEveryOverlap) {
    genome_params p = quick();
    p.segments = 60;
    ASSERT_LT(distinct_segments(sample_genome(p)), 241);
    for (const int clients : {1, 2, 4}) {
        const app_run run = run_genome(p, clients, small_table);
        EXPECT_TRUE(run.validation.ok) << clients << " clients: " << run.validation.error;
    }
}

TEST(Genome, SimulatorInputsVerifyWithFourClients) {
    for (const char* name : {"genome", "genome+"}) {
        const app_run run = run_genome(genome_input(name), 4, small_table);
        EXPECT_TRUE(run.validation.ok) << name << ": " << run.validation.error;
        EXPECT_GT(run.tasks, 0) << name;
    }
}

TEST(Genome, ParametersOutOfRangeAreRefused) {
    const genome_params ok = quick();
    EXPECT_EQ(refusal(ok, 1), "accepted");
    EXPECT_NE(refusal(ok, 0).find("clients (-t)"), std::string::npos);
    genome_params p = ok;
    p.gene_length = 1;
    EXPECT_NE(refusal(p, 1).find("gene length (-g)"), std::string::npos) << refusal(p, 1);
    p = ok;
    p.segment_length = 1;
    EXPECT_NE(refusal(p, 1).find("segment length (-s)"), std::string::npos) << refusal(p, 1);
    p = ok;
    p.segment_length = 257;  // longer than the gene
    EXPECT_NE(refusal(p, 1).find("segment length (-s)"), std::string::npos) << refusal(p, 1);
    p = ok;
    p.segments = 0;
    EXPECT_NE(refusal(p, 1).find("segments (-n)"), std::string::npos) << refusal(p, 1);
    EXPECT_THROW(run_genome(p, 1, small_table), std::invalid_argument);
    EXPECT_THROW(run_genome(ok, 0, small_table), std::invalid_argument);
}

/// A sequencer after one client's run of the quick size, for corrupting.
struct ran {
    genome_sample sample = sample_genome(quick());
    smr::debra_domain domain{[] {
        smr::domain_config c;
        c.max_threads = 2;
        return c;
    }()};
    genome_sequencer<smr::debra_domain> sequencer{domain, small_table, sample};
    client_phase phase = sequencer.run(1);

    std::string& sequence() { return genome_testing::sequence(sequencer); }

    /// The first bucket of the unique set that holds a segment.
    chain& held_bucket() {
        for (long b = 0;; ++b) {
            chain& c = genome_testing::unique_bucket(sequencer, b);
            if (c.head.next != nullptr) return c;
        }
    }

    void expect_caught(const std::string& error, const std::function<void()>& corrupt,
                       const std::function<void()>& undo) {
        ASSERT_TRUE(phase.validation().ok) << phase.validation().error;
        ASSERT_TRUE(sequencer.validate().ok) << "valid before the corruption";
        corrupt();
        const smr::ds::validation_result r = sequencer.validate();
        EXPECT_FALSE(r.ok);
        EXPECT_NE(r.error.find(error), std::string::npos) << "error: " << r.error;
        undo();
        EXPECT_TRUE(sequencer.validate().ok) << "valid after the undo";
    }
};

TEST(Genome, AWrongNucleotideIsCaught) {
    ran r;
    const char was = r.sequence().at(100);
    r.expect_caught(
        "differs from the gene at nucleotide 100",
        [&] { r.sequence()[100] = was == 'a' ? 'c' : 'a'; }, [&] { r.sequence()[100] = was; });
}

TEST(Genome, ASequenceOfTheWrongLengthIsCaught) {
    ran r;
    r.expect_caught(
        "the sequence has 255 nucleotides, the gene 256", [&] { r.sequence().pop_back(); },
        [&] { r.sequence().push_back(r.sample.gene.back()); });
    r.expect_caught(
        "the sequence has 257 nucleotides", [&] { r.sequence().push_back('a'); },
        [&] { r.sequence().pop_back(); });
}

TEST(Genome, AWrongSizeWordIsCaught) {
    ran r;
    chain& c = r.held_bucket();
    const std::string error =
        "size " + std::to_string(c.size + 1) + ", holds " + std::to_string(c.size);
    r.expect_caught(
        error, [&] { ++c.size; }, [&] { --c.size; });
}

TEST(Genome, ASegmentMissingFromTheUniqueSetIsCaught) {
    ran r;
    chain& c = r.held_bucket();
    chain_node* first = c.head.next;
    r.expect_caught(
        "missing from the unique set",
        [&] {
            c.head.next = first->next;
            --c.size;
        },
        [&] {
            c.head.next = first;
            ++c.size;
        });
}

}  // namespace
}  // namespace smrbench::stamp
