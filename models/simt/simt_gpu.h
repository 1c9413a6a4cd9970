#pragma once
// Launching a kernel on a SIMT GPU: the public entry point of models/simt.
//
//   Kernel k = assemble_file("models/simt/kernels/saxpy.sasm");
//   GlobalMemory mem; uint32_t x = mem.allocate(4 * n); ...
//   KernelStats s = launch(k, {blocks, threads}, {n, a_bits, x, y}, mem, params);
//
// launch() runs the grid with one SmCore per SM in plain C++ (block dispatch in global time
// order), and SimtChipModule (simt_module.h) runs the same SmCores as one SystemC process per SM
// with identical results (the CLI uses it; tests and in-process tools use launch()).
//
// With a non-blocking port (GlobalMemoryPort::lookahead_cycles() = W > 0, e.g. the L2 + HBM
// hierarchy), the SMs run in windows of W cycles: each SM runs on its own to the window's end,
// submitting its sectors; then the port serves everything submitted before that end in time order
// and the answers go to the SMs' scoreboards. W is at most the port's minimum latency, so no answer
// is due inside the window that asked for it: the result is the one a simulator advancing every SM
// and the memory together, cycle by cycle, would give (conservative lookahead, as in parallel
// discrete-event simulation). With a blocking port, each SM runs ahead until one of its blocks
// completes (exact when the SMs share nothing but the dispatcher: FixedLatencyMemory).
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "models/simt/execution.h"
#include "models/simt/sm_core.h"

