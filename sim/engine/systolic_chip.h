#pragma once
// The systolic (TPU-like) chip behind the engine's Chip interface: maps the ChipConfig to
// tpu::TpuChipParams, runs each op on models/tpu's TpuChip and turns the result into an OpReport
// with its roofline. Ops the chip has no cycle model for keep their roofline rows.
#include <memory>
#include <vector>

#include "models/tpu/tpu_chip.h"
#include "models/tpu/tpu_sc.h"
#include "sim/config/model_params.h"
#include "sim/engine/engine.h"

namespace accelsim {

class SystolicChip final : public Chip {
public:
    SystolicChip(const ChipConfig& config, const RunOptions& options);  // throws InputError
    void begin_trace(const std::vector<Op>& ops) override;
    OpReport run(const Op& op) override;
    const tpu::TpuChip& model() const { return *chip_; }

private:
    const ChipConfig& config_;
    RunOptions options_;
    std::unique_ptr<tpu::TpuChip> chip_;
    std::unique_ptr<tpu::TpuCoresModule> cores_;  // with RunOptions::systemc: one thread per core
    const std::vector<Op>* trace_ = nullptr;       // announced by begin_trace, for look-ahead
    std::size_t position_ = 0;                     // index in trace_ of the next op to run
};

}  // namespace accelsim
