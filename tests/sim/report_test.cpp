// Report renderings: JSON schema and field names (a contract), CSV rows, table totals.
#include <gtest/gtest.h>

#include <sstream>

#include "models/gpu/gpu_stats.h"
#include "sim/engine/engine.h"
#include "sim/report/report.h"

using namespace accelsim;

namespace {

ChipConfig small_chip() {
    ChipConfig c;
    c.name = "small";
    c.kind = "systolic";
    c.clock_mhz = 1000;
    c.tpu.cores = 1;
    c.tpu.mxus_per_core = 1;
    c.tpu.vector.lanes = 8;
    c.tpu.vector.sublanes = 1;
    c.tpu.vmem_bytes = 0;  // no VMEM: no lowering, every op keeps its roofline row
    c.mxu.rows = c.mxu.cols = 8;
    c.mxu.macs_per_pe_per_cycle = {1, 1, 1, 1};
    c.hbm.channels = 1;
    c.hbm.bus_width_bits = 64;
    c.hbm.data_rate_gbps = 2.0;  // 8 B x 2e9 = 16 GB/s = 16 B per 1 GHz cycle
    c.effective = {{"name", "small"}};
    return c;
}

std::vector<Op> two_ops() {
    Op mm;
    mm.kind = OpKind::matmul;
    mm.name = "proj, first";  // a comma, to check CSV quoting
    mm.gemm = {1, 64, 64, 64};
    Op relu;
    relu.kind = OpKind::relu;
    relu.name = "act";
    relu.elements = 4096;
    return {mm, relu};
}

}  // namespace

TEST(Report, JsonHasTheSchemaFieldsAndHandWorkedTotals) {
    const ChipConfig chip = small_chip();
    const RunReport report = run_trace(chip, "two.trace", two_ops(), RunOptions{});
    const auto j = to_json(report);
    EXPECT_EQ(j["schema"], "accelsim.report/1");
    EXPECT_EQ(j["trace"], "two.trace");
    ASSERT_EQ(j["ops"].size(), 2u);
    // matmul 64^3 = 262,144 MACs at 64 MACs/cycle = 4096 compute cycles; bytes 3 x 4096 x 2 B =
    // 24,576 at 16 B/cycle = 1536 HBM cycles -> compute bound, 4096 cycles.
    const auto& mm = j["ops"][0];
    EXPECT_EQ(mm["macs"], 262144);
    EXPECT_EQ(mm["flops"], 524288);
    EXPECT_EQ(mm["cycles"], 4096);
    EXPECT_EQ(mm["bound"], "compute");
    EXPECT_EQ(mm["bytes"]["hbm"], 24576);
    EXPECT_DOUBLE_EQ(mm["roofline"]["compute_cycles"].get<double>(), 4096.0);
    EXPECT_DOUBLE_EQ(mm["roofline"]["hbm_cycles"].get<double>(), 1536.0);
    // relu: 4096 elements at 8/cycle = 512 cycles; 2 x 4096 x 2 B = 16,384 B / 16 = 1024 -> hbm.
    const auto& relu = j["ops"][1];
    EXPECT_EQ(relu["start_cycle"], 4096);
    EXPECT_EQ(relu["cycles"], 1024);
    EXPECT_EQ(relu["end_cycle"], 5120);
    EXPECT_EQ(relu["bound"], "hbm");
    EXPECT_EQ(j["totals"]["cycles"], 5120);
    EXPECT_EQ(j["totals"]["macs"], 262144);
    EXPECT_DOUBLE_EQ(j["totals"]["seconds"].get<double>(), 5120 / 1e9);
    EXPECT_EQ(j["totals"]["bytes"]["hbm"], 24576 + 16384);
    EXPECT_EQ(j["totals"]["ops_without_cycle_model"], 2);
    // MAC utilization 262,144 / (64 x 5120) = 0.8
    EXPECT_DOUBLE_EQ(j["totals"]["utilization"].get<double>(), 0.8);
}

TEST(Report, CsvHasOneQuotedRowPerOp) {
    const ChipConfig chip = small_chip();
    const RunReport report = run_trace(chip, "two.trace", two_ops(), RunOptions{});
    std::ostringstream csv;
    write_csv(csv, report);
    std::istringstream lines(csv.str());
    std::string header, row0, row1, extra;
    std::getline(lines, header);
    std::getline(lines, row0);
    std::getline(lines, row1);
    EXPECT_FALSE(std::getline(lines, extra));
    EXPECT_EQ(header.rfind("index,name,kind,dtype,shape,model,cycles,", 0), 0u) << header;
    EXPECT_EQ(row0.rfind("0,\"proj, first\",matmul,bf16,m=64 n=64 k=64,roofline,4096,0,4096,", 0), 0u)
        << row0;
    EXPECT_EQ(row1.rfind("1,act,relu,bf16,n=4096,roofline,1024,4096,5120,", 0), 0u) << row1;
    // Both rows are roofline rows with a reason (this chip has no VMEM): the last column says it.
    const std::string reason = ",tpu.vmem_bytes is 0: without VMEM no op is lowered";
    EXPECT_EQ(header.substr(header.size() - 16), ",roofline_reason") << header;
    for (const std::string& row : {row0, row1})
        EXPECT_EQ(row.substr(row.size() - reason.size()), reason) << row;
}

