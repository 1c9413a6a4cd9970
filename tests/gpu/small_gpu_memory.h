#pragma once
// The small GPU memory system the port tests share: 1 GHz SM clock (1000 ps a cycle, so no
// rounding), `sms` requesters, crossbar of 64 B/cycle ports without latency, a 1 MiB 4-slice L2
// with a 200-cycle hit latency, 8 HBM2 channels x 128 bits x 2 Gb/s.
#include "models/memory/dram.h"
#include "models/memory/l2_cache.h"
#include "models/memory/memory_hierarchy.h"

namespace accelsim::gpu::test {

inline memory::MemoryHierarchyParams small_gpu(int sms) {
    memory::MemoryHierarchyParams p;
    p.requesters = sms;
    p.clock_hz = 1e9;
    p.crossbar.latency_cycles = 0;
    p.crossbar.bytes_per_cycle_per_port = 64;
    memory::L2Params l2;
    l2.size_bytes = 1 << 20;
    l2.slices = 4;
    l2.hit_latency_cycles = 200;
    l2.bytes_per_cycle_per_slice = 64;
    p.l2 = l2;
    p.dram = memory::dram_preset("HBM2");
    p.dram.channels = 8;
    p.dram.bus_width_bits = 128;
    p.dram.data_rate_gbps = 2.0;
    return p;
}

}  // namespace accelsim::gpu::test
