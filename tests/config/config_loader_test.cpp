// Tests of the strict config loader: every error names the file (or --set) and the key, and the
// shipped configs reproduce the published peak figures they cite.
#include "sim/config/config_loader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "models/memory/dram.h"
#include "sim/config/config_schema.h"

namespace accelsim::config_loader_test {
namespace {

namespace fs = std::filesystem;

const std::string kConfigDir = std::string(ACCELSIM_SOURCE_DIR) + "/configs/";

// A fresh directory per test for hand-written (mostly bad) config files.
class ConfigFiles : public ::testing::Test {
  protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() /
               ("accelsim_config_" + std::string(info->name()) + "_" + std::to_string(getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::string write(const std::string& name, const std::string& text) {
        const fs::path path = dir_ / name;
        fs::create_directories(path.parent_path());
        std::ofstream(path) << text;
        return path.string();
    }

    // The InputError message of loading `path`, or "" if it loaded.
    static std::string error_of(const std::string& path,
                                const std::vector<std::string>& overrides = {}) {
        try {
            load_config(path, overrides);
        } catch (const InputError& e) {
            return e.what();
        }
        return "";
    }

    fs::path dir_;
};

const char* const kMinimalSystolic = R"({ "kind": "systolic", "clock_mhz": 1000 })";

std::string with_mxu(const std::string& mxu_body) {
    return R"({ "kind": "systolic", "clock_mhz": 1000, "mxu": { )" + mxu_body + " } }";
}

std::vector<fs::path> shipped_configs() {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(kConfigDir))
        if (entry.path().extension() == ".json") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    return files;
}

// ---------- shipped configs ----------

TEST(ShippedConfigs, TheIssueListIsShipped) {
    for (const char* name : {"tpu_v1", "tpu_v3", "tpu_v4", "tpu_v5e", "v100", "a100", "h100", "t4",
                             "a10g", "systolic_8x8", "simt_1sm"})
        EXPECT_TRUE(fs::is_regular_file(kConfigDir + name + ".json")) << name;
}

TEST(ShippedConfigs, EveryOneLoadsAndIsNamedAfterItsFile) {
    const auto files = shipped_configs();
    ASSERT_GE(files.size(), 11u);
    for (const fs::path& file : files) {
        SCOPED_TRACE(file.string());
        const ChipConfig c = load_config(file.string());
        EXPECT_EQ(c.name, file.stem().string());
        EXPECT_EQ(c.file, file.string());
        EXPECT_FALSE(c.effective.contains("extends"));
        EXPECT_TRUE(c.effective.contains("source"));
    }
}

// Flattens the figures a file writes into "a.b.c" paths (citations and prose excluded).
void collect_figures(const nlohmann::json& object, const std::string& prefix,
                     std::vector<std::string>& out) {
    for (const auto& [key, value] : object.items()) {
        const std::string path = prefix.empty() ? key : prefix + "." + key;
        if (path == "source" || path == "extends" || path == "name" || path == "kind" ||
            path == "description" || path == "memory" || path == "default_dtype")
            continue;
        if (value.is_object())
            collect_figures(value, path, out);
        else
            out.push_back(path);
    }
}

TEST(ShippedConfigs, EveryFigureWrittenInAFileIsCitedInThatFile) {
    for (const fs::path& file : shipped_configs()) {
        SCOPED_TRACE(file.string());
        std::ifstream in(file);
        const nlohmann::json raw = nlohmann::json::parse(in);
        ASSERT_TRUE(raw.contains("source") && raw["source"].is_object());
        std::vector<std::string> figures;
        collect_figures(raw, "", figures);
        for (const std::string& figure : figures) {
            ASSERT_TRUE(raw["source"].contains(figure)) << "no citation for " << figure;
            EXPECT_FALSE(raw["source"][figure].get<std::string>().empty()) << figure;
        }
        // A citation of a key the file does not write would be stale (inherited values are cited
        // in the file that writes them).
        for (const auto& [cited, text] : raw["source"].items())
            EXPECT_NE(std::find(figures.begin(), figures.end(), cited), figures.end())
                << "stale citation " << cited;
    }
}

// Peak MACs/s of the systolic chip for one dtype: cores x MXUs x PEs x rate x clock.
double mxu_peak_ops(const ChipConfig& c, DType t) {
    return 2.0 * c.tpu.cores * c.tpu.mxus_per_core * c.mxu.rows * c.mxu.cols *
           c.mxu.macs_per_pe_per_cycle.of(t) * c.peak_clock_hz();
}
double tensor_peak_ops(const ChipConfig& c, DType t) {
    return 2.0 * c.gpu.sms * c.sm.tensor_macs_per_cycle.of(t) * c.peak_clock_hz();
}

#define EXPECT_WITHIN_1_PERCENT(actual, published) EXPECT_NEAR((actual) / (published), 1.0, 0.01)

TEST(ShippedConfigs, SystolicPeaksMatchPublishedFigures) {
    // Published peaks (Google Cloud TPU system architecture pages; Jouppi et al. ISCA 2017 for v1).
    // Hand check for v4: 2 cores x 4 MXUs x 128 x 128 PEs x 2 FLOP x 1.05e9 Hz = 275.25e12.
    EXPECT_WITHIN_1_PERCENT(mxu_peak_ops(load_config(kConfigDir + "tpu_v4.json"), DType::bf16),
                            275e12);
    EXPECT_WITHIN_1_PERCENT(mxu_peak_ops(load_config(kConfigDir + "tpu_v4.json"), DType::int8),
                            275e12);
    EXPECT_WITHIN_1_PERCENT(mxu_peak_ops(load_config(kConfigDir + "tpu_v3.json"), DType::bf16),
                            123e12);
    EXPECT_WITHIN_1_PERCENT(mxu_peak_ops(load_config(kConfigDir + "tpu_v5e.json"), DType::bf16),
                            197e12);
    EXPECT_WITHIN_1_PERCENT(mxu_peak_ops(load_config(kConfigDir + "tpu_v5e.json"), DType::int8),
                            394e12);
    EXPECT_WITHIN_1_PERCENT(mxu_peak_ops(load_config(kConfigDir + "tpu_v1.json"), DType::int8),
                            92e12);
    // v5p: 2 cores x 4 MXUs x 16384 PEs x 2 FLOP x 1.751e9 Hz = 459.1e12; int8 twice that.
    EXPECT_WITHIN_1_PERCENT(mxu_peak_ops(load_config(kConfigDir + "tpu_v5p.json"), DType::bf16), 459e12);
    EXPECT_WITHIN_1_PERCENT(mxu_peak_ops(load_config(kConfigDir + "tpu_v5p.json"), DType::int8), 918e12);
    // Inferentia2: 2 NeuronCores x 1 tensor engine x 16384 PEs x 2 FLOP x 2.8e9 Hz = 183.5e12, the
    // NKI architecture guide's 92 TFLOPS per tensor engine twice (the chip headline 190 is 3.5% more);
    // fp32 at 1/4 (23 TFLOPS per engine), int8 at 2x (380 / 190 TOPS per chip).
    const ChipConfig inf2 = load_config(kConfigDir + "inferentia2.json");
    EXPECT_WITHIN_1_PERCENT(mxu_peak_ops(inf2, DType::bf16), 2 * 92e12);
    EXPECT_WITHIN_1_PERCENT(mxu_peak_ops(inf2, DType::fp16), 2 * 92e12);
    EXPECT_WITHIN_1_PERCENT(mxu_peak_ops(inf2, DType::fp32), 2 * 23e12);
    EXPECT_WITHIN_1_PERCENT(mxu_peak_ops(inf2, DType::int8), 2 * 2 * 92e12);
    EXPECT_NEAR(mxu_peak_ops(inf2, DType::bf16) / 190e12, 1.0, 0.04);
    EXPECT_EQ(mxu_peak_ops(load_config(kConfigDir + "tpu_v1.json"), DType::bf16), 0);
    // Coral Edge TPU: 64 x 64 PEs x 2 x 488e6 = 3.998e12 int8 (datasheet: 4 TOPS); nothing else.
    const ChipConfig coral = load_config(kConfigDir + "coral_edgetpu.json");
    EXPECT_WITHIN_1_PERCENT(mxu_peak_ops(coral, DType::int8), 4e12);
    for (DType t : {DType::fp16, DType::bf16, DType::fp32}) EXPECT_EQ(mxu_peak_ops(coral, t), 0);
    EXPECT_TRUE(coral.tpu.int8_only);
    EXPECT_EQ(coral.tpu.parameter_cache_bytes, 8 * 1024 * 1024);
    // USB 3.0: 5 Gb/s with 8b/10b coding = 500 MB/s.
    EXPECT_DOUBLE_EQ(coral.tpu.host_link_bytes_per_second, 5e9 * 8 / 10 / 8);
    EXPECT_EQ(coral.tdp_w, 2.0);
}

TEST(ShippedConfigs, TensorCorePeaksMatchPublishedFigures) {
    // NVIDIA whitepapers/datasheets, dense. Hand check for A100: 108 SMs x 1024 MACs x 2 x 1.41e9 =
    // 311.9e12.
    const ChipConfig a100 = load_config(kConfigDir + "a100.json");
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(a100, DType::fp16), 312e12);
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(a100, DType::bf16), 312e12);
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(a100, DType::int8), 624e12);
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(a100, DType::fp32), 156e12);  // TF32
    EXPECT_WITHIN_1_PERCENT(2.0 * a100.gpu.sms * a100.sm.fp32_lanes * a100.clock_hz(), 19.5e12);
    const ChipConfig h100 = load_config(kConfigDir + "h100.json");
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(h100, DType::bf16), 989.4e12);
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(h100, DType::int8), 1979e12);
    const ChipConfig v100 = load_config(kConfigDir + "v100.json");
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(v100, DType::fp16), 125e12);
    EXPECT_WITHIN_1_PERCENT(2.0 * v100.gpu.sms * v100.sm.fp32_lanes * v100.clock_hz(), 15.7e12);
    EXPECT_EQ(tensor_peak_ops(v100, DType::bf16), 0);
    // L4: 58 SMs x 512 x 2 x 2.04e9 = 121.2e12 (datasheet 121 dense FP16; INT8 242.5 dense, TF32 60).
    const ChipConfig l4 = load_config(kConfigDir + "l4.json");
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(l4, DType::fp16), 121e12);
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(l4, DType::int8), 242.5e12);
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(l4, DType::fp32), 60e12);
    EXPECT_WITHIN_1_PERCENT(2.0 * l4.gpu.sms * l4.sm.fp32_lanes * l4.clock_hz(), 30.3e12);
    // RTX 4090: 128 SMs x 256 x 2 x 2.52e9 = 165.2e12 (FP16 with FP32 accumulate), INT8 660.6.
    const ChipConfig rtx4090 = load_config(kConfigDir + "rtx4090.json");
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(rtx4090, DType::fp16), 165.2e12);
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(rtx4090, DType::int8), 660.6e12);
    EXPECT_WITHIN_1_PERCENT(2.0 * rtx4090.gpu.sms * rtx4090.sm.fp32_lanes * rtx4090.clock_hz(), 82.6e12);
    // Jetson AGX Orin: 16 SMs x 2048 x 2 x 1.3e9 = 85.2e12 INT8 (technical brief: 170 sparse = 85
    // dense), FP16 half that; FP32 16 x 128 x 2 x 1.3e9 = 5.32e12 (brief: 5.3).
    const ChipConfig orin = load_config(kConfigDir + "jetson_orin.json");
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(orin, DType::int8), 170e12 / 2);
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(orin, DType::fp16), 170e12 / 4);
    EXPECT_WITHIN_1_PERCENT(2.0 * orin.gpu.sms * orin.sm.fp32_lanes * orin.clock_hz(), 5.3e12);
    // B200: 148 SMs x 4096 x 2 x 1.856e9 = 2.250e15 dense FP16/BF16 (DGX B200 datasheet 72 PFLOPS
    // FP8 sparse / 8 GPUs / 2 / 2; HGX B200 4.5 PFLOPS FP16 sparse), INT8 4.5e15; TF32 148 x 2048 x 2 x
    // 1.856e9 = 1.125e15 against the published 1.1 (2.2 sparse, rounded), so within 3%.
    const ChipConfig b200 = load_config(kConfigDir + "b200.json");
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(b200, DType::fp16), 2.25e15);
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(b200, DType::bf16), 2.25e15);
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(b200, DType::int8), 4.5e15);
    EXPECT_NEAR(tensor_peak_ops(b200, DType::fp32) / 1.1e15, 1.0, 0.03);
    // MI300X: 304 CUs x 1024 MFMA MACs x 2 x 2.1e9 = 1307.6e12 dense FP16/BF16 (data sheet 1307.4),
    // INT8 2614.9e12, TF32 653.7e12; FP32 vector 304 x 64 x 2 x 2.1e9 = 81.7e12 (data sheet 81.7).
    const ChipConfig mi300x = load_config(kConfigDir + "mi300x.json");
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(mi300x, DType::fp16), 1307.4e12);
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(mi300x, DType::bf16), 1307.4e12);
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(mi300x, DType::int8), 2614.9e12);
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(mi300x, DType::fp32), 653.7e12);
    EXPECT_WITHIN_1_PERCENT(2.0 * mi300x.gpu.sms * mi300x.sm.fp32_lanes * mi300x.clock_hz(), 81.7e12);
    EXPECT_EQ(mi300x.sm.wave_size, 64);
    // K80 board: 26 SMX x 192 x 2 x 875e6 = 8.736e12 FP32 (data sheet 8.73 with GPU Boost); no
    // tensor cores at all.
    const ChipConfig k80 = load_config(kConfigDir + "k80.json");
    EXPECT_WITHIN_1_PERCENT(2.0 * k80.gpu.sms * k80.sm.fp32_lanes * k80.clock_hz(), 8.73e12);
    for (DType t : {DType::int8, DType::fp16, DType::bf16, DType::fp32}) EXPECT_EQ(tensor_peak_ops(k80, t), 0);
    const ChipConfig t4 = load_config(kConfigDir + "t4.json");
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(t4, DType::fp16), 65e12);
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(t4, DType::int8), 130e12);
}

