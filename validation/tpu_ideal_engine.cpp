// End-to-end checks of the systolic chip with `memory: "ideal"` through the engine (config loader,
// trace reader, run_trace), as `accelsim --config configs/systolic_8x8.json --trace ... --validate`
// runs it. Exits 1 on any failure; prints one line per check.
//   1. tiny_gemm on systolic_8x8 (stepped in the config) validates, and --set mxu.mode=fast gives
//      identical cycles op by op (the MXU's stepped/fast equality, seen through the chip);
//   2. tiny_conv on systolic_8x8 validates (implicit GEMM against a direct convolution loop);
//   3. exact_tile (m = n = k = 8 on 8x8, one fold) takes 4·8 - 2 = 30 cycles (docs/mxu.md);
//   4. every op is modelled ("tpu.ideal") and at or above its roofline compute bound.
#include <systemc>  // declares sc_main extern "C"; libsystemc needs the symbol
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/config/config_loader.h"
#include "sim/engine/engine.h"
#include "sim/trace/trace_reader.h"

int sc_main(int, char**) { return 0; }

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
    std::printf("%s  %s\n", ok ? "ok  " : "FAIL", what.c_str());
    if (!ok) ++failures;
}

accelsim::RunReport run(const std::string& config, const std::string& trace, const std::vector<std::string>& sets,
                        bool validate) {
    const std::string root = ACCELSIM_SOURCE_DIR;
    const accelsim::ChipConfig* cfg = new accelsim::ChipConfig(accelsim::load_config(root + "/" + config, sets));
    const auto ops = accelsim::read_trace(root + "/" + trace, cfg->default_dtype);
    accelsim::RunOptions options;
    options.validate = validate;
    return accelsim::run_trace(*cfg, trace, ops, options);  // cfg lives to the end of the process
}

}  // namespace

int main() {
    const accelsim::RunReport stepped = run("configs/systolic_8x8.json", "traces/tiny_gemm.trace", {}, true);
    const accelsim::RunReport fast =
        run("configs/systolic_8x8.json", "traces/tiny_gemm.trace", {"mxu.mode=fast"}, true);
    check(stepped.numerics && stepped.numerics->passed && stepped.numerics->checked > 0,
          "tiny_gemm on systolic_8x8 (stepped) --validate passes");
    check(fast.numerics && fast.numerics->passed, "tiny_gemm on systolic_8x8 (fast) --validate passes");
    bool same = stepped.ops.size() == fast.ops.size();
    for (std::size_t i = 0; same && i < stepped.ops.size(); ++i) same = stepped.ops[i].cycles == fast.ops[i].cycles;
    check(same, "--set mxu.mode=fast gives the stepped cycles op by op");
    check(!stepped.ops.empty() && stepped.ops[0].cycles == 30, "exact_tile takes 4n - 2 = 30 cycles");

    const accelsim::RunReport conv = run("configs/systolic_8x8.json", "traces/tiny_conv.trace", {}, true);
    check(conv.numerics && conv.numerics->passed && conv.numerics->checked > 0,
          "tiny_conv on systolic_8x8 --validate passes");

    for (const auto* report : {&stepped, &conv}) {
        for (const auto& op : report->ops) {
            check(op.model == "tpu.ideal" && static_cast<double>(op.cycles) >= op.roofline.bound_cycles,
                  op.op.name + ": modelled, " + std::to_string(op.cycles) + " cycles >= bound " +
                      std::to_string(op.roofline.bound_cycles));
        }
    }
    std::printf("%d failure(s)\n", failures);
    return failures == 0 ? 0 : 1;
}
