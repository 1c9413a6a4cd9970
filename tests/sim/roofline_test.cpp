// Roofline bounds against closed forms worked out by hand.
#include <gtest/gtest.h>

#include <sstream>

#include "sim/engine/engine.h"
#include "sim/input_error.h"
#include "sim/roofline/roofline.h"

using namespace accelsim;

namespace {

// A TPU v4-like chip: 2 cores x 4 MXUs of 128x128 at 1050 MHz, HBM 1200 GB/s
// (32 channels x 128 bit x 2.34375 Gb/s = 32 * 16 B * 2.34375e9 = 1.2e12 B/s).
ChipConfig tpu_like() {
    ChipConfig c;
    c.name = "tpu-like";
    c.kind = "systolic";
    c.clock_mhz = 1050;
    c.tpu.cores = 2;
    c.tpu.mxus_per_core = 4;
    c.tpu.vector.lanes = 128;
    c.tpu.vector.sublanes = 8;
    c.tpu.vmem_bytes = 0;  // no VMEM: no lowering, every op keeps its roofline row
    c.mxu.rows = c.mxu.cols = 128;
    c.mxu.macs_per_pe_per_cycle = {1, 0, 1, 0};
    c.hbm.channels = 32;
    c.hbm.bus_width_bits = 128;
    c.hbm.data_rate_gbps = 2.34375;
    return c;
}

// An A100-like chip: 108 SMs at 1410 MHz, 1024 fp16 tensor MACs and 64 FP32 lanes per SM per cycle,
// L2 of 80 slices x 64 B/cycle, 2000-cycle launch overhead.
ChipConfig gpu_like() {
    ChipConfig c;
    c.name = "gpu-like";
    c.kind = "simt";
    c.clock_mhz = 1410;
    c.gpu.sms = 108;
    c.gpu.launch_overhead_cycles = 2000;
    c.sm.tensor_macs_per_cycle = {2048, 1024, 1024, 512};
    c.sm.fp32_lanes = 64;
    c.l2.size_bytes = 40 << 20;
    c.l2.slices = 80;
    c.l2.bytes_per_cycle_per_slice = 64;
    c.hbm.channels = 40;
    c.hbm.bus_width_bits = 128;
    c.hbm.data_rate_gbps = 3.1859375;  // 40 * 16 B * 3.1859375e9 = 2039 GB/s
    return c;
}

Op matmul(std::int64_t m, std::int64_t n, std::int64_t k, DType t = DType::bf16) {
    Op op;
    op.kind = OpKind::matmul;
    op.name = "mm";
    op.dtype = t;
    op.gemm = {1, m, n, k};
    return op;
}

}  // namespace

TEST(Roofline, BertQkvOnTpuV4IsHbmBound) {
    const ChipConfig chip = tpu_like();
    const Roofline r = compute_roofline(matmul(128, 2304, 768), chip);
    // 128*2304*768 = 226,492,416 MACs over 2*4*128*128 = 131,072 MACs/cycle = 1728 cycles.
    EXPECT_EQ(r.compute_unit, "mxu");
    EXPECT_DOUBLE_EQ(r.cycles.at("compute"), 1728.0);
    // bytes: A 128*768 + B 768*2304 + C 128*2304 = 98,304 + 1,769,472 + 294,912 = 2,162,688 elements
    // x 2 B = 4,325,376 B; HBM moves 1.2e12 / 1.05e9 = 1142.857 B/cycle -> 3784.704 cycles.
    EXPECT_EQ(r.bytes.at("hbm"), 4325376);
    EXPECT_NEAR(r.cycles.at("hbm"), 4325376.0 * 1.05e9 / 1.2e12, 1e-6);
    EXPECT_EQ(r.bound, "hbm");
}

TEST(Roofline, LargeSquareGemmIsComputeBound) {
    const Roofline r = compute_roofline(matmul(4096, 4096, 4096), tpu_like());
    // 4096^3 / 131072 = 524,288 compute cycles; bytes 3 * 4096^2 * 2 = 100,663,296 -> 88,080.384 cycles.
    EXPECT_DOUBLE_EQ(r.cycles.at("compute"), 524288.0);
    EXPECT_NEAR(r.cycles.at("hbm"), 100663296.0 / (1.2e12 / 1.05e9), 1e-6);
    EXPECT_EQ(r.bound, "compute");
}

