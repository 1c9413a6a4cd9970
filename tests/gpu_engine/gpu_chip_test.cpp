// The GPU chip (models/gpu/gpu_chip.h) through the engine: kernel ops from a trace, on the shipped simt configs. Expected
// values are worked out by hand in the comments, or come from an independent direct simt::launch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/gpu/hierarchy_port.h"
#include "models/simt/isa.h"
#include "sim/config/config_loader.h"
#include "sim/engine/engine.h"
#include "tests/gpu_engine/engine_run.h"
#include "models/gpu/gpu_chip.h"
#include "models/gpu/gpu_chip_kernel_args.h"
#include "sim/input_error.h"
#include "sim/config/model_params.h"
#include "sim/roofline/roofline.h"
#include "sim/trace/trace_reader.h"

namespace fs = std::filesystem;

namespace accelsim::gpu_chip_test {
namespace {

const std::string kSource = ACCELSIM_SOURCE_DIR;
const std::string kKernels = kSource + "/models/simt/kernels/";

ChipConfig config(const std::string& name, const std::vector<std::string>& overrides = {}) {
    return test::shipped_config(name, overrides);
}

std::string kernel_line(const std::string& name, const std::string& file, const std::string& rest) {
    return "kernel " + name + " file=" + kKernels + file + " " + rest;
}

using test::run;
using test::stat;
using test::write_trace;

TEST(GpuChip, KernelOpGivesTheCyclesOfADirectLaunchWithTheSamePort) {
    const ChipConfig chip = config("simt_1sm");
    const std::string trace =
        write_trace({kernel_line("saxpy", "saxpy.sasm", "grid=32 block=256 args=8192,f:2.0,buf:f32:8192:rand,buf:f32:8192:rand")});
    const RunReport report = run(chip, trace);
    ASSERT_EQ(report.ops.size(), 1u);
    EXPECT_EQ(report.ops[0].model, "simt");

    // The same launch by hand: buffers at the addresses the bump allocator gives (256, then the
    // next 256-aligned address), a cold hierarchy (its port sets the SM windows), fp payloads skipped.
    const simt::Kernel k = simt::assemble_file(kKernels + "saxpy.sasm");
    ASSERT_TRUE(k.fp_payload_skippable);
    simt::GlobalMemory mem;
    const std::uint32_t x = mem.allocate(4 * 8192), y = mem.allocate(4 * 8192);
    EXPECT_EQ(x, 256u);
    EXPECT_EQ(y, 256u + 32768u);
    gpu::HierarchyMemoryPort port(memory_hierarchy_params_from_config(chip));
    simt::LaunchOptions options;
    options.skip_fp_payload = true;
    float two = 2.0f;
    std::uint32_t two_bits;
    std::memcpy(&two_bits, &two, 4);
    const simt::KernelStats direct =
        simt::launch(k, {32, 256}, {8192, two_bits, x, y}, mem, simt_params_from(chip), &port, options);
    EXPECT_EQ(report.ops[0].cycles, direct.cycles + static_cast<std::uint64_t>(chip.gpu.launch_overhead_cycles));
    EXPECT_EQ(stat(report.ops[0], "simt.issued"), static_cast<double>(direct.issued));
}

TEST(GpuChip, ValidateComputesPayloadsWithIdenticalCycles) {
    const ChipConfig chip = config("simt_1sm");
    const std::string trace = write_trace(
        {kernel_line("mma", "gemm_mma.sasm", "grid=8 block=32 args=32,32,32,buf:f16:1024:rand,buf:f16:1024:rand,buf:f32:1024:zero")});
    EXPECT_EQ(run(chip, trace, false).ops[0].cycles, run(chip, trace, true).ops[0].cycles);
}

TEST(GpuChip, ReductionSimdEfficiencyIsTheHandWorkedValue) {
    // reduce.sasm, one block of 32 threads, n = 32 (tests/simt/functional_test.cpp works it out):
    // 81 warp instructions issued with 1663 active lanes in all, efficiency 1663 / (32 * 81).
    const ChipConfig chip = config("simt_1sm");
    const std::string trace =
        write_trace({kernel_line("reduce", "reduce.sasm", "grid=1 block=32 args=32,buf:f32:32:iota,buf:f32:1:zero")});
    const OpReport r = run(chip, trace).ops[0];
    ASSERT_TRUE(r.simd_efficiency);
    EXPECT_DOUBLE_EQ(*r.simd_efficiency, 1663.0 / (32.0 * 81.0));
    EXPECT_EQ(stat(r, "simt.issued"), 81.0);
    EXPECT_EQ(stat(r, "simt.active_lanes"), 1663.0);
}

TEST(GpuChip, Stride32IsSlowerThanStride33ByTheConflictDegree) {
    // bank_conflict.sasm, one warp, 16 ld.shared: at stride 32 every load is a 32-way conflict and
    // holds the LD/ST pipe 32 cycles instead of 1, so the 15 loads after the first start 31 cycles
    // later each: 15 * (32 - 1) = 465 cycles more (29 vs 494 cycles, tests/simt/timing_test.cpp).
    const ChipConfig chip = config("simt_1sm");
    const std::string trace = write_trace({kernel_line("s32", "bank_conflict.sasm", "grid=1 block=32 args=32"),
                                           kernel_line("s33", "bank_conflict.sasm", "grid=1 block=32 args=i:33")});
    const RunReport report = run(chip, trace);
    const OpReport& s32 = report.ops[0];
    const OpReport& s33 = report.ops[1];
    EXPECT_EQ(s32.cycles - s33.cycles, 15u * (32u - 1u));
    EXPECT_EQ(stat(s33, "simt.kernel_cycles"), 29.0);
    // Wavefronts: 16 loads x 32 for the conflicting stride, 16 x 1 without conflicts.
    EXPECT_EQ(stat(s32, "simt.shared_wavefronts"), 16.0 * 32.0);
    EXPECT_EQ(stat(s33, "simt.shared_wavefronts"), 16.0);
    EXPECT_EQ(s32.bytes.at("smem"), 16 * 32 * 128);  // wavefronts x 32 banks x 4 bytes
}

TEST(GpuChip, StreamingSaxpyOnA100MovesTheHandWorkedBytesBelowHbmPeak) {
    // saxpy over n = 2^20 floats on all 108 SMs. By hand: every warp reads 128 B of x and of y and
    // writes 128 B of y, all coalesced: l1 = l2 = 12n bytes. HBM: x and y are read once (8n); the
    // stores hit the lines of y the loads brought in, and 12 MiB stay in the 40 MiB L2, so nothing
    // is written back during the kernel (the roofline's hbm bound: 8n); y (4n) is written back at
    // the end of the run, counted but not timed: hbm = 12n. Achieved HBM bandwidth is below the
    // 2039 GB/s peak.
    const ChipConfig chip = config("a100");
    const std::int64_t n = 1 << 20;
    const std::string trace = write_trace({kernel_line(
        "saxpy", "saxpy.sasm", "grid=4096 block=256 args=1048576,f:2.0,buf:f32:1048576:rand,buf:f32:1048576:rand")});
    const OpReport r = run(chip, trace).ops[0];
    EXPECT_EQ(r.bytes.at("l1"), 12 * n);
    EXPECT_EQ(r.bytes.at("l2"), 12 * n);
    EXPECT_EQ(r.bytes.at("hbm"), 12 * n);
    EXPECT_EQ(stat(r, "gpu.l2_flush_bytes"), 4.0 * n);
    // HBM peak per SM cycle: 40 channels x 16 B x 3.1859375 Gb/s = 2039 GB/s, / 1.41 GHz.
    const double peak = 40 * 16 * 3.1859375e9 / 1.41e9;
    EXPECT_NEAR(r.roofline.cycles.at("hbm"), 8.0 * n / peak, 1e-6);
    const double achieved = stat(r, "simt.hbm_bytes_per_cycle");
    EXPECT_GT(achieved, 0.0);
    EXPECT_LT(achieved, peak);
    EXPECT_GE(static_cast<double>(r.cycles), r.roofline.bound_cycles);
    // 13 warp instructions per warp (no thread exits early: n is a multiple of the block), 32768
    // warps, 108 SMs x 4 schedulers.
    EXPECT_DOUBLE_EQ(r.roofline.cycles.at("compute"), 13.0 * 32768.0 / (108.0 * 4.0));
}

TEST(GpuChip, BoundIsTheLargestLowerBoundOnEveryTeachingKernel) {
    for (const char* name : {"simt_1sm", "a100"}) {
        const ChipConfig chip = config(name);
        const RunReport report = run(chip, kSource + "/traces/simt_teaching.trace");
        ASSERT_EQ(report.ops.size(), 6u);
        for (const OpReport& r : report.ops) {
            SCOPED_TRACE(std::string(name) + " " + r.op.name);
            EXPECT_EQ(r.model, "simt");
            EXPECT_GE(static_cast<double>(r.cycles), r.roofline.bound_cycles);
            double largest = 0;
            for (const auto& [key, cycles] : r.roofline.cycles) largest = std::max(largest, cycles);
            EXPECT_EQ(r.roofline.bound_cycles, largest);
            EXPECT_DOUBLE_EQ(r.roofline.compute_cycles, stat(r, "simt.issued") / (chip.gpu.sms * chip.sm.schedulers));
            // Issue-slot use: issued warp instructions over every scheduler's cycles.
            EXPECT_DOUBLE_EQ(*r.utilization, stat(r, "simt.slots.issued") /
                                                 (chip.gpu.sms * chip.sm.schedulers * static_cast<double>(r.cycles)));
            const double stalls = stat(r, "simt.slots.issued") + stat(r, "simt.stall.idle") +
                                  stat(r, "simt.stall.scoreboard") + stat(r, "simt.stall.pipeline") +
                                  stat(r, "simt.stall.barrier");
            EXPECT_LE(stalls, chip.gpu.sms * chip.sm.schedulers * static_cast<double>(r.cycles));
        }
    }
}

TEST(GpuChip, LaunchOverheadIsPaidAndBecomesTheLatencyBound) {
    const ChipConfig chip = config("simt_1sm", {"gpu.launch_overhead_cycles=5000"});
    const std::string trace = write_trace({kernel_line("s33", "bank_conflict.sasm", "grid=1 block=32 args=33")});
    const OpReport r = run(chip, trace).ops[0];
    EXPECT_EQ(r.cycles, 5000u + 29u);
    EXPECT_EQ(r.roofline.bound, "latency");
    EXPECT_EQ(r.roofline.bound_cycles, 5000.0);
}

TEST(GpuChip, IdealMemoryIsAFixedLatencyWithoutHierarchyBytes) {
    const ChipConfig chip = config("simt_1sm", {"memory=ideal"});
    EXPECT_EQ(dynamic_cast<const gpu::GpuChip&>(*make_chip(chip, RunOptions{})).params().ideal_latency_cycles,
              200);  // the A100 L2 hit latency
    const std::string trace =
        write_trace({kernel_line("saxpy", "saxpy.sasm", "grid=4 block=256 args=1024,f:2.0,buf:f32:1024:ones,buf:f32:1024:ones")});
    const OpReport r = run(chip, trace).ops[0];
    EXPECT_EQ(r.bytes.count("hbm"), 0u);
    EXPECT_EQ(r.bytes.count("l2"), 0u);
    EXPECT_EQ(r.bytes.at("l1"), 12 * 1024);
    EXPECT_EQ(r.roofline.cycles.count("hbm"), 0u);
}

TEST(GpuChip, Int8OpsKeepRooflineRowsOnlyForGemmsWithoutAnInt8TensorRate) {
    // The library kernels compute in fp32 on floating tensors, except the int8 tensor-core GEMM
    // and the 8-bit vector kernels: int8 softmax, layernorm and gelu run on 8-bit storage on every
    // chip (prmt, i2f and fp32 arithmetic: no tensor core needed); an int8 matmul runs on a chip
    // with an int8 tensor rate (simt_1sm: a100's SM) and is a roofline row on one without (v100:
    // Volta's tensor cores take fp16 only).
    const std::string trace = write_trace({"softmax s rows=128 cols=128 dtype=int8", "layernorm l rows=128 cols=768 dtype=int8",
                                           "matmul m m=64 n=64 k=64 dtype=int8", "matmul f m=64 n=64 k=64",
                                           "gelu g n=4096 dtype=int8"});
    const RunReport report = run(config("simt_1sm"), trace);
    for (const OpReport& op : report.ops) EXPECT_EQ(op.model, "simt") << op.op.name;
    const RunReport volta = run(config("v100"), trace);
    EXPECT_EQ(volta.ops[0].model, "simt");
    EXPECT_EQ(volta.ops[1].model, "simt");
    EXPECT_EQ(volta.ops[2].model, "roofline");
    EXPECT_EQ(volta.ops[3].model, "simt");
    EXPECT_EQ(volta.ops[4].model, "simt");
}

TEST(GpuChip, Int8GemmsOnA100MatchEigenExactly) {
    // Issue 13's check: int8 matmul and bmm on the a100 config, --validate: every int32 output
    // equals Eigen's integer product. Utilization counts 4096 MACs per m16n8k32 against the int8
    // peak (2048 MACs per SM per cycle): mma_issued x 4096 / (108 x 2048 x cycles).
    const std::string trace =
        write_trace({"matmul q m=200 n=136 k=300 dtype=int8", "bmm s b=12 m=128 n=128 k=64 dtype=int8"});
    const RunReport report = run(config("a100"), trace, true);
    ASSERT_EQ(report.ops.size(), 2u);
    for (const OpReport& op : report.ops) {
        EXPECT_EQ(op.model, "simt") << op.op.name;
        ASSERT_TRUE(op.numerics.has_value()) << op.op.name;
        EXPECT_TRUE(op.numerics->passed) << op.op.name;
        EXPECT_EQ(op.numerics->max_abs_err, 0.0) << op.op.name;
        EXPECT_EQ(op.numerics->checked, op.op.gemm.batch * op.op.gemm.m * op.op.gemm.n);
        EXPECT_NEAR(stat(op, "simt.tensor_utilization"),
                    stat(op, "simt.mma_issued") * 4096 / (108.0 * 2048 * static_cast<double>(op.cycles)), 1e-12);
    }
    EXPECT_EQ(report.ops[0].numerics->checked, 200 * 136);
}

TEST(GpuChip, V100RunsBf16GemmsWithoutTensorCores) {
    // v100's tensor cores take fp16 only (bf16 rate 0): a bf16 matmul runs the FP32 FFMA kernel, as
    // frameworks run bf16 matmuls on Volta, and reports gpu.fp32_fallback; the roofline's compute
    // bound is the FP32 peak (the matrix-unit fallback the report announces). fp16 keeps the mma.
    const std::string trace = write_trace({"matmul b m=128 n=96 k=80 dtype=bf16", "matmul h m=128 n=96 k=80 dtype=fp16"});
    const RunReport report = run(config("v100"), trace, true);
    const OpReport& bf16 = report.ops[0];
    const OpReport& fp16 = report.ops[1];
    EXPECT_EQ(stat(bf16, "gpu.fp32_fallback"), 1);
    EXPECT_EQ(stat(bf16, "simt.mma_issued"), 0);
    EXPECT_TRUE(bf16.roofline.matrix_fallback);
    EXPECT_EQ(bf16.roofline.compute_unit, "fp32");
    EXPECT_TRUE(bf16.numerics.has_value() && bf16.numerics->passed);
    EXPECT_GT(stat(fp16, "simt.mma_issued"), 0);
    EXPECT_FALSE(fp16.roofline.matrix_fallback);
    for (const auto& s : fp16.stats) EXPECT_NE(s.name, "gpu.fp32_fallback");
    EXPECT_TRUE(fp16.numerics.has_value() && fp16.numerics->passed);
}

TEST(Elementwise, ReluTailDivergenceIsTheHandWorkedEfficiency) {
    // relu over n = 1000 fp32 on simt_1sm (one element per thread): 4 blocks of 256 (ceil(1000 / 256), below one wave), 32 warps,
    // stride 1024 so every thread has at most one element. Per thread: 5 prologue instructions
    // (mov, mov, mad, mov, mul), one trip of 10 (setp, exit, shl, add, ld, fmax, add, st, add, bra)
    // and the final setp + exit: 17 issues per warp, 32 x 17 = 544 issued.
    // 31 warps are full: 31 x 17 x 32 lanes. The warp of threads 992..1023 has 8 lanes below n:
    // 5 x 32 + setp, exit at 32 lanes, then 8 issues x 8 lanes and setp, exit x 8 = 304 lanes.
    // Efficiency = (16864 + 304) / (544 x 32) = 17168 / 17408.
    const ChipConfig chip = config("simt_1sm");
    const OpReport r = run(chip, write_trace({"relu act n=1000 dtype=fp32"}), true).ops[0];
    EXPECT_EQ(r.model, "simt");
    EXPECT_EQ(stat(r, "gpu.grid"), 4.0);
    EXPECT_EQ(stat(r, "simt.issued"), 544.0);
    EXPECT_DOUBLE_EQ(*r.simd_efficiency, 17168.0 / 17408.0);
    EXPECT_EQ(stat(r, "simt.lanes.W1_8"), 8.0 + 2.0);  // the tail warp's last 10 issues
    // Bytes: x read once, y written once, fp32: l2 = 8n; the kernel's HBM reads x only (y's lines
    // are written whole, write-allocate without fetch, and stay in the L2), and y is written back
    // at the end of the run.
    EXPECT_EQ(r.bytes.at("l2"), 8 * 1000);
    EXPECT_EQ(r.bytes.at("hbm"), 4 * 1000 + 4 * 1000);
    ASSERT_TRUE(r.numerics);
    EXPECT_TRUE(r.numerics->passed);
    EXPECT_EQ(r.numerics->checked, 1000);
    EXPECT_EQ(r.numerics->max_abs_err, 0.0);
}

// Warm L2: relu over 1 MiB of fp16, twice. The second relu reads the first one's output, still in
// the L2 (2 MiB of outputs fit the 40 MiB): no HBM read at all; cold, it reads its 1 MiB input
// again. At the end both outputs are dirty in the L2 and are written back (counted, not timed).
TEST(WarmL2, TheNextOpReadsThePreviousOutputFromTheL2) {
    const std::int64_t n = 1 << 19, bytes = 2 * n;
    const std::string trace = write_trace({"relu a n=" + std::to_string(n) + " dtype=fp16",
                                           "relu b n=" + std::to_string(n) + " dtype=fp16"});
    const RunReport warm = run(config("a100", {"host.launch=none"}), trace);
    const RunReport cold = run(config("a100", {"host.launch=none", "gpu.cold_l2_per_op=true"}), trace);
    EXPECT_EQ(cold.ops[0].bytes.at("hbm"), bytes);  // the input; the output stays in the L2
    EXPECT_EQ(cold.ops[1].bytes.at("hbm"), bytes);
    EXPECT_EQ(warm.ops[0].bytes.at("hbm"), bytes);
    EXPECT_EQ(stat(warm.ops[1], "gpu.l2_warm_input_lines"), static_cast<double>(bytes / 128));
    EXPECT_EQ(stat(warm.ops[1], "gpu.l2_flush_bytes"), static_cast<double>(2 * bytes));
    EXPECT_EQ(warm.ops[1].bytes.at("hbm"), 2 * bytes);  // no read; both outputs written back at the end
    EXPECT_LT(warm.ops[1].cycles, cold.ops[1].cycles);
    EXPECT_EQ(warm.ops[0].cycles, cold.ops[0].cycles);  // the first op starts cold either way
}

TEST(Elementwise, GridStrideLoopOnA100MatchesHandBytesAndBounds) {
    // gelu over n = 393216 fp32 on a100 (one element per thread): ceil(n / 256) = 1536 blocks, capped at one wave of
    // 108 SMs x 8 resident blocks (2048 threads / 256) = 864 blocks; each thread loops
    // ceil(393216 / 221184) = 2 times or exits after 1. add over n = 100000: 391 blocks, one trip.
    const ChipConfig chip = config("a100", {"gpu.cold_l2_per_op=true"});  // each op's own bytes: a cold L2
    const RunReport report = run(chip, write_trace({"gelu g n=393216 dtype=fp32", "add r n=100000 dtype=fp32", "mul m n=4096 dtype=fp32"}), true);
    const OpReport& gelu = report.ops[0];
    EXPECT_EQ(stat(gelu, "gpu.grid"), 864.0);
    EXPECT_EQ(gelu.bytes.at("l2"), 8 * 393216);
    EXPECT_EQ(gelu.bytes.at("hbm"), 4 * 393216);
    const OpReport& add = report.ops[1];
    EXPECT_EQ(stat(add, "gpu.grid"), 391.0);
    EXPECT_EQ(add.bytes.at("l2"), 12 * 100000);
    EXPECT_EQ(add.bytes.at("hbm"), 8 * 100000);
    for (const OpReport& r : report.ops) {
        SCOPED_TRACE(r.op.name);
        EXPECT_EQ(r.model, "simt");
        // Never below the op's own roofline (but its HBM part: behind a write-back L2 the output
        // may leave after the op), nor below the run's issue and HBM bounds.
        const Roofline shape = compute_roofline(r.op, chip);
        for (const auto& [key, cycles] : shape.cycles)
            if (key != "hbm") {
                EXPECT_GE(r.roofline.bound_cycles, cycles) << key;
            }
        EXPECT_GE(static_cast<double>(r.cycles), r.roofline.bound_cycles);
        ASSERT_TRUE(r.numerics);
        EXPECT_TRUE(r.numerics->passed) << r.numerics->max_abs_err;
    }
    ASSERT_TRUE(report.numerics);
    EXPECT_TRUE(report.numerics->passed);
}

TEST(KernelArguments, ScalarsAndBuffers) {
    const simt::Kernel k = simt::assemble_file(kKernels + "saxpy.sasm");  // n, a, x, y
    Op op;
    op.kind = OpKind::kernel;
    op.name = "s";
    op.kernel.args = {"-3", "f:2.5", "buf:f32:4:iota", "buf:f16:3:ones"};
    simt::GlobalMemory mem;
    std::vector<gpu::KernelBuffer> buffers;
    const std::vector<std::uint32_t> w = gpu::kernel_arguments(op, k, 1, mem, &buffers);
    ASSERT_EQ(w.size(), 4u);
    EXPECT_EQ(w[0], 0xFFFFFFFDu);  // -3
    EXPECT_EQ(w[1], 0x40200000u);  // 2.5f = 1.25 * 2^1: exponent 128, mantissa 0x200000
    ASSERT_EQ(buffers.size(), 2u);
    EXPECT_EQ(w[2], buffers[0].address);
    EXPECT_EQ(buffers[0].bytes, 16u);
    EXPECT_EQ(buffers[1].bytes, 6u);
    EXPECT_EQ(mem.load_f32(w[2] + 12), 3.0f);
    std::uint16_t half_one;
    mem.read(w[3] + 4, &half_one, 2);
    EXPECT_EQ(half_one, 0x3C00u);  // fp16 1.0
}

TEST(KernelArguments, RandomBuffersFollowTheSeed) {
    const simt::Kernel k = simt::assemble_file(kKernels + "saxpy.sasm");
    Op op;
    op.kind = OpKind::kernel;
    op.kernel.args = {"8", "f:1", "buf:f32:64:rand", "buf:f32:64:rand"};
    auto data = [&](std::uint64_t seed) {
        simt::GlobalMemory mem;
        const auto w = gpu::kernel_arguments(op, k, seed, mem);
        std::vector<float> v(128);
        mem.read(w[2], v.data(), 256);
        mem.read(w[3], v.data() + 64, 256);
        return v;
    };
    const std::vector<float> a = data(7), b = data(7), c = data(8);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    EXPECT_NE(std::vector<float>(a.begin(), a.begin() + 64), std::vector<float>(a.begin() + 64, a.end()));
    for (float v : a) {
        EXPECT_GE(v, -1.0f);
        EXPECT_LT(v, 1.0f);
    }
}

TEST(KernelArguments, ErrorsNameTheTraceLine) {
    const ChipConfig chip = config("simt_1sm");
    auto error_of = [&](const std::string& line) {
        const std::string trace = write_trace({"relu r n=64", line});
        try {
            run(chip, trace);
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    const std::string count = error_of(kernel_line("k", "saxpy.sasm", "grid=1 block=32 args=1,2,3"));
    EXPECT_NE(count.find("t.trace:3: kernel 'k'"), std::string::npos) << count;
    EXPECT_NE(count.find("takes 4 argument(s) (n,a,x,y)"), std::string::npos) << count;
    const std::string type = error_of(kernel_line("k", "saxpy.sasm", "grid=1 block=32 args=1,2,buf:f64:4:zero,buf:f32:4:zero"));
    EXPECT_NE(type.find("t.trace:3:"), std::string::npos) << type;
    EXPECT_NE(type.find("buffer type 'f64' is not f32, i32 or f16"), std::string::npos) << type;
    const std::string word = error_of(kernel_line("k", "saxpy.sasm", "grid=1 block=32 args=x,2,3,4"));
    EXPECT_NE(word.find("argument 1 (n) 'x': expected a 32-bit integer"), std::string::npos) << word;
    const std::string dims = error_of(kernel_line("k", "saxpy.sasm", "grid=2x2 block=32 args=1,2,3,4"));
    EXPECT_NE(dims.find("1-D grids"), std::string::npos) << dims;
    // A kernel fault (x = 3 is not a valid buffer address) is bad input too, naming the op.
    const std::string fault = error_of(kernel_line("k", "saxpy.sasm", "grid=1 block=32 args=32,2,3,4"));
    EXPECT_NE(fault.find("t.trace:3: kernel 'k'"), std::string::npos) << fault;
}

}  // namespace
}  // namespace accelsim::gpu_chip_test
