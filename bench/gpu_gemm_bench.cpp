// Tensor-core GEMM of the GPU kernel library on a SIMT config (hand-run; see docs/gpu.md "GEMM and
// conv kernels"). Tensor-core utilization = mma_issued * 2048 / (cycles * SMs * tensor MACs per SM
// per cycle).
//   gpu_gemm_bench M N K [--batch B] [--config configs/a100.json] [--memory ideal|hierarchy]
//                  [--tile 128x128x32|...] [--ahead 1|2] [--sms N] [--dtype fp16|bf16|fp32] [--validate]
//   (--ahead: K slices in flight ahead of the computed one, overriding the tile's; --splits S:
//   split-K parts; both with --tile)
//   gpu_gemm_bench conv N H W C K R STRIDE PAD [options]     conv2d (implicit GEMM), square filter
#include <systemc>  // declares sc_main extern "C"; libsystemc needs the symbol
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include "models/gpu/conv.h"
#include "models/gpu/gemm.h"
#include "models/gpu/hierarchy_port.h"
#include "sim/config/config_loader.h"
#include "models/gpu/gpu_chip.h"
#include "sim/config/model_params.h"
#include "sim/engine/chip_registry.h"

int sc_main(int, char**) { return 0; }  // libsystemc's main() is not used

using namespace accelsim;

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: gpu_gemm_bench M N K [--batch B] [--config FILE] [--memory ideal|hierarchy] "
                             "[--tile NAME] [--sms N] [--dtype fp16|bf16|fp32] [--validate]\n");
        return 2;
    }
    Op op;
    op.kind = OpKind::matmul;
    op.name = "bench";
    op.dtype = DType::fp16;
    int first_option = 4;
    if (std::string(argv[1]) == "conv") {
        if (argc < 10) return 2;
        op.kind = OpKind::conv2d;
        Conv2dShape& c = op.conv;
        c.n = std::atoll(argv[2]), c.h = std::atoll(argv[3]), c.w = std::atoll(argv[4]), c.c = std::atoll(argv[5]);
        c.k = std::atoll(argv[6]), c.r = c.s = std::atoll(argv[7]);
        c.stride_h = c.stride_w = std::atoll(argv[8]);
        c.pad_h = c.pad_w = std::atoll(argv[9]);
        first_option = 10;
    } else {
        op.gemm = {1, std::atoll(argv[1]), std::atoll(argv[2]), std::atoll(argv[3])};
    }
    std::string config_path = std::string(ACCELSIM_SOURCE_DIR) + "/configs/a100.json", memory = "ideal", tile_name;
    int sms = 0, ahead = 0, splits = 1;
    bool validate = false;
    for (int i = first_option; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
        if (a == "--batch") {
            op.kind = OpKind::bmm;
            op.gemm.batch = std::atoll(next().c_str());
        } else if (a == "--config") config_path = next();
        else if (a == "--memory") memory = next();
        else if (a == "--tile") tile_name = next();
        else if (a == "--sms") sms = std::atoi(next().c_str());
        else if (a == "--ahead") ahead = std::atoi(next().c_str());
        else if (a == "--splits") splits = std::atoi(next().c_str());
        else if (a == "--dtype") {
            const std::string d = next();
            op.dtype = d == "bf16" ? DType::bf16 : d == "fp32" ? DType::fp32 : DType::fp16;
        } else if (a == "--validate") validate = true;
        else {
            std::fprintf(stderr, "unknown option %s\n", a.c_str());
            return 2;
        }
    }
    ChipConfig config = load_config(config_path, {"memory=" + memory});
    if (sms > 0) config.gpu.sms = sms;
    const simt::SimtParams params = simt_params_from(config);
    gpu::LoweringTarget target;
    target.sms = params.sms;
    target.sm = params.sm;
    target.real_data = validate;
    simt::GlobalMemory mem;
    gpu::LoweredKernel lk;
    if (!tile_name.empty()) {
        for (gpu::GemmTile t : gpu::gemm_tensor_tiles()) {
            if (t.name() != tile_name) continue;
            if (ahead > 0) t.slices_ahead = ahead;
            lk = op.kind == OpKind::conv2d ? gpu::lower_conv2d_with_tile(op, mem, target, t)
                                           : gpu::lower_gemm_with_tile(op, mem, target, t, splits);
        }
        if (!lk.kernel) {
            std::fprintf(stderr, "no tile %s\n", tile_name.c_str());
            return 2;
        }
    } else {
        lk = op.kind == OpKind::conv2d ? gpu::lower_conv2d(op, mem, target) : gpu::lower_gemm(op, mem, target);
    }
    // The chip the engine would build for this config: its memory ports and launch options.
    const auto chip = make_chip(config, RunOptions{});
    const auto& gpu_chip = dynamic_cast<const gpu::GpuChip&>(*chip);
    const auto port = gpu_chip.make_memory_port();
    const simt::LaunchOptions options = gpu_chip.launch_options(*lk.kernel, validate);
    const std::clock_t t0 = std::clock();
    const simt::KernelStats s = simt::launch(*lk.kernel, lk.dims, lk.args, mem, params, port.get(), options);
    // Further launches (split-K's sum), each on a fresh memory system, as the chip runs them.
    std::uint64_t then_cycles = 0;
    for (const gpu::LoweredLaunch& next : lk.then) {
        const auto next_port = gpu_chip.make_memory_port();
        then_cycles += simt::launch(*next.kernel, next.dims, next.args, mem, params, next_port.get(),
                                    gpu_chip.launch_options(*next.kernel, validate)).cycles;
    }
    const double seconds = static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC;
    const double tensor_macs = config.sm.tensor_macs_per_cycle.fp16;
    const double util = static_cast<double>(s.mma_issued) * 2048.0 /
                        (static_cast<double>(s.cycles) * params.sms * tensor_macs);
    const GemmShape g = op.as_gemm();
    std::printf("%s b=%lld m=%lld n=%lld k=%lld %s on %s (%d SMs, memory %s)\n", std::string(to_string(op.kind)).c_str(),
                static_cast<long long>(g.batch), static_cast<long long>(g.m), static_cast<long long>(g.n), static_cast<long long>(g.k),
                std::string(to_string(op.dtype)).c_str(), config.name.c_str(), params.sms, memory.c_str());
    for (const StatValue& v : lk.stats) std::printf("  %-22s %g\n", v.name.c_str(), v.value);
    if (!lk.then.empty())
        std::printf("  then %zu launch(es): %llu cycles (no launch overhead; the first launch's figures follow)\n",
                    lk.then.size(), static_cast<unsigned long long>(then_cycles));
    std::printf("  regs %d, smem %lld B, occupancy %d blocks/SM (%.2f), achieved %.2f\n", lk.kernel->registers,
                static_cast<long long>(lk.kernel->shared_bytes), s.theoretical.blocks_per_sm, s.theoretical.occupancy,
                s.achieved_occupancy);
    std::printf("  cycles %llu, mma %llu, issued %llu (%.2f per mma), tensor-core utilization %.1f%%\n",
                static_cast<unsigned long long>(s.cycles), static_cast<unsigned long long>(s.mma_issued),
                static_cast<unsigned long long>(s.issued), static_cast<double>(s.issued) / std::max<double>(1, s.mma_issued),
                100.0 * util);
    const double slots = static_cast<double>(s.issue_cycles + s.idle_cycles + s.scoreboard_cycles + s.pipeline_cycles +
                                             s.barrier_cycles);
    std::printf("  scheduler slots: issued %.1f%%, scoreboard %.1f%%, pipeline %.1f%%, barrier %.1f%%, idle %.1f%%\n",
                100.0 * s.issue_cycles / slots, 100.0 * s.scoreboard_cycles / slots, 100.0 * s.pipeline_cycles / slots,
                100.0 * s.barrier_cycles / slots, 100.0 * s.idle_cycles / slots);
    std::printf("  global sectors %llu, shared requests %llu, wavefronts %llu, L1 hits %llu misses %llu\n",
                static_cast<unsigned long long>(s.global_sectors), static_cast<unsigned long long>(s.shared_requests),
                static_cast<unsigned long long>(s.shared_wavefronts), static_cast<unsigned long long>(s.l1_hits),
                static_cast<unsigned long long>(s.l1_misses));
    if (const auto* h = dynamic_cast<const gpu::HierarchyMemoryPort*>(port.get())) {
        const gpu::HierarchyTraffic t = h->traffic();
        std::printf("  L2 %llu B (hits %llu of %llu), HBM %llu B, sector latency avg %.0f ns max %.0f ns, %.0f B/cycle to L2\n",
                    static_cast<unsigned long long>(t.l2_bytes()), static_cast<unsigned long long>(t.l2_hits),
                    static_cast<unsigned long long>(t.l2_accesses), static_cast<unsigned long long>(t.hbm_bytes()),
                    t.average_latency_ns, t.max_latency_ns, static_cast<double>(t.l2_bytes()) / static_cast<double>(s.cycles));
        // Where a sector's time goes below the SM: per crossbar transfer, and the L2 slices' load.
        const memory::MemoryHierarchyStats m = h->hierarchy().stats();
        const double transfers = std::max<double>(1, static_cast<double>(m.crossbar.transfers));
        const double cycle_ps = 1e12 / config.clock_hz();
        std::printf("  crossbar per transfer: input wait %.1f, output wait %.1f, backpressure %.1f cycles",
                    static_cast<double>(m.crossbar.input_wait_ps) / transfers / cycle_ps,
                    static_cast<double>(m.crossbar.output_wait_ps) / transfers / cycle_ps,
                    static_cast<double>(m.crossbar.backpressure_ps) / transfers / cycle_ps);
        if (m.l2)
            std::printf("; L2 slices busy %.1f%%, MSHR merges %llu",
                        100.0 * static_cast<double>(m.l2->busy_ps) / cycle_ps / static_cast<double>(s.cycles) /
                            static_cast<double>(config.l2.slices),
                        static_cast<unsigned long long>(m.l2->mshr_merges));
        std::printf("\n");
    }
    std::printf("  %.2f CPU s, %.1f M warp instr/s\n", seconds, static_cast<double>(s.issued) / seconds / 1e6);
    if (lk.check) {
        const gpu::LoweringNumerics n = lk.check(mem);
        std::printf("  numerics: %lld checked, max abs err %g, max rel err %g, %s\n", static_cast<long long>(n.checked),
                    n.max_abs_err, n.max_rel_err, n.passed ? "passed" : "FAILED");
        if (!n.passed) return 1;
    }
    return 0;
}
