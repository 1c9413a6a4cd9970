#pragma once
// The TPU chip with a memory hierarchy: runs the tile schedule of tpu_lowering.h on the cores'
// DMA engines, MXUs and vector units against the shared memory system (models/memory).
//
// Timing (docs/tpu.md, "Double buffering"): per core, step i's inputs are requested when their
// buffer is free (the compute of step i-2 has ended; steps 0 and 1 at the op's start), so the
// transfer of the next tile overlaps the compute of the current one. Compute of step i ends at
// max(end of compute i-1 + the tile's warm cycles, inputs of i delivered + its cold cycles): the
// unit streams tile after tile, and a tile's fill and drain hide behind the previous tile only as
// far as its data arrived in time. A finished output
// tile is written back from its compute's end. Transfers enter the memory system in pieces of a
// DRAM row stripe, all cores' pieces in the order of their entry times (ties: lower core first),
// so the busy-until DRAM channels see the cores' traffic interleaved as in time.
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/common/activity.h"
#include "models/memory/memory_hierarchy.h"
#include "models/tpu/tpu_chip.h"
#include "models/tpu/tpu_lowering.h"
#include "models/tpu/tpu_validation.h"

namespace accelsim::tpu {

class HierarchyModel;

// Records one op's run for timelines (models/common/activity.h), in cycles from the op's start:
// each step's compute on the MXUs (an MXU with a smaller share of the tile, by the MXU model's
// cycles of its part, is busy for that share of the step) or the vector unit, each DMA transfer
// from the engine starting it to its last piece arriving, and every DMA chunk's bytes at its level
// when it is done there.
class ActivityRecorder {
public:
    ActivityRecorder(OpActivity& out, const TpuChipParams& params, const Op& op, bool on_mxus, memory::Picoseconds start);
    void compute(int core, const TileStep& step, memory::Picoseconds begin, memory::Picoseconds end);
    // A transfer's first piece is issued at `start`; returns its number for piece_arrived.
    std::int32_t transfer_started(int core, bool write, memory::Picoseconds start);
    void piece_arrived(std::int32_t transfer, memory::Picoseconds arrived);
    // One DMA chunk's bytes done at HBM or CMEM at `done`: counted there, at that instant (a
    // chunk's wait in the queues is not bandwidth, so spreading it over its wait would show
    // more bytes per second than the level can move).
    void bytes_moved(MemLevel level, std::int64_t bytes, memory::Picoseconds done);
    // Emits the DMA spans (their ends are known once every piece has arrived).
    void finish();

private:
    double cycles(memory::Picoseconds t) const;
    const std::vector<double>& mxu_shares(const TileStep& step);

    struct Transfer {
        int core;
        bool write;
        memory::Picoseconds start, end;
    };
    OpActivity* out_;
    const TpuChipParams* params_;
    std::string op_name_;
    DType dtype_;
    bool on_mxus_;
    memory::Picoseconds start_;
    std::vector<Transfer> transfers_;
    // Per tile shape (b, m, n, k): each MXU's part's cycles over the slowest part's.
    std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>, std::vector<double>> shares_;
};

// One core's pipeline for one op, as a sequence of events in time: its DMA engine's transfer
// requests (prefetches of step inputs, write-backs of finished output tiles), each cut into
// pieces (HierarchyModel::piece_bytes) that enter the memory system one by one, and the compute
// that follows when a step's last input piece has arrived. Event times never decrease, so any
// driver that executes every core's next event in global time order (ties: lower core first)
// gives the same result, and the pieces of all cores reach the memory system in the order of
// their entry times (a core's whole transfer never books the DRAM channels ahead of another
// core's earlier pieces).
class CorePipeline {
public:
    // `steps` must outlive the pipeline.
    CorePipeline(HierarchyModel& model, int core, const CoreSteps& steps, memory::Picoseconds start);
    bool done() const { return next_ >= steps_->size() && writebacks_.empty() && pieces_.empty(); }
    memory::Picoseconds next_request() const;  // time of the next event (request or piece)
    void execute_next();                       // performs it
    int core() const { return core_; }

    // Results, complete once done().
    memory::Picoseconds end = 0;
    std::int64_t busy_cycles = 0, dma_wait_cycles = 0, fill_cycles = 0, cold_steps = 0;
    std::int64_t bytes_in = 0, bytes_out = 0, vmem_bytes = 0;  // bytes_in / bytes_out: HBM
    std::int64_t cmem_in = 0, cmem_out = 0;                    // CMEM -> VMEM, VMEM -> CMEM

private:
    // One piece of a transfer, waiting for the memory system. step: the step whose inputs it
    // carries, or -1 for a write-back.
    struct Piece {
        memory::Picoseconds issue;  // the DMA engine issues its first byte (rate limit); it enters after that
        std::uint64_t address;
        std::int64_t bytes;
        MemLevel level;
        bool write, copy_to_cmem;
        std::int64_t step;
        std::int32_t transfer;  // its transfer in the activity record, -1 when not recording
    };
    memory::Picoseconds prefetch_time() const;  // request of step next_'s inputs (~0: not yet known)
    memory::Picoseconds piece_time() const;     // entry of the oldest piece (~0: none)
    void request_inputs();
    void request_writeback();
    // Queues a transfer's pieces; returns how many.
    std::int64_t queue_pieces(const DmaSegment& segment, bool write, std::int64_t step, memory::Picoseconds request);
    void execute_piece();
    void advance_compute();  // computes every step whose inputs have all arrived, in order

