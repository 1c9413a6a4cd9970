#pragma once
// Sampled simulation of the trips of a kernel's main loop (gpu.sampling = "waves_and_trips";
// docs/gpu.md "Sampled simulation: loop trips").
//
// A GEMM's blocks spend nearly all their time in one loop whose trips are the same work on the
// next slice of K. While every resident warp of the chip stands inside that loop (and the
// resident blocks do not change), the chip crosses its j-th trip when its warps have, on average,
// taken their j-th back-edge since the series began; the cycles of those crossings give the trip
// time (steady_trips: a fit with its 95 % half-width and trend, the form of the wave rule in
// wave_sampling.h). Once a skip of N trips is within the rule (trips_within), every resident
// block's warps run N trips on functionally, from where each stands to the same place N trips
// later (advance_loop_trips: registers, shared memory and stores as the trips leave them; the
// sectors they touch enter the caches untimed), and the timing state (scoreboards, pipelines,
// requests in flight, DRAM) stays as it was: in a steady loop that is the state N trips later,
// shifted by N trip times. The launch's cycles gain N x the steady trip time; counters that scale
// with work gain their rate over the window times that many cycles. N leaves `margin` trips to the
// warp with the fewest left, so every block's last trips, its epilogue and the drain are simulated.
#include <cstdint>
#include <functional>
#include <vector>

#include "models/simt/simt_gpu.h"
#include "models/simt/wave_sampling.h"

namespace accelsim::simt {

// The loop a launch may sample, from the kernel's lowering: its first instruction, the backward
// branch to it, and the back-edges each warp takes over a block's life (the same for every block).
struct SampledLoop {
    int head_pc = -1;
    int back_edge_pc = -1;
    std::uint32_t trips_per_block = 0;
};

// Whether `kernel` may have `loop` sampled: a backward branch to the head, no cluster, and nothing
// in the loop whose state lives outside the warps, blocks and timing the sampler keeps (mbarriers,
// TMA, wgmma groups, shuffles of waves of 64): such a loop is never sampled.
bool loop_can_be_sampled(const Kernel& kernel, const SampledLoop& loop);

// The trip time from the crossing times of the whole trips, crossings[first..]: trip k of the
// window crossed at t_k = a + T x_k + c (x_k^2 - mean x^2), x_k = k less the window's centre,
// least squares. A crossing is a mean over warps whose back-edges fall early or late by a
// jitter of their own that does not add up along the series, so the mean trip time is the
// fitted T (its error falls as n^-1.5 over n trips, where the mean of n trip durations, each two
// jitters apart, would keep their noise), its 95 % half-width Student's t (n - 2 degrees of
// freedom) x the residuals' deviation / sqrt(sum x^2), and the trend of the trip time per trip 2c. Skipping N trips after
// the window is off by at most N x half_width + |slope| x N x (n / 2 + (N + 1) / 2), the form of
// the wave rule (wave_sampling.h). trips = 0 when the window has fewer than 4 crossings.
struct SteadyTrips {
    std::size_t trips = 0;  // in the window (its crossings less one)
    double mean = 0, half_width = 0, slope = 0;
    double error_cycles(std::uint64_t skipped) const;
};
SteadyTrips steady_trips(const std::vector<double>& crossings, std::size_t first);
// The most trips, at most `most`, whose skip is within `tolerance` of the cycles it skips:
// error_cycles(N) <= tolerance x N x mean (a launch skips again at every wave, so each skip answers
// for its own cycles). 0: none.
std::uint32_t trips_within(const SteadyTrips& steady, std::uint32_t most, double tolerance);

class TripSampler {
public:
    explicit TripSampler(WaveSamplingRule rule = {}, std::uint32_t margin = 2) : rule_(rule), margin_(margin) {}

    SampledLoop loop;
    // The caller's own counters (the memory port's traffic): on_snapshot(i) at the i-th window
    // end of a series (i = 0 starts a new one); on_skip(i, scale) when a skip extrapolates from
    // the i-th: add scale x (now - what the i-th saw).
    std::function<void(std::size_t window)> on_snapshot = nullptr;
    std::function<void(std::size_t from_window, double scale)> on_skip = nullptr;

    // GridLaunch sets how to read the launch's counters (the skipped trips' included).
    void begin(std::function<KernelStats()> snapshot);
    // A new series of trips starts (the resident blocks changed, a warp left the loop, or a skip).
    void restart();
    // At a window's end (cycle: the launch's simulated cycle, skipped cycles not included), per
    // group of blocks (simt_gpu.h: alike in the blocks their SM holds and their rank on it). Groups
    // run their trips at different rates, so a skip compresses every block by the same cycles D and
    // each group skips the trips that take it D: D is the least, over the
    // groups, of what each group's rule allows it (trips_within x its trip time), and group g
    // skips round(D / T_g) trips. Returns the trips per group to advance now (all 0: no skip).
    const std::vector<std::uint32_t>& window_end(std::uint64_t cycle, const std::vector<TripGroup>& groups);

    struct Skip {
        std::uint64_t skipped_cycles = 0;  // D
        std::uint32_t most_trips = 0;      // the most trips a group skipped
        double error_cycles = 0;           // over the groups, the largest error_cycles(N_g) + |N_g T_g - D|
    };
    const std::vector<Skip>& skips() const { return skips_; }
    // Sums over the skips (skipped_trips: of the group that skipped most at each).
    std::uint64_t skipped_trips() const { return skipped_trips_; }
    double error_cycles() const { return error_cycles_; }
    // The counters the last skip adds (their rate over the window x its skipped cycles).
    const KernelStats& last_skip_counters() const { return last_extra_; }

private:
    // Trips in the smallest window judged (the last three quarters of the trips a group crossed).
    static constexpr std::size_t kMinWindowTrips = 8;
    WaveSamplingRule rule_;
    std::uint32_t margin_;
    std::function<KernelStats()> snapshot_;
    // The series: each group's crossings, and the window ends seen (cycle and counters).
    std::vector<std::vector<double>> crossings_;
    std::vector<std::uint64_t> seen_at_;
    std::vector<KernelStats> seen_;
    std::vector<std::uint32_t> skip_;
    std::vector<SteadyTrips> steady_;  // per group, at the last window end
    std::vector<Skip> skips_;
    std::uint64_t skipped_trips_ = 0;
    double error_cycles_ = 0;
    KernelStats last_extra_;
};

// Adds the counters that scale with work of `extra` to `s` (not cycles or ratios).
void add_work_counters(KernelStats& s, const KernelStats& extra);

}  // namespace accelsim::simt