TEST(Roofline, VectorOpsUseTheVectorUnit) {
    Op gelu;
    gelu.kind = OpKind::gelu;
    gelu.name = "act";
    gelu.elements = 393216;
    const Roofline r = compute_roofline(gelu, tpu_like());
    // 393,216 elements x 7 ops / (2 cores x 128 x 8) = 1344 cycles.
    EXPECT_EQ(r.compute_unit, "vector");
    EXPECT_DOUBLE_EQ(r.compute_cycles, 1344.0);
    // 2 x 393,216 x 2 B = 1,572,864 B -> 1376.256 HBM cycles.
    EXPECT_NEAR(r.cycles.at("hbm"), 1376.256, 1e-9);
    EXPECT_EQ(r.bound, "hbm");
}

TEST(Roofline, DtypesTheMxuLacksRunOnTheVectorUnit) {
    // fp32 has rate 0 on the TPU-like MXU: 64^3 = 262,144 MACs on 2 x 128 x 8 = 2048 lanes = 128.
    const Roofline r = compute_roofline(matmul(64, 64, 64, DType::fp32), tpu_like());
    EXPECT_EQ(r.compute_unit, "vector");
    EXPECT_DOUBLE_EQ(r.compute_cycles, 128.0);
}

TEST(Roofline, KernelOpsOnASystolicChipAreAnInputError) {
    Op op;
    op.kind = OpKind::kernel;
    op.name = "k";
    op.file = "t.trace";
    op.line = 3;
    try {
        compute_roofline(op, tpu_like());
        FAIL() << "expected InputError";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("t.trace:3:"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("simt"), std::string::npos) << e.what();
    }
}

TEST(Roofline, IdealMemoryHasNoHbmBound) {
    ChipConfig chip = tpu_like();
    chip.memory = "ideal";
    const Roofline r = compute_roofline(matmul(128, 2304, 768), chip);
    EXPECT_EQ(r.cycles.count("hbm"), 0u);
    EXPECT_EQ(r.bound, "compute");
}

TEST(Roofline, GpuTensorCoresAndLaunchLatency) {
    const ChipConfig chip = gpu_like();
    // 8192^3 fp16 MACs / (108 x 1024) = 549,755,813,888 / 110,592 = 4,971,026.96 cycles.
    const Roofline big = compute_roofline(matmul(8192, 8192, 8192, DType::fp16), chip);
    EXPECT_EQ(big.compute_unit, "tensor");
    EXPECT_NEAR(big.cycles.at("compute"), 549755813888.0 / 110592.0, 1e-3);
    EXPECT_EQ(big.bound, "compute");
    // A 64x64x64 GEMM: 262,144 / 110,592 = 2.37 compute cycles, 24,576 B -> 4.8 L2 cycles,
    // 24,576 / (2039e9/1.41e9) = 17.0 HBM cycles: the 2000-cycle launch dominates.
    const Roofline tiny = compute_roofline(matmul(64, 64, 64, DType::fp16), chip);
    EXPECT_EQ(tiny.bound, "latency");
    EXPECT_DOUBLE_EQ(tiny.bound_cycles, 2000.0);
    // fp32 GEMMs fall back to the FP32 pipes at 108 x 64 FMA per cycle when TF32 is disabled.
    ChipConfig no_tf32 = chip;
    no_tf32.sm.tensor_macs_per_cycle.fp32 = 0;
    const Roofline f = compute_roofline(matmul(1024, 1024, 1024, DType::fp32), no_tf32);
    EXPECT_EQ(f.compute_unit, "fp32");
    EXPECT_NEAR(f.compute_cycles, 1073741824.0 / 6912.0, 1e-6);
}