TEST(ShippedConfigs, Fp8TensorPeaksMatchPublishedFigures) {
    // Dense fp8 with fp32 accumulation, one figure for e4m3 and e5m2 in every vendor table.
    // H100 SXM5: 132 x 4096 x 2 x 1.83e9 = 1978.6e12 (whitepaper 1978.9). L4: 58 x 1024 x 2 x
    // 2.04e9 = 242.3e12 (datasheet 485 sparse / 2). RTX 4090: 128 x 512 x 2 x 2.52e9 = 330.3e12
    // (Ada whitepaper, FP8 with FP32 accumulate: half its 660.6 with FP16 accumulate). B200: 148 x
    // 8192 x 2 x 1.856e9 = 4.50e15 (DGX B200 72 PFLOPS sparse / 8 / 2). MI300X: 304 x 2048 x 2 x
    // 2.1e9 = 2614.9e12 (data sheet).
    const std::pair<const char*, double> published[] = {
        {"h100", 1978.9e12}, {"l4", 242.5e12}, {"rtx4090", 330.3e12}, {"b200", 4.5e15}, {"mi300x", 2614.9e12}};
    for (const auto& [name, peak] : published) {
        const ChipConfig c = load_config(kConfigDir + name + ".json");
        EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(c, DType::fp8_e4m3), peak) << name;
        EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(c, DType::fp8_e5m2), peak) << name;
        EXPECT_TRUE(c.effective.at("source").contains("sm.tensor_macs_per_cycle.fp8_e4m3")) << name;
        EXPECT_TRUE(c.effective.at("source").contains("sm.tensor_macs_per_cycle.fp8_e5m2")) << name;
    }
    // No fp8 where the hardware has none or no rate is published (Ampere, Volta, Turing, Kepler,
    // the Orin's Ampere iGPU; every TPU, v5p included, and the other systolic configs).
    for (const char* name : {"a100", "a10g", "v100", "t4", "k80", "jetson_orin"}) {
        const ChipConfig c = load_config(kConfigDir + name + ".json");
        EXPECT_EQ(tensor_peak_ops(c, DType::fp8_e4m3), 0) << name;
        EXPECT_EQ(tensor_peak_ops(c, DType::fp8_e5m2), 0) << name;
    }
    for (const char* name : {"tpu_v1", "tpu_v3", "tpu_v4", "tpu_v5e", "tpu_v5p", "inferentia2", "coral_edgetpu"}) {
        const ChipConfig c = load_config(kConfigDir + name + ".json");
        EXPECT_EQ(c.mxu.macs_per_pe_per_cycle.fp8_e4m3, 0) << name;
        EXPECT_EQ(c.mxu.macs_per_pe_per_cycle.fp8_e5m2, 0) << name;
    }
}

