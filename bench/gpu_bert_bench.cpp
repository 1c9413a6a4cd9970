// Benchmark (run by hand, not by ctest): BERT-base (traces/bert_base.trace, seq 128, batch 1) on
// a100 through the engine, every op a kernel simulated whole on all 108 SMs, timing-only. Prints
// the host time of each repetition (median last), the simulated cycles and the warp instructions
// simulated per host second. Target (issue 7): under 60 s on one core.
//   usage: gpu_bert_bench [repetitions=1] [config=a100] [trace=bert_base]
#include <systemc>  // declares sc_main extern "C"; libsystemc needs the symbol
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/config/config_loader.h"
#include "sim/engine/engine.h"
#include "sim/trace/trace_reader.h"

int sc_main(int, char**) { return 0; }

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 1;
    const std::string config_name = argc > 2 ? argv[2] : "a100";
    const std::string trace_name = argc > 3 ? argv[3] : "bert_base";
    const std::string root = ACCELSIM_SOURCE_DIR;
    const accelsim::ChipConfig config = accelsim::load_config(root + "/configs/" + config_name + ".json");
    const std::string trace = root + "/traces/" + trace_name + ".trace";
    const auto ops = accelsim::read_trace(trace, config.default_dtype);
    std::vector<double> seconds;
    double issued = 0;
    std::uint64_t cycles = 0;
    std::size_t simulated = 0;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        const auto report = accelsim::run_trace(config, trace, ops, accelsim::RunOptions{false});
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        issued = 0;
        simulated = 0;
        for (const auto& op : report.ops) {
            if (op.model == "simt") ++simulated;
            for (const auto& s : op.stats)
                if (s.name == "simt.issued") issued += s.value;
        }
        cycles = report.ops.empty() ? 0 : report.ops.back().end_cycle;
        std::printf("run %d: %.2f s\n", r + 1, seconds.back());
    }
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    std::printf("%s on %s: %zu of %zu ops simulated as kernels, %llu cycles\n", trace_name.c_str(),
                config_name.c_str(), simulated, ops.size(), static_cast<unsigned long long>(cycles));
    std::printf("host time (median of %d): %.2f s; %.3g warp instructions simulated, %.2f M warp instructions/s\n",
                reps, median, issued, issued / median / 1e6);
    return 0;
}
