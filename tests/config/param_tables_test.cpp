// Parameters declared once: each model's table is the only declaration of its keys; the schema,
// the defaults of a loaded config and docs/config.md all come from it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "models/memory/dram.h"
#include "models/mxu/mxu.h"
#include "models/simt/occupancy.h"
#include "models/simt/warp_scheduler.h"
#include "sim/config/config_docs.h"
#include "sim/config/config_loader.h"
#include "sim/config/config_schema.h"
#include "sim/config/model_params.h"

namespace accelsim::param_tables_test {
namespace {

namespace fs = std::filesystem;

fs::path temp_file(const std::string& name, const std::string& text) {
    const fs::path path = fs::temp_directory_path() / ("accelsim_params_" + std::to_string(getpid()) + "_" + name);
    std::ofstream(path) << text;
    return path;
}

std::string read(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

TEST(ParamTables, VmemHasOneDefaultInTheConfigAndTheModel) {
    // It used to be 0 in the config layer and 16 MiB in tpu_params.h. 16 MiB is TPU v4's VMEM
    // per core (configs/tpu_v4.json cites the JAX Pallas TPU info table).
    const fs::path path = temp_file("minimal.json", R"({ "kind": "systolic", "clock_mhz": 1000 })");
    const ChipConfig c = load_config(path.string());
    fs::remove(path);
    EXPECT_EQ(c.tpu.vmem_bytes, 16 * 1024 * 1024);
    EXPECT_EQ(c.effective["tpu"]["vmem_bytes"], 16 * 1024 * 1024);
    EXPECT_EQ(tpu_params_from_config(c).vmem_bytes, tpu::TpuChipParams{}.vmem_bytes);
    EXPECT_EQ(find_key("tpu.vmem_bytes")->default_value, 16 * 1024 * 1024);
}

TEST(ParamTables, AMinimalConfigGivesEveryModelItsOwnDefaults) {
    const fs::path sys = temp_file("sys.json", R"({ "kind": "systolic", "clock_mhz": 1000 })");
    const fs::path simt = temp_file("simt.json", R"({ "kind": "simt", "clock_mhz": 1000 })");
    const ChipConfig s = load_config(sys.string()), g = load_config(simt.string());
    fs::remove(sys);
    fs::remove(simt);
    // Hand-written values of the structs' defaults, read back through the loaded config.
    EXPECT_EQ(s.mxu.rows, 128);
    EXPECT_EQ(s.mxu.dataflow, MxuDataflow::ws);
    EXPECT_EQ(s.mxu.mode, MxuMode::fast);
    EXPECT_EQ(s.mxu.macs_per_pe_per_cycle.bf16, 1);
    EXPECT_EQ(s.mxu.macs_per_pe_per_cycle.fp32, 0);
    EXPECT_EQ(s.tpu.vector.lanes * s.tpu.vector.sublanes, 1024);
    EXPECT_EQ(s.tpu.dma.chunk_bytes, 4096);  // not configurable: the model's value stands
    EXPECT_EQ(s.l2.size_bytes, 0);           // no L2
    EXPECT_EQ(s.hbm.channels, 8);
    EXPECT_EQ(s.hbm.address_map, memory::DramAddressMap::channel_low);
    EXPECT_EQ(s.interconnect.bytes_per_cycle_per_port, 64);
    EXPECT_EQ(g.gpu.sms, 1);
    EXPECT_EQ(g.sm.warp_scheduler, "gto");
    EXPECT_EQ(g.sm.tensor_macs_per_cycle.fp16, 0);
    // Every key with a default appears in the effective config with exactly that value.
    for (const KeySpec& k : config_schema()) {
        if (k.default_value.is_null() || k.is_object()) continue;
        const KeySpec* section = find_key(k.path.substr(0, k.path.find('.')));
        const std::optional<std::string> kind = k.only_for ? k.only_for : section->only_for;  // a key's own kind first
        const ChipConfig& c = kind == std::string("simt") ? g : s;
        std::string pointer = "/" + k.path;
        for (char& ch : pointer)
            if (ch == '.') ch = '/';
        const nlohmann::json::json_pointer at(pointer);
        ASSERT_TRUE(c.effective.contains(at)) << k.path;
        EXPECT_EQ(c.effective[at], k.default_value) << k.path;
    }
}

TEST(ParamTables, ChoicesAreTheModelsOwnNameLists) {
    EXPECT_EQ(find_key("mxu.dataflow")->choices, names_of(kMxuDataflowNames));
    EXPECT_EQ(find_key("mxu.mode")->choices, names_of(kMxuModeNames));
    EXPECT_EQ(find_key("hbm.address_map")->choices, names_of(memory::kDramAddressMapNames));
    EXPECT_EQ(find_key("hbm.scheduler")->choices, names_of(memory::kDramSchedulerNames));
    EXPECT_EQ(find_key("hbm.page_policy")->choices, names_of(memory::kPagePolicyNames));
    EXPECT_EQ(find_key("hbm.preset")->choices, memory::dram_preset_names());
    EXPECT_EQ(find_key("hbm.timing")->choices, memory::dram_timing_names());
    EXPECT_EQ(find_key("sm.warp_scheduler")->choices, simt::warp_scheduler_names());
    EXPECT_EQ(find_key("sm.compute_capability")->choices, simt::compute_capability_names());
    // And every allowed name is one the model accepts.
    for (const std::string& name : find_key("sm.warp_scheduler")->choices)
        EXPECT_NO_THROW(simt::make_warp_scheduler(name, 4)) << name;
    for (const std::string& name : find_key("sm.compute_capability")->choices)
        EXPECT_TRUE(simt::published_limits(name).has_value()) << name;
    for (const std::string& name : find_key("hbm.preset")->choices)
        EXPECT_NO_THROW(memory::dram_preset(name)) << name;
    for (const std::string& name : find_key("default_dtype")->choices)
        EXPECT_TRUE(parse_operand_dtype(name).has_value()) << name;
    const std::vector<std::string> dtypes{"int8", "fp16", "bf16", "fp32", "fp8_e4m3", "fp8_e5m2"};
    EXPECT_EQ(find_key("default_dtype")->choices, dtypes);
}

TEST(ParamTables, ASetValueReachesTheModelStruct) {
    const fs::path path = temp_file("set.json", R"({ "kind": "systolic", "clock_mhz": 940 })");
    const ChipConfig c = load_config(path.string(), {"tpu.vector.lanes=64", "tpu.dma.latency_cycles=7",
                                                     "mxu.mode=stepped", "hbm.page_policy=closed",
                                                     "hbm.data_rate_gbps=3.2", "l2.size_bytes=1048576"});
    fs::remove(path);
    const tpu::TpuChipParams p = tpu_params_from_config(c);
    EXPECT_EQ(p.vector.lanes, 64);
    EXPECT_EQ(p.dma.latency_cycles, 7);
    EXPECT_EQ(p.mxu.mode, MxuMode::stepped);
    ASSERT_TRUE(p.memory.has_value());
    EXPECT_EQ(p.memory->dram.page_policy, memory::PagePolicy::closed);
    // 8 channels x 128 bit / 8 x 3.2 Gb/s = 409.6 GB/s.
    EXPECT_DOUBLE_EQ(p.memory->dram.peak_bytes_per_second(), 409.6e9);
    ASSERT_TRUE(p.memory->l2.has_value());
    EXPECT_EQ(p.memory->l2->size_bytes, 1 << 20);
    EXPECT_DOUBLE_EQ(p.memory->l2->clock_hz, 940e6);
    EXPECT_DOUBLE_EQ(p.clock_hz, 940e6);
}

TEST(ConfigDocs, CommandRewritesOnlyTheGeneratedTable) {
    const std::string before = "# title\n\nprose\n\n<!-- keys:begin -->\n| stale |\n<!-- keys:end -->\n\nafter\n";
    const fs::path path = temp_file("doc.md", before);
    std::ostringstream out, err;
    EXPECT_EQ(run_config_docs_command({"--check", path.string()}, out, err), 1);
    EXPECT_NE(err.str().find("config-docs --update"), std::string::npos) << err.str();
    EXPECT_EQ(run_config_docs_command({"--update", path.string()}, out, err), 0);
    EXPECT_EQ(read(path), "# title\n\nprose\n\n<!-- keys:begin -->\n" + config_keys_markdown() +
                              "<!-- keys:end -->\n\nafter\n");
    EXPECT_EQ(run_config_docs_command({"--check", path.string()}, out, err), 0);
    std::ofstream(path) << "no markers\n";
    std::ostringstream err2;
    EXPECT_EQ(run_config_docs_command({"--update", path.string()}, out, err2), 2);
    EXPECT_NE(err2.str().find(path.string()), std::string::npos) << err2.str();
    fs::remove(path);
}

}  // namespace
}  // namespace accelsim::param_tables_test
