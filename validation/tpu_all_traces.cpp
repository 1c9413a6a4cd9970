// Every shipped trace (kernel traces excepted: they run only on simt chips) on every systolic
// config runs to the end with cycles >= the roofline bound for every op (run_trace throws when a
// model beats its bound). systolic_8x8 is run with mxu.mode=fast: its config steps the array
// cycle by cycle, which is proven identical (tests/mxu, validation/tpu_ideal_engine) and would
// take minutes on the large traces. Exits 1 on any failure.
#include <systemc>  // declares sc_main extern "C"; libsystemc needs the symbol
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "sim/config/config_loader.h"
#include "sim/engine/engine.h"
#include "sim/trace/trace_reader.h"

int sc_main(int, char**) { return 0; }

int main() {
    const std::string root = ACCELSIM_SOURCE_DIR;
    const std::vector<std::string> configs{"tpu_v1", "tpu_v3", "tpu_v4", "tpu_v5e", "systolic_8x8"};
    const std::vector<std::string> traces{"tiny_gemm.trace",   "tiny_conv.trace",        "tiny_mixed.trace",
                                          "bert_base.trace",   "bert_large.trace",       "gpt2_decode.trace",
                                          "gpt2_prefill.trace", "resnet50.trace",        "bert_base_s512_b8.trace",
                                          "scalesim/alexnet_resnet_conv.csv", "scalesim/bert_base_layer_gemm.csv"};
    int failures = 0;
    for (const std::string& c : configs) {
        std::vector<std::string> sets;
        if (c == "systolic_8x8") sets.push_back("mxu.mode=fast");
        const auto* cfg = new accelsim::ChipConfig(accelsim::load_config(root + "/configs/" + c + ".json", sets));
        for (const std::string& t : traces) {
            try {
                const auto ops = accelsim::read_trace(root + "/traces/" + t, cfg->default_dtype);
                const accelsim::RunReport r = accelsim::run_trace(*cfg, t, ops, accelsim::RunOptions{});
                bool ok = true;
                for (const auto& op : r.ops) ok = ok && static_cast<double>(op.cycles) >= op.roofline.bound_cycles;
                std::printf("%s  %s on %s: %zu ops, %llu cycles\n", ok ? "ok  " : "FAIL", t.c_str(), c.c_str(),
                            r.ops.size(), static_cast<unsigned long long>(r.total_cycles()));
                failures += !ok;
            } catch (const std::exception& e) {
                std::printf("FAIL  %s on %s: %s\n", t.c_str(), c.c_str(), e.what());
                ++failures;
            }
        }
    }
    std::printf("%d failure(s)\n", failures);
    return failures == 0 ? 0 : 1;
}
