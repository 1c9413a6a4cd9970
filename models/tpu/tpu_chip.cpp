#include "models/tpu/tpu_chip.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

#include "models/tpu/gemm_split.h"
#include "models/tpu/tpu_lowering.h"
#include "models/tpu/tpu_hierarchy.h"
#include "models/tpu/tpu_stats.h"

namespace accelsim::tpu {

GemmShape mxu_timing_shape(const GemmShape& g, double rate) {
    GemmShape t = g;
    if (rate > 0 && rate != 1.0) t.k = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(g.k / rate - 1e-9)));
    return t;
}

const ParamTable<TpuParams>& tpu_param_table() {
    static const ParamTable<TpuParams> table = [] {
        ParamTable<TpuParams> t;
        t.integer("cores", &TpuParams::cores, 1, 64, "TensorCores per chip.")
            .integer("mxus_per_core", &TpuParams::mxus_per_core, 1, 64, "Matrix units (MXUs) per TensorCore.")
            .integer("vmem_bytes", &TpuParams::vmem_bytes, 0, kTiB,
                     "Vector memory (scratchpad) per core in bytes; 0 = none.")
            .integer("cmem_bytes", &TpuParams::cmem_bytes, 0, kTiB,
                     "Common memory shared by the cores of a chip, in bytes; 0 = none.")
            .number("cmem_bytes_per_cycle", &TpuParams::cmem_bytes_per_cycle, 1e-3, 1e6,
                    "Bytes per core cycle the CMEM port moves, shared by the cores' DMA engines; CMEM is used "
                    "only when this and tpu.cmem_bytes are > 0.")
            .or_zero()
            .section("vector", "Vector unit of one core: lanes × sublanes 32-bit ALUs.")
            .integer("vector.lanes", &TpuParams::vector, &VectorUnitParams::lanes, 1, 4096, "Vector lanes per core.")
            .integer("vector.sublanes", &TpuParams::vector, &VectorUnitParams::sublanes, 1, 1024,
                     "Sublanes per lane; elementwise ops per core per cycle = lanes × sublanes.")
            .section("dma", "DMA engine of one core (HBM/CMEM ↔ VMEM).")
            .number("dma.bytes_per_cycle", &TpuParams::dma, &DmaParams::bytes_per_cycle, 1e-3, 1e6,
                    "Bytes per core cycle one core's DMA can move; 0 = limited only by the memory behind it.")
            .or_zero()
            .integer("dma.latency_cycles", &TpuParams::dma, &DmaParams::latency_cycles, 0, 1e6,
                     "Fixed cycles added to each DMA transfer (descriptor issue).")
            .boolean("int8_only", &TpuParams::int8_only,
                     "The chip runs int8 tensors only (Edge TPU): an op of another dtype is refused; quantize the "
                     "trace (dtype=int8, or --set default_dtype=int8).")
            .integer("parameter_cache_bytes", &TpuParams::parameter_cache_bytes, 0, kTiB,
                     "On-chip memory holding the model's parameters across inferences (Edge TPU): whole weight "
                     "tensors in trace order; the rest stream from the host every inference. Used only when this and "
                     "tpu.host_link_bytes_per_second are > 0; otherwise weights are read from the chip's memory.")
            .number("host_link_bytes_per_second", &TpuParams::host_link_bytes_per_second, 1e3, 1e15,
                    "Bandwidth of the host link that streams the parameters tpu.parameter_cache_bytes does not "
                    "hold (Edge TPU: USB); 0 = none.")
            .or_zero();
        return t;
    }();
    return table;
}

const ParamTable<TpuParams>& tpu_compiler_param_table() {
    static const ParamTable<TpuParams> table = [] {
        ParamTable<TpuParams> t;
        t.boolean("fuse_elementwise", &TpuParams::fuse_elementwise,
                  "Fuse elementwise ops into the producing matmul's output pass (as XLA does).");
        return t;
    }();
    return table;
}

int VectorUnitParams::reduction_latency_cycles() const {
    int stages = 0;
    while ((1 << stages) < lanes) ++stages;
    return stages;
}

