#include "models/tpu/tpu_chip_model.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "models/tpu/tpu_stats.h"

namespace accelsim::tpu {

TpuChipModel::TpuChipModel(const TpuChipParams& params, const TpuChipModelOptions& options)
    : options_(options), chip_(std::make_unique<TpuChip>(params)) {
    if (options.systemc) {
        cores_ = std::make_unique<TpuCoresModule>("tpu", params.cores);
        chip_->set_pipeline_driver(cores_->driver());
    }
}

double TpuChipModel::matrix_macs_per_cycle(DType dtype) const {
    const TpuChipParams& p = chip_->params();
    return static_cast<double>(p.cores) * p.mxus_per_core * p.mxu.rows * p.mxu.cols * p.mxu.macs_per_pe_per_cycle.of(dtype);
}

ComputeUnit TpuChipModel::compute_unit_for(const Op& op) const {
    if (op.kind == OpKind::kernel)
        throw std::invalid_argument(op_location(op) + "op '" + op.name + "' (kernel, " + std::string(to_string(op.dtype)) +
                                    "): kernel ops run only on simt chips (this chip is systolic)");
    const TpuChipParams& p = chip_->params();
    const double vector = static_cast<double>(p.cores) * p.vector.lanes * p.vector.sublanes;
    if (is_gemm_like(op.kind)) {
        const double macs = matrix_macs_per_cycle(op.dtype);
        if (macs > 0) return {"mxu", macs};
        // A dtype the MXUs do not support (fp32 on TPUs) runs on the vector unit, one MAC per lane
        // per cycle.
        return {"vector", vector, true};
    }
    return {"vector", vector};
}

MemoryPeaks TpuChipModel::memory_peaks() const {
    const TpuChipParams& p = chip_->params();
    MemoryPeaks m;
    if (!p.ideal_memory) {
        m.bytes_per_cycle["hbm"] = p.memory->dram.peak_bytes_per_second() / p.clock_hz;
        m.compulsory_levels.push_back("hbm");
        if (p.cmem_bytes > 0) m.bytes_per_cycle["cmem"] = p.cmem_bytes_per_cycle;
    }
    m.compulsory_levels.push_back("scratchpad");  // every operand passes through VMEM once
    return m;
}

SimulationCost TpuChipModel::simulation_cost(const Op& op) const {
    try {
        return chip_->simulation_cost(op, options_.validate);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(op_location(op) + e.what());  // as run() says it
    }
}

OpReport TpuChipModel::run(const Op& op, const Op* next) {
    const TpuChipParams& p = chip_->params();
    if (p.int8_only && op.dtype != DType::int8)
        throw std::invalid_argument(op_location(op) + "op '" + op.name + "' (" + std::string(to_string(op.kind)) + ", " +
                                    std::string(to_string(op.dtype)) +
                                    "): this chip runs int8 only (tpu.int8_only); quantize the trace (dtype=int8, or "
                                    "--set default_dtype=int8)");
    OpReport r = run_on_chip(op, next);
    if (p.streams_parameters()) stream_parameters(op, r);
    return r;
}

void TpuChipModel::stream_parameters(const Op& op, OpReport& r) {
    // Whole tensors are cached in trace order while they fit (the Edge TPU compiler caches what fits
    // and streams the rest); a streamed tensor crosses the host link before its op can finish, and
    // the link is not overlapped with the op's own work (the conservative reading: the runtime's
    // overlap is not documented).
    const TpuChipParams& p = chip_->params();
    // bmm's second operand is an activation (attention), not a parameter.
    const std::int64_t weights = op.kind == OpKind::bmm ? 0 : op.weight_bytes();
    std::int64_t streamed = 0;
    if (weights > 0) {
        if (parameter_cache_used_ + weights <= p.parameter_cache_bytes) parameter_cache_used_ += weights;
        else streamed = weights;
    }
    const double link_bytes_per_cycle = p.host_link_bytes_per_second / p.clock_hz;
    const double stream_cycles = static_cast<double>(streamed) / link_bytes_per_cycle;
    const auto added = static_cast<std::uint64_t>(std::ceil(stream_cycles));
    if (streamed > 0) {
        if (r.utilization) *r.utilization *= static_cast<double>(r.cycles) / static_cast<double>(r.cycles + added);
        r.cycles += added;
        r.bytes["host_link"] = streamed;
        r.roofline.bytes["host_link"] = streamed;
        r.roofline.cycles["host_link"] = stream_cycles;
        choose_bound(r.roofline);
    }
    r.stats.push_back(stat_value(stat::host_stream_bytes, static_cast<double>(streamed)));
    r.stats.push_back(stat_value(stat::host_stream_cycles, static_cast<double>(added)));
    r.stats.push_back(stat_value(stat::parameter_cache_used_bytes, static_cast<double>(parameter_cache_used_)));
}

OpReport TpuChipModel::run_on_chip(const Op& op, const Op* next) {
    TpuOpResult result;
    try {
        result = chip_->run(op, options_.validate, next);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(op_location(op) + e.what());  // the models' messages name the op
    }
    if (result.model.empty())
        return roofline_only(op, *this, result.no_model_reason.empty() ? "no cycle model for this op on this chip" : result.no_model_reason);

    OpReport r;
    r.op = op;
    r.model = result.model;
    const MemoryPeaks memory = memory_peaks();
    r.roofline = roofline_of(op, compute_unit_for(op), memory);
    // The compulsory bytes fusion keeps in VMEM or the lowering reads from CMEM are not HBM bytes.
    apply_placement(r.roofline, memory, result.hbm_bytes_not_read + result.hbm_bytes_not_written,
                    result.cmem_compulsory_bytes);
    r.cycles = result.cycles;
    r.bytes = result.bytes.empty() ? r.roofline.bytes : result.bytes;
    r.utilization = result.utilization;
    r.stats = std::move(result.stats);
    r.activity = std::move(result.activity);
    if (result.numerics) {
        NumericsSummary n;
        n.checked = result.numerics->checked;
        n.max_abs_err = result.numerics->max_abs_err;
        n.max_rel_err = result.numerics->max_rel_err;
        n.passed = result.numerics->passed;
        n.quantization = result.numerics->quantization;
        r.numerics = n;
    }
    return r;
}

}  // namespace accelsim::tpu
