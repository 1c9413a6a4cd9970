// The default simulation limits (sim/engine/chip_registry.h) leave every shipped trace runnable
// on every shipped systolic config with room to spare: no op of them needs a tenth of any limit. The
// estimates themselves are checked against built plans in tests/tpu/tpu_plan_size_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "sim/config/config_loader.h"
#include "sim/engine/engine.h"
#include "sim/trace/trace_reader.h"

namespace accelsim::simulation_limits_test {
namespace {

namespace fs = std::filesystem;
const std::string kSource = ACCELSIM_SOURCE_DIR;

TEST(SimulationLimits, NoShippedTraceNeedsATenthOfAnyDefaultLimitOnAnySystolicConfig) {
    const SimulationLimits limits;
    int configs = 0;
    for (const auto& config_file : fs::directory_iterator(kSource + "/configs")) {
        const ChipConfig config = load_config(config_file.path().string(), {});
        if (config.kind != "systolic") continue;
        ++configs;
        RunOptions options;
        options.validate = true;  // the validated run holds the most
        const std::unique_ptr<ChipModel> chip = make_chip(config, options);
        for (const auto& trace_file : fs::directory_iterator(kSource + "/traces")) {
            if (trace_file.path().extension() != ".trace") continue;
            for (const Op& op : read_trace(trace_file.path().string(), config.default_dtype)) {
                if (op.kind == OpKind::kernel) continue;  // SIMT programs: systolic chips refuse them
                const SimulationCost cost = chip->simulation_cost(op);
                const std::string where = config.name + ", " + trace_file.path().filename().string() + ", " + op.name;
                EXPECT_LT(cost.memory_bytes, 0.1 * limits.max_memory_bytes) << where;
                EXPECT_LT(cost.traffic_bytes, 0.1 * limits.max_traffic_bytes) << where;
                EXPECT_LT(cost.stepped_pe_cycles, 0.1 * limits.max_stepped_pe_cycles) << where;
                EXPECT_LT(static_cast<double>(op.macs()), 0.1 * limits.validate_max_macs) << where;
            }
        }
    }
    EXPECT_GE(configs, 7);  // tpu_v1, v3, v4, v5e, v5p, inferentia2, systolic_8x8
}

}  // namespace
}  // namespace accelsim::simulation_limits_test
