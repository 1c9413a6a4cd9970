// `accelsim occupancy` through the real executable. Every expected value is worked out by hand
// from NVIDIA's published per-architecture limits (CUDA C++ Programming Guide, compute capability
// table; CUDA Occupancy Calculator allocation rules), as carried by the shipped configs:
//   registers are allocated per warp in units of 256, and each of the 4 sub-partitions holds a
//   quarter of the 64K register file; shared memory is rounded up to 128 B (sm_80+, plus 1 KB
//   reserved per block) or 256 B (sm_7x).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/accelsim_process.h"

namespace fs = std::filesystem;

namespace {

using namespace accelsim_test;

// Runs `accelsim occupancy ARGS --json FILE` and returns the JSON.
nlohmann::json occupancy_json(const std::string& args) {
    const fs::path json = scratch_dir() / "occupancy.json";
    const Result r = run("occupancy " + args + " --json '" + json.string() + "'");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(slurp(json));
}

TEST(OccupancyCli, A100RegisterLimitedText) {
    // 256 threads = 8 warps; 64 regs x 32 lanes = 2048 per warp (a multiple of 256), 16384 per
    // block: 65536 / 16384 = 4 blocks. Warps allow 64 / 8 = 8, blocks 32, shared memory (1 KB
    // reserve) 164. So 4 blocks, 32 of 64 warps, 50 %, limited by registers.
    const Result r = run("occupancy --config configs/a100.json --threads 256 --regs 64");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("blocks per SM:  4\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("active warps:   32 of 64\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("occupancy:      50 %\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("limiter:        registers\n"), std::string::npos) << r.out;
}

TEST(OccupancyCli, A100RegisterLimitedJson) {
    const nlohmann::json j = occupancy_json("--config configs/a100.json --threads 256 --regs 64");
    EXPECT_EQ(j["blocks_per_sm"], 4);
    EXPECT_EQ(j["active_warps"], 32);
    EXPECT_EQ(j["max_warps"], 64);
    EXPECT_DOUBLE_EQ(j["occupancy"].get<double>(), 0.5);
    EXPECT_EQ(j["limiter"], "registers");
}

TEST(OccupancyCli, A100SharedMemoryLimited) {
    // 128 threads = 4 warps; 49152 B + 1024 reserved = 50176 B (a multiple of 128) per block:
    // 167936 / 50176 = 3.3 -> 3 blocks. Registers: 32 x 32 x 4 = 4096 -> 16 blocks; warps 16.
    // 3 blocks x 4 warps = 12 of 64 warps = 0.1875.
    const nlohmann::json j = occupancy_json("--config configs/a100.json --threads 128 --regs 32 --smem 49152");
    EXPECT_EQ(j["blocks_per_sm"], 3);
    EXPECT_EQ(j["active_warps"], 12);
    EXPECT_DOUBLE_EQ(j["occupancy"].get<double>(), 12.0 / 64.0);
    EXPECT_EQ(j["limiter"], "shared_memory");
}

TEST(OccupancyCli, A100WarpsAndBlocksTie) {
    // 64 threads = 2 warps, 16 regs: 512 per warp, 1024 per block -> 64 blocks by registers;
    // warps 64 / 2 = 32 blocks; the 32-block limit ties: 32 blocks, 64 warps, full occupancy.
    const nlohmann::json j = occupancy_json("--config configs/a100.json --threads 64 --regs 16");
    EXPECT_EQ(j["blocks_per_sm"], 32);
    EXPECT_EQ(j["active_warps"], 64);
    EXPECT_DOUBLE_EQ(j["occupancy"].get<double>(), 1.0);
    EXPECT_EQ(j["limiter"], nlohmann::json::array({"warps", "blocks"}));
}

TEST(OccupancyCli, V100WarpsAndRegistersTie) {
    // sm_70: 256 threads = 8 warps, 32 regs: 1024 per warp, 8192 per block -> 65536 / 8192 = 8
    // blocks; warps 64 / 8 = 8 blocks: a tie, 64 of 64 warps.
    const nlohmann::json j = occupancy_json("--config configs/v100.json --threads 256 --regs 32");
    EXPECT_EQ(j["blocks_per_sm"], 8);
    EXPECT_EQ(j["active_warps"], 64);
    EXPECT_DOUBLE_EQ(j["occupancy"].get<double>(), 1.0);
    EXPECT_EQ(j["limiter"], nlohmann::json::array({"warps", "registers"}));
}

TEST(OccupancyCli, H100BlockLimited) {
    // sm_90: one-warp blocks with 32 regs (1024 per block -> 64 blocks), warps 64: the 32-block
    // limit binds: 32 blocks, 32 of 64 warps.
    const nlohmann::json j = occupancy_json("--config configs/h100.json --threads 32 --regs 32");
    EXPECT_EQ(j["blocks_per_sm"], 32);
    EXPECT_EQ(j["active_warps"], 32);
    EXPECT_DOUBLE_EQ(j["occupancy"].get<double>(), 0.5);
    EXPECT_EQ(j["limiter"], "blocks");
}

TEST(OccupancyCli, A10gRegisterLimitedAt48Warps) {
    // sm_86: 48 warps, 16 blocks per SM. 128 threads = 4 warps, 48 regs: 1536 per warp; a
    // sub-partition's 16384 registers hold 10 such warps (10.67), 4 x 10 = 40 warps = 10 blocks.
    // Warps allow 48 / 4 = 12. So 10 blocks, 40 of 48 warps.
    const nlohmann::json j = occupancy_json("--config configs/a10g.json --threads 128 --regs 48");
    EXPECT_EQ(j["blocks_per_sm"], 10);
    EXPECT_EQ(j["active_warps"], 40);
    EXPECT_EQ(j["max_warps"], 48);
    EXPECT_DOUBLE_EQ(j["occupancy"].get<double>(), 40.0 / 48.0);
    EXPECT_EQ(j["limiter"], "registers");
}

TEST(OccupancyCli, T4SharedMemoryLimited) {
    // sm_75: 32 warps, 64 KB shared memory, 256-byte granularity, no reserve. 20000 B -> 20224 B:
    // 65536 / 20224 = 3.2 -> 3 blocks of 4 warps = 12 of 32 warps.
    const nlohmann::json j = occupancy_json("--config configs/t4.json --threads 128 --regs 32 --smem 20000");
    EXPECT_EQ(j["blocks_per_sm"], 3);
    EXPECT_EQ(j["active_warps"], 12);
    EXPECT_EQ(j["max_warps"], 32);
    EXPECT_DOUBLE_EQ(j["occupancy"].get<double>(), 12.0 / 32.0);
    EXPECT_EQ(j["limiter"], "shared_memory");
}

TEST(OccupancyCli, UnlaunchableBlocksGiveZero) {
    // 1024 threads x 255 regs: 8160 -> 8192 per warp x 32 warps = 262144 registers > 65536.
    nlohmann::json j = occupancy_json("--config configs/a100.json --threads 1024 --regs 255");
    EXPECT_EQ(j["blocks_per_sm"], 0);
    EXPECT_EQ(j["active_warps"], 0);
    EXPECT_DOUBLE_EQ(j["occupancy"].get<double>(), 0.0);
    EXPECT_NE(j["reason"].get<std::string>().find("262144 registers"), std::string::npos);
    // 200000 B of shared memory exceed sm_80's 163 KB (166912 B) per-block opt-in maximum.
    j = occupancy_json("--config configs/a100.json --threads 256 --regs 32 --smem 200000");
    EXPECT_EQ(j["blocks_per_sm"], 0);
    EXPECT_NE(j["reason"].get<std::string>().find("166912"), std::string::npos);
    const Result r = run("occupancy --config configs/a100.json --threads 1024 --regs 255");
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("blocks per SM:  0\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("cannot launch:"), std::string::npos) << r.out;
}

TEST(OccupancyCli, BadUsageExitsTwo) {
    for (const char* args : {"occupancy --config configs/a100.json --threads 256",  // --regs missing
                             "occupancy --config configs/a100.json --threads abc --regs 32",
                             "occupancy --config configs/a100.json --threads 32 --regs 32 --bogus 1",
                             "occupancy --config configs/no_such.json --threads 32 --regs 32"}) {
        const Result r = run(args);
        EXPECT_EQ(r.exit_code, 2) << args;
        EXPECT_NE(r.err.find("accelsim: error:"), std::string::npos) << args << "\n" << r.err;
        EXPECT_TRUE(r.out.empty()) << args;
    }
}

}  // namespace
