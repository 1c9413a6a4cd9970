// Residual add + layernorm in one kernel (fused_kernels.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "models/gpu/fused_kernels.h"
#include "models/gpu/gpu_stats.h"
#include "models/gpu/reduction.h"

namespace accelsim::gpu {

bool residual_layernorm_fusable(std::int64_t cols) {
    return cols > 0 && cols % 2 == 0 && cols / 2 <= 32 * kResidualLayernormMaxWordsPerLane;
}

namespace {

std::string reg(int i) {
    return "r" + std::to_string(i);
}

// Registers: r0 row, r1 lane, r2 the lane's first word's byte offset in a row, r3 its byte offset
// in gamma / beta, r4 last word's index, r5..r9 the lane's x, residual, gamma, beta, y pointers;
// data from r10 on: the words of x, residual, gamma and beta (W each), the row's 2W values, then
// the accumulator, the shuffle partner, mean, rstd and a temporary. Addresses never share a
// register with data (timing-only runs skip the payload).
std::string residual_layernorm_source(int W, Storage s) {
    const std::string t = s == Storage::bf16 ? "bf16" : "f16";
    const int xw = 10, rw = xw + W, gw = rw + W, bw = gw + W, v = bw + W, acc = v + 2 * W,
              other = acc + 1, mean = acc + 2, rstd = acc + 3, tmp = acc + 4, registers = acc + 5;
    std::string o = ".kernel residual_layernorm_" + std::to_string(W) + "_" + t +
                    "\n.param rows, words, x, res, gamma, beta, y, inv_cols\n.reg " +
                    std::to_string(registers) + "\n";
    auto e = [&o](const std::string& line) { o += "    " + line + "\n"; };
    e("shr r1, %ntid, 5");
    e("mad r0, %ctaid, r1, %warpid");  // one row per warp
    e("setp.ge.s32 p0, r0, rows");
    e("@p0 exit");
    e("mov r1, %laneid");
    e("shl r3, r1, 2");
    e("mul r2, r0, words");
    e("shl r2, r2, 2");
    e("add r2, r2, r3");
    e("add r4, r1, " + std::to_string(32 * (W - 1)));
    e("setp.lt.s32 p1, r4, words");  // the lane's last word lies in the row
    const char* bases[] = {"x", "res", "gamma", "beta", "y"};
    for (int i = 0; i < 5; ++i)
        e("add " + reg(5 + i) + ", " + (i == 2 || i == 3 ? "r3" : "r2") + ", " + bases[i]);
    // Every load of the row at once: one memory latency per row.
    for (int k = 0; k < W; ++k) {
        const std::string guard = k == W - 1 ? "@p1 " : "";
        const std::string off = k == 0 ? "]" : "+" + std::to_string(128 * k) + "]";
        for (int i = 0; i < 4; ++i)
            e(guard + "ld.global " + reg(xw + i * W + k) + ", [" + reg(5 + i) + off);
    }
    // x + residual in fp32; a lane's missing last word counts 0.
    for (int k = 0; k < W; ++k) {
        e("cvt.f32." + t + ".lo " + reg(v + 2 * k) + ", " + reg(xw + k));
        e("cvt.f32." + t + ".hi " + reg(v + 2 * k + 1) + ", " + reg(xw + k));
        e("cvt.f32." + t + ".lo " + reg(tmp) + ", " + reg(rw + k));
        e("fadd " + reg(v + 2 * k) + ", " + reg(v + 2 * k) + ", " + reg(tmp));
        e("cvt.f32." + t + ".hi " + reg(tmp) + ", " + reg(rw + k));
        e("fadd " + reg(v + 2 * k + 1) + ", " + reg(v + 2 * k + 1) + ", " + reg(tmp));
    }
    for (int h = 0; h < 2; ++h)
        e("selp " + reg(v + 2 * (W - 1) + h) + ", " + reg(v + 2 * (W - 1) + h) + ", 0.0, p1");
    auto butterfly = [&] {
        for (int m = 16; m >= 1; m /= 2) {
            e("shfl.bfly " + reg(other) + ", " + reg(acc) + ", " + std::to_string(m));
            e("fadd " + reg(acc) + ", " + reg(acc) + ", " + reg(other));
        }
    };
    e("mov " + reg(acc) + ", " + reg(v));
    for (int j = 1; j < 2 * W; ++j) e("fadd " + reg(acc) + ", " + reg(acc) + ", " + reg(v + j));
    butterfly();
    e("fmul " + reg(mean) + ", " + reg(acc) + ", inv_cols");
    // Biased variance, a second pass over the registers (the missing word's values are excluded).
    e("mov " + reg(acc) + ", 0.0");
    for (int j = 0; j < 2 * W; ++j) {
        e("fsub " + reg(tmp) + ", " + reg(v + j) + ", " + reg(mean));
        if (j >= 2 * (W - 1)) e("selp " + reg(tmp) + ", " + reg(tmp) + ", 0.0, p1");
        e("ffma " + reg(acc) + ", " + reg(tmp) + ", " + reg(tmp) + ", " + reg(acc));
    }
    butterfly();
    e("fmul " + reg(acc) + ", " + reg(acc) + ", inv_cols");
    char eps[32];
    std::snprintf(eps, sizeof eps, "%.9e", static_cast<double>(kLayernormEps));
    e("fadd " + reg(acc) + ", " + reg(acc) + ", " + eps);
    e("rsqrt " + reg(rstd) + ", " + reg(acc));
    // y = (v - mean) rstd gamma + beta, packed; the x and residual words hold gamma's and beta's
    // low halves, then the packed result.
    for (int k = 0; k < W; ++k) {
        e("cvt.f32." + t + ".lo " + reg(xw + k) + ", " + reg(gw + k));
        e("cvt.f32." + t + ".hi " + reg(gw + k) + ", " + reg(gw + k));
        e("cvt.f32." + t + ".lo " + reg(rw + k) + ", " + reg(bw + k));
        e("cvt.f32." + t + ".hi " + reg(bw + k) + ", " + reg(bw + k));
        for (int h = 0; h < 2; ++h) {
            const int value = v + 2 * k + h;
            e("fsub " + reg(tmp) + ", " + reg(value) + ", " + reg(mean));
            e("fmul " + reg(tmp) + ", " + reg(tmp) + ", " + reg(rstd));
            e("ffma " + reg(value) + ", " + reg(tmp) + ", " + reg(h ? gw + k : xw + k) + ", " +
              reg(h ? bw + k : rw + k));
        }
        e("cvt." + t + "x2.f32 " + reg(xw + k) + ", " + reg(v + 2 * k) + ", " + reg(v + 2 * k + 1));
        const std::string off = k == 0 ? "]" : "+" + std::to_string(128 * k) + "]";
        e(std::string(k == W - 1 ? "@p1 " : "") + "st.global [r9" + off + ", " + reg(xw + k));
    }
    return o;
}

// Bound of one output against the double reference (reduction.cpp's layernorm bound with the fp32
// sum x + r counted as one more rounding per element): u [|gamma| ((n + 12) S rstd + (n/2 + 12)|z|)
// + |y|], doubled for the second-order terms, plus the 16-bit store's rounding; S = max |x + r|.
double residual_layernorm_tolerance(double n, double S, double rstd, double gamma, double z,
                                    double y, Storage s) {
    const double u = 0x1p-24;
    return 2 * u *
               (std::fabs(gamma) * ((n + 12) * S * rstd + (n / 2 + 12) * std::fabs(z)) +
                std::fabs(y)) +
           unit_roundoff(s) * std::fabs(y) + subnormal_half_spacing(s);
}

}  // namespace

const simt::Kernel* residual_layernorm_kernel(int words_per_lane, Storage storage) {
    if (words_per_lane < 1 || words_per_lane > kResidualLayernormMaxWordsPerLane ||
        storage == Storage::f32)
        throw LoweringError("residual layernorm: 1 to 16 words per lane of 16-bit values");
    static std::mutex mutex;
    static std::map<std::pair<int, Storage>, std::unique_ptr<simt::Kernel>> kernels;
    std::lock_guard<std::mutex> lock(mutex);
    auto& k = kernels[{words_per_lane, storage}];
    if (!k)
        k = std::make_unique<simt::Kernel>(
            simt::assemble(residual_layernorm_source(words_per_lane, storage),
                           "<gpu library>/residual_layernorm"));
    return k.get();
}

LoweredKernel lower_residual_layernorm(const Op& add, const Op& layernorm,
                                       simt::GlobalMemory& memory, const LoweringTarget& target) {
    const Storage s = storage_of(layernorm.dtype);
    const std::int64_t rows = layernorm.rows, cols = layernorm.cols;
    if (s == Storage::f32 || !residual_layernorm_fusable(cols) || add.elements != rows * cols)
        throw LoweringError("residual layernorm '" + layernorm.name +
                            "': needs 16-bit rows of an even count of at most 1024 columns");
    const std::int64_t words = cols / 2, tensor_bytes = rows * words * 4;
    if (3 * tensor_bytes + 2 * words * 4 > (std::int64_t{1} << 30))
        throw LoweringError("residual layernorm '" + layernorm.name +
                            "': tensors exceed the GPU kernel library's 1 GiB");
    const int W = static_cast<int>((words + 31) / 32);
    auto alloc = [&](std::int64_t bytes) {
        return memory.allocate(static_cast<std::size_t>(bytes));
    };
    const std::uint32_t x = alloc(tensor_bytes), res = alloc(tensor_bytes),
                        gamma = alloc(words * 4), beta = alloc(words * 4), y = alloc(tensor_bytes);
    LoweredKernel out;
    out.kernel = residual_layernorm_kernel(W, s);
    const std::int64_t per_block = warp_rows_per_block(rows, target.sms);
    out.dims = {static_cast<std::uint32_t>((rows + per_block - 1) / per_block),
                static_cast<std::uint32_t>(32 * per_block)};
    const float inv_cols = 1.0f / static_cast<float>(cols);
    std::uint32_t inv_bits;
    std::memcpy(&inv_bits, &inv_cols, 4);
    out.args = {static_cast<std::uint32_t>(rows),
                static_cast<std::uint32_t>(words),
                x,
                res,
                gamma,
                beta,
                y,
                inv_bits};
    out.stats.push_back(stat_value(stat::grid, out.dims.grid));
    out.stats.push_back(stat_value(stat::block, out.dims.block));
    out.stats.push_back(stat_value(stat::rows_per_block, static_cast<double>(per_block)));
    if (!target.real_data) return out;
    // Inputs as the unfused ops get them: x, residual uniform in [-1, 1) (the add's), gamma in
    // [0.5, 1.5), beta in [-0.5, 0.5) (the layernorm's), rounded to the dtype.
    auto fill = [&](std::uint32_t address, std::int64_t count, int stream, float scale,
                    float shift) {
        std::mt19937_64 rng = tensor_rng(target.seed, stream);
        std::vector<float> values(static_cast<std::size_t>(count));
        for (float& value : values) value = round_to(s, unit_random(rng) * scale + shift);
        store_elements(memory, address, values, s);
        return values;
    };
    const std::vector<float> xv = fill(x, rows * cols, 0, 1, 0),
                             rv = fill(res, rows * cols, 1, 1, 0),
                             gv = fill(gamma, cols, 2, 0.5f, 1.0f),
                             bv = fill(beta, cols, 3, 0.5f, 0.0f);
    out.check = [=](const simt::GlobalMemory& m) {
        LoweringNumerics num;
        const double n = static_cast<double>(cols), eps = static_cast<double>(kLayernormEps);
        std::vector<double> sum(static_cast<std::size_t>(cols));
        for (std::int64_t row = 0; row < rows; ++row) {
            double mean = 0, S = 0, var = 0;
            for (std::int64_t j = 0; j < cols; ++j) {
                const std::size_t i = static_cast<std::size_t>(row * cols + j);
                sum[static_cast<std::size_t>(j)] = static_cast<double>(xv[i]) + rv[i];
                mean += sum[static_cast<std::size_t>(j)];
                S = std::max(S, std::fabs(sum[static_cast<std::size_t>(j)]));
            }
            mean /= n;
            for (const double value : sum) var += (value - mean) * (value - mean);
            const double rstd = 1.0 / std::sqrt(var / n + eps);
            for (std::int64_t j = 0; j < cols; ++j) {
                const double z = (sum[static_cast<std::size_t>(j)] - mean) * rstd;
                const double want =
                    z * gv[static_cast<std::size_t>(j)] + bv[static_cast<std::size_t>(j)];
                const double got = load_element(m, y, row * cols + j, s);
                const double err = std::fabs(got - want);
                ++num.checked;
                num.max_abs_err = std::max(num.max_abs_err, err);
                num.max_rel_err = std::max(num.max_rel_err, err / std::max(1e-30, std::fabs(want)));
                if (!(err <= residual_layernorm_tolerance(
                                 n, S, rstd, gv[static_cast<std::size_t>(j)], z, want, s)))
                    num.passed = false;
            }
        }
        return num;
    };
    return out;
}

}  // namespace accelsim::gpu