TEST(ShippedConfigs, MemoryPeaksMatchPublishedFigures) {
    // channels x bus width x data rate must give the published peak (bytes/s).
    const std::pair<const char*, double> published[] = {
        {"tpu_v1", 34e9},   {"tpu_v3", 900e9}, {"tpu_v4", 1200e9},
        {"tpu_v5e", 819e9}, {"tpu_v5p", 2765e9}, {"v100", 900e9},   {"a100", 2039e9}, {"a100_40gb", 1555e9},
        {"h100", 3.35e12},  {"t4", 320e9},     {"a10g", 600e9}, {"l4", 300e9}, {"rtx4090", 1008e9},
        // Inferentia2: 16 channels x 128 bit / 8 x 3.203125 Gb/s = 820.0e9 (NKI architecture guide).
        {"inferentia2", 820e9},
        // Jetson AGX Orin: 16 LPDDR5 channels x 16 bit / 8 x 6.4 Gb/s = 204.8e9 (module data sheet).
        {"jetson_orin", 204.8e9},
        // B200: 8 HBM3e stacks x 16 channels x 64 bit / 8 x 7.8125 Gb/s = 8.0e12 (DGX B200 datasheet).
        {"b200", 8e12},
        // MI300X: 8 HBM3 stacks x 16 channels x 64 bit / 8 x 5.17578125 Gb/s = 5.3e12 (data sheet).
        {"mi300x", 5.3e12},
        // K80 board: 2 x 384-bit GDDR5 = 24 x 32 bit / 8 x 5 Gb/s = 480e9 (data sheet).
        {"k80", 480e9}};
    for (const auto& [name, bytes_per_second] : published) {
        SCOPED_TRACE(name);
        EXPECT_WITHIN_1_PERCENT(
            load_config(kConfigDir + name + ".json").hbm.peak_bytes_per_second(), bytes_per_second);
    }
}

TEST(ShippedConfigs, GraphicsMemoriesUseTheirOwnPresetAtTheCitedPeakExactly) {
    // channels x width / 8 x data rate, by hand (bytes/s), and the preset each memory type has:
    //  t4 16 x 16 / 8 x 10 = 320e9; a10g 24 x 16 / 8 x 12.5 = 600e9; l4 12 x 16 / 8 x 12.5 = 300e9;
    //  rtx4090 24 x 16 / 8 x 21 = 1008e9; k80 24 x 32 / 8 x 5 = 480e9; jetson_orin 16 x 16 / 8 x 6.4
    //  = 204.8e9. Every burst is 32 B and takes tCCD_S x tCK (BL / data rate at the config's rate).
    struct Expected {
        const char* config;
        const char* preset;
        double peak;
    };
    const Expected expected[] = {{"t4", "GDDR6", 320e9},       {"a10g", "GDDR6", 600e9},
                                 {"l4", "GDDR6", 300e9},       {"rtx4090", "GDDR6X", 1008e9},
                                 {"k80", "GDDR5", 480e9},      {"jetson_orin", "LPDDR5", 204.8e9}};
    for (const auto& e : expected) {
        SCOPED_TRACE(e.config);
        const ChipConfig c = load_config(kConfigDir + e.config + ".json");
        EXPECT_EQ(c.hbm.preset, e.preset);
        EXPECT_NEAR(c.hbm.peak_bytes_per_second(), e.peak, e.peak * 1e-12);
        const memory::DramParams p = memory::dram_params_from(c.hbm);
        EXPECT_EQ(p.burst_bytes(), 32);
        EXPECT_NEAR(p.timing.tCCD_S * p.timing.tCK, p.burst_ns(), 1e-9);
    }
}

TEST(ShippedConfigs, StructuralFiguresOfTheIssue) {
    const ChipConfig v4 = load_config(kConfigDir + "tpu_v4.json");
    EXPECT_EQ(v4.kind, "systolic");
    EXPECT_EQ(v4.tpu.vmem_bytes, 16 * 1024 * 1024);
    EXPECT_EQ(v4.tpu.cmem_bytes, 128 * 1024 * 1024);
    EXPECT_EQ(v4.tpu.vector.lanes * v4.tpu.vector.sublanes, 1024);
    EXPECT_EQ(v4.default_dtype, DType::bf16);
    EXPECT_EQ(v4.hbm.preset, "HBM2");
    const ChipConfig v1 = load_config(kConfigDir + "tpu_v1.json");
    EXPECT_EQ(v1.tpu.vmem_bytes, 24 * 1024 * 1024);
    EXPECT_EQ(v1.hbm.preset, "DDR3");
    EXPECT_EQ(v1.default_dtype, DType::int8);
    const ChipConfig a100 = load_config(kConfigDir + "a100.json");
    EXPECT_EQ(a100.kind, "simt");
    EXPECT_EQ(a100.gpu.sms, 108);
    EXPECT_EQ(a100.sm.max_warps, 64);
    EXPECT_EQ(a100.sm.max_threads, 2048);
    EXPECT_EQ(a100.sm.max_blocks, 32);
    EXPECT_EQ(a100.sm.registers, 65536);
    EXPECT_EQ(a100.sm.shared_memory_bytes, 164 * 1024);
    EXPECT_EQ(a100.sm.shared_memory_reserved_per_block, 1024);
    EXPECT_EQ(a100.l2.size_bytes, 40 * 1024 * 1024);
    const ChipConfig h100 = load_config(kConfigDir + "h100.json");
    EXPECT_EQ(h100.sm.compute_capability, "sm_90");
    EXPECT_EQ(h100.gpu.sms, 132);
    EXPECT_EQ(h100.sm.shared_memory_bytes, 228 * 1024);
    EXPECT_EQ(h100.l2.size_bytes, 50 * 1024 * 1024);
    const ChipConfig a10g = load_config(kConfigDir + "a10g.json");
    EXPECT_EQ(a10g.sm.compute_capability, "sm_86");
    EXPECT_EQ(a10g.sm.max_warps, 48);
    EXPECT_EQ(a10g.sm.max_blocks, 16);
    EXPECT_EQ(a10g.sm.shared_memory_bytes, 100 * 1024);
    const ChipConfig teach = load_config(kConfigDir + "systolic_8x8.json");
    EXPECT_EQ(teach.memory, "ideal");
    EXPECT_EQ(teach.tpu.cores * teach.tpu.mxus_per_core, 1);
    EXPECT_EQ(teach.mxu.rows * teach.mxu.cols, 64);
    EXPECT_EQ(load_config(kConfigDir + "simt_1sm.json").gpu.sms, 1);
}

TEST(ShippedConfigs, NullRemovesAnInheritedValue) {
    // tpu_v5e extends tpu_v4 (tdp 192 W) but Google publishes no v5e power figure.
    EXPECT_TRUE(load_config(kConfigDir + "tpu_v4.json").tdp_w.has_value());
    const ChipConfig v5e = load_config(kConfigDir + "tpu_v5e.json");
    EXPECT_FALSE(v5e.tdp_w.has_value());
    EXPECT_FALSE(v5e.effective.contains("tdp_w"));
    EXPECT_FALSE(load_config(kConfigDir + "simt_1sm.json").cost_per_hour_usd.has_value());
}

