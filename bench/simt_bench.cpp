// Warp instructions simulated per host second (issue 6 target: >= 10 M/s on one core).
//   simt_bench [M=N=K] [sms]      default 512, 8: gemm_smem.sasm, timing-only and full numerics,
//                                 then saxpy over 4M elements; then saxpy over 2^20 and 2^22
//                                 floats on a100 through the L2 + HBM hierarchy, with the
//                                 non-blocking port (FR-FCFS, 199-cycle SM windows) and with the
//                                 blocking port in 1-cycle lock-step windows (the design the
//                                 non-blocking one replaced), same binary.
#include <systemc>  // declares sc_main extern "C"; libsystemc needs the symbol
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "models/gpu/hierarchy_port.h"
#include "models/simt/simt_gpu.h"
#include "sim/config/config_loader.h"
#include "sim/config/model_params.h"

using namespace accelsim::simt;

int sc_main(int, char**) { return 0; }  // libsystemc's main() is not used

namespace {

const std::string kKernels = std::string(ACCELSIM_SOURCE_DIR) + "/models/simt/kernels/";

void report(const char* what, const KernelStats& s, double seconds) {
    std::printf("%-34s %12llu warp instr %10llu cycles  IPC %6.2f  occ %.2f/%.2f  simd %.3f  %7.3f CPU s  %6.2f M warp instr/s\n",
                what, static_cast<unsigned long long>(s.issued), static_cast<unsigned long long>(s.cycles), s.ipc,
                s.theoretical.occupancy, s.achieved_occupancy, s.simd_efficiency, seconds,
                static_cast<double>(s.issued) / seconds / 1e6);
}

// CPU seconds of this process (the machine is shared: wall time would count other jobs).
template <typename F>
double timed(F f) {
    const std::clock_t t0 = std::clock();
    f();
    return static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC;
}

}  // namespace

int main(int argc, char** argv) {
    const int size = argc > 1 ? std::atoi(argv[1]) : 512;
    SimtParams params;
    params.sms = argc > 2 ? std::atoi(argv[2]) : 8;
    params.sm.limits = *published_limits("sm_80");
    if (size < 16 || size % 16 != 0 || params.sms < 1) {
        std::fprintf(stderr, "usage: simt_bench [size, a multiple of 16] [sms]\n");
        return 2;
    }
    const Kernel gemm = assemble_file(kKernels + "gemm_smem.sasm");
    for (bool skip : {true, false}) {
        GlobalMemory mem;
        const auto n = static_cast<std::uint32_t>(size);
        const std::uint32_t A = mem.allocate(4ull * n * n), B = mem.allocate(4ull * n * n), C = mem.allocate(4ull * n * n);
        LaunchOptions options;
        options.skip_fp_payload = skip;
        KernelStats s;
        const double t = timed([&] { s = launch(gemm, {(n / 16) * (n / 16), 256}, {n, n, n, A, B, C}, mem, params, nullptr, options); });
        const std::string what = "gemm_smem " + std::to_string(size) + "^3 " + (skip ? "timing-only" : "full");
        report(what.c_str(), s, t);
    }
    {
        const Kernel saxpy = assemble_file(kKernels + "saxpy.sasm");
        GlobalMemory mem;
        const std::uint32_t n = 1u << 22;
        const std::uint32_t x = mem.allocate(4ull * n), y = mem.allocate(4ull * n);
        float a = 2.0f;
        std::uint32_t a_bits;
        std::memcpy(&a_bits, &a, 4);
        KernelStats s;
        const double t = timed([&] { s = launch(saxpy, {n / 256, 256}, {n, a_bits, x, y}, mem, params); });
        report("saxpy 4M full", s, t);
    }
    const accelsim::ChipConfig a100 = accelsim::load_config(std::string(ACCELSIM_SOURCE_DIR) + "/configs/a100.json");
    const SimtParams a100_params = accelsim::simt_params_from(a100);
    const Kernel saxpy = assemble_file(kKernels + "saxpy.sasm");
    for (const std::uint32_t n : {1u << 20, 1u << 22})
        for (const bool blocking : {false, true}) {
            GlobalMemory mem;
            const std::uint32_t x = mem.allocate(4ull * n), y = mem.allocate(4ull * n);
            accelsim::gpu::HierarchyMemoryPort port(accelsim::memory_hierarchy_params_from_config(a100), blocking);
            LaunchOptions options;
            options.skip_fp_payload = true;
            options.sm_quantum_cycles = blocking ? 1 : 0;
            KernelStats s;
            const double t = timed([&] { s = launch(saxpy, {n / 256, 256}, {n, 0x40000000u, x, y}, mem, a100_params, &port, options); });
            const std::string what = "a100 saxpy 2^" + std::to_string(n == (1u << 20) ? 20 : 22) +
                                     (blocking ? " blocking lock-step" : " non-blocking");
            report(what.c_str(), s, t);
            const double seconds = static_cast<double>(s.cycles) / a100.clock_hz();
            std::printf("%-34s %.0f GB/s of HBM (%.1f %% of peak), %.2f us CPU per sector\n", "",
                        static_cast<double>(port.traffic().hbm_bytes()) / seconds / 1e9,
                        100.0 * static_cast<double>(port.traffic().hbm_bytes()) / static_cast<double>(s.cycles) /
                            port.hbm_bytes_per_cycle(),
                        t * 1e6 / static_cast<double>(s.global_sectors));
        }
    return 0;
}