TpuChip::TpuChip(const TpuChipParams& params) : params_(params) {
    params_.mxu.validate();
    if (params_.cores < 1) throw std::invalid_argument("tpu.cores must be >= 1");
    if (params_.mxus_per_core < 1) throw std::invalid_argument("tpu.mxus_per_core must be >= 1");
    if (params_.vector.lanes < 1 || params_.vector.sublanes < 1)
        throw std::invalid_argument("tpu.vector.lanes and tpu.vector.sublanes must be >= 1");
    if (!params_.ideal_memory) {
        if (!params_.memory) throw std::invalid_argument("tpu: a hierarchy chip needs memory parameters");
        hierarchy_ = std::make_unique<HierarchyModel>(params_);
    }
}

TpuChip::~TpuChip() = default;

void TpuChip::set_pipeline_driver(PipelineDriver driver) {
    if (hierarchy_) hierarchy_->set_driver(std::move(driver));
}

void TpuChip::set_validation_worker(bool on) {
    validation_worker_ = on;
    if (hierarchy_) hierarchy_->set_validation_worker(on);
}

void TpuChip::set_result_fault_for_test(ResultFault fault) {
    result_fault_ = fault;
    if (hierarchy_) hierarchy_->set_result_fault_for_test(std::move(fault));
}

TpuOpResult TpuChip::run(const Op& op, bool validate, const Op* next) {
    const std::int64_t index = op_index_++;
    TpuOpResult r;
    const InputFrom input = next_input_from_;
    next_input_from_ = InputFrom::hbm;
    std::shared_ptr<OpActivity> activity = record_activity_ ? std::make_shared<OpActivity>() : nullptr;
    if (params_.ideal_memory) {
        // Ideal memory covers the MXU alone: GEMMs in a dtype the MXU runs. Everything else keeps
        // its roofline row (empty model), as the engine reports ops no cycle model covers.
        if (is_gemm_like(op.kind) && params_.mxu.macs_per_pe_per_cycle.of(op.dtype) > 0)
            r = run_gemm_ideal(op, validate, index, activity.get());
        else
            r.no_model_reason = is_gemm_like(op.kind)
                                    ? std::string("memory=ideal times GEMMs on the MXU only, and the MXU has no ") +
                                          std::string(to_string(op.dtype)) + " rate"
                                    : "memory=ideal times GEMMs on the MXU only (every other op needs the memory hierarchy)";
    } else if (params_.vmem_bytes == 0) {
        r.no_model_reason = "tpu.vmem_bytes is 0: without VMEM no op is lowered";
    } else {
        // A hierarchy chip stages every tile in VMEM; with none (tpu.vmem_bytes = 0) there is no
        // lowering and every op keeps its roofline row.
        Placement place;
        place.input = input;
        // The next op consumes this op's output when its first input has as many elements in the
        // same dtype (docs/tpu.md, "Placement").
        const bool consumed = next != nullptr && next->dtype == op.dtype && output_elements(op) > 0 &&
                              first_input_elements(*next) == output_elements(op);
        if (consumed && params_.fuse_elementwise && is_gemm_like(op.kind) && is_elementwise(next->kind)) {
            place.output = OutputTo::vmem;
            next_input_from_ = InputFrom::vmem;
        } else if (consumed && params_.cmem_enabled() && op.output_bytes() <= params_.cmem_bytes) {
            place.output = OutputTo::hbm_and_cmem;
            next_input_from_ = InputFrom::cmem;
        }
        hierarchy_->set_activity(activity.get());
        r = hierarchy_->run(op, validate, index, place);
        hierarchy_->set_activity(nullptr);
    }
    r.activity = std::move(activity);
    return r;
}