TEST(ShippedConfigs, SustainedClockTimesCyclesAndPeaksStayAtTheQuotedClock) {
    // h100 runs its cycles at the clock it holds at its power limit (1575 MHz) while its 989.4
    // TFLOP/s peak is quoted at 1830 MHz; b200 (extends h100) removes the inherited figure.
    const ChipConfig h100 = load_config(kConfigDir + "h100.json");
    EXPECT_DOUBLE_EQ(h100.clock_hz(), 1575e6);
    EXPECT_DOUBLE_EQ(h100.peak_clock_hz(), 1830e6);
    EXPECT_WITHIN_1_PERCENT(tensor_peak_ops(h100, DType::bf16), 989.4e12);
    const ChipConfig b200 = load_config(kConfigDir + "b200.json");
    EXPECT_DOUBLE_EQ(b200.clock_hz(), b200.peak_clock_hz());
    EXPECT_FALSE(b200.effective.contains("sustained_clock_mhz"));
    // Without the key the run clock is clock_mhz.
    const ChipConfig a100 = load_config(kConfigDir + "a100.json");
    EXPECT_DOUBLE_EQ(a100.clock_hz(), 1410e6);
    EXPECT_DOUBLE_EQ(a100.peak_clock_hz(), 1410e6);
}

TEST(ShippedConfigs, LoadingIsDeterministic) {
    for (const fs::path& file : shipped_configs())
        EXPECT_EQ(load_config(file.string()).effective.dump(),
                  load_config(file.string()).effective.dump());
}

// ---------- defaults ----------

TEST_F(ConfigFiles, DefaultsAreFilledForTheChipKindOnly) {
    const std::string path = write("tiny_chip.json", kMinimalSystolic);
    const ChipConfig c = load_config(path);
    const ChipConfig defaults;
    EXPECT_EQ(c.name, "tiny_chip");
    EXPECT_EQ(c.mxu.rows, defaults.mxu.rows);
    EXPECT_EQ(c.mxu.dataflow, defaults.mxu.dataflow);
    EXPECT_EQ(c.hbm.channels, defaults.hbm.channels);
    EXPECT_EQ(c.effective["mxu"]["rows"], 128);
    EXPECT_EQ(c.effective["mxu"]["macs_per_pe_per_cycle"]["fp32"], 0);
    EXPECT_EQ(c.effective["hbm"]["preset"], "HBM2");
    EXPECT_EQ(c.effective["memory"], "hierarchy");
    EXPECT_FALSE(c.effective.contains("sm"));
    EXPECT_FALSE(c.effective.contains("gpu"));
    EXPECT_FALSE(c.effective.contains("tdp_w"));  // optional with no default
}

TEST_F(ConfigFiles, MissingRequiredKey) {
    const std::string path = write("a.json", R"({ "kind": "systolic" })");
    EXPECT_EQ(error_of(path), path + ": missing required key 'clock_mhz' (number in [1, 10000])");
}

// ---------- unknown keys ----------

TEST_F(ConfigFiles, MisspeltKeySuggestsTheSibling) {
    const std::string path = write("a.json", with_mxu(R"("rwos": 128)"));
    EXPECT_EQ(error_of(path), path + ": unknown key 'mxu.rwos' (did you mean 'mxu.rows'?)");
}

TEST_F(ConfigFiles, KeyInTheWrongSectionSuggestsItsHome) {
    const std::string path = write("a.json", with_mxu(R"("sublanes": 8)"));
    EXPECT_EQ(error_of(path),
              path + ": unknown key 'mxu.sublanes' (did you mean 'tpu.vector.sublanes'?)");
}

TEST_F(ConfigFiles, UnknownKeyWithNothingCloseListsTheValidKeys) {
    const std::string path =
        write("a.json",
              R"({ "kind": "systolic", "clock_mhz": 1000, "interconnect": { "zzzzzzzz": 1 } })");
    EXPECT_EQ(error_of(path), path +
                                  ": unknown key 'interconnect.zzzzzzzz' (valid keys here: "
                                  "latency_cycles, bytes_per_cycle_per_port)");
}

TEST_F(ConfigFiles, UnknownTimingParameterSuggestsTheNearest) {
    const std::string path =
        write("a.json",
              R"({ "kind": "systolic", "clock_mhz": 1000, "hbm": { "timing": { "tRDC": 14 } } })");
    EXPECT_EQ(error_of(path),
              path + ": unknown key 'hbm.timing.tRDC' (did you mean 'hbm.timing.tRCD'?)");
}

TEST_F(ConfigFiles, DuplicateKeyIsAnError) {
    const std::string path = write("a.json", with_mxu(R"("rows": 8, "rows": 16)"));
    EXPECT_EQ(error_of(path), path + ": duplicate key 'mxu.rows'");
}

// ---------- types, ranges, choices ----------

TEST_F(ConfigFiles, WrongTypeNamesKeyValueAndAllowed) {
    const std::string quoted = write("a.json", with_mxu(R"("rows": "128")"));
    EXPECT_EQ(error_of(quoted),
              quoted + ": mxu.rows = \"128\" has the wrong type (allowed: integer in [1, 512])");
    const std::string fraction = write("b.json", with_mxu(R"("rows": 1.5)"));
    EXPECT_EQ(error_of(fraction),
              fraction + ": mxu.rows = 1.5 has the wrong type (allowed: integer in [1, 512])");
    const std::string flag = write("c.json", with_mxu(R"("overlap_folds": 1)"));
    EXPECT_EQ(error_of(flag),
              flag + ": mxu.overlap_folds = 1 has the wrong type (allowed: true or false)");
    const std::string section =
        write("d.json", R"({ "kind": "systolic", "clock_mhz": 1000, "mxu": 5 })");
    EXPECT_EQ(error_of(section), section + ": mxu = 5 has the wrong type (allowed: object)");
}

TEST_F(ConfigFiles, OutOfRangeNamesKeyValueAndRange) {
    const std::string zero = write("a.json", with_mxu(R"("rows": 0)"));
    EXPECT_EQ(error_of(zero),
              zero + ": mxu.rows = 0 is out of range (allowed: integer in [1, 512])");
    const std::string big = write("b.json", with_mxu(R"("cols": 513)"));
    EXPECT_EQ(error_of(big),
              big + ": mxu.cols = 513 is out of range (allowed: integer in [1, 512])");
    const std::string clock = write("c.json", R"({ "kind": "systolic", "clock_mhz": 0 })");
    EXPECT_EQ(error_of(clock),
              clock + ": clock_mhz = 0 is out of range (allowed: number in [1, 10000])");
    const std::string bandwidth = write(
        "d.json",
        R"({ "kind": "simt", "clock_mhz": 1000, "l2": { "bytes_per_cycle_per_slice": -64 } })");
    EXPECT_EQ(error_of(bandwidth), bandwidth +
                                       ": l2.bytes_per_cycle_per_slice = -64 is out of range "
                                       "(allowed: number in [0.001, 1000000])");
}

TEST_F(ConfigFiles, BadChoiceListsTheChoices) {
    const std::string path = write("a.json", with_mxu(R"("dataflow": "wss")"));
    EXPECT_EQ(error_of(path), path +
                                  ": mxu.dataflow = \"wss\" is not a valid choice (allowed: one of "
                                  "ws, os, is) (did you mean 'ws'?)");
    const std::string kind = write("b.json", R"({ "kind": "vector", "clock_mhz": 1000 })");
    EXPECT_EQ(error_of(kind),
              kind + ": kind = \"vector\" is not a valid choice (allowed: one of systolic, simt)");
}

TEST_F(ConfigFiles, SectionOfTheOtherKindIsAnError) {
    const std::string path =
        write("a.json", R"({ "kind": "systolic", "clock_mhz": 1000, "sm": { "max_warps": 64 } })");
    EXPECT_EQ(error_of(path),
              path +
                  ": section 'sm' does not apply to a systolic chip (kind is \"systolic\"; "
                  "sections 'sm' belong to simt chips)");
}

