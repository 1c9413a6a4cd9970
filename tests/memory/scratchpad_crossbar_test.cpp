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

// All crossbar cases: 1 GHz (1000 ps a cycle), 32 B/cycle ports, 5 cycles latency, so a 128 B
// transfer occupies a port for 128 / 32 = 4 cycles = 4000 ps.
CrossbarParams crossbar_params(int requesters, int targets) {
    CrossbarParams p;
    p.requesters = requesters;
    p.targets = targets;
    p.latency_cycles = 5;
    p.bytes_per_cycle_per_port = 32;
    p.clock_hz = 1e9;
    return p;
}

TEST(Crossbar, OneTransferTakesSerializationPlusLatency) {
    Crossbar x(crossbar_params(2, 2));
    // 4 cycles through the ports (cut-through: input and output overlap) + 5 cycles = 9 ns.
    EXPECT_EQ(x.traverse(0, 0, 128, 0), 9000u);
    // Ports are billed to the picosecond: 1 B is 1/32 cycle = 31.25 -> 31 ps, + 5 ns after its
    // arrival at 20 ns.
    EXPECT_EQ(x.traverse(1, 1, 1, 20000), 25031u);
    EXPECT_EQ(x.stats().transfers, 2u);
    EXPECT_EQ(x.stats().bytes, 129u);
    EXPECT_EQ(x.stats().input_wait_ps + x.stats().output_wait_ps + x.stats().backpressure_ps, 0u);
    EXPECT_THROW(x.traverse(2, 0, 8, 0), std::out_of_range);
    EXPECT_THROW(x.traverse(0, -1, 8, 0), std::out_of_range);
}

TEST(Crossbar, TwoRequestersToOneTargetSerializeAtTheOutput) {
    Crossbar x(crossbar_params(2, 2));
    EXPECT_EQ(x.traverse(0, 0, 128, 0), 9000u);
    // Requester 1's own input port is free: its transfer crosses at once into target 0's buffer,
    // waits there for the output port (free at 4 ns), leaves at 4 + 4 = 8 ns, + 5 = 13 ns.
    EXPECT_EQ(x.traverse(1, 0, 128, 0), 13000u);
    EXPECT_EQ(x.stats().output_wait_ps, 4000u);
    EXPECT_EQ(x.stats().input_wait_ps, 0u);
}

TEST(Crossbar, OneRequesterToTwoTargetsSerializesAtTheInputOnly) {
    Crossbar x(crossbar_params(2, 2));
    EXPECT_EQ(x.traverse(0, 0, 128, 0), 9000u);
    // The input port is busy until 4 ns; target 1's output is idle: 4 + 4 + 5 = 13 ns.
    EXPECT_EQ(x.traverse(0, 1, 128, 0), 13000u);
    EXPECT_EQ(x.stats().input_wait_ps, 4000u);
    EXPECT_EQ(x.stats().output_wait_ps, 0u);
}

TEST(Crossbar, ABusyTargetDoesNotBlockItsRequestersOtherTargets) {
    // The case the unbuffered crossbar got wrong (head-of-line blocking): requester 1 sends to
    // the busy target 0, then to the idle target 1.
    Crossbar x(crossbar_params(2, 2));
    EXPECT_EQ(x.traverse(0, 0, 128, 0), 9000u);
    EXPECT_EQ(x.traverse(1, 0, 128, 0), 13000u);  // buffered at target 0 from 0 to 4 ns
    // Requester 1's input port carried its first transfer from 0 to 4 ns and is free then:
    // 4 + 4 + 5 = 13 ns. (Unbuffered, the port was held until that transfer left target 0 at
    // 8 ns: 8 + 4 + 5 = 17 ns.)
    EXPECT_EQ(x.traverse(1, 1, 128, 0), 13000u);
}

