#pragma once
// The SIMT (GPU-like) chip behind the engine's Chip interface. `kernel` ops run the assembled
// kernel on every SM of the config (simt::launch, the whole grid, cycle by cycle) with global
// memory behind a port: the L2 + HBM hierarchy of models/memory (memory "hierarchy") or a fixed
// latency (memory "ideal"). Every other op is lowered by the GPU kernel library
// (models/gpu/lowering.h) to one launch of a library kernel: tensor-core GEMMs, implicit-GEMM
// convolutions, shuffle-reduction softmax and layernorm, grid-stride elementwise loops.
// docs/gpu.md describes the chip, the kernels, the rule behind each launch shape and the report.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/simt/simt_gpu.h"
#include "sim/engine/engine.h"

namespace accelsim {

// SMs sharing the L2 + HBM hierarchy run in windows of the memory port's lookahead: each SM runs W
// cycles on its own, submitting its global sectors without waiting (a load's registers stay
// pending in the scoreboard); then gpu::HierarchyMemoryPort serves everything submitted in the
// window in time order (ties by SM) through the crossbar, the L2 (MSHR merging) and the HBM's
// FR-FCFS queues, and the answers go to the SMs. W = the L2 hit latency less one cycle (199 on
// a100): every answer lies at least the hit latency after the event that decides it, so none is
// due inside the window that asked for it, and the run equals one advancing every SM and the
// memory one cycle at a time (tested). A blocking port (a hierarchy without an L2) shared by
// several SMs falls back to lock-step windows of kBlockingPortQuantumCycles. docs/gpu.md
// "Memory port and SM windows".
inline constexpr std::uint64_t kBlockingPortQuantumCycles = 1;

// A buffer a kernel argument asked the chip to allocate (`buf:TYPE:COUNT:FILL`).
struct KernelBuffer {
    std::string spec;           // the argument as written
    std::uint32_t address = 0;  // byte address in global memory, passed to the kernel
    std::uint64_t bytes = 0;
};

// The 32-bit parameter words of a kernel op, from op.kernel.args (syntax in docs/trace-format.md):
//   123, -4, i:123      a 32-bit integer (two's complement)
//   f:2.5               fp32 bits
//   buf:T:N:FILL        a buffer of N elements of T (f32, i32, f16) allocated in `memory` and
//                       filled with zero | ones | iota | rand (rand: seeded from `seed` and the
//                       argument's position, so the same trace and config give the same data)
// Throws InputError naming op.file:op.line and the argument for anything else, or when the count
// differs from the kernel's .param list. `buffers` (optional) receives what was allocated.
std::vector<std::uint32_t> kernel_arguments(const Op& op, const simt::Kernel& kernel, std::uint64_t seed,
                                            simt::GlobalMemory& memory, std::vector<KernelBuffer>* buffers = nullptr);

// The global-memory port the chip uses for one kernel op: a fresh (cold) gpu::HierarchyMemoryPort
// for memory "hierarchy", a simt::FixedLatencyMemory of ideal_memory_latency(config) for "ideal".
std::unique_ptr<simt::GlobalMemoryPort> make_simt_memory_port(const ChipConfig& config);
// "ideal" memory: every sector comes back after the L2 hit latency (a perfect L2, no bandwidth
// limit); 200 cycles when the config has no L2.
int ideal_memory_latency(const ChipConfig& config);

// The launch options of a kernel op: fp payloads skipped in timing-only runs of kernels that allow
// it; lock-step windows only for a blocking port shared by several SMs.
simt::LaunchOptions simt_launch_options(const ChipConfig& config, const simt::Kernel& kernel, bool validate);

// What make_chip returns for simt configs (declared here; engine.cpp calls it).
std::unique_ptr<Chip> make_simt_chip(const ChipConfig& config, const RunOptions& options);

class SimtChip final : public Chip {
public:
    SimtChip(const ChipConfig& config, const RunOptions& options);  // throws InputError
    OpReport run(const Op& op) override;
    // The simt::launch result behind the last kernel op (tests compare it with direct launches).
    const simt::KernelStats& last_kernel_stats() const { return last_; }

private:
    OpReport run_kernel(const Op& op);
    OpReport run_lowered(const Op& op);  // every op but `kernel`, through models/gpu/lowering.h
    const simt::Kernel& kernel_for(const Op& op);
    // Launches and turns last_ into the op's report (bounds from the run's own counts).
    OpReport launch_and_report(const Op& op, const simt::Kernel& kernel, simt::Dim dims,
                               const std::vector<std::uint32_t>& args, simt::GlobalMemory& memory);

    const ChipConfig& config_;
    RunOptions options_;
    simt::SimtParams params_;
    std::map<std::string, simt::Kernel> kernels_;  // assembled once per file
    simt::KernelStats last_;
};

}  // namespace accelsim
