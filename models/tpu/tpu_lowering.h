#pragma once
// The lowering of one Op onto the TPU chip with a memory hierarchy (docs/tpu.md, "Lowering"):
// the one place that decides how an op is split over cores, MXUs and VMEM-sized tiles.
//
// GEMM-like ops (matmul, bmm, conv2d as implicit GEMM):
//   1. cores: split_gemm over the cores (batches, rows of A, whole column tiles of B; K never
//      split), choosing the split whose slowest core is fastest by the estimate below;
//   2. tiles: each core's part is cut into tiles Bt x Mt x Nt x Kt, iterated
//      for n-block { for batch-block { for m-block { for k-block } } }; a tile's inputs (A and,
//      unless still resident, B) come in by DMA, the core's MXUs compute it (the tile split over
//      them by split_gemm), the finished output tile goes back by DMA after the last k-block.
//      VMEM holds two input tiles (A + B, double-buffered) in the operand dtype, one accumulator
//      tile (4-byte sums) and one output staging tile in the operand dtype that the DMA drains
//      while the next output tile accumulates; together they must fit in vmem_bytes.
//      Among the tilings that fit, the one with the smallest estimated pipelined time wins
//      (ties: the least load on the memory ports, then larger tiles). If none fits, the op cannot
//      run: the lowering throws std::invalid_argument naming the op.
//   3. placement: the first input may come from VMEM (fusion) or CMEM, the output may stay in
//      VMEM (fusion) or be copied to CMEM; tiles read more than once may come from CMEM after
//      their first read (docs/tpu.md, "Placement").
// Vector ops (softmax, layernorm, gelu, relu, add, mul) and GEMMs in a dtype the MXU does not
// run: rows (or elements) split evenly over the cores, tiles that fit VMEM twice over, the same
// DMA-in / compute / DMA-out pipeline on the vector unit.
#include <array>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "models/common/op.h"
#include "models/tpu/gemm_split.h"
#include "models/tpu/tpu_params.h"

namespace accelsim::tpu {

// Where a DMA transfer's far end is: HBM or the chip's shared CMEM.
enum class MemLevel : std::uint8_t { hbm, cmem };

// One contiguous DMA transfer between HBM (or CMEM) and VMEM (tensors are laid out tiled in HBM,
// as XLA does for TPUs, so one tile is one contiguous range).
struct DmaSegment {
    std::uint64_t address = 0;
    std::int64_t bytes = 0;
    MemLevel level = MemLevel::hbm;  // reads: where the bytes come from
    bool copy_to_cmem = false;       // writes: also leave a copy in CMEM (the next op reads it there)
};

// One step of a core's pipeline: bring the inputs in, compute, optionally write an output back.
struct TileStep {
    std::array<DmaSegment, 3> in{};  // A tile, B tile (when not resident), extra (gamma/beta, 2nd operand)
    int in_count = 0;
    DmaSegment out;                  // output tile written back after the compute (bytes 0: none)
    std::int64_t cold_cycles = 0;    // compute cycles when the unit starts from idle (fill + drain)
    std::int64_t warm_cycles = 0;    // compute cycles right behind the previous step (pipelined)
    std::int64_t weight_stall_cycles = 0;  // MXU: cycles in cold_cycles spent loading weights/filling
    // GEMM tile coordinates (for the numerics): batches, rows, columns, K range.
    std::int64_t b0 = 0, bt = 0, m0 = 0, mt = 0, n0 = 0, nt = 0, k0 = 0, kt = 0;
    std::int64_t vmem_bytes = 0;     // VMEM traffic of the compute: operand reads + result writes
};

// One core's steps, made on demand from the step's index: a plan's memory does not grow with its
// step count (a huge GEMM has billions of steps; its pipeline holds a few at a time, so a timing-
// only run holds the same few kilobytes whatever the op's size). Copies share the maker.
class CoreSteps {
public:
    using Maker = std::function<TileStep(std::int64_t index)>;
    CoreSteps() = default;
    CoreSteps(std::int64_t count, Maker maker);
    // A fixed list (tests, and anything built step by step).
    explicit CoreSteps(std::vector<TileStep> steps);