TEST_F(ConfigFiles, CompilerKeysBelongToOneKind) {
    // The compiler section serves both kinds; each of its keys belongs to one (compiler.gpu_fusion:
    // docs/gpu.md "Fused graphs").
    const std::string simt = write("simt.json", R"({ "kind": "simt", "clock_mhz": 1000, "compiler": { "gpu_fusion": "epilogue" } })");
    const ChipConfig c = load_config(simt);
    EXPECT_EQ(c.gpu.fusion, gpu::GpuFusion::epilogue);
    EXPECT_EQ(load_config(simt, {"compiler.gpu_fusion=tensorrt_like"}).gpu.fusion, gpu::GpuFusion::tensorrt_like);
    EXPECT_EQ(c.effective["compiler"]["gpu_fusion"], "epilogue");
    EXPECT_FALSE(c.effective["compiler"].contains("fuse_elementwise"));
    EXPECT_EQ(error_of(simt, {"compiler.gpu_fusion=trt"}),
              "--set: compiler.gpu_fusion = \"trt\" is not a valid choice (allowed: one of "
              "auto, none, epilogue, tensorrt_like)");
    const std::string wrong = write("wrong.json", R"({ "kind": "simt", "clock_mhz": 1000, "compiler": { "fuse_elementwise": true } })");
    EXPECT_EQ(error_of(wrong), wrong + ": key 'compiler.fuse_elementwise' does not apply to a simt chip (it belongs to "
                                       "systolic chips)");
    const std::string tpu = write("tpu.json", kMinimalSystolic);
    EXPECT_EQ(load_config(tpu).effective["compiler"].size(), 1u);  // fuse_elementwise alone
    EXPECT_NE(error_of(tpu, {"compiler.gpu_fusion=none"}).find("key 'compiler.gpu_fusion' does not apply to a systolic chip"),
              std::string::npos);
    const ChipConfig defaults = load_config(write("plain.json", R"({ "kind": "simt", "clock_mhz": 1000 })"));
    EXPECT_EQ(defaults.gpu.fusion, gpu::GpuFusion::automatic);
}

TEST_F(ConfigFiles, ImpossibleSizesAreErrors) {
    // 1000 bytes cannot be divided into 1 slice x 16 ways x 128-byte lines (= 2048 bytes per set).
    const std::string l2 =
        write("a.json", R"({ "kind": "simt", "clock_mhz": 1000, "l2": { "size_bytes": 1000 } })");
    EXPECT_EQ(error_of(l2), l2 + ": l2.size_bytes = 1000 is not a multiple of slices × ways × "
                                 "line_bytes = 1 × 16 × 128 = 2048");
    const std::string threads = write(
        "b.json",
        R"({ "kind": "simt", "clock_mhz": 1000, "sm": { "max_warps": 32, "max_threads": 2048 } })");
    EXPECT_EQ(error_of(threads),
              threads + ": sm.max_threads = 2048 exceeds 32 × sm.max_warps = 1024");
    const std::string smem = write("c.json", R"({ "kind": "simt", "clock_mhz": 1000,
        "sm": { "shared_memory_bytes": 1024, "shared_memory_per_block_bytes": 2048 } })");
    EXPECT_EQ(
        error_of(smem),
        smem + ": sm.shared_memory_per_block_bytes = 2048 exceeds sm.shared_memory_bytes = 1024");
    const std::string rates = write(
        "d.json",
        with_mxu(R"("macs_per_pe_per_cycle": { "int8": 0, "fp16": 0, "bf16": 0, "fp32": 0 })"));
    EXPECT_EQ(error_of(rates),
              rates + ": mxu.macs_per_pe_per_cycle: every rate is 0, so the MXU could run nothing");
}

// ---------- files and syntax ----------

TEST_F(ConfigFiles, MissingFile) {
    const std::string path = (dir_ / "nowhere.json").string();
    EXPECT_EQ(error_of(path), path + ": cannot open");
}

// Values that make every time in a run absurd (and overflow its picosecond clock) are refused by
// the loader, naming the key; a number beyond a double names its line and column.
TEST_F(ConfigFiles, RatesThatMakeTimeAbsurdAreRefused) {
    const std::string a100 = std::string(ACCELSIM_SOURCE_DIR) + "/configs/a100.json";
    EXPECT_EQ(error_of(a100, {"interconnect.bytes_per_cycle_per_port=1e-300"}),
              "--set: interconnect.bytes_per_cycle_per_port = 1e-300 is out of range (allowed: number in [0.001, "
              "1000000])");
    EXPECT_EQ(error_of(a100, {"hbm.data_rate_gbps=1e-9"}),
              "--set: hbm.data_rate_gbps = 1e-09 is out of range (allowed: number in [0.001, 100])");
    EXPECT_EQ(error_of(a100, {"clock_mhz=0.5"}), "--set: clock_mhz = 0.5 is out of range (allowed: number in [1, 10000])");
    // Rates whose 0 means "unlimited" or "off" take 0 or a sensible range, never "almost 0".
    const std::string tpu_v4 = std::string(ACCELSIM_SOURCE_DIR) + "/configs/tpu_v4.json";
    EXPECT_EQ(error_of(tpu_v4, {"tpu.dma.bytes_per_cycle=1e-300"}),
              "--set: tpu.dma.bytes_per_cycle = 1e-300 is out of range (allowed: 0, or number in [0.001, 1000000])");
    EXPECT_EQ(error_of(tpu_v4, {"tpu.cmem_bytes_per_cycle=1e-9"}),
              "--set: tpu.cmem_bytes_per_cycle = 1e-09 is out of range (allowed: 0, or number in [0.001, 1000000])");
    EXPECT_EQ(error_of(tpu_v4, {"tpu.dma.bytes_per_cycle=0", "tpu.cmem_bytes_per_cycle=0"}), "");
    const std::string huge = write("huge.json", "{\n  \"kind\": \"systolic\",\n  \"clock_mhz\": 1e400\n}\n");
    EXPECT_EQ(error_of(huge), huge + ":3:16: number overflow parsing '1e400' (beyond the range of a double)");
}

TEST_F(ConfigFiles, SyntaxErrorGivesLineAndColumn) {
    // The trailing comma is on line 4; the '}' after it is the 23rd character of that line:
    // 2 spaces + "\"mxu\":" (6) + " { " (3) + "\"rows\":" (7) + " 8," (3) + " " = 22, then '}'.
    const std::string path = write("a.json",
                                   "{\n"
                                   "  \"kind\": \"systolic\",\n"
                                   "  \"clock_mhz\": 1000,\n"
                                   "  \"mxu\": { \"rows\": 8, }\n"
                                   "}\n");
    const std::string message = error_of(path);
    EXPECT_EQ(message.rfind(path + ":4:23: ", 0), 0u) << message;
    EXPECT_EQ(message.find("json.exception"), std::string::npos) << message;
}

TEST_F(ConfigFiles, TopLevelMustBeAnObject) {
    const std::string path = write("a.json", "[1, 2]");
    EXPECT_EQ(error_of(path), path + ": the top level must be a JSON object");
}

// ---------- extends ----------

const char* const kBase = R"({
  "kind": "systolic", "clock_mhz": 1000, "tdp_w": 100,
  "mxu": { "rows": 16, "cols": 32, "macs_per_pe_per_cycle": { "int8": 2 } },
  "source": { "mxu.rows": "base citation", "mxu.cols": "base citation" }
})";

TEST_F(ConfigFiles, ExtendsDeepMergesRelativeToTheExtendingFile) {
    write("base.json", kBase);
    const std::string child = write("variants/child.json", R"({
      "extends": "../base.json",
      "mxu": { "rows": 64, "macs_per_pe_per_cycle": { "bf16": 0.5 } },
      "tdp_w": null,
      "source": { "mxu.rows": "child citation" }
    })");
    const ChipConfig c = load_config(child);
    EXPECT_EQ(c.name, "child");
    EXPECT_EQ(c.mxu.rows, 64);                         // replaced by the child
    EXPECT_EQ(c.mxu.cols, 32);                         // kept from the base (objects merge)
    EXPECT_EQ(c.mxu.macs_per_pe_per_cycle.int8, 2);    // nested merge keeps the base's int8
    EXPECT_EQ(c.mxu.macs_per_pe_per_cycle.bf16, 0.5);  // and takes the child's bf16
    EXPECT_EQ(c.clock_mhz, 1000);
    EXPECT_FALSE(c.tdp_w.has_value());  // null removed the inherited value
    EXPECT_EQ(c.effective["source"]["mxu.rows"], "child citation");
    EXPECT_EQ(c.effective["source"]["mxu.cols"], "base citation");
}

