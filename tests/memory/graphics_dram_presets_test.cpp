// GDDR5, GDDR6, GDDR6X and LPDDR5 presets: peak bandwidth per channel, unloaded latencies and a
// one-channel stream, each against figures worked by hand from the cited timings (the sources are
// in models/memory/dram.cpp and docs/memory.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "models/memory/dram.h"
#include "models/memory/traffic.h"

namespace accelsim::memory::graphics_dram_presets_test {
namespace {

struct HandFigures {
    const char* preset;
    double channel_peak_gbps;  // bus width / 8 x data rate
    double tck_ns;             // the command clock CK
    double burst_ns;           // BL / data rate
    double row_hit_ns;         // CL + burst
    double row_miss_ns;        // tRCD + CL + burst (closed bank)
    double row_conflict_ns;    // tRP + tRCD + CL + burst
    double refresh_share;      // tRFC / tREFI
};

// From the cited datasheet figures, by hand:
//  GDDR5 (DRAMsim3 GDDR5_8Gb_x32): tCK 2/3 ns; 32 bit x 6 Gb/s / 8 = 24 GB/s; BL8 / 6 = 1.333 ns;
//    tRCD = CL = tRP = 24 tCK = 16 ns; tRFC 74 tCK / tREFI 3800 tCK = 1.95 %.
//  GDDR6 (DRAMsim3 GDDR6_8Gb_x16, Micron brief): tCK 2/3 ns; 16 bit x 12 Gb/s / 8 = 24 GB/s;
//    BL16 / 12 = 1.333 ns; tRCD = CL = tRP = 24 tCK = 16 ns; tRFC 126 / tREFI 2929 = 4.30 %.
//  GDDR6X (GDDR6's ns at 21 Gb/s): tCK 16/21 = 0.762 ns; 16 bit x 21 / 8 = 42 GB/s; 16 bits per
//    pin / 21 = 0.762 ns; tRCD = CL = tRP = 21 tCK = 16 ns; tRFC 111 / tREFI 2562 = 4.33 %.
//  LPDDR5 (ramulator2 LPDDR5_6400): tCK 1.25 ns; 16 bit x 6.4 / 8 = 12.8 GB/s; BL16 / 6.4 =
//    2.5 ns; tRCD 15 tCK = 18.75 ns, CL 20 = 25 ns, tRPpb 15 = 18.75 ns; tRFCab 280 ns / tREFI
//    3905 ns = 7.17 %.
const HandFigures kHand[] = {
    {"GDDR5", 24.0, 2.0 / 3, 8 / 6.0, 16 + 8 / 6.0, 32 + 8 / 6.0, 48 + 8 / 6.0, 74.0 / 3800},
    {"GDDR6", 24.0, 2.0 / 3, 16 / 12.0, 16 + 16 / 12.0, 32 + 16 / 12.0, 48 + 16 / 12.0, 126.0 / 2929},
    {"GDDR6X", 42.0, 16.0 / 21, 16 / 21.0, 16 + 16 / 21.0, 32 + 16 / 21.0, 48 + 16 / 21.0, 111.0 / 2562},
    {"LPDDR5", 12.8, 1.25, 2.5, 25 + 2.5, 18.75 + 25 + 2.5, 18.75 + 18.75 + 25 + 2.5, 224.0 / 3124},
};

double ps_to_ns(Picoseconds ps) { return static_cast<double>(ps) / 1000.0; }

TEST(GraphicsDramPresets, OneChannelPeakAndBurstFromDataRateAndWidth) {
    for (const auto& h : kHand) {
        SCOPED_TRACE(h.preset);
        const DramParams p = dram_preset(h.preset);
        EXPECT_EQ(p.channels, 1);
        EXPECT_NEAR(p.peak_bytes_per_second() / 1e9, h.channel_peak_gbps, 1e-9);
        EXPECT_NEAR(p.timing.tCK, h.tck_ns, 1e-12);
        EXPECT_NEAR(p.burst_ns(), h.burst_ns, 1e-12);
        EXPECT_EQ(p.burst_bytes(), 32);  // a 32 B access on every one of these interfaces
        // Seamless bursts: the column-to-column spacing across bank groups is the burst itself.
        EXPECT_NEAR(p.timing.tCCD_S * p.timing.tCK, p.burst_ns(), 1e-9);
    }
}

TEST(GraphicsDramPresets, UnloadedRowHitMissAndConflictLatencies) {
    for (const auto& h : kHand) {
        SCOPED_TRACE(h.preset);
        const DramParams p = dram_preset(h.preset);
        Dram dram(p);
        // One channel: the next row of bank 0 is row_bytes x groups x banks further on. The
        // accesses stay inside the first tREFI (>= 1.95 us on every preset), so no refresh.
        const std::uint64_t next_row = static_cast<std::uint64_t>(p.row_bytes) * p.bank_groups * p.banks_per_group;
        EXPECT_NEAR(ps_to_ns(dram.access(0, 32, false, 0)), h.row_miss_ns, 0.002);
        EXPECT_NEAR(ps_to_ns(dram.access(0, 32, false, 300000) - 300000), h.row_hit_ns, 0.002);
        EXPECT_NEAR(ps_to_ns(dram.access(next_row, 32, false, 600000) - 600000), h.row_conflict_ns, 0.002);
        const DramStats s = dram.stats();
        EXPECT_EQ(s.bursts.row_misses, 1u);
        EXPECT_EQ(s.bursts.row_hits, 1u);
        EXPECT_EQ(s.bursts.row_conflicts, 1u);
        EXPECT_EQ(s.bursts.refreshes, 0u);
    }
}

TEST(GraphicsDramPresets, ConfigDataRatesKeepTheCoreNanosecondsAndTheBurstInCycles) {
    // t4 and k80 run their memories at 10 and 5 Gb/s: GDDR6 at 10 Gb/s moves CK to 10/8 GHz
    // (tCK 0.8 ns), GDDR5 at 5 Gb/s to 5/4 GHz (0.8 ns). tRCD = CL = tRP = 16 ns = 20 tCK; the
    // burst is 16 / 10 = 8 / 5 = 1.6 ns = 2 tCK = tCCD_S. Closed-bank read: 16 + 16 + 1.6 = 33.6 ns.
    for (const char* preset : {"GDDR6", "GDDR5"}) {
        SCOPED_TRACE(preset);
        DramConfig c;
        c.preset = preset;
        c.channels = 1;
        c.bus_width_bits = std::string(preset) == "GDDR6" ? 16 : 32;
        c.data_rate_gbps = std::string(preset) == "GDDR6" ? 10.0 : 5.0;
        c.row_bytes = std::string(preset) == "GDDR6" ? 2048 : 4096;
        const DramParams p = dram_params_from(c);
        EXPECT_NEAR(p.timing.tCK, 0.8, 1e-12);
        EXPECT_EQ(p.timing.CL, 20);
        EXPECT_EQ(p.timing.tRCD, 20);
        EXPECT_EQ(p.timing.tRP, 20);
        EXPECT_EQ(p.timing.tCCD_S, 2);
        EXPECT_NEAR(p.burst_ns(), 1.6, 1e-12);
        Dram dram(p);
        EXPECT_NEAR(ps_to_ns(dram.access(0, 32, false, 0)), 33.6, 0.002);
    }
    // l4 and a10g: GDDR6 at 12.5 Gb/s, tCK 8 / 12.5 = 0.64 ns; 16 ns = 25 tCK; burst 1.28 ns.
    DramConfig l4;
    l4.preset = "GDDR6"; l4.channels = 12; l4.bus_width_bits = 16; l4.data_rate_gbps = 12.5; l4.row_bytes = 2048;
    const DramParams p = dram_params_from(l4);
    EXPECT_NEAR(p.timing.tCK, 0.64, 1e-12);
    EXPECT_EQ(p.timing.CL, 25);
    EXPECT_NEAR(p.timing.CL * p.timing.tCK, 16.0, 1e-9);
    EXPECT_NEAR(p.timing.tCCD_S * p.timing.tCK, p.burst_ns(), 1e-12);
    EXPECT_NEAR(p.peak_bytes_per_second(), 300e9, 1e-3);
}

TEST(GraphicsDramPresets, OneChannelStreamLosesWhatRefreshAndRowSwitchesTake) {
    // Reads only, so no read/write turnaround. By hand, per preset:
    // * Refresh: the open rows are precharged first (tRP); the last data before it end CL + burst
    //   after their column command, the first data after it start tRCD + CL after their ACT, so
    //   the data bus idles tRP + tRFC + tRCD - burst per tREFI; then the four bank groups reopen
    //   tRRD_S apart, up to (groups - 1) x tRRD_S more.
    // * Row switches: the stream (channel_low, one channel) covers a bank's row in all 4 groups,
    //   256 bursts, then moves to the next bank, whose old row must close. FR-FCFS opens it as soon
    //   as a burst for it is queued, queue_depth bursts ahead: the bus stalls by
    //   tRP + tRCD - queue_depth x burst when that is positive. GDDR5, GDDR6 and LPDDR5 hide it
    //   (32 x 1.33 / 2.5 ns >= 32 / 37.5 ns); GDDR6X does not: 32 x 0.762 = 24.4 ns against
    //   32 ns, 7.6 ns per 256 x 0.762 = 195 ns (3.9 %).
    // Refresh share: GDDR5 3.16-3.95 %, GDDR6 5.87-6.79 %, GDDR6X 5.94-7.17 %, LPDDR5 8.07-8.45 %.
    for (const auto& h : kHand) {
        SCOPED_TRACE(h.preset);
        const DramParams p = dram_preset(h.preset);
        const auto& t = p.timing;
        const double trefi = t.tREFI * t.tCK, burst = p.burst_ns();
        const double refresh_idle = (t.tRP + t.tRFC + t.tRCD) * t.tCK - burst;
        const double reopen = (p.bank_groups - 1) * t.tRRD_S * t.tCK;
        const double bank_stall = std::max(0.0, (t.tRP + t.tRCD) * t.tCK - p.queue_depth * burst);
        const double bank_turn = static_cast<double>(p.bank_groups * p.columns_per_row()) * burst;
        const double stall_share = bank_stall / bank_turn;
        TrafficParams traffic;
        traffic.pattern = TrafficPattern::stream;
        traffic.request_bytes = 64;
        // 20 refresh intervals of data at peak.
        traffic.total_bytes = static_cast<std::uint64_t>(20 * trefi * p.peak_bytes_per_second() * 1e-9) / 4096 * 4096;
        Dram dram(p);
        TrafficGenerator gen(traffic);
        const DriveResult r = drive_dram_queued(dram, gen, DriverParams{2 * p.queue_depth, 0});
        const double share = r.achieved_bytes_per_second() / p.peak_bytes_per_second();
        EXPECT_LE(share, 1 - h.refresh_share);  // refresh alone
        EXPECT_LE(share, 1 - refresh_idle / trefi - stall_share + 1e-3);
        if (bank_stall == 0) {
            EXPECT_GE(share, 1 - (refresh_idle + reopen) / trefi - 1e-3);
        } else {
            // GDDR6X: 94.1 % - 3.9 % = 90.2 % at most; measured 87.8 %: after each stall the bursts
            // of the four groups come back in a clump and tCCD_L = 4 tCK = four 1-tCK bursts leaves
            // the rotation no slack to catch up.
            EXPECT_NEAR(stall_share, 7.62 / 195.0, 1e-3);
            EXPECT_GE(share, 0.85);
        }
        EXPECT_GE(dram.stats().bursts.refreshes, 19u);
    }
}

}  // namespace
}  // namespace accelsim::memory::graphics_dram_presets_test
