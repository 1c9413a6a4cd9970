#pragma once
// The SIMT (GPU-like) chip behind the ChipModel interface (models/common/chip_model.h). `kernel`
// ops run the assembled kernel on every SM (simt::launch, the whole grid, cycle by cycle) with
// global memory behind a port: the L2 + HBM hierarchy of models/memory, or a fixed latency (ideal
// memory). Every other op is lowered by the GPU kernel library (lowering.h) to a launch of a
// library kernel (two for a split-K GEMM): tensor-core GEMMs, implicit-GEMM convolutions,
// shuffle-reduction softmax and layernorm, grid-stride elementwise loops. Registered under kind
// "simt" (sim/engine/chip_registry.cpp). docs/gpu.md describes the chip, the kernels and the report.
//
// SMs sharing the L2 + HBM hierarchy run in windows of the memory port's lookahead: each SM runs W
// cycles on its own, submitting its global sectors without waiting (a load's registers stay
// pending in the scoreboard); then HierarchyMemoryPort serves everything submitted in the window
// in time order (ties by SM) through the crossbar, the L2 (MSHR merging) and the HBM's FR-FCFS
// queues, and the answers go to the SMs. W = the L2 hit latency less one cycle (199 on a100):
// every answer lies at least the hit latency after the event that decides it, so none is due
// inside the window that asked for it, and the run equals one advancing every SM and the memory
// one cycle at a time (tested). A blocking port (a hierarchy without an L2) shared by several SMs
// falls back to lock-step windows of kBlockingPortQuantumCycles. docs/gpu.md "Memory port and SM
// windows".
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/common/chip_model.h"
#include "models/common/validation_worker.h"
#include "models/gpu/fusion.h"
#include "models/gpu/gpu_params.h"
#include "models/gpu/repeated_ops.h"
#include "models/gpu/lowering.h"
#include "models/gpu/hierarchy_port.h"
#include "models/memory/memory_hierarchy.h"
#include "models/simt/simt_gpu.h"
#include "models/simt/trip_sampling.h"
#include "models/simt/wave_sampling.h"

namespace accelsim::simt {
class SimtChipModule;  // simt_module.h (SystemC)
}

namespace accelsim::gpu {

inline constexpr std::uint64_t kBlockingPortQuantumCycles = 1;

struct GpuChipParams {
    simt::SimtParams simt;  // the SMs (simt.sms of them) and what each holds
    // The L2 + HBM hierarchy behind the SMs (requesters = SMs, clock = the SM clock); nullopt:
    // ideal memory, every sector back after ideal_latency_cycles (no bandwidth limit).
    std::optional<memory::MemoryHierarchyParams> memory;
    int ideal_latency_cycles = 200;
    int launch_overhead_cycles = 0;       // paid before every launch, >= 0
    bool cold_l2_per_op = false;          // true: no L2 contents carried from op to op
    GpuSampling sampling = GpuSampling::off;  // waves: lowered ops' launches sampled (wave_sampling.h)
    simt::WaveSamplingRule sampling_rule;     // when the wave time has converged
    GpuFusion fusion = GpuFusion::none;   // resolved (never automatic): which ops share a kernel
    double sm_port_bytes_per_cycle = 0;   // an SM's crossbar port (lowering's bandwidth floor)
    double clock_hz = 1e9;
    std::uint64_t seed = 1;               // data of rand-filled buffers
    ActivationOutliers outliers;          // of int8/fp8 GEMM and convolution activations
    // Peaks for the roofline, per chip cycle.
    std::map<DType, double> tensor_macs_per_sm_cycle;  // dense tensor-core MACs per SM; fp32 = TF32
    int fp32_lanes = 64, int_lanes = 64;               // per SM
    double hbm_bytes_per_cycle = 0;                    // HBM peak
    double l2_bytes_per_cycle = 0;                     // all L2 slices; 0 = no L2
};

struct GpuChipOptions {
    bool validate = false;  // real data in the library kernels' buffers, checked after the launch
    // Run every launch's SMs as SystemC processes (simt::SimtChipModule, one thread per SM,
    // elaborated when the chip is built) instead of simt::launch's plain C++ loop; identical
    // results. SystemC elaborates once per process: at most one such chip per process (the CLI's).
    bool systemc = false;
    // An op identical to one run before (same shape, same L2 contents at its start) takes that
    // run's outcome instead of simulating again (repeated_ops.h): the same result by construction,
    // and a test proves it. Off with --validate and timelines (they need the run itself).
    bool reuse_repeated_ops = true;
    // With validate: GEMM references computed on a second thread while the kernels run (the
    // same outcome; models/common/validation_worker.h). By default when the process may use two CPUs.
    bool validation_worker = validation_worker_by_default();
};

class GpuChip final : public ChipModel {
public:
    // Throws std::invalid_argument for parameters the SMs or the memory models reject.
    GpuChip(const GpuChipParams& params, const GpuChipOptions& options);
    ~GpuChip() override;

