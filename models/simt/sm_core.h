#pragma once
// Cycle-level timing of one SM, in plain C++ (the SystemC module in simt_module.h is a thin wrapper
// that runs one of these per SM). Per sub-partition: a warp scheduler, an instruction buffer entry
// per warp, a scoreboard (RAW and WAW on registers and predicates, kept as ready cycles) and
// pipelines with latency and initiation interval. Blocks are admitted up to the occupancy limit.
// Every scheduler-cycle that issues nothing is classified (idle, scoreboard, pipeline, barrier);
// stretches where no scheduler can issue are skipped in one step.
//
// Global memory: a load's sectors go through the L1 (if any) to the port; its destination
// registers are pending until every sector is answered. A blocking port answers at once; a
// non-blocking one answers later through deliver() (launch() runs the SMs in windows and hands
// the answers over at each window's end). Stores are sent and the warp goes on.
#include <array>
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/common/dtype.h"
#include "models/simt/execution.h"
#include "models/simt/l1_cache.h"
#include "models/simt/memory_access.h"
#include "models/simt/occupancy.h"
#include "models/simt/warp_scheduler.h"

namespace accelsim::simt {

struct PipelineTiming {
    int latency = 4;              // cycles from issue until the result can be read
    int initiation_interval = 2;  // cycles before the pipeline accepts the next warp instruction
};

struct SmParams {
    OccupancyLimits limits;            // resident warps, blocks, registers, shared memory
    int sub_partitions = 4;            // each with one warp scheduler issuing <= 1 instruction per cycle
    std::string warp_scheduler = "gto";  // lrr | gto | two_level
    Fp8Encoding fp8_encoding = Fp8Encoding::ocp;  // fp8 mma operands (dtype.h)
    int two_level_active_warps = 4;    // active-set size per sub-partition (two_level)
    // Per sub-partition (A100-like: 16 INT32 and 16 FP32 lanes, 4 SFU lanes per sub-partition, a
    // 256-MAC/cycle fp16 tensor core, so m16n8k16 = 2048 MACs every 8 cycles).
    PipelineTiming int_alu{4, 2};
    PipelineTiming fp32{4, 2};
    PipelineTiming sfu{21, 8};
    PipelineTiming tensor{32, 8};
    // int8 mma.m16n8k32 (4096 MACs) on the same tensor core at the chip's int8 rate (A100: twice
    // the fp16 MACs per cycle, so also one every 8 cycles).
    PipelineTiming tensor_s8{32, 8};
    // fp8 mma.m16n8k32 (4096 MACs) at the chip's fp8 rates (a100 has none: never issued there).
    PipelineTiming tensor_e4m3{32, 8};
    PipelineTiming tensor_e5m2{32, 8};
    const PipelineTiming& tensor_of(MmaType type) const {
        return type == MmaType::s8 ? tensor_s8 : type == MmaType::e4m3 ? tensor_e4m3 : type == MmaType::e5m2 ? tensor_e5m2 : tensor;
    }
    // Operands of two types (fp8 e4m3 x e5m2): the slower type's interval and latency.
    PipelineTiming tensor_of(MmaType a, MmaType b) const {
        const PipelineTiming &pa = tensor_of(a), &pb = tensor_of(b);
        return {std::max(pa.latency, pb.latency), std::max(pa.initiation_interval, pb.initiation_interval)};
    }
    int shared_latency = 23;           // ld.shared / shfl, conflict-free
    int shuffle_initiation_interval = 2;
    int global_sectors_per_cycle = 4;  // L1 <-> LSU: 128 B per cycle per sub-partition
    int global_latency = 400;          // used only when launch() makes its own FixedLatencyMemory
    int branch_refetch_cycles = 2;     // instruction buffer refill after a redirect
    int smem_banks = 32, smem_bank_bytes = 4;
    L1Params l1;                       // per SM; l1.bytes = 0: sectors go straight to the port
    bool record_issue_order = false;   // keep (cycle, warp) of every issue (tests of schedulers)
    // Watchdog: a kernel still running after this many cycles, or after issuing this many warp
    // instructions (all SMs of the launch), is stopped with KernelTimeout (the config's
    // gpu.max_kernel_cycles and gpu.max_kernel_instructions; defaults explained in isa.h).
    // Cluster peers' remote mbarrier arrivals (SM-to-SM network). Assumption: about an L2 hit, as
    // Hopper microbenchmarks report for distributed shared memory; not a published figure.
    int cluster_latency = 200;
    std::uint64_t max_cycles = kDefaultMaxKernelCycles;
    std::uint64_t max_issued = kDefaultMaxKernelInstructions;
};

enum class Stall : std::uint8_t { issued, idle, scoreboard, pipeline, barrier };

// Thread-block clusters (Kernel::cluster > 1): what one SM does to an mbarrier of a cluster peer on
// another SM (a remote arrival, a multicast box's bytes) travels as an event, applied at `time`
// by the peer's SM. launch() hands the events over between its windows, as memory answers: an
// event is never earlier than the window's end (remote arrivals take SmParams::cluster_latency,
// at least a window; multicast bytes land when the box's last sector does, which the memory port
// answers no earlier than that).
struct ClusterEvent {
    int sm;                   // the peer's SM
    std::uint32_t block_id;   // the peer block
    std::uint32_t mbarrier;   // shared address of the barrier in the peer block
    std::int64_t arrivals, tx_bytes;  // as Block::mbarrier_update
    std::uint64_t time;
};
struct ClusterNetwork {
    std::vector<int> sm_of_block;      // by block id: the SM it runs on (-1: not resident)
    std::vector<ClusterEvent> events;  // in flight until launch() delivers them
};

struct IssueRecord {
    std::uint64_t cycle;
    int sub_partition;
    int warp;      // SM warp slot
    std::uint32_t block;
    int warp_in_block;
    int pc;
};

struct SmStats {
    std::uint64_t busy_cycles = 0;         // cycles with at least one resident warp
    std::uint64_t active_warp_cycles = 0;  // resident warps summed over cycles (achieved occupancy)
    std::array<std::uint64_t, 5> scheduler_cycles{};  // by Stall
    std::uint64_t global_sectors = 0, global_requests = 0;
    std::uint64_t shared_requests = 0, shared_wavefronts = 0;  // wavefronts - requests = conflict cost
    std::uint64_t blocks_completed = 0;
    std::uint64_t l1_hits = 0, l1_misses = 0;  // sectors (global loads), with an L1
    std::uint64_t l1_merges = 0;           // misses that waited for a fill already in flight (no new request)
    std::uint64_t last_memory_cycle = 0;   // last store accepted / load back
};

// Resident warps of an SM from `cycle` on (timelines).
struct ResidentWarps {
    std::uint64_t cycle = 0;
    int warps = 0;
};

class SmCore {
public:
    SmCore(const SmParams& params, int sm_index, WarpExecutor& executor, GlobalMemoryPort& memory);

