// Scratchpad capacity and banking, crossbar port contention.
#include <gtest/gtest.h>

#include <string>

#include "models/memory/crossbar.h"
#include "models/memory/scratchpad.h"

namespace accelsim::memory {
namespace {

ScratchpadParams vmem() {
    ScratchpadParams p;
    p.name = "vmem";
    p.capacity_bytes = 1 << 20;
    p.banks = 16;
    p.bank_bytes = 64;  // 1 KiB per cycle
    p.ports = 1;
    p.latency_cycles = 2;
    p.clock_hz = 1e9;
    return p;
}

TEST(Scratchpad, AllocationBeyondCapacityIsAnError) {
    Scratchpad s(vmem());
    const auto a = s.allocate(512 << 10);
    const auto b = s.allocate(512 << 10);
    EXPECT_EQ(a, 0);
    EXPECT_EQ(b, 512 << 10);
    EXPECT_EQ(s.free_bytes(), 0);
    try {
        s.allocate(1);
        ADD_FAILURE() << "allocation beyond capacity accepted";
    } catch (const ScratchpadCapacityError& e) {
        EXPECT_NE(std::string(e.what()).find("vmem"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("1048576"), std::string::npos);  // the capacity
    }
    s.free(a);
    EXPECT_EQ(s.allocate(256 << 10), 0);  // the freed block is reused
    EXPECT_THROW(s.allocate(512 << 10), ScratchpadCapacityError);  // only 256 KiB left
    EXPECT_THROW(s.free(12345), std::invalid_argument);
}

TEST(Scratchpad, FreedNeighboursCoalesce) {
    Scratchpad s(vmem());
    const auto a = s.allocate(256 << 10), b = s.allocate(256 << 10), c = s.allocate(256 << 10);
    s.free(a);
    s.free(c);
    s.free(b);  // joins a and c into one free block with the tail
    EXPECT_EQ(s.allocate(1 << 20), 0);
}

TEST(Scratchpad, BankedBandwidthAndPorts) {
    Scratchpad s(vmem());
    // 4096 B = 64 words of 64 B over 16 banks: 4 cycles; unaligned by one byte: 65 words, 5 cycles.
    EXPECT_EQ(s.access_cycles(0, 4096), 4);
    EXPECT_EQ(s.access_cycles(1, 4096), 5);
    EXPECT_EQ(s.access_cycles(0, 64), 1);
    // One port: two accesses at t=0 serialise; each completes busy + 2 cycles latency later.
    EXPECT_EQ(s.access(0, 4096, false, 0), 6000u);
    EXPECT_EQ(s.access(0, 4096, true, 0), 10000u);
    ScratchpadParams two = vmem();
    two.ports = 2;
    Scratchpad d(two);
    EXPECT_EQ(d.access(0, 4096, false, 0), 6000u);
    EXPECT_EQ(d.access(0, 4096, false, 0), 6000u);  // the second port is free
}

TEST(Crossbar, PortsSerialiseAndLatencyAdds) {
    CrossbarParams p;
    p.requesters = 2;
    p.targets = 2;
    p.latency_cycles = 5;
    p.bytes_per_cycle_per_port = 32;
    p.clock_hz = 1e9;
    Crossbar x(p);
    // 128 B over a 32 B/cycle port: 4 cycles, + 5 cycles latency = 9 ns.
    EXPECT_EQ(x.traverse(0, 0, 128, 0), 9000u);
    // Another requester to the same target waits for the output port: 4 + 4 + 5.
    EXPECT_EQ(x.traverse(1, 0, 128, 0), 13000u);
    // Different input and output ports: no wait.
    Crossbar y(p);
    EXPECT_EQ(y.traverse(0, 0, 128, 0), 9000u);
    EXPECT_EQ(y.traverse(1, 1, 128, 0), 9000u);
    EXPECT_THROW(y.traverse(2, 0, 8, 0), std::out_of_range);
}

}  // namespace
}  // namespace accelsim::memory

namespace accelsim::memory {
namespace {

TEST(MemoryStats, CountersAreRegisteredOnceAndReadLive) {
    Scratchpad s(vmem());
    StatsRegistry registry;
    s.register_stats(registry, "chip.core0.vmem");
    s.access(0, 4096, false, 0);
    s.access(0, 100, true, 0);
    const auto snap = registry.snapshot();
    ASSERT_EQ(snap.size(), 5u);
    EXPECT_EQ(snap[0].name, "chip.core0.vmem.reads");
    EXPECT_EQ(snap[0].value, 1);
    EXPECT_EQ(snap[3].name, "chip.core0.vmem.bytes_written");
    EXPECT_EQ(snap[3].value, 100);
    // Busy: 4096 B = 64 words over 16 banks = 4 cycles; 100 B = 2 words in 2 banks = 1 cycle; 1 ns each.
    EXPECT_EQ(snap[4].value, 5000);
}

}  // namespace
}  // namespace accelsim::memory