    OpReport run(const Op& op, const Op* next) override;
    // Groups the trace's ops into fused kernels (params.fusion; fusion.h). Without a plan every op
    // runs alone.
    void plan(const std::vector<Op>& ops) override;
    ComputeUnit compute_unit_for(const Op& op) const override;
    double matrix_macs_per_cycle(DType dtype) const override;
    bool runs_mixed_fp8() const override { return true; }  // mma and wgmma take .e4m3.e5m2 (PTX)
    MemoryPeaks memory_peaks() const override;
    void record_activity() override { record_activity_ = true; }
    bool last_op_reused() const override { return last_op_reused_; }

    // The global-memory port of one launch: a fresh (cold) HierarchyMemoryPort, or a
    // FixedLatencyMemory of ideal_latency_cycles for ideal memory.
    std::unique_ptr<simt::GlobalMemoryPort> make_memory_port() const;
    // Launch options: fp payloads skipped in timing-only runs of kernels that allow it; lock-step
    // windows only for a blocking port shared by several SMs.
    simt::LaunchOptions launch_options(const simt::Kernel& kernel, bool validate) const;
    const GpuChipParams& params() const { return params_; }
    // The simt::launch result behind the last launch (tests compare it with direct launches).
    const simt::KernelStats& last_kernel_stats() const { return last_; }
    // Ops that took an earlier identical op's outcome instead of simulating (reuse_repeated_ops).
    std::size_t reused_ops() const { return repeated_ops_.hits(); }

private:
    OpReport run_kernel(const Op& op);
    OpReport run_lowered(const Op& op);  // every op but `kernel`, through lowering.h
    // A fusion group's kernel, reported under its first op.
    OpReport run_fused(const FusionGroup& group);
    // Launches a lowered op and completes its report: further launches, the op's own roofline
    // (`shape`, a lower bound of the work) merged with the run's, utilization, numerics.
    OpReport finish_lowered(const Op& op, LoweredKernel& lowered, simt::GlobalMemory& memory, const Roofline& shape);
    LoweringTarget lowering_target() const;
    Roofline attention_roofline(const Op& scores) const;
    const simt::Kernel& kernel_for(const Op& op);
    // Timelines: the launch's spans, each SM's resident warps and the L2 / HBM bytes of each
    // memory window (traffic counted up to the window's end).
    std::shared_ptr<const OpActivity> launch_activity(
        const std::string& kernel_name, std::uint64_t overhead, const simt::KernelStats& k,
        const std::vector<std::pair<std::uint64_t, HierarchyTraffic>>& windows) const;
    // Launches and turns last_ into the op's report (bounds from the run's own counts).
    // sample: the launch may be sampled (library kernels, gpu.sampling waves); a sampled launch
    // reports extrapolated cycles and counters and sets OpReport::sampling.
    // loop: the kernel's main loop, whose trips may be sampled too (gpu.sampling waves_and_trips).
    OpReport launch_and_report(const Op& op, const simt::Kernel& kernel, simt::Dim dims,
                               const std::vector<std::uint32_t>& args, simt::GlobalMemory& memory, bool sample = false,
                               const std::optional<simt::SampledLoop>& loop = std::nullopt);

    // The warm L2: puts what the last launch left into `port` (relocated to this op's buffers at
    // its first launch), and keeps what this launch leaves. Returns the lines put in and how many
    // of them are the previous op's output read as this op's input.
    std::pair<std::uint64_t, std::uint64_t> warm_l2(simt::GlobalMemoryPort& port, const simt::GlobalMemory& memory);
    void keep_l2(const simt::GlobalMemoryPort& port, const simt::GlobalMemory& memory);
    // The end of the run: the dirty bytes still in the L2, which then starts empty.
    std::uint64_t flush_l2();

    GpuChipParams params_;
    GpuChipOptions options_;
    // The L2 lines the last launch left, in its op's address space, least recently used first; the
    // buffer that launch wrote (the op's output); whether the next launch starts a new op.
    std::vector<memory::L2Cache::ResidentLine> l2_carry_;
    std::optional<simt::GlobalMemory::Allocation> carry_output_;
    // l2_carry_ as a shared list, while it is the one an op of repeated_ops_ left (else null).
    std::shared_ptr<const L2Lines> carry_shared_;
    RepeatedOpCache repeated_ops_;
    bool op_starting_ = true;
    std::uint64_t warm_lines_ = 0, warm_input_lines_ = 0;  // of the op's first launch
    std::map<std::string, simt::Kernel> kernels_;  // assembled once per file
    // The fusion plan: the trace's ops, their groups, each op's group (or none), the next op's index.
    std::vector<Op> planned_ops_;
    std::vector<FusionGroup> groups_;
    std::vector<int> group_of_;
    std::size_t next_index_ = 0;
    simt::KernelStats last_;
    bool record_activity_ = false;
    bool last_op_reused_ = false;
    std::unique_ptr<simt::SimtChipModule> sm_threads_;  // with options.systemc
};

}  // namespace accelsim::gpu