    int blocks_per_sm() const { return occupancy_.blocks_per_sm; }
    const Occupancy& occupancy() const { return occupancy_; }
    bool can_accept_block() const { return resident_blocks_ < occupancy_.blocks_per_sm; }
    bool busy() const { return resident_warps_ > 0; }
    // Makes block `block_id` resident, its warps ready at the current cycle.
    void add_block(std::uint32_t block_id);
    // Runs cycles until a block completes (then returns true with now() the cycle after), no warp
    // is left, or now() reaches stop_at (both return false; busy() tells them apart). Stopping at
    // stop_at and calling again gives exactly the cycles of one uninterrupted call.
    bool run_until_block_completes(std::uint64_t stop_at = ~std::uint64_t{0});
    std::uint64_t now() const { return now_; }
    // The earliest cycle at which this SM could issue or change state again, from the per
    // sub-partition blocked times of its last run: now() when one may issue now (or nothing is
    // known), ~0 when every sub-partition waits without end (a deadlock the next run reports).
    // Until then a run would only idle, so callers may leave the SM alone without changing a cycle.
    // kWaitsForMemory when every sub-partition waits only for memory answers (or a barrier).
    std::uint64_t next_event_cycle() const;
    static constexpr std::uint64_t kWaitsForMemory = ~std::uint64_t{0} - 1;
    // An answer of the non-blocking port to a sector this SM submitted (any order; must come no
    // later than the cycle it names, which launch()'s windows guarantee).
    void deliver(const SectorAnswer& answer);
    // A host-cache hint for a later deliver(answer), changing nothing: stage 0 starts loading
    // the records the answer's tag names, stage 1 (issued later) the ones those point at. A
    // window's answers land on scattered L1 lines and loads of 108 SMs, so each would otherwise
    // wait for main memory in turn.
    void prefetch_delivery(const SectorAnswer& answer, int stage) const;
    void set_now(std::uint64_t cycle) { now_ = cycle; }
    int index() const { return sm_index_; }
    // Clusters: where this SM's events to peers go (launch() owns it; nullptr without clusters).
    void set_cluster_network(ClusterNetwork* network) { network_ = network; }
    // An event of a cluster peer for a block of this SM (ignored if that block has left).
    void deliver_cluster_event(const ClusterEvent& event);
    // Loop-trip sampling (trip_sampling.h). A resident block's rank: its place among the SM's
    // resident blocks by arrival (0 the oldest; the warp scheduler may favour older warps, so
    // blocks of one SM may run their trips at different rates).
    // loop_progress: false when a resident warp stands outside the loop head_pc .. back_edge_pc or
    // its block has lost a warp; otherwise fewest_left[rank] is the fewest back-edges any warp of
    // that block has left of trips_per_block (resized to the resident blocks).
    bool loop_progress(int head_pc, int back_edge_pc, std::uint32_t trips_per_block,
                       std::vector<std::uint32_t>& fewest_left) const;
    int resident_blocks() const { return resident_blocks_; }
    int warps_per_block() const { return warps_per_block_; }
    // Runs the resident block of that rank `trips` loop trips on (advance_loop_trips with `exec`, an
    // executor counting the loop's back-edges; on_sector hears the sectors they touch); the timing
    // state (scoreboards, pipelines, loads in flight, the L1) is left as it is.
    void advance_resident_block(int rank, WarpExecutor& exec, std::uint32_t trips,
                                const std::function<void(std::uint32_t, bool)>& on_sector, std::uint64_t max_issued);
    // The trip series: from reset_trip_series() on, the cycle of every back-edge of the counted
    // loop a warp takes is logged with its block; take_trip_edges appends those logged so far to
    // by_rank[the block's rank] and clears the log.
    void reset_trip_series() {
        trip_series_ = true;
        edge_log_.clear();
    }
    void take_trip_edges(std::vector<std::vector<std::uint64_t>>& by_rank);
    // Blocks made resident so far (with stats().blocks_completed: whether the resident set changed).
    std::uint64_t blocks_started() const { return blocks_started_; }
    std::uint64_t blocks_completed() const { return stats_.blocks_completed; }
    SmStats stats() const;
    const std::vector<IssueRecord>& issue_order() const { return issue_order_; }
    // Timelines: from now on, log (cycle, resident warps) whenever a block arrives or a warp
    // leaves (a few entries per block, nothing per cycle). Several changes in one cycle keep the
    // last value.
    void record_resident_warps() { record_resident_warps_ = true; }
    const std::vector<ResidentWarps>& resident_warps_log() const { return resident_warps_log_; }

private:
    void log_resident_warps();
    // What the issue check reads lies together: the instruction at the warp's pc (kept here so
    // the check does not chase the warp's SIMT stack) and when its operands are ready. Register
    // ready times are rows of one array for all slots, not an allocation per warp.
    struct WarpTiming {
        std::uint64_t ibuffer_ready = 0;
        const Instruction* next = nullptr;  // at the warp's pc; nullptr once it has finished
        // The latest ready time of the registers and predicates `next` reads or writes (RAW and
        // WAW). Exact between updates: those times change only when this warp issues, a load of
        // it is answered or a block takes the slot, and each of these recomputes it.
        std::uint64_t operands_ready = 0;
        std::uint64_t* reg_ready = nullptr; // kernel_.registers entries in reg_ready_
        int sub_partition = 0;
        std::array<std::uint64_t, kPredicateRegisters> pred_ready{};
    };
    static std::uint64_t operands_ready(const WarpTiming& t);
    const Instruction* instruction_at_pc(const Warp& w) const {
        return w.finished ? nullptr : &kernel_.code[static_cast<std::size_t>(w.pc())];
    }
    struct IssueScan {
        unsigned reasons = 0;  // bit per Stall value seen among the warps that could not issue
    };
    Stall try_issue(int sp, std::uint64_t& next_change);
    bool check_warp(int sp, int slot, IssueScan& scan, std::uint64_t& next_change);
    void issue(int sp, int slot);
    void release_barrier(Block& block);
    void finish_warp(int slot);
    [[noreturn]] void stop_endless_kernel() const;  // the watchdog: throws KernelTimeout
    // Global memory: a load in flight (registers pending until `outstanding` sectors are answered).
    struct PendingLoad {
        const Instruction* instruction;
        int slot;
        std::uint32_t generation;  // of the warp slot at issue: a later warp in the slot is not woken
        int outstanding;
        std::uint64_t done;
    };
    std::uint32_t start_load(int slot, const Instruction& in);
    void load_sector(std::uint32_t load, std::uint64_t cycle, std::uint32_t sector);
    void send(std::uint64_t cycle, std::uint32_t sector, bool write, std::uint64_t tag);
    void answer_load(std::uint32_t load, std::uint64_t done);
    void complete_load(std::uint32_t load);
    // sm_90 asynchronous operations (docs/simt-isa.md, "Hopper"). async_ready: the cycle from which
    // the warp's next instruction (a wgmma.fence / wait_group or mbarrier.wait) may issue, and why not
    // before (kNever: an mbarrier phase nobody has completed yet).
    // Waves of 64: the other half of the slot's wave (-1: none, a block's last odd warp), and
    // whether the slot's shfl may issue now (wave_shuffle_ready: see wave_words_).
    int sibling(int slot) const;
    std::array<std::uint32_t, 64>& wave_words_of(int slot);  // the pair's entry of wave_words_
    bool wave_shuffle_ready(int slot, const Instruction& in);
    void gather_wave_words(int slot, int sib, const Instruction& in);
    // The half `slot` stopped (at a barrier, or finished): a sibling waiting at a shfl goes alone.
    void release_shuffle_waiter(int slot);
    // Lets a waiting half issue its shfl: on the gathered words (together) or alone.
    void wake_shuffle_waiter(int slot, bool together);
    std::uint64_t async_ready(int slot, const Instruction& in, Stall& reason);
    void issue_async(int sp, int slot, const Instruction& in, Block& block);
    void start_tma(int slot, const Instruction& in, Block& block);
    void answer_tma(std::uint32_t copy, std::uint64_t done);
    void wake_mbarrier_waiters(Block& block);
    struct WarpAsync {
        std::uint64_t open_done = 0;        // latest completion among uncommitted wgmmas
        bool open = false;
        std::vector<std::uint64_t> groups;  // committed wgmma groups' completion cycles, oldest first
    };
    std::vector<WarpAsync> async_;                // per warp slot
    std::vector<std::uint64_t> woken_phases_;     // per block slot: Block::mbarrier_phases at the last wake
    std::vector<std::uint64_t> tensor_async_free_;  // per sub-partition: its tensor core's queue end
    std::uint64_t smem_operand_free_ = 0;         // the SM's shared-memory read port (wgmma operands)
    std::uint64_t tma_free_ = 0;                  // the SM's TMA unit: next cycle it can send a sector
    ClusterNetwork* network_ = nullptr;
    void send_cluster_event(std::uint32_t block_id, std::uint32_t mbarrier, std::int64_t arrivals, std::int64_t tx_bytes,
                            std::uint64_t time);
    struct PendingTma {
        bool multicast;            // also completes on the cluster peers' barriers
        std::uint32_t block_id;
        int block_slot;
        std::uint32_t generation;  // of the block slot at issue
        std::uint32_t mbarrier;
        std::int64_t bytes;
        int outstanding;
        std::uint64_t done;
    };
    std::vector<PendingTma> tma_;
    std::vector<std::uint32_t> free_tma_;

