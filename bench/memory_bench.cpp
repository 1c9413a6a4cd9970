// Memory-model throughput: simulated 64-byte requests per host second on streaming runs (target:
// >= 5 M/s on one core), through each path the simulator uses. Run by hand:
//   ./build/bench/memory_bench [megabytes=256] [path: all | blocking | queued | hierarchy | hierarchy_queued]
#include <systemc>  // declares sc_main extern "C"; libsystemc needs the symbol
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "models/memory/dram.h"
#include "models/memory/memory_hierarchy.h"
#include "models/memory/traffic.h"

using namespace accelsim::memory;

namespace {

// Rates are per CPU second of this process (std::clock), so that other load on a shared machine
// does not count against the model; wall time is printed too.
template <class F>
void report(const char* label, F&& run) {
    const auto wall0 = std::chrono::steady_clock::now();
    const std::clock_t cpu0 = std::clock();
    const DriveResult r = run();
    const double cpu_s = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    std::printf("%-44s %9llu requests  %6.3f s cpu (%6.3f s wall)  %6.2f M req/s  %8.1f GB/s simulated  avg %.1f ns\n",
                label, static_cast<unsigned long long>(r.requests), cpu_s, wall_s,
                static_cast<double>(r.requests) / cpu_s / 1e6, r.achieved_bytes_per_second() / 1e9,
                r.latency.average_ns());
}

TrafficParams stream(std::uint64_t bytes) {
    TrafficParams t;
    t.pattern = TrafficPattern::stream;
    t.request_bytes = 64;
    t.total_bytes = bytes;
    return t;
}

}  // namespace

int sc_main(int, char**) { return 0; }  // libsystemc needs the symbol; never called

int main(int argc, char** argv) {
    const std::uint64_t mb = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256;
    const std::uint64_t bytes = mb << 20;
    const char* only = argc > 2 ? argv[2] : "all";
    auto wanted = [only](const char* path) { return std::strcmp(only, "all") == 0 || std::strcmp(only, path) == 0; };

    DramParams hbm2 = dram_preset("HBM2");
    hbm2.channels = 32;
    hbm2.data_rate_gbps = 2.34375;  // TPU v4-like: 1200 GB/s
    hbm2.timing.tCK = 2.0 / 2.34375;

    if (wanted("blocking")) report("HBM2 x32 blocking access (FCFS), window 2048", [&] {
        Dram dram(hbm2);
        TrafficGenerator gen(stream(bytes));
        return drive_blocking([&](const MemoryRequest& q, Picoseconds t) { return dram.access(q.address, q.bytes, q.write, t); },
                              gen, DriverParams{2048, 0});
    });
    if (wanted("queued")) report("HBM2 x32 queued controllers (FR-FCFS)", [&] {
        Dram dram(hbm2);
        TrafficGenerator gen(stream(bytes));
        return drive_dram_queued(dram, gen, DriverParams{2 * hbm2.units() * hbm2.queue_depth, 0});
    });

    MemoryHierarchyParams chip;
    chip.requesters = 108;
    chip.clock_hz = 1.41e9;
    chip.crossbar.latency_cycles = 10;
    chip.crossbar.bytes_per_cycle_per_port = 64;
    L2Params l2;
    l2.size_bytes = 40 << 20;
    l2.slices = 80;
    l2.ways = 16;
    l2.bytes_per_cycle_per_slice = 64;
    l2.hit_latency_cycles = 200;
    chip.l2 = l2;
    chip.dram = dram_preset("HBM2E");
    chip.dram.channels = 40;
    chip.dram.data_rate_gbps = 3.186;
    chip.dram.timing.tCK = 0.625 * 3.2 / 3.186;
    if (wanted("hierarchy")) report("A100-like crossbar + L2 + HBM2E (blocking)", [&] {
        MemoryHierarchy h(chip);
        TrafficGenerator gen(stream(bytes));
        std::uint64_t i = 0;
        return drive_blocking(
            [&](const MemoryRequest& q, Picoseconds t) { return h.access(static_cast<int>(i++ % 108), q.address, q.bytes, q.write, t); },
            gen, DriverParams{16384, 0});
    });
    if (wanted("hierarchy_queued")) report("A100-like hierarchy, L2 misses in FR-FCFS queues", [&] {
        MemoryHierarchy h(chip);
        TrafficGenerator gen(stream(bytes));
        return h.run_queued(gen, DriverParams{16384, 0});
    });
    return 0;
}
