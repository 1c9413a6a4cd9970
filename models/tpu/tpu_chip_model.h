#pragma once
// The TPU-like chip behind the ChipModel interface (models/common/chip_model.h): runs each op on
// TpuChip (tpu_chip.h) and turns its result into an OpReport with its roofline; ops the chip has no
// cycle model for keep their roofline rows. Peaks for the roofline: the MXUs for GEMM-like ops in
// a dtype they run, the vector unit otherwise; HBM, VMEM (scratchpad) and, with CMEM, its port.
// Registered under kind "systolic" (sim/engine/chip_registry.cpp).
#include <memory>

#include "models/common/chip_model.h"
#include "models/tpu/tpu_chip.h"
#include "models/tpu/tpu_sc.h"

namespace accelsim::tpu {

struct TpuChipModelOptions {
    bool validate = false;  // real data through the datapaths, checked against Eigen
    bool systemc = false;   // one SystemC thread per core (one elaboration per process)
};

class TpuChipModel final : public ChipModel {
public:
    // Throws std::invalid_argument naming the bad field (e.g. "mxu.rows must be ...").
    TpuChipModel(const TpuChipParams& params, const TpuChipModelOptions& options);

    OpReport run(const Op& op, const Op* next) override;
    ComputeUnit compute_unit_for(const Op& op) const override;
    double matrix_macs_per_cycle(DType dtype) const override;
    MemoryPeaks memory_peaks() const override;
    SimulationCost simulation_cost(const Op& op) const override;
    void record_activity() override { chip_->record_activity(); }

    const TpuChip& model() const { return *chip_; }

private:
    OpReport run_on_chip(const Op& op, const Op* next);
    // Parameters the on-chip cache cannot hold cross the host link (tpu.parameter_cache_bytes).
    void stream_parameters(const Op& op, OpReport& r);

    std::int64_t parameter_cache_used_ = 0;
    TpuChipModelOptions options_;
    std::unique_ptr<TpuChip> chip_;
    std::unique_ptr<TpuCoresModule> cores_;  // with options.systemc: one thread per core
};

}  // namespace accelsim::tpu
