#pragma once
// Launching a kernel on a SIMT GPU: the public entry point of models/simt.
//
//   Kernel k = assemble_file("models/simt/kernels/saxpy.sasm");
//   GlobalMemory mem; uint32_t x = mem.allocate(4 * n); ...
//   KernelStats s = launch(k, {blocks, threads}, {n, a_bits, x, y}, mem, params);
//
// launch() runs the grid with one SmCore per SM in plain C++ (block dispatch in global time
// order), and SimtChipModule (simt_module.h) runs the same SmCores as one SystemC process per SM.
#include <array>
#include <cstdint>
#include <vector>

#include "models/simt/execution.h"
#include "models/simt/sm_core.h"

namespace accelsim::simt {

struct SimtParams {
    int sms = 1;
    SmParams sm;
};

struct LaunchOptions {
    // Timing-only: do not compute floating-point payload instructions. Allowed only when the
    // kernel's fp_payload_skippable is true (then cycles are identical); otherwise launch() throws.
    bool skip_fp_payload = false;
    // 0: each SM runs ahead until one of its blocks completes (exact when SMs share nothing but
    // the block dispatcher, e.g. FixedLatencyMemory). N > 0: SMs advance in lock-step windows of
    // N cycles (SM 0..n-1 within a window), so a shared memory port (L2, HBM) sees requests in
    // time order give or take N cycles; blocks are handed out in (window, SM) order.
    std::uint64_t sm_quantum_cycles = 0;
};

struct KernelStats {
    std::uint64_t cycles = 0;           // launch to last block done (and last store accepted)
    std::uint64_t issued = 0;           // warp instructions, branches and exits included
    double ipc = 0;                     // issued / cycles, whole GPU
    double issue_slot_utilization = 0;  // issue_cycles / (sms * sub-partitions * cycles)
    Occupancy theoretical;              // per SM, from the occupancy calculator
    double achieved_occupancy = 0;      // resident warps averaged over busy SM cycles / max warps
    std::uint64_t active_lanes = 0;
    double simd_efficiency = 0;         // active_lanes / (32 * issued)
    std::array<std::uint64_t, 33> lanes_histogram{};  // [n] = issues with n active lanes
    // Scheduler-cycles (sub-partitions x cycles) by what happened: an issue, or why not.
    std::uint64_t issue_cycles = 0, idle_cycles = 0, scoreboard_cycles = 0, pipeline_cycles = 0, barrier_cycles = 0;
    std::uint64_t global_requests = 0, global_sectors = 0;
    std::uint64_t shared_requests = 0, shared_wavefronts = 0;
    std::uint64_t l1_hits = 0, l1_misses = 0;  // global load sectors, when SmParams::l1 is on
    std::uint64_t blocks = 0;
    std::vector<IssueRecord> issue_order;  // SM 0, when params.sm.record_issue_order
};

// memory: where global sectors go; nullptr = a FixedLatencyMemory of params.sm.global_latency.
// Throws SimtError on a kernel fault, a launch that cannot fit on an SM, or wrong argument count.
KernelStats launch(const Kernel& kernel, Dim dims, const std::vector<std::uint32_t>& args, GlobalMemory& memory,
                   const SimtParams& params, GlobalMemoryPort* port = nullptr, const LaunchOptions& options = {});

// Hands out block ids in order (shared by launch() and SimtChipModule).
class BlockDispatcher {
public:
    explicit BlockDispatcher(std::uint32_t blocks) : blocks_(blocks) {}
    bool empty() const { return next_ >= blocks_; }
    std::uint32_t take() { return next_++; }
    // Fills SMs round-robin, one block each per round, as the hardware's block scheduler does.
    void initial_fill(std::vector<SmCore*>& sms);
    // Gives the SM as many blocks as fit.
    void refill(SmCore& sm);

private:
    std::uint32_t blocks_;
    std::uint32_t next_ = 0;
};

KernelStats collect_stats(const std::vector<SmCore*>& sms, const WarpExecutor& executor, const SimtParams& params);

}  // namespace accelsim::simt