SimulationCost TpuChip::simulation_cost(const Op& op, bool validate) const {
    SimulationCost cost;
    const bool on_mxu = is_gemm_like(op.kind) && params_.mxu.macs_per_pe_per_cycle.of(op.dtype) > 0;
    if (validate && is_gemm_like(op.kind)) {
        // Operands as floats plus their per-unit copies; per output an fp32 accumulator, the result
        // as a double and the reference as a float (NumericsReference; a double for int8 beyond
        // K = 1024 and convolutions, where the operands dominate).
        const GemmShape g = op.as_gemm();
        const double operands = static_cast<double>(g.batch) * static_cast<double>(g.m * g.k + g.k * g.n);
        cost.memory_bytes += 8 * operands + 16 * static_cast<double>(g.batch) * static_cast<double>(g.m * g.n);
        // int8 and fp8 add no peak: the quantization error's fp32 operands and reference come
        // after the operands and the datapath's reference are released (GemmValidation::check).
    }
    if (params_.ideal_memory) {
        if (on_mxu && params_.mxu.mode == MxuMode::stepped) {
            // Every unit's part, stepped once per distinct shape (timing only) or always
            // (validate): at least the slowest part, at most all of them.
            const double rate = params_.mxu.macs_per_pe_per_cycle.of(op.dtype);
            const double cycles = static_cast<double>(
                mxu_gemm_timing(params_.mxu, mxu_timing_shape(op.as_gemm(), rate), op.dtype).cycles);
            cost.stepped_pe_cycles = cycles * params_.mxu.rows * params_.mxu.cols;
        }
        return cost;
    }
    if (params_.vmem_bytes == 0) return cost;  // roofline rows only
    const PlanSize size = plan_size(op, params_);
    // The plan makes its steps on demand and the pipelines hold the few in flight (CoreSteps,
    // CorePipeline), so a timing-only run holds the same memory whatever the op's size; its host
    // time follows the bytes the memory model moves, request by request.
    cost.traffic_bytes = size.dma_bytes;
    const double chunks = std::ceil(size.dma_bytes / static_cast<double>(params_.dma.chunk_bytes));
    if (record_activity_) {
        // The timeline's records of the op (models/common/activity.h): the bytes of every DMA
        // chunk at its memory level, and per step a span on each MXU (or the vector unit) and
        // one per transfer (at most three); vectors grow to twice what they hold.
        const double spans = size.steps * (params_.mxus_per_core + 3);
        cost.memory_bytes += 2 * (chunks * sizeof(ActivityTransfer) + spans * sizeof(ActivitySpan));
    }
    std::ostringstream detail;
    detail.precision(3);
    detail << size.steps << " tile steps";
    if (record_activity_) detail << ", " << chunks << " DMA chunks recorded for the timeline";
    cost.detail = detail.str();  // "1.4e+06 tile steps"
    return cost;
}