    HierarchyModel* model_;
    int core_;
    const CoreSteps* steps_;
    memory::Picoseconds start_;
    std::size_t next_ = 0;                     // next step whose inputs are to be requested
    std::size_t computed_ = 0;                 // steps computed so far (in order)
    // Per step, in a ring of kWindow: steps in flight (requested, not yet computed) and the last
    // ones computed. Step i is requested once step i-2 has computed (double buffering), so at most
    // two are in flight and the pipeline's memory does not grow with the op's step count.
    static constexpr std::size_t kWindow = 4;
    std::array<memory::Picoseconds, kWindow> compute_end_{};  // of computed steps
    std::array<memory::Picoseconds, kWindow> ready_{};        // of steps in flight: inputs arrived (so far)
    std::array<std::int64_t, kWindow> pieces_left_{};         // of steps in flight: input pieces not yet arrived
    std::deque<std::pair<memory::Picoseconds, DmaSegment>> writebacks_;  // requested, not yet issued
    std::deque<Piece> pieces_;                 // issued by the DMA engine, not yet in the memory system
};

// The default PipelineDriver (tpu_chip.h): a plain loop executing the earliest request of any core.
void run_pipelines_in_time_order(std::vector<CorePipeline>& pipelines);

class HierarchyModel {
public:
    explicit HierarchyModel(const TpuChipParams& params);  // params.memory must be set
    // place: where the op's first input comes from and its output goes (TpuChip decides).
    TpuOpResult run(const Op& op, bool validate, std::int64_t op_index, const Placement& place);
    void set_driver(PipelineDriver driver) { driver_ = std::move(driver); }
    // Records the units' activity of the ops run while `out` is set (nullptr: off, the default).
    void set_activity(OpActivity* out) { activity_ = out; }
    ActivityRecorder* recorder() const { return recorder_.get(); }

    // The DMA engine of `core` takes a transfer of `bytes` requested at `request`: when it starts
    // (after the engine's earlier transfers, at a rate-limited engine), and when it issues the
    // byte at `offset` of a transfer that started at `start`.
    memory::Picoseconds dma_start(int core, std::int64_t bytes, memory::Picoseconds request);
    memory::Picoseconds dma_issue_time(memory::Picoseconds start, std::int64_t offset) const;
    // The size of the pieces a transfer enters the memory system in: a DRAM row stripe
    // (memory::row_stripe_bytes), at least a DMA chunk.
    std::int64_t piece_bytes() const;
    // When a piece issued at `issue` enters the memory system (HBM: after the core's crossbar port
    // has sent the pieces before it; CMEM: at once, its port queues).
    memory::Picoseconds piece_entry(int core, MemLevel level, memory::Picoseconds issue) const;
    // One piece into the memory system, chunk by chunk; returns when it has arrived (read: in
    // VMEM; write: accepted).
    memory::Picoseconds piece_access(int core, std::uint64_t address, std::int64_t bytes, MemLevel level, bool write,
                                     bool copy_to_cmem, memory::Picoseconds issue);
    const TpuChipParams& params() const { return params_; }
    // TpuChip::set_validation_worker and set_result_fault_for_test.
    void set_validation_worker(bool on) { validation_worker_ = on; }
    void set_result_fault_for_test(ResultFault fault) { result_fault_ = std::move(fault); }

private:
    // Simulated time of a candidate plan (lower_op's judge) on an idle copy of the chip, with
    // its tensors moved down by `base` (remembered in judged_).
    double judge(const OpPlan& candidate, std::uint64_t base);
    std::uint64_t allocate(std::int64_t bytes);
    // CMEM port: `bytes` offered at `issue`; returns when the last byte has passed.
    memory::Picoseconds cmem_access(std::int64_t bytes, memory::Picoseconds issue);
    // Runs the operands through the op's tiles on the MXU (or vector unit) and checks the output.
    NumericsCheck validate_gemm(const Op& op, const OpPlan& plan, GemmValidation& check) const;

    TpuChipParams params_;
    memory::MemoryHierarchy memory_;
    memory::Picoseconds now_ = 0;                  // end of the previous op
    std::vector<memory::Picoseconds> dma_free_;    // per core: DMA engine free to issue
    memory::Picoseconds cmem_free_ = 0;            // the CMEM port is busy until then (busy-until)
    std::uint64_t next_address_ = 0;               // bump allocator of HBM addresses
    std::uint64_t address_space_ = 0;
    PipelineDriver driver_;
    OpActivity* activity_ = nullptr;
    std::unique_ptr<ActivityRecorder> recorder_;  // during run() while activity_ is set
    // Judged tilings (lower_op): simulated cycles by a digest of the candidate plan moved to
    // address 0, so the identical ops of a model's layers are judged once.
    std::unordered_map<std::uint64_t, double> judged_;
    bool validation_worker_ = validation_worker_by_default();
    ResultFault result_fault_;
};

}  // namespace accelsim::tpu
