// The rows of docs/hardware.md (sim/report/hardware_docs.h) against figures worked out by hand from
// the configs and their cited datasheets.
#include "sim/report/hardware_docs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "sim/config/config_loader.h"
#include "sim/input_error.h"

namespace accelsim::hardware_docs_test {
namespace {

namespace fs = std::filesystem;

const std::string kConfigDir = std::string(ACCELSIM_SOURCE_DIR) + "/configs/";

TEST(HardwareRow, A100ByHand) {
    const HardwareRow row = hardware_row(load_config(kConfigDir + "a100.json"));
    // 108 SMs x 1024 fp16 tensor MACs per SM per cycle x 2 FLOP x 1.41e9 Hz = 311.87e12
    // (whitepaper: 312 dense); int8 2048 MACs: 623.74e12 (624); TF32 512 MACs: 155.94e12 (156).
    ASSERT_EQ(row.gemm_peaks.size(), 4u);
    EXPECT_EQ(row.gemm_peaks.at(DType::fp16).unit, "tensor");
    EXPECT_FALSE(row.gemm_peaks.at(DType::fp16).matrix_fallback);
    EXPECT_DOUBLE_EQ(row.gemm_peaks.at(DType::fp16).flops_per_second, 108.0 * 1024 * 2 * 1.41e9);
    EXPECT_DOUBLE_EQ(row.gemm_peaks.at(DType::bf16).flops_per_second, 108.0 * 1024 * 2 * 1.41e9);
    EXPECT_DOUBLE_EQ(row.gemm_peaks.at(DType::int8).flops_per_second, 108.0 * 2048 * 2 * 1.41e9);
    EXPECT_DOUBLE_EQ(row.gemm_peaks.at(DType::fp32).flops_per_second, 108.0 * 512 * 2 * 1.41e9);
    EXPECT_NEAR(row.gemm_peaks.at(DType::fp16).flops_per_second / 312e12, 1.0, 0.001);
    // 40 HBM2e channels x 128 bit / 8 x 3.1859375 Gb/s = 2039.0e9 B/s (datasheet: 2039 GB/s).
    ASSERT_TRUE(row.memory_bytes_per_second);
    EXPECT_NEAR(*row.memory_bytes_per_second, 40 * 16 * 3.1859375e9, 1.0);
    EXPECT_EQ(row.memory_gb, 80.0);
    EXPECT_EQ(row.compute_units, "108 SMs");
    // 192 KB L1 + shared memory per SM, 40 MB L2 (whitepaper), in the configs' binary units.
    EXPECT_EQ(row.on_chip, "L1+shared 192 KiB per SM, L2 40 MiB");
    EXPECT_EQ(row.tdp_w, 400.0);
    EXPECT_EQ(row.cost_per_hour_usd, 5.12);
    EXPECT_NE(row.sources.at("sm.tensor_macs_per_cycle.fp16").find("312 TFLOPS"),
              std::string::npos);
    EXPECT_NE(row.sources.at("memory_gb").find("80 GB"), std::string::npos);
}

TEST(HardwareRow, TpuV4ByHandWithItsVectorFallback) {
    const HardwareRow row = hardware_row(load_config(kConfigDir + "tpu_v4.json"));
    // 2 cores x 4 MXUs x 128 x 128 PEs x 2 x 1.05e9 = 275.25e12 bf16 and int8 (published: 275).
    EXPECT_DOUBLE_EQ(row.gemm_peaks.at(DType::bf16).flops_per_second,
                     2.0 * 4 * 128 * 128 * 2 * 1.05e9);
    EXPECT_DOUBLE_EQ(row.gemm_peaks.at(DType::int8).flops_per_second,
                     2.0 * 4 * 128 * 128 * 2 * 1.05e9);
    // No fp32 MXU rate: the vector unit, 2 cores x 8 x 128 lanes x 2 x 1.05e9 = 4.3008e12.
    EXPECT_EQ(row.gemm_peaks.at(DType::fp32).unit, "vector");
    EXPECT_TRUE(row.gemm_peaks.at(DType::fp32).matrix_fallback);
    EXPECT_DOUBLE_EQ(row.gemm_peaks.at(DType::fp32).flops_per_second, 2.0 * 8 * 128 * 2 * 1.05e9);
    // 32 channels x 128 bit / 8 x 2.34375 Gb/s = 1200e9 B/s.
    EXPECT_NEAR(*row.memory_bytes_per_second, 1200e9, 1.0);
    EXPECT_EQ(row.compute_units, "2 cores x 4 MXUs of 128x128");
    EXPECT_EQ(row.on_chip, "VMEM 16 MiB per core, CMEM 128 MiB");
}

TEST(HardwareRow, AnInt8OnlyChipWithIdealMemoryListsInt8AloneAndItsHostLink) {
    const HardwareRow row = hardware_row(load_config(kConfigDir + "coral_edgetpu.json"));
    ASSERT_EQ(row.gemm_peaks.size(), 1u);
    // 64 x 64 PEs x 2 x 488e6 = 3.998e12 (datasheet: 4 TOPS).
    EXPECT_DOUBLE_EQ(row.gemm_peaks.at(DType::int8).flops_per_second, 64.0 * 64 * 2 * 488e6);
    EXPECT_FALSE(row.memory_bytes_per_second);  // memory: ideal
    EXPECT_FALSE(row.memory_gb);
    EXPECT_EQ(row.host_link_bytes_per_second, 500e6);
    // It writes and cites its own array figures (it extends tpu_v1.json, whose citations are the
    // TPU paper's); a figure a config inherits is marked with its file (a100_40gb's int8 rate).
    EXPECT_EQ(row.sources.at("tpu.cores").find("inherited"), std::string::npos);
    EXPECT_NE(row.sources.at("mxu.macs_per_pe_per_cycle.int8").find("Coral USB Accelerator"), std::string::npos);
    const HardwareRow a100_40gb = hardware_row(load_config(kConfigDir + "a100_40gb.json"));
    EXPECT_NE(a100_40gb.sources.at("sm.tensor_macs_per_cycle.int8").find("(inherited from a100.json)"), std::string::npos);
}

TEST(HardwareMarkdown, TheA100RowAndNoTeachingConfig) {
    const std::string table = hardware_markdown(kConfigDir);
    EXPECT_NE(table.find(
                  "| [a100](#a100) | simt | 1410 | 108 SMs | int8 623.7, fp16 311.9, bf16 311.9, "
                  "fp32 155.9 | "
                  "none | 80 GB, 2039 GB/s | L1+shared 192 KiB per SM, L2 40 MiB | 400 | 5.12 |\n"),
              std::string::npos)
        << table;
    EXPECT_EQ(table.find("systolic_8x8"), std::string::npos);
    EXPECT_EQ(table.find("simt_1sm"), std::string::npos);
    EXPECT_TRUE(is_teaching_config(load_config(kConfigDir + "simt_1sm.json")));
    EXPECT_FALSE(is_teaching_config(load_config(kConfigDir + "a100.json")));
}

TEST(HardwareMarkdown, AFolderWithoutConfigsIsAnInputErrorNamingIt) {
    const fs::path empty = fs::path(::testing::TempDir()) / "accelsim_hardware_docs_empty";
    fs::remove_all(empty);
    fs::create_directories(empty);
    try {
        hardware_markdown(empty.string());
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(empty.string() + ": no chip configs"),
                  std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace accelsim::hardware_docs_test
