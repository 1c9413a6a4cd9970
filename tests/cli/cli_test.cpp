// End-to-end tests of the accelsim executable: exit codes, messages, report contents.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/accelsim_process.h"

#include "sim/config/config_loader.h"
#include "sim/engine/engine.h"
#include "sim/trace/trace_reader.h"

namespace fs = std::filesystem;

using namespace accelsim_test;

TEST(Cli, BertBaseOnTpuV4JsonReport) {
    const fs::path dir = scratch_dir();
    const fs::path json_path = dir / "r.json";
    const Result r = run("--config configs/tpu_v4.json --trace traces/bert_base.trace --json '" +
                         json_path.string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(slurp(json_path));
    EXPECT_EQ(j["schema"], "accelsim.report/1");
    // 12 layers x 13 ops.
    EXPECT_EQ(j["ops"].size(), 156u);
    // Per layer: QKV 128*2304*768 + 2 bmm 12*128*128*64 + out 128*768*768 + FFN 2*128*3072*768
    // = 931,135,488 MACs; x 12 layers = 11,173,625,856.
    EXPECT_EQ(j["totals"]["macs"].get<std::int64_t>(), 11173625856LL);
    EXPECT_TRUE(contains(r.out, "L0.attn.qkv")) << r.out;
    EXPECT_TRUE(contains(r.out, "totals:")) << r.out;
}

TEST(Cli, SameInputsGiveByteIdenticalJsonAndCsv) {
    const fs::path dir = scratch_dir();
    for (const char* name : {"a", "b"}) {
        const Result r = run("--quiet --config configs/tpu_v4.json --trace traces/bert_base.trace --json '" +
                             (dir / (std::string(name) + ".json")).string() + "' --csv '" +
                             (dir / (std::string(name) + ".csv")).string() + "'");
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_TRUE(r.out.empty()) << "--quiet printed: " << r.out;
    }
    EXPECT_EQ(slurp(dir / "a.json"), slurp(dir / "b.json"));
    EXPECT_EQ(slurp(dir / "a.csv"), slurp(dir / "b.csv"));
    // CSV: a header and one row per op.
    const std::string csv = slurp(dir / "a.csv");
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 157);
}

TEST(Cli, MisspeltKeyOnCommandLineSuggestsTheNearest) {
    const Result r = run("--config configs/tpu_v4.json --trace traces/bert_base.trace --set mxu.rwos=64");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "mxu.rwos")) << r.err;
    EXPECT_TRUE(contains(r.err, "rows")) << r.err;
}

TEST(Cli, MisspeltKeyInAConfigFileNamesFileAndKey) {
    const fs::path dir = scratch_dir();
    const fs::path cfg = dir / "bad.json";
    write_file(cfg, std::string("{ \"extends\": \"") + ACCELSIM_SOURCE_DIR +
                        "/configs/tpu_v4.json\", \"mxu\": { \"rwos\": 64 } }\n");
    const Result r = run("--config '" + cfg.string() + "' --trace traces/bert_base.trace");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "bad.json")) << r.err;
    EXPECT_TRUE(contains(r.err, "mxu.rwos")) << r.err;
    EXPECT_TRUE(contains(r.err, "did you mean 'mxu.rows'")) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one clear error line: " << r.err;
}

TEST(Cli, MalformedJsonNamesTheLine) {
    const fs::path dir = scratch_dir();
    const fs::path cfg = dir / "broken.json";
    write_file(cfg, "{\n  \"name\": \"x\",\n  \"kind\": \"systolic\"\n  \"clock_mhz\": 100\n}\n");
    const Result r = run("--config '" + cfg.string() + "' --trace traces/bert_base.trace");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "broken.json:4")) << r.err;  // the missing comma shows on line 4
}