    std::size_t size() const { return static_cast<std::size_t>(count_); }
    bool empty() const { return count_ == 0; }
    TileStep operator[](std::size_t index) const;
    TileStep back() const { return (*this)[size() - 1]; }
    // The same steps with every DMA address moved down by `bytes` (the judge's idle copy).
    CoreSteps moved_down(std::uint64_t bytes) const;

    class iterator {
    public:
        using value_type = TileStep;
        using difference_type = std::ptrdiff_t;
        using reference = TileStep;
        using pointer = void;
        using iterator_category = std::input_iterator_tag;
        iterator(const CoreSteps* steps, std::size_t index) : steps_(steps), index_(index) {}
        TileStep operator*() const { return (*steps_)[index_]; }
        iterator& operator++() {
            ++index_;
            return *this;
        }
        bool operator==(const iterator& o) const { return index_ == o.index_; }
        bool operator!=(const iterator& o) const { return index_ != o.index_; }

    private:
        const CoreSteps* steps_;
        std::size_t index_;
    };
    iterator begin() const { return {this, 0}; }
    iterator end() const { return {this, size()}; }

private:
    std::int64_t count_ = 0;
    std::shared_ptr<const Maker> maker_;
    std::uint64_t moved_down_ = 0;
};

struct TileShape {
    std::int64_t batch = 0, m = 0, n = 0, k = 0;
};

struct OpPlan {
    std::string unit;                 // "mxu" or "vector"
    std::vector<CoreSteps> cores;     // steps per core (empty for an idle core)
    TileShape tile;                   // the largest tile (GEMMs) or elements per tile (vector: m)
    std::int64_t vmem_footprint = 0;  // bytes of VMEM one core uses (double-buffered)
    std::int64_t macs = 0;            // useful MACs (GEMMs)
    std::int64_t element_ops = 0;     // vector-unit element-ops
    std::int64_t hbm_read_saved = 0;     // first input not read from HBM (in VMEM or CMEM)
    std::int64_t hbm_write_saved = 0;    // output not written to HBM (kept in VMEM for a fused op)
    std::int64_t cmem_read = 0;          // first input read from CMEM
    std::int64_t cmem_written = 0;       // output copied to CMEM
};

// Where the lowering finds an op's first input and leaves its output (TpuChip decides from the
// op and the next one; docs/tpu.md "Placement").
enum class InputFrom : std::uint8_t { hbm, vmem, cmem };
enum class OutputTo : std::uint8_t { hbm, vmem, hbm_and_cmem };
struct Placement {
    InputFrom input = InputFrom::hbm;
    OutputTo output = OutputTo::hbm;
};

// Elements of an op's first input (A of a GEMM, the conv input, a vector op's first operand) and
// of its output: an op whose first input has as many elements as its predecessor's output, in the
// same dtype, is taken to consume that output (traces name no tensors; see docs/tpu.md).
std::int64_t first_input_elements(const Op& op);
std::int64_t output_elements(const Op& op);

// conv2d as implicit GEMM: the input rows (global index n·H + h, all W columns and the group's
// channels) a tile of output pixels [m_begin, m_end) of one group transfers. The rows its windows
// need, stride- and dilation-aware, extended up to the first row the next tile needs so that
// the tiles of a conv together read every input row; rows read by two tiles are the halo.
struct RowRange {
    std::int64_t first = 0, last = -1;  // inclusive; last < first: none
    std::int64_t count() const { return last >= first ? last - first + 1 : 0; }
};
RowRange conv_tile_rows(const Conv2dShape& c, std::int64_t m_begin, std::int64_t m_end);
// pool: the same for output rows [q_begin, q_end) (global index n·out_h + oh, whole rows).
RowRange pool_tile_rows(const PoolShape& p, std::int64_t q_begin, std::int64_t q_end);

// Base addresses of the op's tensors in HBM (A / input, B / weights or 2nd operand, C / output).
struct TensorAddresses {
    std::uint64_t a = 0, b = 0, c = 0;
};

// Cost of one GEMM tile on a core's MXUs (the tile split over them by mxu_tile_parts; the slowest
// MXU decides): cold = from an idle array (mxu_gemm_timing of the part), warm = right behind
// another tile (the marginal cycles of one more such tile in the same fold stream).
struct MxuTileCost {
    std::int64_t cold = 0, warm = 0;
    std::int64_t weight_stall = 0;  // weight-load stall + fill/drain cycles of the slowest part, cold
};
std::vector<GemmPart> mxu_tile_parts(const GemmShape& tile, const TpuChipParams& p, DType dtype);
MxuTileCost mxu_tile_cost(const GemmShape& tile, const TpuChipParams& p, DType dtype);

// The tiling estimate: one core's pipeline of `steps` equal steps under the rules CorePipeline
// follows (tpu_hierarchy.h): step i's inputs are requested when the compute of step i-2 ends
// (double buffering), the core's DMA moves one transfer after another at the estimated bandwidth
// (first_in, step_in, output: cycles of transfer each), data arrives `latency` cycles after its
// transfer, a step ends `warm` cycles after the previous one or `cold` cycles (fill and drain)
// after its data arrived, whichever is later, and an output tile is written back after every
// steps_per_output steps. Late data costs more than the wait: the fill it can no longer hide,
// which is why short steps on a fast memory can lose to longer ones.
struct StepPipeline {
    std::int64_t steps = 1, steps_per_output = 1;
    double first_in = 0, step_in = 0, output = 0, latency = 0, cold = 0, warm = 0;
    // Steps 1 .. lead_steps-1 move lead_in cycles of data instead of step_in (an A panel read from
    // HBM once, then re-read from CMEM by the later steps).
    std::int64_t lead_steps = 0;
    double lead_in = 0;