TEST_F(ConfigFiles, ErrorInTheBaseNamesTheBase) {
    const std::string base = write("base.json", with_mxu(R"("rwos": 1)"));
    const std::string child =
        write("child.json", R"({ "extends": "base.json", "clock_mhz": 900 })");
    EXPECT_EQ(error_of(child), base + ": unknown key 'mxu.rwos' (did you mean 'mxu.rows'?)");
}

TEST_F(ConfigFiles, IrrelevantSectionNamesTheFileThatWroteItAndTheOneThatSetTheKind) {
    const std::string base = write("base.json", kBase);
    const std::string child = write("child.json", R"({ "extends": "base.json", "kind": "simt" })");
    EXPECT_EQ(error_of(child).rfind(base + " and " + child + ": section 'mxu' does not apply to a simt chip", 0), 0u)
        << error_of(child);
}

TEST_F(ConfigFiles, ACrossKeyErrorBlamesTheSetThatBrokeItAsWellAsTheFile) {
    // sm.max_threads 2048 from the file, sm.max_warps 63 from --set: 32 x 63 = 2016 < 2048.
    const std::string a100 = std::string(ACCELSIM_SOURCE_DIR) + "/configs/a100.json";
    EXPECT_EQ(error_of(a100, {"sm.max_warps=63"}),
              a100 + " and --set sm.max_warps: sm.max_threads = 2048 exceeds 32 × sm.max_warps = 2016");
}

TEST_F(ConfigFiles, ExtendsCycleIsDetected) {
    const std::string a =
        write("a.json", R"({ "extends": "b.json", "kind": "systolic", "clock_mhz": 1000 })");
    const std::string b = write("b.json", R"({ "extends": "a.json" })");
    EXPECT_EQ(error_of(a), b + ": \"extends\" cycle: " + a + " -> " + b + " -> " + a);
    const std::string self =
        write("self.json", R"({ "extends": "self.json", "kind": "systolic", "clock_mhz": 1 })");
    EXPECT_EQ(error_of(self), self + ": \"extends\" cycle: " + self + " -> " + self);
}

TEST_F(ConfigFiles, ExtendsOfAMissingFile) {
    const std::string a =
        write("a.json", R"({ "extends": "gone.json", "kind": "systolic", "clock_mhz": 1000 })");
    EXPECT_EQ(error_of(a),
              a + ": extends 'gone.json': " + (dir_ / "gone.json").string() + ": cannot open");
}

// ---------- --set ----------

TEST_F(ConfigFiles, SetOverridesAreTypedAndEndUpInTheEffectiveConfig) {
    const std::string path = write("a.json", kBase);
    const ChipConfig c =
        load_config(path, {"mxu.rows=128", "mxu.overlap_folds=false", "hbm.data_rate_gbps=3.2",
                           "mxu.dataflow=os", "hbm.timing.tRCD=20", "name=renamed",
                           "mxu.macs_per_pe_per_cycle.fp32=0.25"});
    EXPECT_EQ(c.mxu.rows, 128);
    EXPECT_EQ(c.mxu.cols, 32);
    EXPECT_FALSE(c.mxu.overlap_folds);
    EXPECT_DOUBLE_EQ(c.hbm.data_rate_gbps, 3.2);
    EXPECT_EQ(c.mxu.dataflow, MxuDataflow::os);
    EXPECT_EQ(c.hbm.timing.at("tRCD"), 20);
    EXPECT_EQ(c.name, "renamed");
    EXPECT_EQ(c.mxu.macs_per_pe_per_cycle.fp32, 0.25);
    EXPECT_EQ(c.effective["mxu"]["rows"], 128);
    EXPECT_EQ(c.effective["mxu"]["overlap_folds"], false);
    EXPECT_EQ(c.effective["hbm"]["timing"]["tRCD"], 20.0);
}

TEST_F(ConfigFiles, SetErrors) {
    const std::string path = write("a.json", kBase);
    EXPECT_EQ(error_of(path, {"mxu.rwos=3"}),
              "--set: unknown key 'mxu.rwos' (did you mean 'mxu.rows'?)");
    EXPECT_EQ(error_of(path, {"mxu.rows=abc"}),
              "--set: mxu.rows = abc is not valid (allowed: integer in [1, 512])");
    EXPECT_EQ(error_of(path, {"mxu.rows=12.5"}),
              "--set: mxu.rows = 12.5 is not valid (allowed: integer in [1, 512])");
    EXPECT_EQ(error_of(path, {"mxu.rows=0"}),
              "--set: mxu.rows = 0 is out of range (allowed: integer in [1, 512])");
    EXPECT_EQ(error_of(path, {"mxu.overlap_folds=yes"}),
              "--set: mxu.overlap_folds = yes is not valid (allowed: true or false)");
    EXPECT_EQ(error_of(path, {"mxu.mode=quick"}),
              "--set: mxu.mode = \"quick\" is not a valid choice (allowed: one of fast, stepped)");
    EXPECT_EQ(error_of(path, {"mxu.rows"}), "--set 'mxu.rows': expected key.path=value");
    EXPECT_EQ(error_of(path, {"mxu=1"}),
              "--set: 'mxu' is a section, not a value; set one of its keys, e.g. 'mxu.rows'");
}

TEST_F(ConfigFiles, SetIsValidatedTogetherWithTheFile) {
    // Applied after extends and before the cross-key checks, so an override can break a size rule.
    const std::string path = write("a.json", R"({ "kind": "simt", "clock_mhz": 1000 })");
    EXPECT_EQ(error_of(path, {"l2.size_bytes=1000"}),
              "--set l2.size_bytes: l2.size_bytes = 1000 is not a multiple of slices × ways × line_bytes = 1 × "
              "16 × 128 = 2048");
    EXPECT_EQ(load_config(path, {"l2.size_bytes=4096", "l2.ways=2", "l2.slices=1"}).l2.size_bytes,
              4096);
    // Switching the kind makes the file's systolic sections irrelevant.
    const std::string systolic = write("b.json", kBase);
    EXPECT_EQ(
        error_of(systolic, {"kind=simt"}).rfind(systolic + " and --set kind: section 'mxu' does not apply", 0),
        0u);
}

TEST_F(ConfigFiles, HostIoWithoutALinkBlamesBothKeys) {
    const std::string path = write("a.json", R"({ "kind": "simt", "clock_mhz": 1000 })");
    EXPECT_EQ(error_of(path, {"host.io=true"}),
              "--set host.io: host.io copies the input and output over the host link, but host.link_gb_per_s is 0 "
              "(the config gives no link): set it, e.g. --set host.link_gb_per_s=31.5 for PCIe Gen4 x16");
    EXPECT_TRUE(load_config(path, {"host.io=true", "host.link_gb_per_s=31.5"}).host.io);
}

// The shipped links are PCIe x16 at PCI-SIG's signalling rates with 128b/130b coding, or USB 3.0's
// 5 Gb/s with 8b/10b: GB/s per direction, worked out here from the rates, not read from the configs.
TEST(ShippedHostLinks, EqualTheirInterfacesRates) {
    const double gen3 = 8.0 * 16 * 128 / 130 / 8, gen4 = 16.0 * 16 * 128 / 130 / 8, gen5 = 32.0 * 16 * 128 / 130 / 8;
    const std::map<std::string, double> expected = {
        {"a100", gen4}, {"a100_40gb", gen4}, {"a10g", gen4},  {"l4", gen4},     {"rtx4090", gen4},
        {"h100", gen5}, {"mi300x", gen5},    {"v100", gen3},  {"t4", gen3},     {"k80", gen3},
        {"tpu_v1", gen3}, {"coral_edgetpu", 5.0 * 8 / 10 / 8}, {"b200", 0.0}, {"jetson_orin", 0.0}, {"tpu_v4", 0.0}};
    for (const auto& [name, gb_per_s] : expected) {
        SCOPED_TRACE(name);
        EXPECT_NEAR(load_config(kConfigDir + name + ".json").host.link_gb_per_s, gb_per_s, 0.001 * gb_per_s);
    }
}