TEST(Cli, Fp8RunsWhereATensorCoreRunsItAndIsRefusedElsewhere) {
    // a100 (Ampere) has no fp8 rate: the trace's fp8 op is refused with its file and line, exit 2,
    // before anything runs. On h100 the same trace runs the fp8 kernel and --validate checks it
    // against Eigen on the same fp8-rounded inputs (docs/trace-format.md "fp8").
    const fs::path dir = scratch_dir();
    const fs::path trace = dir / "fp8.trace";
    write_file(trace, "# accelsim-trace 1\nmatmul a m=64 n=48 k=96 dtype=fp16\n"
                      "matmul q m=64 n=48 k=96 dtype=fp8_e4m3\nbmm s b=2 m=32 n=16 k=64 dtype=fp8_e5m2\n");
    const Result refused = run("--config configs/a100.json --trace '" + trace.string() + "'");
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_TRUE(contains(refused.err, "fp8.trace:3")) << refused.err;
    EXPECT_TRUE(contains(refused.err, "dtype fp8_e4m3 needs a matrix unit")) << refused.err;
    EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << "one clear error line: " << refused.err;
    const Result ran = run("--config configs/h100.json --validate --json '" + (dir / "h100.json").string() +
                           "' --trace '" + trace.string() + "'");
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    const std::string json = slurp(dir / "h100.json");
    EXPECT_TRUE(contains(json, "\"dtype\": \"fp8_e4m3\"")) << json.substr(0, 2000);
    EXPECT_TRUE(contains(json, "\"dtype\": \"fp8_e5m2\""));
    // The whole run's numerics: 64 x 48 x 2 + 2 x 32 x 16 values, every one within its bound.
    EXPECT_TRUE(contains(json, "\"checked\": 7168")) << json.substr(json.size() > 600 ? json.size() - 600 : 0);
    EXPECT_TRUE(contains(json, "\"passed\": true"));
    EXPECT_FALSE(contains(json, "\"model\": \"roofline\""));  // both fp8 GEMMs were simulated
    // No shipped TPU has an fp8 rate; one given by --set runs the MXUs on fp8-rounded operands with
    // fp32 accumulation, checked against Eigen the same way.
    const Result tpu = run("--config configs/tpu_v4.json --set mxu.macs_per_pe_per_cycle.fp8_e4m3=1 "
                           "--set mxu.macs_per_pe_per_cycle.fp8_e5m2=1 --validate --trace '" + trace.string() + "'");
    ASSERT_EQ(tpu.exit_code, 0) << tpu.err;
    EXPECT_TRUE(contains(tpu.out, "numerics: PASSED")) << tpu.out;
}

TEST(Cli, MixedFp8OperandsRunOnGpusAndAreRefusedOnSystolicChips) {
    // b_dtype (docs/trace-format.md "Mixed fp8 operands"): on l4 (sm_89, the mma kernel) an
    // e5m2 x e4m3 matmul and an e4m3 x e5m2 bmm pass --validate against Eigen on each operand's
    // rounding; the JSON carries both formats, the table and CSV show A*B. A systolic chip given
    // fp8 rates refuses the op (one line naming it, exit 2).
    const fs::path dir = scratch_dir();
    const fs::path trace = dir / "mixed.trace";
    write_file(trace, "# accelsim-trace 1\nmatmul dgrad m=64 n=48 k=96 dtype=fp8_e5m2 b_dtype=fp8_e4m3\n"
                      "bmm wgrad b=2 m=32 n=16 k=64 dtype=fp8_e4m3 b_dtype=fp8_e5m2\n");
    const Result ran = run("--config configs/l4.json --validate --json '" + (dir / "l4.json").string() + "' --csv '" +
                           (dir / "l4.csv").string() + "' --trace '" + trace.string() + "'");
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    EXPECT_TRUE(contains(ran.out, "fp8_e5m2*fp8_e4m3")) << ran.out;
    EXPECT_TRUE(contains(ran.out, "numerics: PASSED")) << ran.out;
    const auto j = nlohmann::json::parse(slurp(dir / "l4.json"));
    ASSERT_EQ(j["ops"].size(), 2u);
    EXPECT_EQ(j["ops"][0]["dtype"], "fp8_e5m2");
    EXPECT_EQ(j["ops"][0]["b_dtype"], "fp8_e4m3");
    EXPECT_EQ(j["ops"][1]["b_dtype"], "fp8_e5m2");
    EXPECT_EQ(j["ops"][0]["model"], "simt");
    // 64 x 48 + 2 x 32 x 16 outputs, each within its bound.
    EXPECT_EQ(j["numerics"]["checked"], 64 * 48 + 2 * 32 * 16);
    EXPECT_TRUE(contains(j["ops"][0]["numerics"]["quantization_error"]["scheme"].get<std::string>(), "A fp8_e5m2, B fp8_e4m3"))
        << j["ops"][0]["numerics"].dump();
    EXPECT_TRUE(contains(slurp(dir / "l4.csv"), ",fp8_e4m3*fp8_e5m2,"));
    const Result tpu = run("--config configs/tpu_v4.json --set mxu.macs_per_pe_per_cycle.fp8_e4m3=1 "
                           "--set mxu.macs_per_pe_per_cycle.fp8_e5m2=1 --trace '" + trace.string() + "'");
    EXPECT_EQ(tpu.exit_code, 2);
    EXPECT_TRUE(contains(tpu.err, "mixed.trace:2")) << tpu.err;
    EXPECT_TRUE(contains(tpu.err, "the systolic model takes one operand dtype")) << tpu.err;
    EXPECT_EQ(std::count(tpu.err.begin(), tpu.err.end(), '\n'), 1) << "one clear error line: " << tpu.err;
}