    SmParams params_;
    int sm_index_;
    WarpExecutor& executor_;
    std::unique_ptr<L1Cache> l1_;
    GlobalMemoryPort& memory_;
    bool non_blocking_;  // memory_.lookahead_cycles() > 0: answers come through deliver()
    const Kernel& kernel_;
    Occupancy occupancy_;
    int warps_per_block_;
    std::vector<Warp> warps_;
    std::vector<WarpTiming> timing_;
    std::vector<std::uint64_t> reg_ready_;  // [slot][register]
    // Per warp slot, dense for the scheduler scan: the last failed issue check's result, "cannot
    // issue before blocked_until_ because of blocked_reason_" (a barrier waits forever until
    // released, a pending load until its answer). Exact: until then only the warp's own issue, a
    // barrier release or a memory answer (complete_load clears it) could change it, and
    // pipelines only get busier.
    std::vector<std::uint64_t> blocked_until_;
    std::vector<Stall> blocked_reason_;
    std::vector<Block> blocks_;
    std::vector<std::unique_ptr<WarpScheduler>> schedulers_;
    std::vector<std::array<std::uint64_t, kUnitCount>> pipe_free_;  // [sub-partition][unit]
    std::uint64_t now_ = 0;
    int resident_blocks_ = 0;
    int resident_warps_ = 0;
    std::uint64_t blocks_started_ = 0;
    bool trip_series_ = false;
    std::vector<std::pair<std::uint64_t, int>> edge_log_;  // (cycle, block slot)
    std::vector<std::uint64_t> block_arrival_;             // per block slot: blocks_started_ when it arrived
    int block_rank(std::size_t slot) const;
    std::size_t block_slot_of_rank(int rank) const;
    int next_sub_partition_ = 0;
    bool block_completed_ = false;
    std::vector<Stall> classes_;  // per sub-partition, this cycle
    // A sub-partition that could not issue stays unable until sp_blocked_until_ (same class),
    // unless a barrier release, a new block or a memory answer changes its warps: then the cache
    // is cleared.
    std::vector<std::uint64_t> sp_blocked_until_;
    std::vector<Stall> sp_blocked_class_;
    std::vector<PendingLoad> loads_;
    std::vector<std::uint32_t> free_loads_;
    std::vector<std::uint32_t> generation_;  // per warp slot, bumped when a new warp takes it
    struct FillWaiter {
        std::uint32_t load;
        std::uint64_t cycle;  // when it looked the sector up
    };
    // By L1 fill id: the loads waiting for it, the first inline (most fills have one).
    struct FillWaiters {
        FillWaiter first;
        std::vector<FillWaiter> more;
        bool any = false;
    };
    std::vector<FillWaiters> fill_waiters_;
    StepResult step_;
    std::array<std::uint32_t, 32> sectors_{};
    SmStats stats_;
    std::vector<IssueRecord> issue_order_;
    bool record_resident_warps_ = false;
    std::vector<ResidentWarps> resident_warps_log_;
    // Waves of 64 (sm.wave_size 64) are two 32-lane halves, consecutive warps of a block on one
    // scheduler. A shfl is the wave's, over its 64 lanes: the half that reaches it first waits
    // (a barrier stall) until the other reaches the same instruction; the second gathers both
    // halves' source words into wave_words_ (per slot: the pair's lower slot's entry), issues, and
    // releases the first with shuffle_pending_ set, so that it issues on the same words (its
    // sibling may have overwritten its source register since). A half whose sibling has finished,
    // waits at a barrier or at another shfl goes alone (shuffle_alone_): the sibling's lanes give
    // their register's current value, as inactive lanes do.
    bool wave_halves_ = false;
    std::vector<std::uint8_t> shuffle_waiting_, shuffle_pending_, shuffle_alone_;  // per slot
    std::vector<std::array<std::uint32_t, 64>> wave_words_;                          // per slot
};

}  // namespace accelsim::simt