    // Cycles from the op's start to its last write-back, every step replayed.
    double replayed_cycles() const;
    // The same figure from the first periods only: once the pipeline is periodic (period: the
    // write-back pattern, doubled for the two buffers) the rest is extrapolated. Equal to
    // replayed_cycles() up to rounding; its cost grows with the start-up transient, not the
    // step count.
    double cycles() const;
    // A lower bound of cycles(): the first step cold then every step warm, or every transfer back
    // to back and the last step cold; used to skip tilings that cannot win.
    double lower_bound() const;

private:
    // Replays `count` steps (the last one ends the op); with last_period set, also the cycles of
    // the `period` steps ending at step measure_at and whether they repeat the period before.
    double run(std::int64_t count, std::int64_t measure_at, std::int64_t period, double* last_period,
               bool* periodic) const;
};

// HBM bytes per core cycle one core can expect (for the tiling estimate only).
double core_bytes_per_cycle_estimate(const TpuChipParams& p);
// Unloaded cycles from a DMA request to its first data: DMA latency + crossbar + tRCD + CL.
double dma_latency_estimate(const TpuChipParams& p);

// Simulated cycles of a candidate plan (HierarchyModel runs it on an idle copy of the chip).
using TilingJudge = std::function<double(const OpPlan&)>;

// Lowers `op` with its tensors placed as `place` says. Throws std::invalid_argument naming the op
// when no tiling fits VMEM. With a judge, a GEMM's best few tilings by the estimate are simulated
// and the fastest is kept (docs/tpu.md, "Tiling").
OpPlan lower_op(const Op& op, const TpuChipParams& p, const TensorAddresses& where, const Placement& place = {},
                const TilingJudge& judge = {});

// What simulating lower_op's plan will cost the host, computed from the tiling without building
// the plan: its tile steps (all cores) and the bytes its DMA engines move (HBM and CMEM). The
// tiling is the estimate's best (the judge, which may pick a runner-up, only runs on ops whose
// tiles move at most 32 MiB). Throws as lower_op does.
struct PlanSize {
    double steps = 0, dma_bytes = 0;
};
PlanSize plan_size(const Op& op, const TpuChipParams& p, const Placement& place = {});

}  // namespace accelsim::tpu