namespace accelsim::simt {

class WaveSampler;  // wave_sampling.h
class TripSampler;  // trip_sampling.h

struct SimtParams {
    int sms = 1;
    SmParams sm;
};

struct LaunchOptions {
    // Timing-only: do not compute floating-point payload instructions. Allowed only when the
    // kernel's fp_payload_skippable is true (then cycles are identical); otherwise launch() throws.
    bool skip_fp_payload = false;
    // Blocking ports only (a non-blocking port sets its own windows): 0, each SM runs ahead until
    // one of its blocks completes (exact when SMs share nothing but the block dispatcher, e.g.
    // FixedLatencyMemory). N > 0: SMs advance in lock-step windows of N cycles (SM 0..n-1 within
    // a window), so a shared blocking port sees requests in time order give or take N cycles.
    std::uint64_t sm_quantum_cycles = 0;
    // Non-blocking ports: windows of min(this, the port's lookahead) cycles; 0 = the lookahead.
    // Any window up to the lookahead gives identical results (tests run 1, the cycle-by-cycle
    // reference, against the default).
    std::uint64_t max_window_cycles = 0;
    // Timelines only (both off by default, costing nothing then): every SM logs its resident
    // warps (KernelStats::resident_warps), and a non-blocking port's caller hears the end of each
    // window, once the port has served everything before it (to sample its traffic).
    bool record_resident_warps = false;
    std::function<void(std::uint64_t window_end)> on_window = nullptr;
    // Sampled simulation (wave_sampling.h): the dispatcher reports block completions to it and
    // skips the whole waves it asks to. nullptr: every block runs. Ignored for clustered kernels.
    WaveSampler* wave_sampler = nullptr;
    // Loop-trip sampling (trip_sampling.h): at each window's end of a non-blocking port the
    // sampler may have every resident block run N trips of its loop on functionally, and the
    // launch's cycles and counters gain what those trips take. nullptr, another schedule, or a
    // loop that cannot be sampled (loop_can_be_sampled): every trip runs.
    TripSampler* trip_sampler = nullptr;
};

struct KernelStats {
    std::uint64_t cycles = 0;           // launch to last block done (and last store accepted)
    std::uint64_t issued = 0;           // warp instructions, branches and exits included
    std::uint64_t mma_issued = 0;       // tensor-core warp instructions (m16n8k16: 2048 MACs; int8 m16n8k32: 4096)
    double ipc = 0;                     // issued / cycles, whole GPU
    double issue_slot_utilization = 0;  // issue_cycles / (sms * sub-partitions * cycles)
    Occupancy theoretical;              // per SM, from the occupancy calculator
    double achieved_occupancy = 0;      // resident warps averaged over busy SM cycles / max warps
    std::uint64_t active_lanes = 0;
    double simd_efficiency = 0;         // active_lanes / (32 * issued)
    std::array<std::uint64_t, 33> lanes_histogram{};  // [n] = issues with n active lanes
    // Scheduler-cycles (sub-partitions x cycles) by what happened: an issue, or why not.
    std::uint64_t issue_cycles = 0, idle_cycles = 0, scoreboard_cycles = 0, pipeline_cycles = 0, barrier_cycles = 0;
    std::uint64_t global_requests = 0, global_sectors = 0;
    std::uint64_t shared_requests = 0, shared_wavefronts = 0;
    std::uint64_t l1_hits = 0, l1_misses = 0;  // global load sectors, when SmParams::l1 is on
    std::uint64_t l1_merges = 0;        // of the misses: waited for a fill in flight, sent nothing
    std::uint64_t blocks = 0;
    std::vector<IssueRecord> issue_order;  // SM 0, when params.sm.record_issue_order
    std::vector<std::vector<ResidentWarps>> resident_warps;  // per SM, with LaunchOptions::record_resident_warps
};

// The KernelStats counters that scale with the work done: sampling extrapolates these (and
// lanes_histogram) and recomputes cycles and the ratios.
inline constexpr std::array<std::uint64_t KernelStats::*, 15> kWorkCounters{
    &KernelStats::issued,           &KernelStats::mma_issued,       &KernelStats::active_lanes,
    &KernelStats::issue_cycles,     &KernelStats::idle_cycles,      &KernelStats::scoreboard_cycles,
    &KernelStats::pipeline_cycles,  &KernelStats::barrier_cycles,   &KernelStats::global_requests,
    &KernelStats::global_sectors,   &KernelStats::shared_requests,  &KernelStats::shared_wavefronts,
    &KernelStats::l1_hits,          &KernelStats::l1_misses,        &KernelStats::l1_merges};

// The ratios of `s` from its counts and cycles: ipc, SIMD efficiency and issue-slot use (of
// sms x sub_partitions schedulers).
void set_ratios(KernelStats& s, int sms, int sub_partitions);

// memory: where global sectors go; nullptr = a FixedLatencyMemory of params.sm.global_latency.
// Throws SimtError on a kernel fault, a launch that cannot fit on an SM, or wrong argument count.
KernelStats launch(const Kernel& kernel, Dim dims, const std::vector<std::uint32_t>& args, GlobalMemory& memory,
                   const SimtParams& params, GlobalMemoryPort* port = nullptr, const LaunchOptions& options = {});

// Hands out block ids in order (shared by launch() and SimtChipModule).
class BlockDispatcher {
public:
    // cluster > 1: blocks go out in clusters of that many consecutive ids, each cluster to the
    // `cluster` SMs of one group (SMs c*cluster .. c*cluster + cluster-1, as a GPC hosts a
    // cluster), all at once: a cluster waits until every SM of a group can take a block.
    explicit BlockDispatcher(std::uint32_t blocks, int cluster = 1) : blocks_(blocks), cluster_(cluster) {}
    // Every block completion (a refill) is reported to `sampler`, which may skip block ids.
    void set_sampler(WaveSampler* sampler) { sampler_ = sampler; }
    // Loop-trip sampling: the cycles skipped so far, added to the SM's cycle the wave sampler hears.
    void set_skipped_cycles(const std::uint64_t* skipped) { skipped_cycles_ = skipped; }
    bool empty() const { return next_ >= blocks_; }
    std::uint32_t take() { return next_++; }
    // Fills SMs round-robin, one block (cluster: one cluster per group) each per round, as the
    // hardware's block scheduler does.
    void initial_fill(std::vector<SmCore*>& sms);
    // Gives the SM as many blocks as fit (cluster: clusters to its group, whose idle SMs move on
    // to the latest clock among them, so the cluster starts together).
    void refill(SmCore& sm);
    // The SMs other than refill's argument that refill gave blocks to (they must run too).
    std::vector<SmCore*>& started_others() { return started_; }

private:
    bool place_cluster(std::size_t group);
    std::uint32_t blocks_;
    int cluster_ = 1;
    std::uint32_t next_ = 0;
    WaveSampler* sampler_ = nullptr;
    const std::uint64_t* skipped_cycles_ = nullptr;
    std::vector<SmCore*> sms_;
    std::vector<SmCore*> started_;
};

KernelStats collect_stats(const std::vector<SmCore*>& sms, const WarpExecutor& executor, const SimtParams& params);

// Loop-trip sampling (trip_sampling.h): a group of resident blocks alike in the blocks their SM
// holds and their rank on it (SMs with three blocks run their trips slower than SMs with two; a
// scheduler favouring older warps runs an SM's oldest block ahead) at a window's end, as
// GridLaunch reads it: the cycles at which the group crossed whole trips since the last window's
// end (trip j of the series when its warps have taken j x their number of back-edges since the
// series began: the cycle of that back-edge, exact), and the fewest back-edges any of its warps
// has left.
struct TripGroup {
    std::vector<double> new_crossings;
    std::uint32_t fewest_left = 0;
};

// One launch's state, checked and filled as launch() starts: the executor, the SMs (blocks
// placed), the dispatcher and the cluster network. launch() and SimtChipModule (simt_module.h)
// both run one of these, with the same per-SM steps below, so their results are identical.
struct GridLaunch {
    // How the SMs advance (see the comment at the top): windows of a non-blocking port; lock-step
    // windows of the cluster latency (clusters on a blocking port); lock-step windows of
    // LaunchOptions::sm_quantum_cycles (a blocking port); each SM running ahead until a block
    // completes (a blocking port, nothing else shared).
    enum class Schedule { memory_windows, cluster_windows, lock_step, run_ahead };