TEST(Crossbar, AFullOutputBufferHoldsTheInputPort) {
    CrossbarParams p = crossbar_params(3, 2);
    p.output_buffer_transfers = 2;
    Crossbar x(p);
    // Three requesters to target 0 at 0 ns. Departures from target 0: 4, 8 ns. The third finds
    // both slots taken until the first leaves at 4 ns: it enters at 4, leaves the output at
    // max(4, 8) + 4 = 12 ns, + 5 = 17 ns.
    EXPECT_EQ(x.traverse(0, 0, 128, 0), 9000u);
    EXPECT_EQ(x.traverse(1, 0, 128, 0), 13000u);
    EXPECT_EQ(x.traverse(2, 0, 128, 0), 17000u);
    EXPECT_EQ(x.stats().backpressure_ps, 4000u);
    EXPECT_EQ(x.stats().output_wait_ps, 4000u + 4000u);  // 4 to 8 ns for each of the last two
    // Requester 2's input port carried that transfer from 4 to 8 ns, so its next one, to the idle
    // target 1, starts at 8: 8 + 4 + 5 = 17 ns.
    EXPECT_EQ(x.traverse(2, 1, 128, 0), 17000u);
    // With an unbounded buffer the third transfer enters at once (same 17 ns: the output is the
    // limit), and requester 2's port is free at 4 ns: 4 + 4 + 5 = 13 ns to target 1.
    p.output_buffer_transfers = 0;
    Crossbar y(p);
    y.traverse(0, 0, 128, 0);
    y.traverse(1, 0, 128, 0);
    EXPECT_EQ(y.traverse(2, 0, 128, 0), 17000u);
    EXPECT_EQ(y.traverse(2, 1, 128, 0), 13000u);
    EXPECT_EQ(y.stats().backpressure_ps, 0u);
    p.output_buffer_transfers = -1;
    EXPECT_THROW(Crossbar{p}, std::invalid_argument);
}

TEST(Crossbar, HalfAPortWidthTakesHalfACycle) {
    // 16 B on a 32 B/cycle port: 500 ps, so two such transfers from two requesters to one target
    // leave it back to back at 0.5 and 1 ns (whole-cycle billing would give 1 and 2 ns).
    Crossbar x(crossbar_params(2, 2));
    EXPECT_EQ(x.traverse(0, 0, 16, 0), 5500u);
    EXPECT_EQ(x.traverse(1, 0, 16, 0), 6000u);
    EXPECT_EQ(x.stats().output_wait_ps, 500u);
}

TEST(Crossbar, TryStartHoldsTheTransferAtAFullBufferAndBooksPortsAtItsStart) {
    // One-transfer buffers. Requester 1 queues two transfers at 0 ns, to target 0 (busy: requester
    // 0's transfer occupies its buffer until it leaves at 4 ns) and then to target 1. Requester 2
    // sends to target 1 at 1 ns.
    CrossbarParams p = crossbar_params(3, 2);
    p.output_buffer_transfers = 1;
    Crossbar x(p);
    EXPECT_EQ(x.try_start(0, 0, 128, 0, 0).time, 9000u);
    const Crossbar::Start held = x.try_start(1, 0, 128, 0, 0);
    EXPECT_FALSE(held.started);
    EXPECT_EQ(held.time, 4000u);  // when target 0's buffer frees
    EXPECT_EQ(x.stats().backpressure_ps, 4000u);
    // Nothing was booked for requester 1, so requester 2 finds target 1 idle: 1 + 4 + 5 = 10 ns.
    // (traverse books requester 1's second transfer at call time, on target 1 from 8 to 12 ns,
    // and requester 2's would leave at 16 ns: 21 ns, below.)
    const Crossbar::Start other = x.try_start(2, 1, 128, 1000, 1000);
    EXPECT_TRUE(other.started);
    EXPECT_EQ(other.time, 10000u);
    // At 4 ns requester 1's first transfer starts: 4 + 4 + 5 = 13 ns; its second waits for the
    // input port until 8 ns and then for nothing (target 1 freed at 5 ns): 8 + 4 + 5 = 17 ns.
    EXPECT_EQ(x.try_start(1, 0, 128, 0, 4000).time, 13000u);
    const Crossbar::Start input_busy = x.try_start(1, 1, 128, 0, 4000);
    EXPECT_FALSE(input_busy.started);
    EXPECT_EQ(input_busy.time, 8000u);
    EXPECT_EQ(x.try_start(1, 1, 128, 0, 8000).time, 17000u);
    EXPECT_EQ(x.stats().backpressure_ps, 4000u);
    EXPECT_EQ(x.stats().input_wait_ps, 8000u);  // the second transfer, 0 to 8 ns
    EXPECT_EQ(x.stats().output_wait_ps, 0u);
    EXPECT_EQ(x.stats().transfers, 4u);

    Crossbar y(p);
    y.traverse(0, 0, 128, 0);
    EXPECT_EQ(y.traverse(1, 0, 128, 0), 13000u);
    EXPECT_EQ(y.traverse(1, 1, 128, 0), 17000u);
    EXPECT_EQ(y.traverse(2, 1, 128, 1000), 21000u);
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
