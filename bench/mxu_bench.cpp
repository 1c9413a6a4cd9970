// MXU benchmark, run by hand (never by ctest):
//   ./build/bench/mxu_bench [--quick] [TRACE]     (TRACE defaults to traces/bert_base.trace)
// 1. stepped mode: PE-cycles per host second on a 128x128 array (ws and os, bf16, with data);
// 2. fast mode, timing only: all GEMMs of the trace (BERT-base seq 128, 12 layers), target < 50 ms;
// 3. fast mode with numerics vs plain Eigen float GEMMs on the same shapes, target within 2x.
// The GEMMs are the matmul/bmm/conv2d ops of the trace (read with sim/trace); if the trace cannot be
// read, the bench falls back to the BERT-base seq-128 shapes hard-coded below.
#include <systemc>  // declares sc_main extern "C"; libsystemc needs the symbol
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <Eigen/Core>

#include "models/mxu/mxu.h"
#include "sim/trace/trace_reader.h"

using namespace accelsim;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<float> bf16_values(std::size_t n, std::mt19937_64& rng) {
    std::vector<float> v(n);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (float& x : v) x = static_cast<float>(bf16_t(d(rng)));
    return v;
}

// One BERT-base encoder layer at sequence length 128 (hidden 768, 12 heads of 64, FFN 3072).
const GemmShape kBertLayer[] = {
    {1, 128, 2304, 768},  // attn.qkv
    {12, 128, 128, 64},   // attn.scores  Q K^T
    {12, 128, 64, 128},   // attn.context P V
    {1, 128, 768, 768},   // attn.out
    {1, 128, 3072, 768},  // ffn.up
    {1, 128, 768, 3072},  // ffn.down
};
constexpr int kLayers = 12;

void bench_stepped(MxuDataflow flow, std::int64_t m) {
    MxuParams p;
    p.dataflow = flow;
    p.mode = MxuMode::stepped;
    const GemmShape s{1, m, 128, flow == MxuDataflow::os ? m : 128};
    std::mt19937_64 rng(1);
    const auto a = bf16_values(static_cast<std::size_t>(s.m * s.k), rng);
    const auto b = bf16_values(static_cast<std::size_t>(s.k * s.n), rng);
    const MxuOperands ops{a.data(), b.data()};
    const auto t0 = std::chrono::steady_clock::now();
    const MxuGemmResult r = run_mxu_gemm(p, s, DType::bf16, &ops);
    const double sec = seconds_since(t0);
    const double pe_cycles = 128.0 * 128.0 * static_cast<double>(r.stats.cycles);
    std::printf("stepped %s 128x128 bf16 m=%lld n=%lld k=%lld: %lld cycles in %.3f s = %.0f array cycles/s = %.2f G PE-cycles/s\n",
                std::string(to_string(flow)).c_str(), static_cast<long long>(s.m), static_cast<long long>(s.n),
                static_cast<long long>(s.k), static_cast<long long>(r.stats.cycles), sec,
                static_cast<double>(r.stats.cycles) / sec, pe_cycles / sec / 1e9);
}

}  // namespace

int sc_main(int, char**) { return 0; }  // libsystemc needs the symbol; never called

std::vector<GemmShape> trace_gemms(const std::string& path) {
    std::vector<GemmShape> gemms;
    try {
        for (const Op& op : read_trace(path, DType::bf16))
            if (is_gemm_like(op.kind)) gemms.push_back(op.as_gemm());
        std::printf("GEMMs from %s: %zu\n", path.c_str(), gemms.size());
    } catch (const std::exception& e) {
        std::printf("could not read %s (%s); using the hard-coded BERT-base shapes\n", path.c_str(), e.what());
        gemms.clear();
        for (int layer = 0; layer < kLayers; ++layer)
            for (const GemmShape& s : kBertLayer) gemms.push_back(s);
    }
    return gemms;
}

int main(int argc, char** argv) {
    bool quick = false;
    std::string trace = std::string(ACCELSIM_SOURCE_DIR) + "/traces/bert_base.trace";
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0)
            quick = true;
        else
            trace = argv[i];
    }
    bench_stepped(MxuDataflow::ws, quick ? 2048 : 16384);
    bench_stepped(MxuDataflow::os, quick ? 1024 : 4096);

    const std::vector<GemmShape> gemms = trace_gemms(trace);
    MxuParams p;  // 128x128 ws, overlap, fast
    std::int64_t cycles = 0, macs = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (const GemmShape& s : gemms) {
        const MxuGemmResult r = run_mxu_gemm(p, s, DType::bf16);
        cycles += r.stats.cycles;
        macs += r.stats.macs;
    }
    const double timing_sec = seconds_since(t0);
    std::printf("fast timing-only, %zu GEMMs (%.2f GMAC): %lld cycles on 128x128 ws, utilization %.3f, host %.3f ms\n",
                gemms.size(), static_cast<double>(macs) / 1e9, static_cast<long long>(cycles),
                static_cast<double>(macs) / (128.0 * 128.0 * static_cast<double>(cycles)), timing_sec * 1e3);

    // Numerics: the same operands through the MXU fast path and through plain Eigen float GEMMs.
    // Operands are generated once per distinct shape; --quick runs the first 12 GEMMs only.
    std::mt19937_64 rng(2);
    struct Data {
        std::vector<float> a, b;
    };
    std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>, Data> data;
    const std::size_t count = quick ? std::min<std::size_t>(12, gemms.size()) : gemms.size();
    for (std::size_t i = 0; i < count; ++i) {
        const GemmShape& s = gemms[i];
        auto& d = data[{s.batch, s.m, s.n, s.k}];
        if (d.a.empty()) {
            d.a = bf16_values(static_cast<std::size_t>(s.batch * s.m * s.k), rng);
            d.b = bf16_values(static_cast<std::size_t>(s.batch * s.k * s.n), rng);
        }
    }
    double checksum = 0;
    t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < count; ++i) {
        const GemmShape& s = gemms[i];
        const Data& d = data.at({s.batch, s.m, s.n, s.k});
        const MxuOperands ops{d.a.data(), d.b.data()};
        const MxuGemmResult r = run_mxu_gemm(p, s, DType::bf16, &ops);
        checksum += r.c_fp32[0];
    }
    const double mxu_sec = seconds_since(t0);
    using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < count; ++i) {
        const GemmShape& s = gemms[i];
        const Data& d = data.at({s.batch, s.m, s.n, s.k});
        for (std::int64_t bi = 0; bi < s.batch; ++bi) {
            Eigen::Map<const RowMat> a(d.a.data() + bi * s.m * s.k, s.m, s.k);
            Eigen::Map<const RowMat> b(d.b.data() + bi * s.k * s.n, s.k, s.n);
            RowMat c(s.m, s.n);
            c.noalias() = a * b;
            checksum += c(0, 0);
        }
    }
    const double eigen_sec = seconds_since(t0);
    std::printf("fast with numerics, %zu GEMMs: mxu %.3f s, plain Eigen %.3f s, ratio %.2fx (checksum %.3g)\n",
                count, mxu_sec, eigen_sec, mxu_sec / eigen_sec, checksum);
    return 0;
}