TEST(Cli, AnInt8OnlyChipRefusesABf16OpNamingItsLine) {
    // coral_edgetpu (tpu.int8_only): the trace's second op pins bf16; the first (int8 by the
    // config's default) would run. One error line naming the trace line, exit 2.
    const fs::path dir = scratch_dir();
    const fs::path trace = dir / "mixed.trace";
    write_file(trace, "# accelsim-trace 1\nmatmul q m=8 n=8 k=8\nmatmul f m=8 n=8 k=8 dtype=bf16\n");
    const Result r = run("--config configs/coral_edgetpu.json --trace '" + trace.string() + "'");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "mixed.trace:3")) << r.err;
    EXPECT_TRUE(contains(r.err, "int8 only")) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one clear error line: " << r.err;
    // Without the bf16 op the trace runs.
    write_file(trace, "# accelsim-trace 1\nmatmul q m=8 n=8 k=8\n");
    EXPECT_EQ(run("--config configs/coral_edgetpu.json --trace '" + trace.string() + "'").exit_code, 0);
}

TEST(Cli, BadTraceLinesAreReportedCompilerStyle) {
    const fs::path dir = scratch_dir();
    const fs::path trace = dir / "bad.trace";
    write_file(trace, "# accelsim-trace 1\nmatmul ok m=8 n=8 k=8\nmatmull oops m=8 n=8 k=8\n");
    Result r = run("--config configs/tpu_v4.json --trace '" + trace.string() + "'");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "bad.trace:3:")) << r.err;
    EXPECT_TRUE(contains(r.err, "matmul")) << r.err;

    write_file(trace, "# accelsim-trace 1\nmatmul zero m=0 n=8 k=8\n");
    r = run("--config configs/tpu_v4.json --trace '" + trace.string() + "'");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "bad.trace:2:")) << r.err;

    write_file(trace, "matmul noheader m=8 n=8 k=8\n");
    r = run("--config configs/tpu_v4.json --trace '" + trace.string() + "'");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "bad.trace:1:")) << r.err;

    // 2^32 x 2^32 x 2 overflows 64-bit MAC counts.
    write_file(trace, "# accelsim-trace 1\nmatmul huge m=4294967296 n=4294967296 k=2\n");
    r = run("--config configs/tpu_v4.json --trace '" + trace.string() + "'");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "bad.trace:2:")) << r.err;
}

TEST(Cli, MissingFilesAndBadUsageExitTwo) {
    Result r = run("--config configs/nope.json --trace traces/bert_base.trace");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "configs/nope.json")) << r.err;
    r = run("--config configs/tpu_v4.json --trace traces/nope.trace");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "traces/nope.trace")) << r.err;
    r = run("--config configs/tpu_v4.json");
    EXPECT_EQ(r.exit_code, 2);
    r = run("--frobnicate");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "frobnicate")) << r.err;
    r = run("--help");
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_TRUE(contains(r.out, "--config")) << r.out;
    r = run("--version");
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_TRUE(contains(r.out, "accelsim ")) << r.out;
}

TEST(Cli, KernelOpOnASystolicChipIsABadInput) {
    const fs::path dir = scratch_dir();
    const fs::path trace = dir / "k.trace";
    write_file(dir / "k.sasm", "");
    write_file(trace, "# accelsim-trace 1\nkernel k file=k.sasm grid=1 block=32\n");
    const Result r = run("--config configs/tpu_v4.json --trace '" + trace.string() + "'");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "k.trace:2:")) << r.err;
}