TEST(Report, TableStatesThatNoCycleModelRanAndTheTotals) {
    const ChipConfig chip = small_chip();
    const RunReport report = run_trace(chip, "two.trace", two_ops(), RunOptions{});
    std::ostringstream table;
    write_table(table, report);
    const std::string t = table.str();
    EXPECT_NE(t.find("no cycle model ran for 2 of 2 ops"), std::string::npos) << t;
    // and why, once per reason with the ops it covers (this chip has no VMEM to lower into)
    EXPECT_NE(t.find("\n      proj, first, act: tpu.vmem_bytes is 0: without VMEM no op is lowered\n"), std::string::npos)
        << t;
    EXPECT_EQ(to_json(report)["ops"][1]["roofline_reason"], "tpu.vmem_bytes is 0: without VMEM no op is lowered");
    EXPECT_NE(t.find("totals: 5,120 cycles"), std::string::npos) << t;
    EXPECT_NE(t.find("262,144 MACs"), std::string::npos) << t;
    // 4096 of 5120 cycles compute-bound (80.0%), 1024 hbm-bound (20.0%).
    EXPECT_NE(t.find("time by bound: compute 80.0% hbm 20.0%"), std::string::npos) << t;
}

TEST(Report, TableShowsTheSimtBlockWithStallShares) {
    ChipConfig chip = small_chip();
    RunReport report;
    report.config = &chip;
    report.trace = "k.trace";
    OpReport r;
    r.op.kind = OpKind::kernel;
    r.op.name = "saxpy";
    r.model = "simt";
    r.cycles = 1000;
    r.end_cycle = 1000;
    r.occupancy_theoretical = 1.0;
    r.occupancy_achieved = 0.5;
    r.simd_efficiency = 0.75;
    // 400 slots issued, 100 idle, 300 scoreboard, 200 pipeline, 0 barrier: 1000 scheduler-cycles,
    // so the shares are 10.0%, 30.0%, 20.0% and 0.0%.
    namespace gs = gpu::stat;
    r.stats = {stat_value(gs::ipc, 2.5),          stat_value(gs::slots_issued, 400),
               stat_value(gs::stall_idle, 100),   stat_value(gs::stall_scoreboard, 300),
               stat_value(gs::stall_pipeline, 200), stat_value(gs::stall_barrier, 0)};
    report.ops.push_back(r);
    std::ostringstream table;
    write_table(table, report);
    const std::string t = table.str();
    EXPECT_NE(t.find("simt ops:"), std::string::npos) << t;
    EXPECT_NE(t.find("saxpy     2.50   100.0%/50.0%   75.0%      10.0%        30.0%      20.0%      0.0%"),
              std::string::npos)
        << t;
}

TEST(Report, AGemmThatFallsBackFromTheMatrixUnitIsAnnouncedInTableAndSummary) {
    // The MXU has no fp32 rate: a 64^3 fp32 matmul runs on the 8-lane vector unit, 262,144 / 8 =
    // 32,768 cycles (its 49,152 bytes take 3,072 HBM cycles); the bf16 relu over 4096 elements is
    // HBM-bound at 16,384 / 16 = 1,024 cycles. Fallback share 32,768 / 33,792 = 97.0%.
    ChipConfig chip = small_chip();
    chip.mxu.macs_per_pe_per_cycle = {1, 1, 1, 0};
    std::vector<Op> ops = two_ops();
    ops[0].dtype = DType::fp32;
    const RunReport report = run_trace(chip, "t", ops, RunOptions{});
    EXPECT_TRUE(report.ops[0].roofline.matrix_fallback);
    EXPECT_FALSE(report.ops[1].roofline.matrix_fallback);
    EXPECT_EQ(report.ops[0].cycles, 32768u);
    std::ostringstream table;
    write_table(table, report);
    const std::string t = table.str();
    EXPECT_NE(t.find("note: 1 GEMM-like op(s) in fp32, a dtype this chip's matrix unit does not run, ran on the "
                     "slower vector unit"), std::string::npos) << t;
    EXPECT_NE(t.find("matrix-unit fallback: 1 op(s) in fp32 on vector, 97.0% of cycles"), std::string::npos) << t;
}

TEST(Report, KernelOpsShowNoDtypeNorWorkCounts) {
    ChipConfig chip = small_chip();
    RunReport report;
    report.config = &chip;
    OpReport r;
    r.op.kind = OpKind::kernel;
    r.op.name = "k";
    r.model = "simt";
    r.cycles = r.end_cycle = 10;
    report.ops = {r};
    std::ostringstream csv;
    write_csv(csv, report);
    // dtype empty; shape, model, cycles, start, end, host cycles; macs and flops empty.
    EXPECT_NE(csv.str().find("0,k,kernel,,"), std::string::npos) << csv.str();
    EXPECT_NE(csv.str().find(",simt,10,0,10,0,,,"), std::string::npos) << csv.str();
    EXPECT_EQ(csv.str().find("roofline_reason"), std::string::npos) << csv.str();  // no roofline row, no column
    std::ostringstream table;
    write_table(table, report);
    EXPECT_EQ(table.str().find("bf16"), std::string::npos) << table.str();
    EXPECT_NE(table.str().find("(1 op whose program decides its work not counted)"), std::string::npos)
        << table.str();
    const nlohmann::json j = to_json(report);
    EXPECT_TRUE(j["ops"][0]["dtype"].is_null());
    EXPECT_TRUE(j["ops"][0]["macs"].is_null());
    EXPECT_TRUE(j["ops"][0]["flops"].is_null());
}