// ---------- every key reaches its own field ----------

// Every typed field, read back by hand under the key path that should fill it (written
// independently of the schema table, so a row wired to the wrong field is caught).
std::map<std::string, std::string> fields_of(const ChipConfig& c) {
    auto num = [](double v) {
        std::ostringstream out;
        out.precision(17);
        out << v;
        return out.str();
    };
    auto opt = [&](const std::optional<double>& v) { return v ? num(*v) : std::string("none"); };
    return {
        {"name", c.name},
        {"description", c.description},
        {"clock_mhz", num(c.clock_mhz)},
        {"sustained_clock_mhz", num(c.sustained_clock_mhz)},
        {"default_dtype", std::string(to_string(c.default_dtype))},
        {"memory", c.memory},
        {"seed", std::to_string(c.seed)},
        {"activation_outlier_fraction", num(c.activation_outlier_fraction)},
        {"activation_outlier_magnitude", num(c.activation_outlier_magnitude)},
        {"cost_per_hour_usd", opt(c.cost_per_hour_usd)},
        {"tdp_w", opt(c.tdp_w)},
        {"memory_gb", opt(c.memory_gb)},
        {"tpu.cores", num(c.tpu.cores)},
        {"tpu.mxus_per_core", num(c.tpu.mxus_per_core)},
        {"tpu.vmem_bytes", num(c.tpu.vmem_bytes)},
        {"tpu.cmem_bytes", num(c.tpu.cmem_bytes)},
        {"tpu.cmem_bytes_per_cycle", num(c.tpu.cmem_bytes_per_cycle)},
        {"tpu.vector.lanes", num(c.tpu.vector.lanes)},
        {"tpu.vector.sublanes", num(c.tpu.vector.sublanes)},
        {"tpu.dma.bytes_per_cycle", num(c.tpu.dma.bytes_per_cycle)},
        {"tpu.dma.latency_cycles", num(c.tpu.dma.latency_cycles)},
        {"tpu.int8_only", c.tpu.int8_only ? "true" : "false"},
        {"tpu.parameter_cache_bytes", num(static_cast<double>(c.tpu.parameter_cache_bytes))},
        {"tpu.host_link_bytes_per_second", num(c.tpu.host_link_bytes_per_second)},
        {"compiler.fuse_elementwise", num(c.tpu.fuse_elementwise)},
        {"compiler.gpu_fusion", std::string(gpu::to_string(c.gpu.fusion))},
        {"mxu.rows", num(c.mxu.rows)},
        {"mxu.cols", num(c.mxu.cols)},
        {"mxu.dataflow", std::string(to_string(c.mxu.dataflow))},
        {"mxu.overlap_folds", num(c.mxu.overlap_folds)},
        {"mxu.mode", std::string(to_string(c.mxu.mode))},
        {"mxu.macs_per_pe_per_cycle.int8", num(c.mxu.macs_per_pe_per_cycle.int8)},
        {"mxu.macs_per_pe_per_cycle.fp16", num(c.mxu.macs_per_pe_per_cycle.fp16)},
        {"mxu.macs_per_pe_per_cycle.bf16", num(c.mxu.macs_per_pe_per_cycle.bf16)},
        {"mxu.macs_per_pe_per_cycle.fp32", num(c.mxu.macs_per_pe_per_cycle.fp32)},
        {"mxu.macs_per_pe_per_cycle.fp8_e4m3", num(c.mxu.macs_per_pe_per_cycle.fp8_e4m3)},
        {"mxu.macs_per_pe_per_cycle.fp8_e5m2", num(c.mxu.macs_per_pe_per_cycle.fp8_e5m2)},
        {"host.launch", std::string(to_string(c.host.launch))},
        {"host.op_us", num(c.host.op_us)},
        {"host.library_call_us", num(c.host.library_call_us)},
        {"host.program_us", num(c.host.program_us)},
        {"host.submit_us", num(c.host.submit_us)},
        {"host.sync_us", num(c.host.sync_us)},
        {"host.io", c.host.io ? "true" : "false"},
        {"host.link_gb_per_s", num(c.host.link_gb_per_s)},
        {"gpu.sms", num(c.gpu.sms)},
        {"gpu.launch_overhead_cycles", num(c.gpu.launch_overhead_cycles)},
        {"gpu.cold_l2_per_op", num(c.gpu.cold_l2_per_op)},
        {"gpu.sampling", std::string(gpu::to_string(c.gpu.sampling))},
        {"gpu.max_kernel_cycles", num(c.gpu.max_kernel_cycles)},
        {"gpu.max_kernel_instructions", num(c.gpu.max_kernel_instructions)},
        {"sm.compute_capability", c.sm.compute_capability},
        {"sm.schedulers", num(c.sm.schedulers)},
        {"sm.warp_scheduler", c.sm.warp_scheduler},
        {"sm.max_warps", num(c.sm.max_warps)},
        {"sm.max_threads", num(c.sm.max_threads)},
        {"sm.max_blocks", num(c.sm.max_blocks)},
        {"sm.fp8_encoding", std::string(name_of(kFp8EncodingNames, c.sm.fp8_encoding))},
        {"sm.wave_size", num(c.sm.wave_size)},
        {"sm.max_blocks_single_warp", num(c.sm.max_blocks_single_warp)},
        {"sm.registers", num(c.sm.registers)},
        {"sm.register_alloc_unit", num(c.sm.register_alloc_unit)},
        {"sm.max_registers_per_thread", num(c.sm.max_registers_per_thread)},
        {"sm.shared_memory_bytes", num(c.sm.shared_memory_bytes)},
        {"sm.shared_memory_per_block_bytes", num(c.sm.shared_memory_per_block_bytes)},
        {"sm.shared_memory_alloc_unit", num(c.sm.shared_memory_alloc_unit)},
        {"sm.shared_memory_reserved_per_block", num(c.sm.shared_memory_reserved_per_block)},
        {"sm.smem_banks", num(c.sm.smem_banks)},
        {"sm.smem_bank_bytes", num(c.sm.smem_bank_bytes)},
        {"sm.l1_bytes", num(c.sm.l1_bytes)},
        {"sm.fp32_lanes", num(c.sm.fp32_lanes)},
        {"sm.int_lanes", num(c.sm.int_lanes)},
        {"sm.sfu_lanes", num(c.sm.sfu_lanes)},
        {"sm.tensor_macs_per_cycle.int8", num(c.sm.tensor_macs_per_cycle.int8)},
        {"sm.tensor_macs_per_cycle.fp16", num(c.sm.tensor_macs_per_cycle.fp16)},
        {"sm.tensor_macs_per_cycle.bf16", num(c.sm.tensor_macs_per_cycle.bf16)},
        {"sm.tensor_macs_per_cycle.fp32", num(c.sm.tensor_macs_per_cycle.fp32)},
        {"sm.tensor_macs_per_cycle.fp8_e4m3", num(c.sm.tensor_macs_per_cycle.fp8_e4m3)},
        {"sm.tensor_macs_per_cycle.fp8_e5m2", num(c.sm.tensor_macs_per_cycle.fp8_e5m2)},
        {"hbm.preset", c.hbm.preset},
        {"hbm.channels", num(c.hbm.channels)},
        {"hbm.pseudo_channels", num(c.hbm.pseudo_channels)},
        {"hbm.bus_width_bits", num(c.hbm.bus_width_bits)},
        {"hbm.data_rate_gbps", num(c.hbm.data_rate_gbps)},
        {"hbm.bank_groups", num(c.hbm.bank_groups)},
        {"hbm.banks_per_group", num(c.hbm.banks_per_group)},
        {"hbm.row_bytes", num(c.hbm.row_bytes)},
        {"hbm.interleave_bytes", num(c.hbm.interleave_bytes)},
        {"hbm.address_map", memory::to_string(c.hbm.address_map)},
        {"hbm.scheduler", memory::to_string(c.hbm.scheduler)},
        {"hbm.page_policy", memory::to_string(c.hbm.page_policy)},
        {"hbm.queue_depth", num(c.hbm.queue_depth)},
        {"hbm.write_queue_depth", num(c.hbm.write_queue_depth)},
        {"hbm.write_high_watermark", num(c.hbm.write_high_watermark)},
        {"hbm.write_low_watermark", num(c.hbm.write_low_watermark)},
        {"hbm.controller_latency_ns", num(c.hbm.controller_latency_ns)},
        {"l2.size_bytes", num(c.l2.size_bytes)},
        {"l2.slices", num(c.l2.slices)},
        {"l2.ways", num(c.l2.ways)},
        {"l2.line_bytes", num(c.l2.line_bytes)},
        {"l2.sector_bytes", num(c.l2.sector_bytes)},
        {"l2.mshrs_per_slice", num(c.l2.mshrs_per_slice)},
        {"l2.bytes_per_cycle_per_slice", num(c.l2.bytes_per_cycle_per_slice)},
        {"l2.hit_latency_cycles", num(c.l2.hit_latency_cycles)},
        {"interconnect.latency_cycles", num(c.interconnect.latency_cycles)},
        {"interconnect.bytes_per_cycle_per_port", num(c.interconnect.bytes_per_cycle_per_port)},
    };
}

