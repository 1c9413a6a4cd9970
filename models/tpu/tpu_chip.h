#pragma once
// The TPU-like chip (docs/tpu.md): N TensorCores x M MXUs, a vector unit, a DMA engine and a VMEM
// scratchpad per core, optional CMEM, HBM through models/memory. Runs one Op at a time to
// completion and says how many cycles it took and where the time and the bytes went.
//
// Two memory modes:
//   ideal_memory: operands are always ready; a GEMM is split over every MXU of the chip and takes
//                 the cycles of its slowest MXU (compute effects alone).
//   hierarchy:    the lowering (tpu_lowering.h) tiles each op to fit VMEM, the DMA engines bring
//                 tiles from HBM double-buffered, the MXUs / vector unit compute, results go back.
// No SystemC and no JSON here: plain C++ with busy-until timestamps.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "models/common/chip_model.h"
#include "models/common/activity.h"
#include "models/common/op.h"
#include "models/common/stats.h"
#include "models/tpu/tpu_lowering.h"
#include "models/tpu/tpu_numerics.h"
#include "models/tpu/tpu_validation.h"
#include "models/tpu/tpu_params.h"

namespace accelsim::tpu {

class CorePipeline;
class HierarchyModel;
// Runs every core's pipeline of one op to completion, each core's transfers reaching the memory
// in global time order (ties: lower core first). Default: a plain loop; tpu_sc.h: one SystemC
// thread per core. Both give identical results (tests/tpu/tpu_systemc_test.cpp).
using PipelineDriver = std::function<void(std::vector<CorePipeline>&)>;

struct TpuOpResult {
    std::string model;      // "tpu.ideal" or "tpu.hierarchy"; empty: no cycle model for this op
    std::string no_model_reason;  // with an empty model: why (the report prints it)
    std::uint64_t cycles = 0;
    std::map<std::string, std::int64_t> bytes;  // by level: "hbm", "cmem" (chips with CMEM), "scratchpad" (VMEM)
    std::optional<double> utilization;          // MXU MAC utilization (GEMMs) or vector-unit use
    std::optional<double> mxu_utilization, vector_utilization;
    std::int64_t fused_hbm_bytes_saved = 0;     // fusion: input read from / output left in VMEM
    bool fused = false;                         // a fused producer (output in VMEM) or consumer
    // Compulsory bytes the placement keeps off HBM (for the roofline): the first input read from
    // VMEM or CMEM, the output left in VMEM; and compulsory CMEM traffic (input read, output copied).
    std::int64_t hbm_bytes_not_read = 0, hbm_bytes_not_written = 0, cmem_compulsory_bytes = 0;
    std::vector<StatValue> stats;
    std::optional<NumericsCheck> numerics;      // with validate, for ops whose data was checked
    std::shared_ptr<OpActivity> activity;       // with record_activity(): what the units did
};

class TpuChip {
public:
    // Throws std::invalid_argument naming the bad field (e.g. the MXU's "mxu.rows must be ...").
    explicit TpuChip(const TpuChipParams& params);
    ~TpuChip();
    TpuChip(const TpuChip&) = delete;
    TpuChip& operator=(const TpuChip&) = delete;

    // Runs `op` (the next op of the trace: ops are numbered in call order for the validation
    // seeds). With validate, real data goes through the datapaths and is checked. `next`: the op
    // that will run after this one, if known; it decides where this op leaves its output (fusion
    // into the next op keeps it in VMEM; with CMEM a copy stays there for the next op to read).
    // Throws std::invalid_argument naming the op when it cannot be lowered (a tile that cannot fit).
    TpuOpResult run(const Op& op, bool validate, const Op* next = nullptr);

    // The host cost of running `op` (ChipModel::simulation_cost): the hierarchy's plan size
    // (plan_size: its steps held in memory, its DMA bytes through the memory model), a stepped
    // MXU's PE-cycles, and with validate the operands and results held for the check.
    SimulationCost simulation_cost(const Op& op, bool validate) const;

    const TpuChipParams& params() const { return params_; }
    // Hierarchy chips: who runs the cores' pipelines (default: the plain loop). No effect on
    // ideal-memory chips.
    void set_pipeline_driver(PipelineDriver driver);
    // From now on, each TpuOpResult carries what the MXUs, vector units and DMA engines did.
    void record_activity() { record_activity_ = true; }
    int units() const { return params_.cores * params_.mxus_per_core; }
    // With validate, make the operands and the reference on a second thread while this one
    // simulates (default: when the process may run on more than one CPU). The outcome is the
    // same either way; only the host time differs.
    void set_validation_worker(bool on);
    // Tests only: `fault` changes the chip's GEMM output before it is compared with the reference.
    void set_result_fault_for_test(ResultFault fault);

private:
    TpuOpResult run_gemm_ideal(const Op& op, bool validate, std::int64_t index, OpActivity* activity);

    TpuChipParams params_;
    std::int64_t op_index_ = 0;
    std::unique_ptr<HierarchyModel> hierarchy_;  // memory system and per-core state (tpu_hierarchy.h)
    // Timing-only MXU stats by (batch, m, n, k, dtype) of the timing shape.
    std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, int>, MxuStats> timing_cache_;
    // Where the previous op left its output for this one (decided when it ran, from its `next`).
    InputFrom next_input_from_ = InputFrom::hbm;
    bool record_activity_ = false;
    bool validation_worker_ = validation_worker_by_default();
    ResultFault result_fault_;
};

// Timing shape of a GEMM on an MXU whose rate for the dtype is `rate` MACs per PE per cycle:
// the MXU model computes one MAC per PE per cycle, so a rate r packs r K-elements into one PE
// cycle (int8 at 2x on TPU v5e: K' = ceil(K / 2)) and a rate 1/p takes p passes (K' = ceil(K * p)).
GemmShape mxu_timing_shape(const GemmShape& g, double rate);

}  // namespace accelsim::tpu
