// Sampled against full simulation on a GPU config (hand-run; docs/gpu.md "Sampled simulation"):
// each trace runs twice in this process, gpu.sampling off and waves, and the table gives every op's
// cycles both ways, its error, the blocks simulated of the total and the estimated error bound;
// then the mean and largest per-op error, the end-to-end error and the host-time speed-up.
//   gpu_sampling_bench [--config configs/a100.json] [--set KEY=VALUE]... [--gemms] [--gemm-16384] [--only-sampled] TRACE...
//   --gemms adds a trace of nineteen fp16 GEMM shapes from 64 to 16384 per side, --gemm-16384 one of
//   16384^3 (each written to a temporary file).
#include <systemc>  // declares sc_main extern "C"; libsystemc needs the symbol
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/config/config_loader.h"
#include "sim/engine/engine.h"
#include "sim/trace/trace_reader.h"

int sc_main(int, char**) { return 0; }  // libsystemc's main() is not used

using namespace accelsim;

namespace {

struct Timed {
    RunReport report;
    double seconds = 0;
};

Timed run(const std::string& config_path, std::vector<std::string> overrides, const std::string& sampling,
          const std::string& trace) {
    overrides.push_back("gpu.sampling=" + sampling);
    const ChipConfig chip = load_config(config_path, overrides);
    const auto start = std::chrono::steady_clock::now();
    Timed t;
    t.report = run_trace(chip, trace, read_trace(trace, chip.default_dtype), RunOptions{});
    t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return t;
}

// The GEMM shapes of the validation set, fp16, 64 to 16384 per side: squares,
// BERT/GPT-like projections (up to 16384 tokens), skinny and tall-K shapes, and shapes whose tile
// grid has edge tiles (1000, 3000, 5000). `--gemms` writes nineteen as one trace (warm L2 from op
// to op); `--gemm-16384` the twentieth, 16384^3, alone (its full simulation takes most of an hour).
std::string write_gemm_trace(const std::vector<std::array<long, 3>>& shapes, const std::string& file) {
    const std::filesystem::path path = std::filesystem::temp_directory_path() / file;
    std::ofstream f(path);
    f << "# accelsim-trace 1\n";
    for (const auto& s : shapes)
        f << "matmul gemm_" << s[0] << "x" << s[1] << "x" << s[2] << " m=" << s[0] << " n=" << s[1] << " k=" << s[2]
          << " dtype=fp16\n";
    return path.string();
}
const std::vector<std::array<long, 3>> kGemmShapes = {
    {64, 64, 64},        {256, 256, 256},      {512, 512, 512},     {1024, 1024, 1024},  {2048, 2048, 512},
    {1000, 1000, 1000},  {4096, 4096, 256},    {3000, 3000, 512},   {8192, 8192, 128},   {8192, 2048, 256},
    {4096, 4096, 4096},  {16384, 16384, 128},  {16384, 4096, 1024}, {1024, 16384, 4096}, {16384, 768, 3072},
    {6144, 6144, 2048},  {16384, 2304, 768},   {5000, 5000, 1000},  {16384, 128, 16384}};

}  // namespace

int main(int argc, char** argv) {
    std::string config = std::string(ACCELSIM_SOURCE_DIR) + "/configs/a100.json";
    struct Trace {
        std::string path;
        std::vector<std::string> overrides;  // its own, after the command line's
    };
    std::vector<Trace> traces;
    std::vector<std::string> overrides;  // --set KEY=VALUE, as the CLI's
    bool only_sampled = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--config" && i + 1 < argc) config = argv[++i];
        else if (a == "--gemms") traces.push_back({write_gemm_trace(kGemmShapes, "accelsim_sampling_gemms.trace"), {}});
        else if (a == "--gemm-16384")
            // About 1.05e10 warp instructions on a100 (2048^3 issues 2.0e7; x 512), above the
            // watchdog's default 2e9.
            traces.push_back({write_gemm_trace({{16384, 16384, 16384}}, "accelsim_sampling_gemm_16384.trace"),
                              {"gpu.max_kernel_instructions=40000000000"}});
        else if (a == "--only-sampled") only_sampled = true;
        else if (a == "--set" && i + 1 < argc) overrides.push_back(argv[++i]);
        else traces.push_back({a, {}});
    }
    if (traces.empty()) {
        std::fprintf(stderr, "usage: gpu_sampling_bench [--config FILE] [--set KEY=VALUE]... [--gemms] [--gemm-16384] [--only-sampled] TRACE...\n");
        return 2;
    }
    int failed = 0;
    for (const Trace& t : traces) {
        const std::string& trace = t.path;
        std::vector<std::string> trace_overrides = overrides;
        trace_overrides.insert(trace_overrides.end(), t.overrides.begin(), t.overrides.end());
        Timed full, sampled;
        try {  // one trace's error (a watchdog, an input error) leaves the others' tables
            full = run(config, trace_overrides, "off", trace);
            sampled = run(config, trace_overrides, "waves", trace);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "gpu_sampling_bench: %s: %s\n", trace.c_str(), e.what());
            ++failed;
            continue;
        }
        std::printf("\n%s on %s\n", trace.c_str(), config.c_str());
        std::printf("| op | blocks simulated / total | full cycles | sampled cycles | error | error bound |\n");
        std::printf("|---|---|---|---|---|---|\n");
        double sum_abs = 0, max_abs = 0;
        std::size_t n = 0, n_sampled = 0;
        for (std::size_t i = 0; i < full.report.ops.size() && i < sampled.report.ops.size(); ++i) {
            const OpReport& f = full.report.ops[i];
            const OpReport& s = sampled.report.ops[i];
            if (f.cycles == 0) continue;
            const double err = (static_cast<double>(s.cycles) - static_cast<double>(f.cycles)) / static_cast<double>(f.cycles);
            sum_abs += std::fabs(err);
            max_abs = std::max(max_abs, std::fabs(err));
            ++n;
            if (s.sampling) ++n_sampled;
            if (only_sampled && !s.sampling) continue;
            const std::string blocks = s.sampling ? std::to_string(s.sampling->simulated_blocks) + " / " +
                                                        std::to_string(s.sampling->total_blocks)
                                                  : "all";
            std::printf("| %s | %s | %llu | %llu | %+.3f%% | %s |\n", f.op.name.c_str(), blocks.c_str(),
                        static_cast<unsigned long long>(f.cycles), static_cast<unsigned long long>(s.cycles), err * 100,
                        s.sampling ? (std::to_string(s.sampling->error_estimate * 100).substr(0, 5) + "%").c_str() : "-");
        }
        const double total_err = (static_cast<double>(sampled.report.total_cycles()) -
                                  static_cast<double>(full.report.total_cycles())) /
                                 static_cast<double>(full.report.total_cycles());
        std::printf("\nops %zu (sampled %zu): mean |error| %.3f%%, largest %.3f%%; end to end %llu vs %llu cycles, "
                    "%+.3f%%; host time full %.2f s, sampled %.2f s, speed-up %.2fx\n",
                    n, n_sampled, n ? sum_abs / static_cast<double>(n) * 100 : 0.0, max_abs * 100,
                    static_cast<unsigned long long>(sampled.report.total_cycles()),
                    static_cast<unsigned long long>(full.report.total_cycles()), total_err * 100, full.seconds,
                    sampled.seconds, full.seconds / std::max(1e-9, sampled.seconds));
        std::fflush(stdout);  // each table as soon as it is complete (a run may take an hour)
    }
    return failed ? 1 : 0;
}