TEST(Engine, OpsRunBackToBackAtTheirRooflineBound) {
    const ChipConfig chip = tpu_like();
    std::vector<Op> ops = {matmul(128, 2304, 768), matmul(4096, 4096, 4096)};
    const RunReport report = run_trace(chip, "mem", ops, RunOptions{});
    ASSERT_EQ(report.ops.size(), 2u);
    // ceil(3784.704) = 3785 cycles for the first, then 524,288 for the second.
    EXPECT_EQ(report.ops[0].cycles, 3785u);
    EXPECT_EQ(report.ops[1].start_cycle, 3785u);
    EXPECT_EQ(report.ops[1].cycles, 524288u);
    EXPECT_EQ(report.total_cycles(), 3785u + 524288u);
    EXPECT_EQ(report.ops_without_cycle_model(), 2u);
    // MAC utilization: (226,492,416 + 68,719,476,736) / (131,072 x 528,073)
    EXPECT_NEAR(report.mac_utilization(), (226492416.0 + 68719476736.0) / (131072.0 * 528073.0), 1e-12);
}

TEST(Engine, MacUtilizationCountsEachOpAgainstItsOwnDtypesPeak) {
    // tpu_like with int8 at twice the bf16 rate: 131,072 bf16 and 262,144 int8 MACs per cycle
    // (8 MXUs of 128 x 128). A 4096^3 GEMM (68,719,476,736 MACs) takes 524,288 cycles at the bf16
    // peak, 262,144 at the int8 one: the run's MAC utilization is (524,288 + 262,144) / its cycles
    // (about 100%: the ops run at their compute bounds), not 150% (the int8 MACs counted against
    // the bf16 peak).
    ChipConfig chip = tpu_like();
    chip.mxu.macs_per_pe_per_cycle.int8 = 2;
    std::vector<Op> ops = {matmul(4096, 4096, 4096), matmul(4096, 4096, 4096, DType::int8)};
    const RunReport report = run_trace(chip, "mem", ops, RunOptions{});
    EXPECT_GE(report.total_cycles(), 524288u + 262144u);
    EXPECT_NEAR(report.mac_utilization(), (524288.0 + 262144.0) / static_cast<double>(report.total_cycles()), 1e-12);
    EXPECT_GT(report.mac_utilization(), 0.99);
    // An fp32 GEMM (no MXU rate: the vector unit) counts against the default dtype's peak.
    ops = {matmul(256, 256, 256, DType::fp32)};
    const RunReport fp32 = run_trace(chip, "mem", ops, RunOptions{});
    EXPECT_NEAR(fp32.mac_utilization(), 16777216.0 / 131072.0 / static_cast<double>(fp32.total_cycles()), 1e-12);
    // The streamed writer gives the same number and names the peak it shows: int8 alone.
    std::ostringstream table;
    ReportWriter writer(chip, "t.trace", report.matrix_peaks, false, &table, nullptr, nullptr);
    writer.add(report.ops[1]);
    writer.finish(std::nullopt);
    EXPECT_NE(table.str().find("peak (int8); MAC utilization"), std::string::npos) << table.str();
}

TEST(Op, ConvAsImplicitGemm) {
    Op conv;
    conv.kind = OpKind::conv2d;
    // ResNet-50 conv1: 224x224x3, 64 filters 7x7 stride 2 pad 3 -> (224 + 6 - 6 - 1)/2 + 1 = 112.
    conv.conv = {1, 224, 224, 3, 64, 7, 7, 2, 2, 3, 3, 1, 1, 1};
    EXPECT_EQ(conv.conv.out_h(), 112);
    EXPECT_EQ(conv.conv.out_w(), 112);
    // MACs = 112*112*64*3*7*7 = 118,013,952 (the published 118M for ResNet-50's stem).
    EXPECT_EQ(conv.macs(), 118013952);
    // Depthwise 3x3 on 56x56x128, stride 1 pad 1: 56*56*128*9 = 3,612,672 MACs, GEMM batch 128.
    Op dw;
    dw.kind = OpKind::conv2d;
    dw.conv = {1, 56, 56, 128, 128, 3, 3, 1, 1, 1, 1, 1, 1, 128};
    EXPECT_EQ(dw.macs(), 3612672);
    EXPECT_EQ(dw.as_gemm().batch, 128);
    EXPECT_EQ(dw.as_gemm().k, 9);
}