TpuOpResult TpuChip::run_gemm_ideal(const Op& op, bool validate, std::int64_t index, OpActivity* activity) {
    const GemmShape g = op.as_gemm();
    const double rate = params_.mxu.macs_per_pe_per_cycle.of(op.dtype);
    const MxuParams& mxu = params_.mxu;
    // Split over every MXU of the chip (the roofline assumes all of them), whole column tiles per
    // unit; the op ends with its slowest unit.
    const std::vector<GemmPart> parts = split_gemm(g, units(), mxu.cols, [&](const GemmShape& s) {
        return mxu_gemm_timing(mxu, mxu_timing_shape(s, rate), op.dtype).cycles;
    });

    // The operands and the reference (on the worker thread, when it is on).
    std::optional<GemmValidation> check;
    std::vector<double> c;
    if (validate) {
        check.emplace(op, op_seed(params_.seed, index), validation_worker_, params_.outliers);
        c.assign(static_cast<std::size_t>(g.batch * g.m * g.n), 0.0);
    }

    TpuOpResult r;
    r.model = "tpu.ideal";
    std::int64_t slowest = 0, compute = 0, fill_drain = 0, weight_stall = 0, drain_stall = 0, folds = 0;
    double mapping_weighted = 0;
    std::vector<float> a_part, b_part;
    for (std::size_t u = 0; u < parts.size(); ++u) {
        const GemmPart& p = parts[u];
        const GemmShape shape = p.shape(g.k);
        MxuStats stats;
        if (validate) {
            // Gather the unit's operands, run the array on real data, scatter C back.
            const GemmData& data = check->data();
            a_part.resize(static_cast<std::size_t>(p.batch * p.m * g.k));
            b_part.resize(static_cast<std::size_t>(p.batch * g.k * p.n));
            for (std::int64_t b = 0; b < p.batch; ++b) {
                const float* a_src = data.a.data() + ((p.b0 + b) * g.m + p.m0) * g.k;
                std::copy(a_src, a_src + p.m * g.k, a_part.data() + b * p.m * g.k);
                for (std::int64_t k = 0; k < g.k; ++k) {
                    const float* b_src = data.b.data() + ((p.b0 + b) * g.k + k) * g.n + p.n0;
                    std::copy(b_src, b_src + p.n, b_part.data() + (b * g.k + k) * p.n);
                }
            }
            const MxuOperands ops{a_part.data(), b_part.data()};
            const MxuGemmResult res = run_mxu_gemm(mxu, shape, op.dtype, &ops);
            for (std::int64_t b = 0; b < p.batch; ++b)
                for (std::int64_t i = 0; i < p.m; ++i)
                    for (std::int64_t j = 0; j < p.n; ++j)
                        c[static_cast<std::size_t>(((p.b0 + b) * g.m + p.m0 + i) * g.n + p.n0 + j)] =
                            res.c((b * p.m + i) * p.n + j);
            stats = rate == 1.0 ? res.stats : run_mxu_gemm(mxu, mxu_timing_shape(shape, rate), op.dtype).stats;
        } else {
            // Timing-only stats depend on the shape and dtype alone: a trace repeats its layers,
            // so a stepped MXU steps each distinct GEMM once.
            const GemmShape t = mxu_timing_shape(shape, rate);
            const auto key = std::make_tuple(t.batch, t.m, t.n, t.k, static_cast<int>(op.dtype));
            auto it = timing_cache_.find(key);
            if (it == timing_cache_.end()) it = timing_cache_.emplace(key, run_mxu_gemm(mxu, t, op.dtype).stats).first;
            stats = it->second;
        }
        const int core = static_cast<int>(u) / params_.mxus_per_core, unit = static_cast<int>(u) % params_.mxus_per_core;
        r.stats.push_back(stat_value(stat::mxu_unit_busy_cycles, {std::to_string(core), std::to_string(unit)},
                                     double(stats.cycles)));
        // Every MXU starts its part with the op and works for its own cycles.
        if (activity)
            activity->spans.push_back({"core" + std::to_string(core) + ".mxu" + std::to_string(unit), op.name, 0.0,
                                       double(stats.cycles)});
        if (stats.cycles > slowest) {
            slowest = stats.cycles;
            compute = stats.compute_cycles;
            fill_drain = stats.fill_drain_cycles;
            weight_stall = stats.weight_load_stall_cycles;
            drain_stall = stats.drain_stall_cycles;
        }
        folds += stats.folds;
        mapping_weighted += stats.mapping_efficiency * static_cast<double>(stats.folds);
    }
    r.cycles = static_cast<std::uint64_t>(std::max<std::int64_t>(1, slowest));
    const double peak = static_cast<double>(units()) * mxu.rows * mxu.cols * rate;
    r.mxu_utilization = static_cast<double>(g.macs()) / (peak * static_cast<double>(r.cycles));
    r.utilization = r.mxu_utilization;
    r.stats.push_back(stat_value(stat::mxus_used, double(parts.size())));
    r.stats.push_back(stat_value(stat::slowest_mxu_compute_cycles, double(compute)));
    r.stats.push_back(stat_value(stat::slowest_mxu_fill_drain_cycles, double(fill_drain)));
    r.stats.push_back(stat_value(stat::slowest_mxu_weight_load_stall_cycles, double(weight_stall)));
    r.stats.push_back(stat_value(stat::slowest_mxu_drain_stall_cycles, double(drain_stall)));
    r.stats.push_back(stat_value(stat::mxu_folds, double(folds)));
    r.stats.push_back(stat_value(stat::mxu_mapping_efficiency, folds > 0 ? mapping_weighted / static_cast<double>(folds) : 0.0));
    if (validate) {
        if (result_fault_) result_fault_(c);
        r.numerics = check->check(c);
    }
    return r;
}

}  // namespace accelsim::tpu
