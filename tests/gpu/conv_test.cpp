// conv2d as implicit GEMM, against a direct convolution loop on the host: 1x1, padded 3x3, strided
// 7x7, dilated, grouped and depthwise shapes on the tensor-core kernels (fp16, bf16, int8; every
// tile) and the FP32 FFMA kernel (fp32, and 16-bit dtypes without tensor cores), timing-only runs
// against full ones, and hand-worked instruction counts of the int8 and FFMA kernels.
#include <gtest/gtest.h>

#include "models/gpu/conv.h"
#include "models/simt/simt_gpu.h"

namespace accelsim::gpu::conv_test {
namespace {

Op conv_op(Conv2dShape s, DType dtype) {
    Op op;
    op.kind = OpKind::conv2d;
    op.name = "c";
    op.dtype = dtype;
    op.conv = s;
    return op;
}

Conv2dShape shape(std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c, std::int64_t k, std::int64_t r,
                  std::int64_t stride, std::int64_t pad, std::int64_t dilation = 1, std::int64_t groups = 1) {
    Conv2dShape s;
    s.n = n, s.h = h, s.w = w, s.c = c, s.k = k, s.r = r, s.s = r;
    s.stride_h = s.stride_w = stride;
    s.pad_h = s.pad_w = pad;
    s.dilation_h = s.dilation_w = dilation;
    s.groups = groups;
    return s;
}

struct ConvRun {
    simt::KernelStats stats;
    LoweringNumerics numerics;
    double splits = 1;  // the lowering's gpu.splits
};

ConvRun run(const Op& op, bool real, const GemmTile* tile = nullptr, bool skip = false,
            const DTypeRates* tensor_rates = nullptr, const ActivationOutliers& outliers = {}) {
    simt::SimtParams params;
    params.sms = 2;
    params.sm.limits = *simt::published_limits("sm_80");
    LoweringTarget target;
    if (tensor_rates) target.tensor_macs_per_sm_cycle = *tensor_rates;
    target.sms = params.sms;
    target.sm = params.sm;
    target.seed = 3;
    target.real_data = real;
    target.outliers = outliers;
    simt::GlobalMemory memory;
    const LoweredKernel lk = tile ? lower_conv2d_with_tile(op, memory, target, *tile) : lower_conv2d(op, memory, target);
    EXPECT_TRUE(lk.kernel->fp_payload_skippable) << lk.kernel->fp_dependence;
    simt::FixedLatencyMemory port(200);
    ConvRun r;
    r.stats = simt::launch(*lk.kernel, lk.dims, lk.args, memory, params, &port, {skip});
    if (lk.check) r.numerics = lk.check(memory);
    return r;
}

TEST(ConvKernels, MatchesDirectConvolution) {
    const Conv2dShape shapes[] = {
        shape(1, 5, 7, 16, 24, 1, 1, 0),         // 1x1: a plain GEMM over pixels
        shape(2, 9, 9, 3, 10, 3, 1, 1),          // padded 3x3, C = 3 padded to 8 channels
        shape(1, 20, 18, 3, 16, 7, 2, 3),        // ResNet conv1-like: 7x7, stride 2, pad 3
        shape(1, 12, 12, 8, 8, 3, 1, 2, 2),      // dilation 2
        shape(1, 8, 8, 16, 12, 3, 1, 1, 1, 2),   // 2 groups of 8 -> 6 channels
        shape(1, 6, 6, 4, 4, 3, 1, 1, 1, 4),     // depthwise: 4 groups of 1 -> 1
    };
    for (const Conv2dShape& s : shapes)
        for (DType dt : {DType::fp16, DType::bf16}) {
            const ConvRun r = run(conv_op(s, dt), true);
            EXPECT_EQ(r.numerics.checked, s.n * s.out_h() * s.out_w() * s.k);
            EXPECT_TRUE(r.numerics.passed) << "c=" << s.c << " k=" << s.k << " r=" << s.r << " groups=" << s.groups
                                           << " " << to_string(dt) << " max abs err " << r.numerics.max_abs_err;
            EXPECT_GT(r.stats.mma_issued, 0u);
        }
}

// The shapes of MatchesDirectConvolution, shared by the fp32 and int8 tests.
std::vector<Conv2dShape> covered_shapes() {
    return {
        shape(1, 5, 7, 16, 24, 1, 1, 0),         // 1x1
        shape(2, 9, 9, 3, 10, 3, 1, 1),          // padded 3x3, C = 3
        shape(1, 20, 18, 3, 16, 7, 2, 3),        // 7x7, stride 2, pad 3
        shape(1, 12, 12, 8, 8, 3, 1, 2, 2),      // dilation 2
        shape(1, 8, 8, 16, 12, 3, 1, 1, 1, 2),   // 2 groups
        shape(1, 6, 6, 4, 4, 3, 1, 1, 1, 4),     // depthwise
    };
}

TEST(ConvKernels, Fp32FfmaMatchesDirectConvolution) {
    // fp32 runs the FFMA kernel (no mma); the bound is fp32 accumulation of R*S*C/groups taps.
    for (const Conv2dShape& s : covered_shapes()) {
        const ConvRun r = run(conv_op(s, DType::fp32), true);
        EXPECT_EQ(r.numerics.checked, s.n * s.out_h() * s.out_w() * s.k);
        EXPECT_TRUE(r.numerics.passed) << "c=" << s.c << " k=" << s.k << " r=" << s.r << " groups=" << s.groups
                                       << " max abs err " << r.numerics.max_abs_err;
        EXPECT_GT(r.numerics.max_abs_err, 0.0);  // a real fp32 sum, not the reference copied
        EXPECT_EQ(r.stats.mma_issued, 0u);
    }
}

TEST(ConvKernels, Int8MatchesDirectConvolutionExactly) {
    // int8 on mma.m16n8k32.s8: every int32 output equals the host's integer convolution.
    for (const Conv2dShape& s : covered_shapes()) {
        const ConvRun r = run(conv_op(s, DType::int8), true);
        EXPECT_EQ(r.numerics.checked, s.n * s.out_h() * s.out_w() * s.k);
        EXPECT_TRUE(r.numerics.passed) << "c=" << s.c << " k=" << s.k << " r=" << s.r << " groups=" << s.groups
                                       << " max abs err " << r.numerics.max_abs_err;
        EXPECT_EQ(r.numerics.max_abs_err, 0.0);
        ASSERT_TRUE(r.numerics.quantization.has_value());
        // Per-tensor int8 of uniform [-1, 1) values: a few percent relative RMS, not zero.
        EXPECT_GT(r.numerics.quantization->relative_rms(), 0.0);
        EXPECT_LT(r.numerics.quantization->relative_rms(), 0.05);
        EXPECT_GT(r.stats.mma_issued, 0u);
    }
}

TEST(ConvKernels, Int8ActivationOutliersAreTheInputsChannels) {
    // activation outliers (quantization.h) on a convolution: whole input channels (NHWC: the
    // fastest index) 20 times larger, in the quantized input and in the fp32 reference alike. The
    // int32 outputs still equal the host's integer convolution exactly; the quantization error
    // grows as the GEMM closed form says for the lowered K = 9 x 64 (one channel in 64 at 20x:
    // relative RMS^2 = s_a^2 / (12 E a^2) + s_b^2 / 4 with s_a ~ 20/127, E a^2 = (63 + 400) / (3 x 64)
    // (padding aside): about 3.2 %, against 0.56 % for uniform inputs).
    const Op op = conv_op(shape(1, 8, 8, 64, 32, 3, 1, 1), DType::int8);
    auto quantization = [&](const ActivationOutliers& outliers) {
        const ConvRun r = run(op, true, nullptr, false, nullptr, outliers);
        EXPECT_TRUE(r.numerics.passed);
        EXPECT_EQ(r.numerics.max_abs_err, 0.0);
        return r.numerics.quantization->relative_rms();
    };
    const double uniform = quantization({}), outliers = quantization({1.0 / 64, 20});
    EXPECT_NEAR(uniform, 0.0056, 0.001);
    const double s_a = 20.0 / 127, ea2 = (63.0 + 400.0) / (3 * 64);
    const double want = std::sqrt(s_a * s_a / (12 * ea2) + 1.0 / (4 * 127.0 * 127.0));
    EXPECT_NEAR(outliers, want, 0.15 * want) << "uniform " << uniform;
}

// h100's tensor rates per SM (configs/h100.json): 16-bit 2048, int8 and both fp8 formats 4096.
constexpr DTypeRates kH100Rates{4096, 2048, 2048, 1024, 4096, 4096};

TEST(ConvKernels, Fp8MatchesTheDirectConvolutionOfTheRoundedValues) {
    // fp8 on the 8-bit kernel with the fp8 mma (mma.m16n8k32.e4m3 / .e5m2): every fp32 output
    // within K * 2^-24 * sum |x||w| of the direct convolution (in double) of the same fp8-rounded
    // values; the error against the unrounded values is the format's: e4m3 keeps 3 mantissa bits,
    // e5m2 2, so e5m2's relative RMS is about twice e4m3's.
    for (const Conv2dShape& s : covered_shapes()) {
        double rms[2] = {0, 0};
        int i = 0;
        for (const DType dt : {DType::fp8_e4m3, DType::fp8_e5m2}) {
            const ConvRun r = run(conv_op(s, dt), true, nullptr, false, &kH100Rates);
            EXPECT_EQ(r.numerics.checked, s.n * s.out_h() * s.out_w() * s.k);
            EXPECT_TRUE(r.numerics.passed) << "c=" << s.c << " k=" << s.k << " r=" << s.r << " groups=" << s.groups << " "
                                           << to_string(dt) << " max abs err " << r.numerics.max_abs_err;
            ASSERT_TRUE(r.numerics.quantization.has_value());
            EXPECT_EQ(r.numerics.quantization->dtype, dt);
            rms[i++] = r.numerics.quantization->relative_rms();
            EXPECT_GT(r.stats.mma_issued, 0u);
        }
        EXPECT_GT(rms[0], 0.0);
        EXPECT_NEAR(rms[1] / rms[0], 2.0, 0.5) << "c=" << s.c << " k=" << s.k << " r=" << s.r;
    }
}

TEST(ConvKernels, Fp8TakesTheInt8KernelsScheduleAtAnEqualRate) {
    // At equal int8 and fp8 rates (h100's 4096 MACs per SM per cycle for the tile rule; the SM's
    // pipes at their equal default intervals) the fp8 conv is the int8 conv with another mma of
    // the same interval: the same cycles, mmas and sectors; and timing-only runs
    // give the full run's cycles. Stored bytes are read by the encoding: FNUZ (mi300x) passes too.
    const Op int8 = conv_op(shape(2, 10, 11, 40, 24, 3, 2, 1), DType::int8);
    const ConvRun reference = run(int8, false, nullptr, true, &kH100Rates);
    for (const DType dt : {DType::fp8_e4m3, DType::fp8_e5m2}) {
        const Op op = conv_op(shape(2, 10, 11, 40, 24, 3, 2, 1), dt);
        const ConvRun full = run(op, true, nullptr, false, &kH100Rates);
        const ConvRun timing = run(op, false, nullptr, true, &kH100Rates);
        EXPECT_TRUE(full.numerics.passed) << to_string(dt);
        EXPECT_EQ(full.stats.cycles, timing.stats.cycles) << to_string(dt);
        EXPECT_EQ(timing.stats.cycles, reference.stats.cycles) << to_string(dt);
        EXPECT_EQ(timing.stats.mma_issued, reference.stats.mma_issued) << to_string(dt);
        EXPECT_EQ(timing.stats.global_sectors, reference.stats.global_sectors) << to_string(dt);
    }
    simt::SimtParams params;
    params.sms = 2;
    params.sm.limits = *simt::published_limits("sm_80");
    params.sm.fp8_encoding = Fp8Encoding::fnuz;
    LoweringTarget target;
    target.tensor_macs_per_sm_cycle = kH100Rates;
    target.sms = 2;
    target.sm = params.sm;
    target.seed = 3;
    target.real_data = true;
    simt::GlobalMemory memory;
    const LoweredKernel lk = lower_conv2d(conv_op(shape(1, 9, 9, 16, 24, 3, 1, 1), DType::fp8_e4m3), memory, target);
    simt::FixedLatencyMemory port(200);
    simt::launch(*lk.kernel, lk.dims, lk.args, memory, params, &port, {false});
    const LoweringNumerics fnuz = lk.check(memory);
    EXPECT_TRUE(fnuz.passed) << fnuz.max_abs_err;
    ASSERT_TRUE(fnuz.quantization.has_value());
    EXPECT_EQ(fnuz.quantization->encoding, Fp8Encoding::fnuz);
}

// A conv lowered for and run on H100-like SMs (sm_90, II 4 for every type, a 64 B/cycle port,
// 200-cycle memory; 2 SMs and no launch cost unless given: the split-K rule needs both a launch
// cost and an HBM bandwidth); `kernel` gets the kernel's name. Follow-up launches (split-K's sum)
// run after it on the same memory, their cycles not counted.
ConvRun run_sm90(const Op& op, bool real, std::string& kernel, int sms = 2, double launch_overhead = 0, double hbm = 0) {
    simt::SimtParams params;
    params.sms = sms;
    params.sm.limits = *simt::published_limits("sm_90");
    params.sm.tensor.initiation_interval = params.sm.tensor_s8.initiation_interval = 4;
    params.sm.tensor_e4m3.initiation_interval = params.sm.tensor_e5m2.initiation_interval = 4;
    LoweringTarget target;
    target.tensor_macs_per_sm_cycle = kH100Rates;
    target.sms = params.sms;
    target.sm = params.sm;
    target.seed = 3;
    target.sm_port_bytes_per_cycle = 64;
    target.launch_overhead_cycles = launch_overhead;
    target.hbm_bytes_per_cycle = hbm;
    target.real_data = real;
    simt::GlobalMemory memory;
    const LoweredKernel lk = lower_conv2d(op, memory, target);
    kernel = lk.kernel->name;
    simt::FixedLatencyMemory port(200);
    ConvRun r;
    r.stats = simt::launch(*lk.kernel, lk.dims, lk.args, memory, params, &port, {!real});
    for (const LoweredLaunch& next : lk.then) simt::launch(*next.kernel, next.dims, next.args, memory, params, &port, {!real});
    for (const StatValue& v : lk.stats)
        if (v.name == "gpu.splits") r.splits = v.value;
    if (lk.check) r.numerics = lk.check(memory);
    return r;
}

TEST(ConvKernels, PointwiseConvsRunTheHopperGemmOnSm90) {
    // On sm_90 a 1x1, stride-1, unpadded, one-group conv is the Hopper GEMM with B transposed on
    // the conv's own buffers (NHWC input = A, weights = B^T, output = C). 2 x 10 x 11 pixels (M =
    // 220), K = 72, C = 80 fit no tile exactly: edge tiles. On 2 SMs with a 64 B/cycle port the
    // rule gives 128x256 2 blocks (1 x 32768), 128x128 2 (1 x 16384, the smallest), 64x128 4 (2 x
    // 8192 x 1.5), 64x64 8 (4 x 4096 x 2), the pair 2 (1 x 32768); each block runs its whole tile,
    // one k-block of 128 (C' = 80 padded with zeros): 2 x 128 x 128 x 128 / 4096 = 1024 m16n8k32.
    // 16-bit operands demand the same bytes per cycle (twice the bytes, half the MACs), so the same
    // tile; two k-blocks of 64 (the second holds 16 values and zeros): 2 x 2 x 128 x 128 x 64 / 2048
    // = 2048 m16n8k16, read K-major (wgmma's imm-trans-b = 0: the "_tn" kernel).
    const Conv2dShape pointwise = shape(2, 10, 11, 80, 72, 1, 1, 0);
    for (const DType dt : {DType::int8, DType::fp8_e4m3, DType::fp8_e5m2}) {
        std::string kernel;
        const ConvRun full = run_sm90(conv_op(pointwise, dt), true, kernel);
        const std::string type = dt == DType::int8 ? "s8" : dt == DType::fp8_e4m3 ? "e4m3" : "e5m2";
        EXPECT_EQ(kernel, "hopper_gemm_128x128x128_s3_" + type + "_edges");
        EXPECT_EQ(full.numerics.checked, 2 * 10 * 11 * 72);
        EXPECT_TRUE(full.numerics.passed) << kernel << " max abs err " << full.numerics.max_abs_err;
        if (dt == DType::int8) {
            EXPECT_EQ(full.numerics.max_abs_err, 0.0);  // exact, as the int8 conv kernel
        }
        EXPECT_EQ(full.stats.mma_issued, 1024u);
        std::string timing_kernel;
        EXPECT_EQ(run_sm90(conv_op(pointwise, dt), false, timing_kernel).stats.cycles, full.stats.cycles) << kernel;
    }
    for (const DType dt : {DType::fp16, DType::bf16}) {
        std::string kernel;
        const ConvRun full = run_sm90(conv_op(pointwise, dt), true, kernel);
        EXPECT_EQ(kernel, std::string("hopper_gemm_128x128x64_s3_") + (dt == DType::fp16 ? "f16" : "bf16") + "_tn_edges");
        EXPECT_EQ(full.numerics.checked, 2 * 10 * 11 * 72);
        EXPECT_TRUE(full.numerics.passed) << kernel << " max abs err " << full.numerics.max_abs_err;
        EXPECT_EQ(full.stats.mma_issued, 2048u);
        std::string timing_kernel;
        EXPECT_EQ(run_sm90(conv_op(pointwise, dt), false, timing_kernel).stats.cycles, full.stats.cycles) << kernel;
    }
    // A shape that tiles exactly (M = 2 x 8 x 16 = 256, K = 128 channels, C = 128) runs the exact
    // "_tn" kernel: 256 x 128 x 128 / 2048 = 2048 m16n8k16 whatever the tile.
    {
        std::string kernel;
        const ConvRun exact = run_sm90(conv_op(shape(2, 8, 16, 128, 128, 1, 1, 0), DType::bf16), true, kernel);
        EXPECT_EQ(kernel.rfind("hopper_gemm_", 0), 0u) << kernel;
        EXPECT_NE(kernel.find("_bf16_tn"), std::string::npos) << kernel;
        EXPECT_EQ(kernel.find("_edges"), std::string::npos) << kernel;
        EXPECT_TRUE(exact.numerics.passed) << kernel << " max abs err " << exact.numerics.max_abs_err;
        EXPECT_EQ(exact.numerics.checked, 2 * 8 * 16 * 128);
        EXPECT_EQ(exact.stats.mma_issued, 2048u);
    }
    // Strided, padded or grouped 1x1 convs and 3x3 ones keep the implicit-GEMM kernel, and pass.
    for (const Conv2dShape& other : {shape(2, 10, 11, 80, 72, 1, 2, 0), shape(2, 10, 11, 80, 72, 1, 1, 1),
                                     shape(2, 10, 11, 80, 72, 1, 1, 0, 1, 2), shape(2, 10, 11, 80, 72, 3, 1, 1)})
        for (const DType dt : {DType::int8, DType::bf16}) {
            std::string kernel;
            const ConvRun r = run_sm90(conv_op(other, dt), true, kernel);
            EXPECT_EQ(kernel.rfind("conv_", 0), 0u) << kernel;
            EXPECT_TRUE(r.numerics.passed) << kernel;
        }
}

TEST(ConvKernels, ConvsWithWholeChannelBlocksRunTheHopperIm2colKernelOnSm90) {
    // On sm_90 a one-group conv whose C' x element bytes is a multiple of 128, or 64 or 32, runs the
    // Hopper convolution: A gathered by TMA's im2col mode, one k-block per 128 channel bytes of a
    // tap (or several narrow taps a k-block).
    // Each case against the direct convolution; MACs issued by hand (every block runs its whole
    // tile through all R·S·C' / BK k-blocks; padding taps and rows past M are zeros, still issued).
    struct Case {
        Conv2dShape shape;
        DType dtype;
        const char* kernel;
        std::uint64_t mma;
    };
    const Case cases[] = {
        // 2 x 10 x 11 pixels (M = 220), 64 -> 72 channels, 3x3 pad 1: the pointwise test's tile
        // rule, 128x128 edge tiles, 2 blocks x 9 k-blocks x 128·128·64 / 2048 = 9216 m16n8k16.
        {shape(2, 10, 11, 64, 72, 3, 1, 1), DType::bf16, "hopper_conv_128x128x64_s3_bf16_edges", 9216},
        // Dilation 2, pad 2 (M = 220 again), fp16: the same tiles and k-blocks.
        {shape(2, 10, 11, 64, 72, 3, 1, 2, 2), DType::fp16, "hopper_conv_128x128x64_s3_f16_edges", 9216},
        // Exact tiles: 1 x 16 x 16 pixels (M = 256), 64 -> 128 channels: 256·128·576 / 2048 = 9216.
        {shape(1, 16, 16, 64, 128, 3, 1, 1), DType::bf16, "hopper_conv_128x128x64_s3_bf16", 9216},
        // int8, stride 2, pad 1, 128 channels (one 128-byte k-block per tap) on 2 x 16 x 16: 2 x 8 x 8
        // outputs (M = 128), N = 72. The rule on 2 SMs: 128x256 1 block (32768), 128x128 1 (16384),
        // 64x128 2 (1 x 8192 x 1.5 = 12288, the smallest: 96 B/cycle on the 64 B port), 64x64 4
        // (2 x 4096 x 2): 2 blocks x 9 k-blocks x 64·128·128 / 4096 = 4608 m16n8k32.
        {shape(2, 16, 16, 128, 72, 3, 2, 1), DType::int8, "hopper_conv_64x128x128_s4_s8_edges", 4608},
        {shape(2, 16, 16, 128, 72, 3, 2, 1), DType::fp8_e4m3, "hopper_conv_64x128x128_s4_e4m3_edges", 4608},
        // Fewer output pixels than a tile's 64 rows (7 x 7 = 49, as ResNet-50's layer4 at batch 1):
        // 128x256 1 block (32768), 128x128 1 (16384), 64x128 1 (8192 x 1.5), 64x64 2 (1 x 4096 x 2 =
        // 8192, the smallest): 2 x 9 x 64·64·64 / 2048 = 2304 m16n8k16.
        {shape(1, 7, 7, 64, 72, 3, 1, 1), DType::bf16, "hopper_conv_64x64x64_s4_bf16_edges", 2304},
        // Pixels narrower than a k-block: 64 int8 channels (64 bytes), two taps a k-block, each its
        // own box and sub-tile: K = 9 x 64 = 576 bytes in 5 k-blocks (the last one tap and a box
        // of zeros); 128x128 tiles as above: 2 x 5 x 128·128·128 / 4096 = 5120 m16n8k32.
        {shape(2, 10, 11, 64, 72, 3, 1, 1), DType::int8, "hopper_conv_128x128x128_s3_s8_tap64_edges", 5120},
        // 16 fp16 channels (32 bytes), four taps a k-block: K = 9 x 16 = 144 values in 3 k-blocks:
        // 2 x 3 x 128·128·64 / 2048 = 3072 m16n8k16.
        {shape(2, 10, 11, 16, 72, 3, 1, 1), DType::fp16, "hopper_conv_128x128x64_s3_f16_tap32_edges", 3072},
    };
    for (const Case& c : cases) {
        std::string kernel;
        const ConvRun full = run_sm90(conv_op(c.shape, c.dtype), true, kernel);
        EXPECT_EQ(kernel, c.kernel);
        EXPECT_EQ(full.numerics.checked, c.shape.n * c.shape.out_h() * c.shape.out_w() * c.shape.k) << kernel;
        EXPECT_TRUE(full.numerics.passed) << kernel << " max abs err " << full.numerics.max_abs_err;
        if (c.dtype == DType::int8) {
            EXPECT_EQ(full.numerics.max_abs_err, 0.0) << kernel;
        }
        EXPECT_EQ(full.stats.mma_issued, c.mma) << kernel;
        std::string timing_kernel;
        EXPECT_EQ(run_sm90(conv_op(c.shape, c.dtype), false, timing_kernel).stats.cycles, full.stats.cycles) << kernel;
    }
    // Channel rows that are neither whole k-blocks nor 64 or 32 bytes (80 bf16 channels: 160
    // bytes; 80 int8: 80), two groups, or fewer than 64 output channels keep the implicit-GEMM kernel.
    for (const auto& [other, dt] : {std::pair{shape(2, 10, 11, 80, 72, 3, 1, 1), DType::bf16},
                                    std::pair{shape(2, 10, 11, 80, 72, 3, 1, 1), DType::int8},
                                    std::pair{shape(2, 10, 11, 128, 72, 3, 1, 1, 1, 2), DType::bf16},
                                    std::pair{shape(2, 10, 11, 64, 48, 3, 1, 1), DType::bf16}}) {
        std::string kernel;
        const ConvRun r = run_sm90(conv_op(other, dt), true, kernel);
        EXPECT_EQ(kernel.rfind("conv_", 0), 0u) << kernel;
        EXPECT_TRUE(r.numerics.passed) << kernel;
    }
}

TEST(ConvKernels, HopperConvsSplitK) {
    // 7 x 7 pixels, 256 -> 72 channels, 3x3 pad 1 on 8 SMs with a launch cost of 100 cycles and
    // 1000 B/cycle of HBM: two 64x64 edge tiles (the rule as in the case above). The split-K
    // estimate (gemm_hopper.h), 256 cycles a k-block (64·64·64 / 2048 = 128, x 2 over the port),
    // planes of 49 x 72 x 4 = 14,112 B:
    //   bf16 (36 k-blocks of 64): T(1) = 36 x 256 = 9216; T(2) = 18 x 256 + 100 + 1000 + 28.2 =
    //   5736; T(3) = 4214; T(4) = 9 x 256 + 1156.4 = 3460 (the smallest); T(6): 12 blocks on 8
    //   SMs, 2 x 6 x 256 + 1184.7 = 4257; 8 does not divide 36.
    //   int8 (18 k-blocks of 128 bytes, 64·64·128 / 4096 = 128 cycles, x 2): T(1) = 4608; T(2) =
    //   3432; T(3) = 6 x 256 + 1142.3 = 2678 (the smallest); 6 parts would have 3 k-blocks, fewer
    //   than 4.
    // Each part is a batch entry starting its im2col gather at its first tap; the sum launch adds
    // the planes (16-bit: packed once; int8: exactly). The parts together issue the unsplit MACs.
    const Conv2dShape s = shape(1, 7, 7, 256, 72, 3, 1, 1);
    std::string kernel;
    const ConvRun bf16 = run_sm90(conv_op(s, DType::bf16), true, kernel, 8, 100, 1000);
    EXPECT_EQ(kernel, "hopper_conv_64x64x64_s4_bf16_edges_partials");
    EXPECT_EQ(bf16.splits, 4);
    EXPECT_TRUE(bf16.numerics.passed) << kernel << " max abs err " << bf16.numerics.max_abs_err;
    EXPECT_EQ(bf16.numerics.checked, 49 * 72);
    EXPECT_EQ(bf16.stats.mma_issued, 2u * 36 * 128);
    const ConvRun int8 = run_sm90(conv_op(s, DType::int8), true, kernel, 8, 100, 1000);
    EXPECT_EQ(kernel, "hopper_conv_64x64x128_s4_s8_edges");
    EXPECT_EQ(int8.splits, 3);
    EXPECT_TRUE(int8.numerics.passed) << kernel;
    EXPECT_EQ(int8.numerics.max_abs_err, 0.0);
    EXPECT_EQ(int8.stats.mma_issued, 2u * 18 * 128);
    // A pointwise conv splits the same way: 7 x 7 x 1024 -> 72 (16 k-blocks of 64): T(4) = 4 x 256
    // + 1156.4 = 2180 against T(1) = 4096 and T(2) = 3176 (8 parts would have 2 k-blocks).
    const ConvRun pw = run_sm90(conv_op(shape(1, 7, 7, 1024, 72, 1, 1, 0), DType::fp16), true, kernel, 8, 100, 1000);
    EXPECT_EQ(kernel, "hopper_gemm_64x64x64_s4_f16_tn_edges_partials");
    EXPECT_EQ(pw.splits, 4);
    EXPECT_TRUE(pw.numerics.passed) << kernel << " max abs err " << pw.numerics.max_abs_err;
    EXPECT_EQ(pw.stats.mma_issued, 2u * 16 * 128);
}

TEST(ConvKernels, SixteenBitWithoutTensorCoresRunsTheFfmaKernel) {
    // k80 (no tensor cores) and v100 for bf16: fp16 / bf16 convs run on fp32 copies, as GEMMs do.
    const DTypeRates none{0, 0, 0, 0};
    for (DType dt : {DType::fp16, DType::bf16}) {
        const Op op = conv_op(shape(2, 9, 9, 3, 10, 3, 1, 1), dt);
        const ConvRun r = run(op, true, nullptr, false, &none);
        EXPECT_TRUE(r.numerics.passed) << to_string(dt) << " " << r.numerics.max_abs_err;
        EXPECT_EQ(r.stats.mma_issued, 0u);
        simt::GlobalMemory memory;
        LoweringTarget target;
        target.sm.limits = *simt::published_limits("sm_80");
        target.tensor_macs_per_sm_cycle = none;
        const LoweredKernel lk = lower_conv2d(op, memory, target);
        EXPECT_EQ(lk.kernel, conv_fp32_kernel());
        bool fallback = false;
        for (const StatValue& v : lk.stats) fallback |= v.name == "gpu.fp32_fallback" && v.value == 1;
        EXPECT_TRUE(fallback);
        EXPECT_THROW(lower_conv2d(conv_op(shape(1, 8, 8, 8, 8, 3, 1, 1), DType::int8), memory, target), LoweringError);
    }
}

TEST(ConvKernels, Int8MmaCountIsMacsOverTheMmaShape) {
    // 8x8 image, 64 -> 64 channels, 3x3 pad 1: M = 64 pixels, N = 64, K = 9 x 64 = 576 int8 values
    // (C = 64 needs no padding). One m16n8k32 does 16 x 8 x 32 = 4096 MACs, so the kernel must
    // issue exactly 64 x 64 x 576 / 4096 = 576 of them on any tile: with 64x64 tiles one block of
    // 288 16-bit slots / 32 = 9 slices, each (64/16)(64/8)(32 slots = 64 int8 / 32) = 64 mmas.
    const Op op = conv_op(shape(1, 8, 8, 64, 64, 3, 1, 1), DType::int8);
    for (const GemmTile& tile : gemm_tensor_tiles()) {
        if (tile.bm != 64 && tile.bm != 128) continue;
        const ConvRun r = run(op, true, &tile);
        EXPECT_TRUE(r.numerics.passed) << tile.name();
        const std::uint64_t blocks_m = (64 + tile.bm - 1) / tile.bm, blocks_n = (64 + tile.bn - 1) / tile.bn;
        // A tile wider than the GEMM computes its clamped rows and columns too.
        EXPECT_EQ(r.stats.mma_issued, blocks_m * blocks_n * 9 * (tile.bm / 16) * (tile.bn / 8) * 2) << tile.name();
    }
    const GemmTile tile64{64, 64, 32, 2, 2, 0.642, 1};
    EXPECT_EQ(run(op, false, &tile64).stats.mma_issued, 576u);
}

TEST(ConvKernels, FfmaInstructionsPerSliceAreTheHandCountedLoop) {
    // 1x1 convs over 8 and 16 channels (M = 64 pixels, N = 64, one 64x64 block of 8 warps): K = 8
    // is one slice of 8, K = 16 two, so the second issues exactly one more loop trip per warp.
    // A trip (conv_fp32_source): add, setp; the im2col decomposition add, max, rem, div, rem, div,
    // mul, mul, shl (9) and per A element add, add, mad, mad, add, setp, selp, setp, selp, ld (2 x
    // 10); 2 B loads and 2 B pointer adds; 8 k steps of 2 ld.shared.v4 + 16 ffma (144); bar.sync,
    // 4 st.shared, bar.sync, bra: 2 + 29 + 4 + 144 + 7 = 186 instructions, 128 of them ffma.
    const ConvRun one = run(conv_op(shape(1, 8, 8, 8, 64, 1, 1, 0), DType::fp32), false);
    const ConvRun two = run(conv_op(shape(1, 8, 8, 16, 64, 1, 1, 0), DType::fp32), false);
    EXPECT_EQ(two.stats.issued - one.stats.issued, 8u * 186u);
}

TEST(ConvKernels, EveryTileAndTimingOnlyRuns) {
    const Op op = conv_op(shape(2, 10, 11, 12, 40, 3, 2, 1), DType::fp16);
    for (const GemmTile& tile : gemm_tensor_tiles()) {
        const ConvRun full = run(op, true, &tile, false);
        const ConvRun skipped = run(op, false, &tile, true);
        EXPECT_TRUE(full.numerics.passed) << tile.name() << " " << full.numerics.max_abs_err;
        EXPECT_EQ(full.stats.cycles, skipped.stats.cycles) << tile.name();
        EXPECT_EQ(full.stats.global_sectors, skipped.stats.global_sectors) << tile.name();
    }
    const Op int8 = conv_op(shape(2, 10, 11, 40, 24, 3, 2, 1), DType::int8);  // C' = 48: a partial first slice
    for (const GemmTile& tile : gemm_tensor_tiles()) {
        const ConvRun full = run(int8, true, &tile, false);
        EXPECT_TRUE(full.numerics.passed) << tile.name() << " " << full.numerics.max_abs_err;
    }
    for (DType dt : {DType::fp32, DType::int8}) {
        const ConvRun full = run(conv_op(shape(2, 10, 11, 12, 40, 3, 2, 1), dt), true);
        const ConvRun skipped = run(conv_op(shape(2, 10, 11, 12, 40, 3, 2, 1), dt), false, nullptr, true);
        EXPECT_EQ(full.stats.cycles, skipped.stats.cycles) << to_string(dt);
        EXPECT_EQ(full.stats.global_sectors, skipped.stats.global_sectors) << to_string(dt);
    }
}

TEST(ConvKernels, CheckFailsWithoutTheKernelAndRegistersFit) {
    simt::GlobalMemory memory;
    LoweringTarget target;
    target.sm.limits = *simt::published_limits("sm_80");
    target.real_data = true;
    const LoweredKernel lk = lower_conv2d(conv_op(shape(1, 9, 9, 3, 10, 3, 1, 1), DType::fp16), memory, target);
    ASSERT_TRUE(lk.check);
    EXPECT_FALSE(lk.check(memory).passed);  // output still zero
    for (const GemmTile& tile : gemm_tensor_tiles()) {
        const simt::Kernel* k = conv_tensor_kernel(tile, simt::MmaType::bf16);
        EXPECT_LE(k->registers, 128) << tile.name();  // 128x128: 2 blocks of 256 threads per SM
        EXPECT_EQ(conv_tensor_kernel(tile, simt::MmaType::s8)->registers, k->registers) << tile.name();
    }
    EXPECT_TRUE(conv_fp32_kernel()->fp_payload_skippable) << conv_fp32_kernel()->fp_dependence;
    // The FFMA conv holds 7 more registers than the GEMM (two im2col bases and the k counter).
    EXPECT_EQ(conv_fp32_kernel()->registers, gemm_fp32_kernel()->registers + 7);
    for (DType dt : {DType::fp32, DType::int8}) {
        const LoweredKernel bad = lower_conv2d(conv_op(shape(1, 9, 9, 3, 10, 3, 1, 1), dt), memory, target);
        ASSERT_TRUE(bad.check);
        EXPECT_FALSE(bad.check(memory).passed) << to_string(dt);
    }
}

TEST(ConvKernels, UnsupportedInputsAreLoweringErrors) {
    simt::GlobalMemory memory;
    LoweringTarget target;
    target.sm.limits = *simt::published_limits("sm_80");
    EXPECT_THROW(lower_conv2d(conv_op(shape(1, 8, 8, 8, 8, 3, 1, 1), DType::int32), memory, target), LoweringError);
    // fp8 needs an fp8 tensor rate (the default target has none; h100's has).
    EXPECT_THROW(lower_conv2d(conv_op(shape(1, 8, 8, 8, 8, 3, 1, 1), DType::fp8_e4m3), memory, target), LoweringError);
    const GemmTile tile = gemm_tensor_tiles()[0];
    EXPECT_THROW(lower_conv2d_with_tile(conv_op(shape(1, 8, 8, 8, 8, 3, 1, 1), DType::fp32), memory, target, tile),
                 LoweringError);
    EXPECT_THROW(lower_conv2d(conv_op(shape(1, 2, 2, 8, 8, 5, 1, 0), DType::fp16), memory, target), LoweringError);
}

}  // namespace
}  // namespace accelsim::gpu::conv_test