    // Throws SimtError as launch() does.
    GridLaunch(const Kernel& kernel, Dim dims, const std::vector<std::uint32_t>& args, GlobalMemory& memory,
               const SimtParams& params, GlobalMemoryPort* port, const LaunchOptions& options);
    GridLaunch(const GridLaunch&) = delete;
    GridLaunch& operator=(const GridLaunch&) = delete;
    Schedule schedule() const;
    // memory_windows: min(max_window_cycles, the port's lookahead); cluster_windows: the cluster
    // latency; lock_step: the quantum; run_ahead: 0.
    std::uint64_t window_cycles() const;
    // The launch's counters; with loop trips skipped, their cycles and work added.
    KernelStats stats() const;
    // At a window's end (memory_windows): hands the trip sampler the chip's loop progress and
    // advances the resident blocks when it says so. Nothing without a trip sampler.
    void sample_trips(std::uint64_t window_end);
    // After the run, when wave sampling skipped blocks and the port has caches: the last skipped
    // blocks (those whose sectors could still be cached at the end), then the blocks after them,
    // run untimed (run_blocks_untimed) with their sectors into the port's caches, so that the L2
    // the next op inherits holds, most recent first, what the blocks after the skip touched, then
    // what the skipped ones did, as the full launch would leave it. Counts nothing. The replayed
    // blocks write their outputs again (a sampled run's values are not the op's: the skipped
    // blocks computed none; only its timing is).
    void leave_skipped_footprint();

    SimtParams params;
    LaunchOptions options;
    std::unique_ptr<FixedLatencyMemory> own_memory;  // when launch() was given no port
    GlobalMemoryPort* port;
    WarpExecutor executor;
    std::vector<std::unique_ptr<SmCore>> owned;
    std::vector<SmCore*> sms;
    std::unique_ptr<ClusterNetwork> network;  // clusters only
    BlockDispatcher dispatcher;
    // Loop-trip sampling: the sampler when the launch's loop can be sampled, the executor that
    // advances blocks (its counters are the skipped trips' instructions), and what the skipped
    // trips took (cycles, counters).
    TripSampler* trip_sampler = nullptr;
    std::unique_ptr<WarpExecutor> trip_executor;
    std::uint64_t skipped_cycles = 0;
    KernelStats skipped_work;
    // The trip series under way: whether one is, the resident blocks it is for (blocks started
    // plus completed); per SM the fewest back-edges left and the group of each resident block by
    // rank; per group its warps, back-edges taken since the series began and what the sampler is
    // handed; a window's back-edge cycles by group and by rank (kept to reuse their storage).
    bool trip_series_on = false;
    std::uint64_t trip_series_set = 0;
    std::vector<std::vector<std::uint32_t>> trip_sm_left;
    std::vector<std::vector<std::size_t>> trip_group_of;
    std::vector<std::uint64_t> trip_group_warps, trip_group_edges;
    std::vector<TripGroup> trip_groups;
    std::vector<std::vector<std::uint64_t>> trip_group_cycles, trip_rank_cycles;
};

// The steps both schedulers share.
inline constexpr std::uint64_t kNoCycle = ~std::uint64_t{0};
// memory_windows: the start of the window after the one ending at `previous_end`: that end, or
// later when nothing (no SM, no request in the port) can change state before (the cycles between
// are idle for everybody). Sets any_busy; the window is only meaningful when it is true.
std::uint64_t next_window_start(const std::vector<SmCore*>& sms, GlobalMemoryPort& port, std::uint64_t previous_end,
                                bool& any_busy);
// Hands the cluster network's events to their SMs (nothing without a network).
void deliver_cluster_events(ClusterNetwork* network, const std::vector<SmCore*>& sms);
// lock_step: one SM's turn in the window ending at window_end (SMs take turns in index order).
// Raises any_busy if the SM was busy and lowers next_event to the SM's next event.
void lock_step_turn(SmCore& sm, BlockDispatcher& dispatcher, std::uint64_t window_end, bool& any_busy,
                    std::uint64_t& next_event);
// cluster_windows: one SM's turn (index order); `catch_up` runs a lower SM the dispatcher started
// to the window's end.
void cluster_window_turn(SmCore& sm, BlockDispatcher& dispatcher, std::uint64_t window_end, bool& any_busy,
                         const std::function<void(SmCore&)>& catch_up);

// Hands the answers of a non-blocking port to their SMs and clears `answers`.
void deliver_answers(std::vector<SectorAnswer>& answers, const std::vector<SmCore*>& sms);

}  // namespace accelsim::simt
