#pragma once
// The SIMT (GPU-like) chip behind the engine's Chip interface. `kernel` ops run the assembled
// kernel on every SM of the config (simt::launch, the whole grid, cycle by cycle) with global
// memory behind a port: the L2 + HBM hierarchy of models/memory (memory "hierarchy") or a fixed
// latency (memory "ideal"). Elementwise ops (add, mul, relu, gelu) are lowered to the grid-stride
// kernels of models/gpu/elementwise.h; the other ops keep their roofline rows until the rest of
// the GPU kernel library exists (issue 7). docs/gpu.md describes the chip, the kernel arguments
// and the report fields.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/simt/simt_gpu.h"
#include "sim/engine/engine.h"

namespace accelsim {

// SMs advance in lock-step windows of this many cycles when they share the memory hierarchy, so
// the crossbar, L2 and HBM see requests in time order to within a window (simt::LaunchOptions).
// One cycle: the memory models serve requests in call order, so out-of-order arrivals are served
// late (with the earlier unbuffered crossbar, saxpy over 2^20 floats on a100 took 35,660 cycles
// with 1-cycle windows, 49,147 with 8, 197,077 with 64; not re-measured with the buffered one),
// while 1-cycle windows cost about 1.5x the wall time of 64-cycle ones (docs/gpu.md).
inline constexpr std::uint64_t kSimtQuantumCycles = 1;

// Elementwise ops up to this many elements are lowered to the GPU kernel library; larger ones keep
// their roofline rows for now: simulating their whole grid costs about a second per million
// elements on this machine (bert_base_s512_b8's 48 elementwise ops, up to 25M elements, took
// 1.5-4 minutes per simt config), too slow for every run and for the shipped-trace tests.
inline constexpr std::int64_t kMaxLoweredElements = std::int64_t{1} << 20;

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

// The launch options of a kernel op: lock-step windows on the hierarchy, fp payloads skipped in
// timing-only runs of kernels that allow it.
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
    OpReport run_elementwise(const Op& op, const simt::Kernel& kernel);
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