nlohmann::json::json_pointer pointer_to(const std::string& dotted_path) {
    std::string pointer = "/" + dotted_path;
    std::replace(pointer.begin(), pointer.end(), '.', '/');
    return nlohmann::json::json_pointer(pointer);
}

// Values a key could take other than `current`, in order of preference.
std::vector<std::string> other_values(const KeySpec& key, const nlohmann::json& current) {
    switch (key.type) {
        case KeyType::boolean:
            return {current.get<bool>() ? "false" : "true"};
        case KeyType::string:
            return {"changed"};
        case KeyType::choice: {
            std::vector<std::string> out;
            for (const std::string& c : key.choices)
                if (c != current.get<std::string>()) out.push_back(c);
            return out;
        }
        default: {
            const double v = current.get<double>();
            std::vector<std::string> out;
            for (double candidate : {v * 2, std::floor(v / 2), v + 1, 1.0, 4096.0, 1048576.0})
                if (candidate != v && candidate >= key.min && candidate <= key.max)
                    out.push_back(std::to_string(static_cast<std::int64_t>(candidate)));
            return out;
        }
    }
}

TEST_F(ConfigFiles, EveryKeyFillsExactlyItsOwnField) {
    const std::string systolic = write("systolic.json", kMinimalSystolic);
    const std::string simt =
        write("simt.json",
              R"({ "kind": "simt", "clock_mhz": 1000, "sm": { "shared_memory_bytes": 65536 },
                   "host": { "link_gb_per_s": 8 } })");  // a link, so host.io can be switched on
    const ChipConfig base_systolic = load_config(systolic), base_simt = load_config(simt);
    std::size_t keys_checked = 0;
    for (const KeySpec& key : config_schema()) {
        if (!key.apply || key.is_object() || key.path == "kind") continue;
        SCOPED_TRACE(key.path);
        const std::string top = key.path.substr(0, key.path.find('.'));
        const bool is_simt =
            top == "gpu" || top == "sm" || top == "host" || key.only_for == std::optional<std::string>("simt");
        const ChipConfig& base = is_simt ? base_simt : base_systolic;
        const auto before = fields_of(base);
        ASSERT_TRUE(before.count(key.path)) << "the test's field list lacks " << key.path;
        const nlohmann::json current =
            base.effective.value(pointer_to(key.path), nlohmann::json(0));
        bool changed = false;
        for (const std::string& value : other_values(key, current)) {
            ChipConfig c;
            try {
                c = load_config(is_simt ? simt : systolic, {key.path + "=" + value});
            } catch (const InputError&) {
                continue;  // this value breaks a rule between keys; try the next
            }
            const auto after = fields_of(c);
            for (const auto& [path, text] : after) {
                if (path != key.path) {
                    EXPECT_EQ(text, before.at(path)) << "--set " << key.path << " changed " << path;
                }
            }
            EXPECT_NE(after.at(key.path), before.at(key.path));
            changed = true;
            break;
        }
        EXPECT_TRUE(changed) << "no value of " << key.path << " could be set";
        ++keys_checked;
    }
    EXPECT_EQ(keys_checked, fields_of(ChipConfig{}).size());
}

// ---------- robustness: bad input is always an InputError, never another exception ----------

TEST_F(ConfigFiles, EveryTruncationOfAShippedConfigIsAnInputError) {
    std::ifstream in(kConfigDir + "tpu_v1.json");
    std::stringstream text;
    text << in.rdbuf();
    const std::string full = text.str();
    const std::string path = (dir_ / "cut.json").string();
    for (std::size_t length = 0; length + 2 < full.size(); length += 7) {
        std::ofstream(path, std::ios::trunc) << full.substr(0, length);
        const std::string message = error_of(path);  // any other exception type fails the test
        EXPECT_EQ(message.rfind(path + ":", 0), 0u) << "length " << length << ": " << message;
    }
}

TEST_F(ConfigFiles, EveryKeyRejectsAValueOfTheWrongType) {
    for (const KeySpec& key : config_schema()) {
        if (key.path == "source" || key.path == "kind")
            continue;  // free-form; kind decides relevance
        SCOPED_TRACE(key.path);
        // Build {"kind": ..., "clock_mhz": 1000, <key path>: [1]} with the key's own kind.
        nlohmann::json config = {{"kind", "systolic"}, {"clock_mhz", 1000}};
        const std::string top = key.path.substr(0, key.path.find('.'));
        if (top == "gpu" || top == "sm") config["kind"] = "simt";
        config[pointer_to(key.path)] = nlohmann::json::array({1});
        const std::string path = write("wrong.json", config.dump());
        EXPECT_EQ(error_of(path), path + ": " + key.path + " = [1] has the wrong type (allowed: " +
                                      describe_allowed(key) + ")");
        // The same key given by --set with a value no type accepts (strings are taken as written).
        if (!key.is_object() && key.type != KeyType::string) {
            const std::string message =
                error_of(write("ok.json", R"({ "kind": ")" + config["kind"].get<std::string>() +
                                              R"(", "clock_mhz": 1000 })"),
                         {key.path + "=[1]"});
            EXPECT_EQ(message.rfind("--set: " + key.path + " = ", 0), 0u) << message;
        }
    }
}

// ---------- documentation ----------

TEST(ConfigDocs, KeyTableIsTheSchemaTable) {
    std::ifstream in(std::string(ACCELSIM_SOURCE_DIR) + "/docs/config.md");
    std::stringstream text;
    text << in.rdbuf();
    const std::string doc = text.str();
    const std::string begin = "<!-- keys:begin -->\n", end = "<!-- keys:end -->";
    const auto from = doc.find(begin), to = doc.find(end);
    ASSERT_NE(from, std::string::npos);
    ASSERT_NE(to, std::string::npos);
    EXPECT_EQ(doc.substr(from + begin.size(), to - from - begin.size()), config_keys_markdown())
        << "regenerate the key table of docs/config.md from config_keys_markdown()";
}

TEST(ConfigDocs, EveryShippedConfigIsListed) {
    std::ifstream in(std::string(ACCELSIM_SOURCE_DIR) + "/docs/config.md");
    std::stringstream text;
    text << in.rdbuf();
    for (const fs::path& file : shipped_configs())
        EXPECT_NE(text.str().find("`" + file.filename().string() + "`"), std::string::npos) << file;
}

}  // namespace
}  // namespace accelsim::config_loader_test
