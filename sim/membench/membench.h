#pragma once
// `accelsim membench`: drives a chip's memory system (L2 + HBM, or HBM alone) with synthetic
// traffic and no compute, and reports bandwidth, latency and row-buffer behaviour.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/chip_config.h"

namespace accelsim {

struct MembenchOptions {
    std::string config_path;
    std::string pattern = "stream";        // stream | random | strided | mixed
    std::uint64_t bytes = 64ull << 20;      // total bytes requested
    std::uint32_t request_bytes = 64;       // --size: 32 | 64 | 128
    std::optional<std::uint64_t> stride_bytes;  // default: same bank, next row (see docs/memory.md)
    std::string level;                      // "l2" | "hbm"; empty: l2 when the chip has one
    std::string l2_dram = "queued";         // --l2-dram: queued (DRAM scheduler sees the L2's misses) | blocking
    int outstanding = 0;                    // requests in flight; 0: 2 (hbm) or 4 (l2) x controllers x queue_depth
    std::uint64_t seed = 1;
    std::string json_path;
    std::vector<std::string> overrides;     // --set k=v, handed to load_config
};

// The one-line usage of `accelsim membench`.
const char* membench_usage();

// Parses the arguments that follow `accelsim membench`; throws InputError with one clear message.
MembenchOptions parse_membench_args(const std::vector<std::string>& args);

struct MembenchReport {
    std::string chip, level, pattern;
    std::string l2_dram;                // "queued" | "blocking" at --level l2, empty at the HBM
    std::uint32_t request_bytes = 0;
    std::uint64_t stride_bytes = 0;     // strided with --stride
    bool one_bank_walk = false;         // strided without --stride: one bank, the next row each request
    std::uint64_t requests = 0, bytes = 0;
    double simulated_ns = 0;
    double peak_gbps = 0, achieved_gbps = 0, percent_of_peak = 0;
    double avg_latency_ns = 0, p99_latency_ns = 0;
    std::uint64_t row_hits = 0, row_misses = 0, row_conflicts = 0, refreshes = 0, activates = 0;
    std::uint64_t hbm_bytes = 0;
    std::optional<double> l2_hit_rate;  // absent at --level hbm or without an L2
    std::uint64_t l2_hits = 0, l2_misses = 0, l2_sector_misses = 0, l2_mshr_merges = 0, l2_evictions = 0,
                  l2_writebacks = 0;
};

// Runs the benchmark on an already loaded config (tests fill a ChipConfig by hand).
// Throws InputError for options the chip cannot honour.
MembenchReport run_membench(const ChipConfig& chip, const MembenchOptions& options);

void print_membench_report(const MembenchReport& report, std::ostream& out);
nlohmann::json membench_report_json(const MembenchReport& report);

// Everything but loading the config: run, print, write --json. Returns 0, or 2 after printing one
// message to err for bad input.
int run_membench_on_config(const ChipConfig& chip, const MembenchOptions& options, std::ostream& out,
                           std::ostream& err);

}  // namespace accelsim