TEST(Cli, TraceSubcommandRegeneratesTheShippedBertTrace) {
    const fs::path dir = scratch_dir();
    const Result r = run("trace bert --size base --seq 128 --batch 1 --layers 12 -o '" +
                         (dir / "bert.trace").string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(slurp(dir / "bert.trace"), slurp(fs::path(ACCELSIM_SOURCE_DIR) / "traces/bert_base.trace"));
    EXPECT_EQ(run("trace bert --size huge").exit_code, 2);
}

TEST(Cli, VcdRecordsTheChosenPeRectangle) {
    const fs::path dir = scratch_dir();
    const fs::path vcd = dir / "mxu.vcd";
    const Result r = run("--quiet --config configs/systolic_8x8.json --trace traces/tiny_gemm.trace --vcd '" +
                         vcd.string() + "' --vcd-op exact_tile --vcd-cycles 0:30 --vcd-pes 0:1,0:1");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    const std::string text = slurp(vcd);
    // 2 x 2 PEs, each with left operand, top operand and partial sum, plus the cycle counter.
    std::size_t vars = 0;
    for (std::size_t at = text.find("$var"); at != std::string::npos; at = text.find("$var", at + 1)) ++vars;
    EXPECT_EQ(vars, 2u * 2u * 3u + 1u);
    EXPECT_TRUE(contains(text, "pe_r1_c1_psum")) << text.substr(0, 400);
    EXPECT_FALSE(contains(text, "pe_r2_c0_psum"));
    // A rectangle outside the 8x8 array and an op that is not a GEMM are bad input.
    EXPECT_EQ(run("--config configs/systolic_8x8.json --trace traces/tiny_gemm.trace --vcd '" + vcd.string() +
                  "' --vcd-pes 0:8,0:1").exit_code, 2);
    EXPECT_EQ(run("--config configs/systolic_8x8.json --trace traces/tiny_mixed.trace --vcd '" + vcd.string() +
                  "' --vcd-op nosuchop").exit_code, 2);
    // A window end past 2^53 (here 2^64 - 1) is refused before it can overflow the run's end time.
    const Result huge = run("--config configs/systolic_8x8.json --trace traces/tiny_gemm.trace --vcd '" +
                            vcd.string() + "' --vcd-cycles 0:18446744073709551615");
    EXPECT_EQ(huge.exit_code, 2);
    EXPECT_TRUE(contains(huge.err, "18446744073709551615 is beyond the largest allowed value 9007199254740992"))
        << huge.err;
}

TEST(Cli, SystemCScheduledRunEqualsThePlainSchedulerOpByOp) {
    // The executable elaborates the TPU cores as SystemC threads (RunOptions::systemc); in-process
    // runs use the plain time-ordered scheduler. Every op's cycles must agree.
    const fs::path dir = scratch_dir();
    const Result r = run("--quiet --config configs/tpu_v4.json --trace traces/bert_base.trace --json '" +
                         (dir / "r.json").string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(slurp(dir / "r.json"));
    const std::string root = ACCELSIM_SOURCE_DIR;
    const accelsim::ChipConfig config = accelsim::load_config(root + "/configs/tpu_v4.json");
    const auto ops = accelsim::read_trace(root + "/traces/bert_base.trace", config.default_dtype);
    const accelsim::RunReport plain = accelsim::run_trace(config, "t", ops, accelsim::RunOptions{});
    ASSERT_EQ(j["ops"].size(), plain.ops.size());
    for (std::size_t i = 0; i < plain.ops.size(); ++i) {
        EXPECT_EQ(j["ops"][i]["cycles"].get<std::uint64_t>(), plain.ops[i].cycles) << plain.ops[i].op.name;
        EXPECT_EQ(j["ops"][i]["model"], plain.ops[i].model);
    }
    EXPECT_EQ(j["ops"][0]["model"], "tpu.hierarchy");
}

// The GPU chip names the op (file, line, kind, name) in front of a kernel library's message, so the
// library's own text must not name it again ("matmul 'big': matmul 'big': ..." before).
TEST(Cli, AGpuLoweringErrorNamesTheOpOnce) {
    const fs::path dir = scratch_dir();
    const fs::path trace = dir / "big.trace";
    write_file(trace, "# accelsim-trace 1\nmatmul big m=100000 n=100000 k=4 dtype=fp16\n");
    const Result r = run("--config configs/a100.json --trace '" + trace.string() + "'");
    EXPECT_EQ(r.exit_code, 2);
    // K padded to 8: (100000 x 8 + 8 x 100000) x 2 B + 100000^2 x 2 B = 20,003,200,000 bytes.
    EXPECT_TRUE(contains(r.err, "big.trace:2: matmul 'big': operands of 20003200000 bytes exceed")) << r.err;
    EXPECT_EQ(r.err.find("'big'"), r.err.rfind("'big'")) << "named once: " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one clear error line: " << r.err;
}
