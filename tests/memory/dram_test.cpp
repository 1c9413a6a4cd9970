// HBM / DRAM model: stream bandwidth vs peak, random and strided traffic, unloaded latency,
// scheduling, refresh, and the DramConfig -> DramParams mapping.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "models/memory/dram.h"
#include "models/memory/traffic.h"

namespace accelsim::memory::dram_test {
namespace {

// Enough requests in flight to keep every controller queue full (twice the queue capacity, so
// requests that left the queue but still await their data do not starve it).
DriverParams saturating(const DramParams& p) { return DriverParams{2 * p.units() * p.queue_depth, 0}; }

// Long enough to cover `refresh_periods` x tREFI, so refresh is paid for in the average.
std::uint64_t bytes_for(const DramParams& p, double refresh_periods) {
    const double seconds = refresh_periods * p.timing.tREFI * p.timing.tCK * 1e-9;
    const auto bytes = static_cast<std::uint64_t>(p.peak_bytes_per_second() * seconds);
    return (bytes / 4096 + 1) * 4096;
}

struct QueuedRun {
    DriveResult result;
    DramStats stats;
};

QueuedRun run_queued(const DramParams& p, const TrafficParams& t) {
    Dram dram(p);
    TrafficGenerator gen(t);
    QueuedRun r{drive_dram_queued(dram, gen, saturating(p)), DramStats{}};
    r.stats = dram.stats();
    return r;
}

TrafficParams stream(std::uint64_t bytes, std::uint32_t size = 64) {
    TrafficParams t;
    t.pattern = TrafficPattern::stream;
    t.request_bytes = size;
    t.total_bytes = bytes;
    return t;
}

TEST(Dram, SequentialReadsReachNinetyPercentOfPeakOnEveryPreset) {
    for (const auto& name : dram_preset_names()) {
        const DramParams p = dram_preset(name);
        // Peak = channels x bus width x data rate: HBM2 8 x 16 B x 2 Gb/s = 256 GB/s;
        // HBM2E 8 x 16 B x 3.2 = 409.6 GB/s; HBM3 16 x 8 B x 6.4 = 819.2 GB/s;
        // DDR3-1600 1 x 8 B x 1.6 = 12.8 GB/s; DDR4-2400 1 x 8 B x 2.4 = 19.2 GB/s; GDDR5 1 x 4 B x 6
        // = 24 GB/s; GDDR6 1 x 2 B x 12 = 24 GB/s; GDDR6X 1 x 2 B x 21 = 42 GB/s; LPDDR5 1 x 2 B x
        // 6.4 = 12.8 GB/s.
        const double peak = p.channels * (p.bus_width_bits / 8.0) * p.data_rate_gbps * 1e9;
        ASSERT_DOUBLE_EQ(p.peak_bytes_per_second(), peak) << name;
        const QueuedRun r = run_queued(p, stream(bytes_for(p, 10)));
        // All-bank refresh alone costs tRFC/tREFI (260/3900 = 416/6240 = 6.7% on HBM, 7.2% on
        // LPDDR5); row switches and bank-group turnarounds must be hidden by the queue. GDDR6X's
        // 0.76 ns bursts are the exception: 32 queued bursts (24.4 ns) do not cover a bank's
        // tRP + tRCD (32 ns), which costs 3.9% more (graphics_dram_presets_test.cpp works it out).
        EXPECT_GE(r.result.achieved_bytes_per_second(), (name == "GDDR6X" ? 0.85 : 0.90) * peak) << name;
        EXPECT_LE(r.result.achieved_bytes_per_second(), peak) << name;
        EXPECT_GT(r.stats.bursts.refreshes, 0u) << name;
        EXPECT_GT(r.stats.bursts.row_hits, 10 * (r.stats.bursts.row_misses + r.stats.bursts.row_conflicts)) << name;
    }
}

struct ChipMemory {
    const char* chip;
    double peak_gbps;
    DramConfig hbm;
};

// The chip memory systems of the shipped configs, built here from their public figures:
//  TPU v4: 32 GiB HBM2, 1200 GB/s = 4 stacks x 8 channels x 128 bit x 2.34375 Gb/s.
//  A100 80GB: HBM2e, 2039 GB/s = 5 stacks x 8 channels x 128 bit x 3.186 Gb/s (2 pseudo-channels).
//  H100 SXM5: HBM3, 3.35 TB/s = 5 stacks x 16 channels x 64 bit x 5.234375 Gb/s (2 pseudo-channels).
std::vector<ChipMemory> chip_memories() {
    std::vector<ChipMemory> v;
    DramConfig tpu;
    tpu.preset = "HBM2"; tpu.channels = 32; tpu.bus_width_bits = 128; tpu.data_rate_gbps = 2.34375;
    tpu.row_bytes = 1024;
    v.push_back({"tpu_v4", 1200, tpu});
    DramConfig a100;
    a100.preset = "HBM2E"; a100.channels = 40; a100.pseudo_channels = 2; a100.bus_width_bits = 128;
    a100.data_rate_gbps = 3.186; a100.row_bytes = 1024;
    v.push_back({"a100", 2039.04, a100});
    DramConfig h100;
    h100.preset = "HBM3"; h100.channels = 80; h100.pseudo_channels = 2; h100.bus_width_bits = 64;
    h100.data_rate_gbps = 5.234375; h100.row_bytes = 1024;
    v.push_back({"h100", 3350, h100});
    return v;
}

TEST(Dram, SequentialReadsReachNinetyPercentOfPeakOnChipMemorySystems) {
    for (const auto& c : chip_memories()) {
        const DramParams p = dram_params_from(c.hbm);
        EXPECT_NEAR(p.peak_bytes_per_second() / 1e9, c.peak_gbps, 1e-6) << c.chip;
        const QueuedRun r = run_queued(p, stream(bytes_for(p, 5)));
        EXPECT_GE(r.result.achieved_bytes_per_second(), 0.90 * p.peak_bytes_per_second()) << c.chip;
    }
}

TEST(Dram, RandomSmallReadsFallFarBelowPeakBecauseOfRowMisses) {
    const DramParams p = dram_preset("HBM2");
    TrafficParams t;
    t.pattern = TrafficPattern::random;
    t.request_bytes = 32;
    t.total_bytes = 32 * 100000;
    t.footprint_bytes = 1ull << 32;
    const QueuedRun r = run_queued(p, t);
    const auto& b = r.stats.bursts;
    // Almost every burst opens a row: 4 GiB / (1 KiB rows) gives 4M rows over 128 banks, so the
    // chance that the next burst to a bank finds its row open is negligible.
    EXPECT_GT(b.row_misses + b.row_conflicts, 0.95 * static_cast<double>(b.reads));
    // Every ACT of a channel obeys tFAW (4 per 30 ns) and tRRD_S (4 ns): at most 4 ACTs / 30 ns,
    // each bringing one 32 B request: 8 channels x 32 B x 4 / 30 ns = 34.1 GB/s = 13.3% of peak.
    const double act_bound = 8 * 32.0 * 4 / 30e-9;
    EXPECT_LE(r.result.achieved_bytes_per_second(), act_bound * 1.001);
    EXPECT_GE(r.result.achieved_bytes_per_second(), 0.7 * act_bound);  // and that is what limits it
    EXPECT_LT(r.result.achieved_bytes_per_second(), 0.2 * p.peak_bytes_per_second());
}

TEST(Dram, UnloadedReadLatencyIsTheClosedForm) {
    DramParams p = dram_preset("HBM2");  // tCK 1 ns, tRCD 14, CL 14, BL 4 at 2 Gb/s = 2 ns
    p.controller_latency_ns = 5;
    Dram dram(p);
    // Closed bank: controller 5 + tRCD 14 + CL 14 + burst 2 = 35 ns.
    EXPECT_EQ(dram.access(0, 64, false, 0), 35000u);
    // Same row later (row open): 5 + CL 14 + burst 2 = 21 ns.
    EXPECT_EQ(dram.access(0, 64, false, 1000000) - 1000000, 21000u);
    // Another row of the same bank (channel_low: next row = row_bytes x units x groups x banks
    // = 1024 x 8 x 4 x 4): 5 + tRP 14 + tRCD 14 + CL 14 + burst 2 = 49 ns.
    const std::uint64_t next_row = 1024ull * 8 * 4 * 4;
    EXPECT_EQ(dram.access(next_row, 64, false, 2000000) - 2000000, 49000u);
    const DramStats s = dram.stats();
    EXPECT_EQ(s.bursts.row_misses, 1u);
    EXPECT_EQ(s.bursts.row_hits, 1u);
    EXPECT_EQ(s.bursts.row_conflicts, 1u);
    EXPECT_DOUBLE_EQ(s.latency.average_ns(), (35.0 + 21.0 + 49.0) / 3);
}

TEST(Dram, StridedSameBankDifferentRowsConflictsAndCrawls) {
    const DramParams p = dram_preset("HBM2");
    TrafficParams t;
    t.pattern = TrafficPattern::strided;
    t.request_bytes = 64;
    t.stride_bytes = 1024ull * 8 * 4 * 4;  // same channel, group and bank, next row
    t.total_bytes = 64 * 2000;
    const QueuedRun r = run_queued(p, t);
    EXPECT_EQ(r.stats.bursts.row_conflicts, 1999u);  // every access but the first
    EXPECT_EQ(r.stats.bursts.row_hits, 0u);
    // One bank serves one row per tRC = 48 ns: 64 B / 48 ns = 1.33 GB/s, 0.5% of the 256 GB/s peak.
    const double bank_bound = 64 / 48e-9;
    EXPECT_LE(r.result.achieved_bytes_per_second(), bank_bound * 1.001);
    EXPECT_GE(r.result.achieved_bytes_per_second(), 0.9 * bank_bound);
}

TEST(Dram, FrFcfsServesRowHitsFirstWhereFcfsThrashes) {
    // Sixteen bursts alternating between two rows of one bank, all queued at time 0.
    for (auto sched : {DramScheduler::fcfs, DramScheduler::fr_fcfs}) {
        DramParams p = dram_preset("HBM2");
        p.scheduler = sched;
        p.timing.tREFI = 0;
        DramController c(p);
        for (std::uint32_t i = 0; i < 16; ++i) {
            DramCoordinates w;
            w.row = i % 2;
            w.column = i / 2;
            c.enqueue({w, false, 0, i});
        }
        while (!c.empty()) c.decide();
        if (sched == DramScheduler::fcfs) {
            EXPECT_EQ(c.stats().row_conflicts, 15u);  // every switch closes the other row
        } else {
            EXPECT_EQ(c.stats().row_conflicts, 1u);  // all of row 0, then all of row 1
            EXPECT_EQ(c.stats().row_hits, 14u);
        }
    }
}

TEST(Dram, FrFcfsBatchesReadsAndWritesWhereFcfsPaysEveryTurnaround) {
    // Triad on HBM2 (two read streams, one write stream, interleaved R R W). FCFS on one channel:
    // after each write's data, the next read waits tWTR 8 + CL 14 = 22 ns; the two reads carry
    // 2 x 2 ns of data, the read-to-write turnaround costs 2 ns and the write 2 ns: 6 ns of data
    // per 30 ns = 20% of peak, less refresh (6.7%): 18.7%.
    TrafficParams t;
    t.pattern = TrafficPattern::mixed;
    t.total_bytes = 8 << 20;
    DramParams p = dram_preset("HBM2");
    p.scheduler = DramScheduler::fcfs;
    const double fcfs = run_queued(p, t).result.achieved_bytes_per_second() / p.peak_bytes_per_second();
    EXPECT_NEAR(fcfs, 0.20 * (1 - 260.0 / 3900), 0.01);
    // FR-FCFS picks the burst whose data can move first: writes gather into batches and the
    // turnaround is paid per batch, not per write.
    p.scheduler = DramScheduler::fr_fcfs;
    const double frfcfs = run_queued(p, t).result.achieved_bytes_per_second() / p.peak_bytes_per_second();
    EXPECT_GE(frfcfs, 0.75);
}

TEST(Dram, BlockingWritesArePostedAndDrainInBatches) {
    DramParams p = dram_preset("HBM2");
    p.channels = 1;
    p.queue_depth = 4;
    p.controller_latency_ns = 5;
    Dram dram(p);
    // Writes are acknowledged when they reach the controller (5 ns) and wait in the buffer.
    for (int i = 0; i < 3; ++i) EXPECT_EQ(dram.access(static_cast<std::uint64_t>(i) * 64, 64, true, 0), 5000u);
    EXPECT_EQ(dram.stats().bursts.writes, 0u);
    dram.access(3 * 64, 64, true, 0);  // the fourth fills the buffer: all four drain
    EXPECT_EQ(dram.stats().bursts.writes, 4u);
    // A read behind the batch. channel_low puts the four writes in bank groups 0..3 (bank 0, row 0):
    // write i opens its group at 5 + tRRD_S 4 x i ns, WR tRCD 14 later, data CWL 4 after that for
    // 2 ns: the last write data ends at 5 + 12 + 14 + 4 + 2 = 37 ns. The read (group 0, row open)
    // waits tWTR 8 after it: RD at 45, data CL 14 + burst 2 later = 61 ns.
    EXPECT_EQ(dram.access(4 * 64, 64, false, 0), 61000u);
    dram.access(5 * 64, 64, true, 100000);
    dram.drain_writes(200000);
    EXPECT_EQ(dram.stats().bursts.writes, 5u);
}

TEST(Dram, ClosedPagePolicyNeverHits) {
    DramParams p = dram_preset("HBM2");
    p.page_policy = PagePolicy::closed;
    const QueuedRun r = run_queued(p, stream(64 * 4096));
    EXPECT_EQ(r.stats.bursts.row_hits, 0u);
    EXPECT_EQ(r.stats.bursts.row_misses, 4096u);
}

TEST(Dram, RefreshHappensEveryTrefiEvenWhenIdle) {
    DramParams p = dram_preset("HBM2");  // tREFI 3900 ns, tRFC 260 ns
    p.channels = 1;
    Dram dram(p);
    dram.access(0, 64, false, 0);
    // Arriving at 10.5 tREFI, after ten refreshes; the last ends at 39 us + 260 ns < 40.95 us, so
    // the read sees a closed bank: tRCD + CL + burst = 30 ns.
    const Picoseconds t = 40950000;
    EXPECT_EQ(dram.access(0, 64, false, t) - t, 30000u);
    EXPECT_EQ(dram.stats().bursts.refreshes, 10u);
}

TEST(Dram, AReadMeetingADueRefreshAtAnIdleQueuedControllerOpensItsRowOnce) {
    // FR-FCFS, queued: a burst reaching an idle controller when a refresh is due. The refresh
    // closes every row and opens ahead for the queued bursts, this one included; the row must not
    // be opened a second time (before the fix: a conflict with itself, PRE after tRAS and ACT
    // after tRP, + 34 + 14 = 48 ns on HBM2). HBM2: tCK 1 ns, tRCD 14, CL 14, BL 4 at 2 Gb/s = 2 ns,
    // tREFI 3900, tRFC 260.
    const DramParams p = dram_preset("HBM2");
    ASSERT_EQ(p.scheduler, DramScheduler::fr_fcfs);
    DramController controller(p);
    DramCoordinates where;  // unit 0, bank group 0, bank 0, row 0
    controller.enqueue(DramController::Burst(where, false, 0, 1));
    const DramController::Issued first = controller.decide();
    EXPECT_EQ(first.data_end, 30000u);  // closed bank: tRCD + CL + burst
    // 10.5 tREFI later, another row of the same bank (so the open row does not end the look
    // ahead at once): ten refreshes are due, the last ends at 39,000 + 260 ns, before the burst.
    const Picoseconds t = 40950000;
    where.row = 1;
    controller.enqueue(DramController::Burst(where, false, t, 2));
    const DramController::Issued second = controller.decide();
    EXPECT_EQ(second.outcome, RowOutcome::miss);
    EXPECT_EQ(second.data_end - t, 30000u);  // a closed bank again, not 78 ns
    EXPECT_EQ(controller.stats().refreshes, 10u);
    EXPECT_EQ(controller.stats().activates, 2u);
    EXPECT_EQ(controller.stats().row_conflicts, 0u);
    EXPECT_EQ(controller.stats().row_misses, 2u);
}

TEST(Dram, AddressMapsPlaceConsecutiveBurstsAsDocumented) {
    DramParams p = dram_preset("HBM2");  // 64 B bursts, 8 channels, 4 groups, 16 columns per row
    DramAddressMapper low(p);
    EXPECT_EQ(low.map(64).unit, 1);
    EXPECT_EQ(low.map(64 * 8).bank_group, 1);
    EXPECT_EQ(low.map(64 * 8 * 4).column, 1);
    p.address_map = DramAddressMap::row_bank_col;
    DramAddressMapper rbc(p);
    EXPECT_EQ(rbc.map(64).column, 1);
    EXPECT_EQ(rbc.map(64).unit, 0);
    EXPECT_EQ(rbc.map(1024).bank_group, 1);
    p.address_map = DramAddressMap::bank_xor;
    DramAddressMapper xr(p);
    const std::uint64_t next_row = 1024ull * 8 * 4 * 4;
    EXPECT_EQ(low.map(next_row).bank_group, 0);
    EXPECT_EQ(xr.map(next_row).bank_group, 1);  // row 1 XORed into the group bits
}

TEST(Dram, InterleaveKeepsARunOfBurstsInOneChannelRow) {
    DramParams p = dram_preset("HBM2");  // 64 B bursts, 8 channels, 4 groups, 16 columns per row
    p.interleave_bytes = 256;            // 4 bursts per channel turn, 4 turns per row
    const DramAddressMapper m(p);
    EXPECT_EQ(m.map(64).unit, 0);
    EXPECT_EQ(m.map(64).column, 1);
    EXPECT_EQ(m.map(3 * 64).column, 3);
    EXPECT_EQ(m.map(256).unit, 1);
    EXPECT_EQ(m.map(256).column, 0);
    EXPECT_EQ(m.map(256 * 8).bank_group, 1);     // after all 8 channels' turns
    EXPECT_EQ(m.map(256 * 8 * 4).column, 4);     // the row's second turn
    EXPECT_EQ(m.map(256 * 8 * 4 + 64).column, 5);
    EXPECT_EQ(m.map(256 * 8 * 4).bank, 0);
    EXPECT_EQ(m.map(1024ull * 8 * 4).bank, 1);   // the stripe (row x channels x groups) is unchanged
    EXPECT_EQ(m.map(1024ull * 8 * 4).column, 0);
    EXPECT_EQ(row_stripe_bytes(p), 1024 * 8 * 4);
    // Each run of 8 turns covers the 8 channels once, rotated by a hash of the run, so rows of a
    // power-of-two pitch (2 KiB: every run starts a row) start on every channel, not on one.
    std::vector<int> starts(8, 0);
    for (std::uint64_t r = 0; r < 64; ++r) ++starts[static_cast<std::size_t>(m.map(r * 2048).unit)];
    for (int n : starts) EXPECT_GT(n, 0);
    for (std::uint64_t run : {0ull, 1ull, 5ull, 1000ull, 123457ull}) {
        std::vector<int> seen(8, 0);
        for (std::uint64_t i = 0; i < 8; ++i) ++seen[static_cast<std::size_t>(m.map((run * 8 + i) * 256).unit)];
        EXPECT_EQ(seen, std::vector<int>(8, 1)) << "run " << run;
    }
    p.interleave_bytes = 96;  // not a multiple of the burst
    EXPECT_THROW(validate(p), std::invalid_argument);
    p.interleave_bytes = 192;  // a multiple that does not divide the 1024 B row
    EXPECT_THROW(validate(p), std::invalid_argument);
}

TEST(Dram, WriteQueueDrainsBetweenTheWatermarks) {
    // Ramulator 2's rule: write mode once the write queue holds more than high x depth (or no read
    // waits), read mode again below low x depth with reads waiting. Depth 8, high 0.5, low 0.25:
    // enter above 4 writes, leave below 2.
    DramParams p = dram_preset("HBM2");
    p.timing.tREFI = 0;
    p.queue_depth = 2;
    p.write_queue_depth = 8;
    p.write_high_watermark = 0.5;
    p.write_low_watermark = 0.25;
    DramController c(p);
    // Five writes, then a read, all to row 0 of bank (0, 0), at time 0.
    for (std::uint32_t i = 0; i < 6; ++i) {
        DramCoordinates w;
        w.column = i;
        c.enqueue({w, i < 5, 0, i});
    }
    EXPECT_TRUE(c.has_space(true));   // 5 of 8 writes
    EXPECT_TRUE(c.has_space(false));  // 1 of 2 reads
    EXPECT_EQ(c.waiting_line(true), 1);
    EXPECT_EQ(c.waiting_line(false), 0);
    std::vector<std::uint32_t> order;
    while (!c.empty()) order.push_back(c.decide().tag);
    // 5 > 4: writes until 1 < 2 is left, then the read, then the last write (no read waits).
    EXPECT_EQ(order, (std::vector<std::uint32_t>{0, 1, 2, 3, 5, 4}));

    // Times (HBM2: tCK 1 ns, tRCD 14, CL 14, CWL 4, burst 2, tCCD_L 2, tWTR 8), three writes W1 W2
    // W4 and two reads R0 R3 at time 0, depth 4, high 0.5 (enter above 2), low 0.25 (leave below 1):
    // R0 (read mode at start) opens the row at 0; the first decision sees 3 > 2 writes. W1: WR at
    // tRCD 14, data 18..20; W2: WR 16 (tCCD_L), data ..22; W4: WR 18, data ..24. No write left:
    // R0's RD waits tWTR after the last write data, 24 + 8 = 32, data 46..48; R3: RD 34, data ..50.
    p.write_queue_depth = 4;
    DramController d(p);
    const bool writes[] = {false, true, true, false, true};
    for (std::uint32_t i = 0; i < 5; ++i) {
        DramCoordinates w;
        w.column = i;
        d.enqueue({w, writes[i], 0, i});
    }
    std::vector<std::pair<std::uint32_t, Picoseconds>> done;
    while (!d.empty()) {
        const auto issued = d.decide();
        done.emplace_back(issued.tag, issued.data_end);
    }
    const std::vector<std::pair<std::uint32_t, Picoseconds>> expected{
        {1, 20000}, {2, 22000}, {4, 24000}, {0, 48000}, {3, 50000}};
    EXPECT_EQ(done, expected);
    EXPECT_EQ(d.stats().row_misses, 1u);  // R0's activation
    EXPECT_EQ(d.stats().row_hits, 4u);
}

TEST(Dram, SharedQueueCountsReadsAndWritesTogether) {
    DramParams p = dram_preset("HBM2");
    p.queue_depth = 2;
    p.write_queue_depth = 0;  // one queue for both kinds
    DramController c(p);
    c.enqueue({DramCoordinates{}, true, 0, 0});
    c.enqueue({DramCoordinates{}, false, 0, 1});
    EXPECT_FALSE(c.has_space(true));
    EXPECT_FALSE(c.has_space(false));
    EXPECT_EQ(c.waiting_line(true), 0);
}

// address_of inverts map on every address map, with and without hashed interleave runs, for a
// power-of-two and a mixed-radix (80 units, as a100's 40 channels x 2) channel count.
TEST(Dram, AddressOfInvertsTheAddressMap) {
    for (const int channels : {8, 40}) {
        for (const DramAddressMap map : {DramAddressMap::channel_low, DramAddressMap::bank_xor, DramAddressMap::row_bank_col}) {
            for (const std::int64_t interleave : {std::int64_t{0}, std::int64_t{256}}) {
                DramParams p = dram_preset("HBM2");
                p.channels = channels;
                p.pseudo_channels = 2;
                p.address_map = map;
                p.interleave_bytes = interleave;
                const DramAddressMapper m(p);
                const std::int64_t columns = p.columns_per_row();
                const auto burst = static_cast<std::uint64_t>(p.burst_bytes());
                const auto capacity = static_cast<std::uint64_t>(p.row_bytes * p.rows_per_bank * p.bank_groups *
                                                                 p.banks_per_group * p.units());
                for (std::uint64_t i = 0; i < 5000; ++i) {
                    const std::uint64_t address = (i * 2654435761ull * 977) % capacity;
                    ASSERT_EQ(m.address_of(m.map(address)), address / burst * burst) << "address " << address;
                }
                DramCoordinates c;
                c.unit = p.units() - 1;
                c.bank_group = 3;
                c.bank = 2;
                c.column = columns - 1;
                for (std::int64_t row = 0; row < 300; ++row) {
                    c.row = row;
                    const DramCoordinates back = m.map(m.address_of(c));
                    ASSERT_EQ(std::tie(back.unit, back.bank_group, back.bank, back.row, back.column),
                              std::tie(c.unit, c.bank_group, c.bank, c.row, c.column))
                        << "row " << row;
                }
            }
        }
    }
}

TEST(Dram, BankXorTurnsTheSameBankStrideIntoParallelBanks) {
    DramParams p = dram_preset("HBM2");
    TrafficParams t;
    t.pattern = TrafficPattern::strided;
    t.stride_bytes = 1024ull * 8 * 4 * 4;
    t.total_bytes = 64 * 2000;
    const QueuedRun plain = run_queued(p, t);
    p.address_map = DramAddressMap::bank_xor;
    const QueuedRun xored = run_queued(p, t);
    // The XOR spreads consecutive rows over all 16 banks of the channel: no longer one tRC per
    // access, but tFAW-bound (4 ACTs per 30 ns), several times faster.
    EXPECT_GT(xored.result.achieved_bytes_per_second(), 3 * plain.result.achieved_bytes_per_second());
    EXPECT_LT(xored.stats.bursts.row_conflicts, plain.stats.bursts.row_conflicts);
}

TEST(DramParamsFrom, PresetThenOverridesThenValidation) {
    DramConfig c;
    c.preset = "HBM2";
    c.channels = 1;
    c.timing["tRCD"] = 20;
    DramParams p = dram_params_from(c);
    EXPECT_EQ(p.timing.tRCD, 20);
    EXPECT_EQ(p.timing.CL, 14);          // from the preset
    EXPECT_DOUBLE_EQ(p.timing.tCK, 1.0);  // 2 Gb/s as in the preset
    Dram dram(p);
    EXPECT_EQ(dram.access(0, 64, false, 0), (20 + 14 + 2) * 1000u);

    // The memory clock follows the data rate: 1 ns x 2 / 2.5 = 0.8 ns. Core timings keep their
    // nanoseconds: CL 14 ns = 17.5 -> 18 cycles, tRFC 260 ns = 325 cycles; the burst-bound tCCD_S
    // keeps its cycle; the tRCD override stays as given (20 cycles at the new clock).
    c.data_rate_gbps = 2.5;
    const DramParams fast = dram_params_from(c);
    EXPECT_DOUBLE_EQ(fast.timing.tCK, 0.8);
    EXPECT_EQ(fast.timing.CL, 18);
    EXPECT_EQ(fast.timing.tRFC, 325);
    EXPECT_EQ(fast.timing.tCCD_S, 1);
    EXPECT_EQ(fast.timing.tRCD, 20);

    DramConfig bad = c;
    bad.preset = "HBM9";
    EXPECT_THROW(
        {
            try {
                dram_params_from(bad);
            } catch (const std::invalid_argument& e) {
                EXPECT_NE(std::string(e.what()).find("hbm.preset"), std::string::npos);
                EXPECT_NE(std::string(e.what()).find("HBM2E"), std::string::npos);  // lists valid ones
                throw;
            }
        },
        std::invalid_argument);
    bad = c;
    bad.timing["tRCDX"] = 3;
    try {
        dram_params_from(bad);
        ADD_FAILURE() << "unknown timing accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("hbm.timing.tRCDX"), std::string::npos);
    }
    bad = c;
    bad.row_bytes = 100;  // not a multiple of the 64 B burst
    EXPECT_THROW(dram_params_from(bad), std::invalid_argument);
    bad = c;
    bad.timing["CL"] = 14.5;
    EXPECT_THROW(dram_params_from(bad), std::invalid_argument);
}

TEST(Dram, SameInputsSameOutputs) {
    TrafficParams t;
    t.pattern = TrafficPattern::random;
    t.total_bytes = 64 * 20000;
    const DramParams p = dram_preset("HBM3");
    const QueuedRun a = run_queued(p, t), b = run_queued(p, t);
    EXPECT_EQ(a.result.last_completion, b.result.last_completion);
    EXPECT_EQ(a.stats.bursts.row_conflicts, b.stats.bursts.row_conflicts);
    EXPECT_EQ(a.result.latency.average_ns(), b.result.latency.average_ns());
}

}  // namespace
}  // namespace accelsim::memory::dram_test
