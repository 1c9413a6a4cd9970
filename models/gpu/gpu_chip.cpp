#include "models/gpu/gpu_chip.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "models/gpu/gpu_chip_kernel_args.h"
#include "models/gpu/hierarchy_port.h"
#include "models/gpu/fused_kernels.h"
#include "models/gpu/gemm.h"
#include "models/gpu/lowering.h"
#include "models/gpu/gpu_stats.h"
#include "models/simt/simt_module.h"
#include "models/simt/trip_sampling.h"

namespace accelsim::gpu {

namespace {

// Multiply-accumulates of one mma warp instruction of a GEMM of the dtype (m16n8k16: 2048; the
// int8 and fp8 kernels' m16n8k32: 4096).
double mma_macs_of(DType dtype) {
    return simt::mma_macs(dtype == DType::int8 || is_fp8(dtype) ? simt::MmaType::s8 : simt::MmaType::f16);
}

}  // namespace

GpuChip::GpuChip(const GpuChipParams& params, const GpuChipOptions& options)
    : params_(params), options_(options) {
    if (params_.simt.sms < 1) throw std::invalid_argument("gpu.sms must be at least 1");
    (void)make_memory_port();  // the memory models check their parameters now, not at the first op
    if (options_.systemc)
        sm_threads_ = std::make_unique<simt::SimtChipModule>(
            "gpu", params_.simt.sms, sc_core::sc_time(std::max(1.0, std::round(1e12 / params_.clock_hz)), sc_core::SC_PS));
}

GpuChip::~GpuChip() = default;

std::unique_ptr<simt::GlobalMemoryPort> GpuChip::make_memory_port() const {
    if (!params_.memory) return std::make_unique<simt::FixedLatencyMemory>(params_.ideal_latency_cycles);
    return std::make_unique<HierarchyMemoryPort>(*params_.memory);
}

simt::LaunchOptions GpuChip::launch_options(const simt::Kernel& kernel, bool validate) const {
    simt::LaunchOptions o;
    o.skip_fp_payload = kernel.fp_payload_skippable && !validate;
    // The hierarchy's non-blocking port sets its own windows; only a blocking one (no L2) shared
    // by several SMs needs lock-step windows to be served in time order.
    const bool blocking_shared = params_.memory && !params_.memory->l2 && params_.simt.sms > 1;
    o.sm_quantum_cycles = blocking_shared ? kBlockingPortQuantumCycles : 0;
    return o;
}

double GpuChip::matrix_macs_per_cycle(DType dtype) const {
    auto it = params_.tensor_macs_per_sm_cycle.find(dtype);
    const double per_sm = it == params_.tensor_macs_per_sm_cycle.end() ? 0.0 : it->second;
    return static_cast<double>(params_.simt.sms) * per_sm;
}

ComputeUnit GpuChip::compute_unit_for(const Op& op) const {
    const double sms = params_.simt.sms;
    if (is_gemm_like(op.kind)) {
        // Mixed fp8 operands (e4m3 x e5m2) at the slower format's rate.
        const double tensor = op.b_dtype ? std::min(matrix_macs_per_cycle(op.dtype), matrix_macs_per_cycle(*op.b_dtype))
                                         : matrix_macs_per_cycle(op.dtype);
        if (tensor > 0) return {"tensor", tensor};
        if (op.dtype == DType::int8) return {"int", sms * params_.int_lanes, true};
        return {"fp32", sms * params_.fp32_lanes, true};
    }
    // Vector ops and kernels: FP32 pipes (elementwise ops per SM per cycle = FP32 lanes).
    return {"fp32", sms * params_.fp32_lanes};
}

MemoryPeaks GpuChip::memory_peaks() const {
    MemoryPeaks m;
    if (params_.memory) {
        m.bytes_per_cycle["hbm"] = params_.hbm_bytes_per_cycle;
        m.compulsory_levels.push_back("hbm");
        if (params_.memory->l2) {
            m.bytes_per_cycle["l2"] = params_.l2_bytes_per_cycle;
            m.compulsory_levels.push_back("l2");
        }
    }
    if (params_.launch_overhead_cycles > 0) m.latency_cycles = params_.launch_overhead_cycles;
    return m;
}

void GpuChip::plan(const std::vector<Op>& ops) {
    planned_ops_ = ops;
    const LoweringTarget target = lowering_target();
    groups_ = plan_gpu_fusion(ops, params_.fusion, [&target](DType t) { return target.tensor_cores_for(t); });
    group_of_.assign(ops.size(), -1);
    for (std::size_t g = 0; g < groups_.size(); ++g)
        for (const std::size_t i : groups_[g].ops) group_of_[i] = static_cast<int>(g);
    next_index_ = 0;
}

OpReport GpuChip::run(const Op& op, const Op* next) {
    op_starting_ = true;
    last_op_reused_ = false;
    warm_lines_ = warm_input_lines_ = 0;
    // With a plan, the op's place in it: the first op of a group runs the group's kernel, the others
    // ran in it.
    const bool planned = next_index_ < planned_ops_.size() && planned_ops_[next_index_].name == op.name;
    const std::size_t index = planned ? next_index_++ : 0;
    const int group = planned ? group_of_[index] : -1;
    const bool last = planned ? index + 1 == planned_ops_.size() : next == nullptr;
    OpReport r;
    if (group >= 0 && groups_[static_cast<std::size_t>(group)].ops.front() != index) {
        r.op = op;
        r.model = "fused";
        r.fused_into = planned_ops_[groups_[static_cast<std::size_t>(group)].ops.front()].name;
    } else {
        // What this op's simulation depends on besides the chip (repeated_ops.h). Kernel ops are
        // always run: their programs and arguments are the user's.
        std::optional<OpStart> start;
        if (options_.reuse_repeated_ops && !options_.validate && !record_activity_ && op.kind != OpKind::kernel) {
            start.emplace();
            if (group >= 0) {
                const FusionGroup& g = groups_[static_cast<std::size_t>(group)];
                start->shape.push_back(static_cast<char>(g.kind));
                for (const std::size_t i : g.ops) append_op_shape_key(start->shape, planned_ops_[i]);
            } else {
                append_op_shape_key(start->shape, op);
            }
            start->l2 = carry_shared_ ? carry_shared_ : std::make_shared<const L2Lines>(l2_carry_);
            start->previous_output = carry_output_;
        }
        if (const OpOutcome* seen = start ? repeated_ops_.find(*start) : nullptr) {
            last_op_reused_ = true;
            r = seen->report;
            r.op = op;
            if (group >= 0) {
                r.fused_ops.clear();
                const FusionGroup& g = groups_[static_cast<std::size_t>(group)];
                for (std::size_t i = 1; i < g.ops.size(); ++i) r.fused_ops.push_back(planned_ops_[g.ops[i]].name);
            }
            last_ = seen->kernel;
            l2_carry_ = *seen->l2;
            carry_shared_ = seen->l2;
            carry_output_ = seen->output;
            warm_lines_ = seen->warm_lines;
            warm_input_lines_ = seen->warm_input_lines;
            op_starting_ = false;
        } else {
            r = group >= 0 ? run_fused(groups_[static_cast<std::size_t>(group)])
                : op.kind == OpKind::kernel ? run_kernel(op)
                                            : run_lowered(op);
            if (start) {
                carry_shared_ = std::make_shared<const L2Lines>(l2_carry_);
                repeated_ops_.keep(*start, OpOutcome{r, last_, carry_shared_, carry_output_, warm_lines_,
                                                     warm_input_lines_});
            }
        }
    }
    if (!params_.cold_l2_per_op && params_.memory && params_.memory->l2 && r.fused_into.empty()) {
        r.stats.push_back(stat_value(stat::l2_warm_lines, static_cast<double>(warm_lines_)));
        r.stats.push_back(stat_value(stat::l2_warm_input_lines, static_cast<double>(warm_input_lines_)));
    }
    if (!params_.cold_l2_per_op && params_.memory && params_.memory->l2) {
        // The last op (fused or not): what is still dirty in the L2 is written back after it. The
        // bytes count (every output reaches HBM once); the time does not: a kernel completes, and a
        // synchronize returns, without waiting for the L2 to write back.
        if (last) {
            const std::uint64_t flushed = flush_l2();
            r.bytes["hbm"] += static_cast<std::int64_t>(flushed);
            r.stats.push_back(stat_value(stat::l2_flush_bytes, static_cast<double>(flushed)));
        }
    }
    return r;
}

namespace {

const simt::GlobalMemory::Allocation* allocation_holding(const simt::GlobalMemory& memory, std::uint64_t address) {
    for (const auto& a : memory.allocations())
        if (address >= a.address && address < a.address + a.bytes) return &a;
    return nullptr;
}

}  // namespace

std::pair<std::uint64_t, std::uint64_t> GpuChip::warm_l2(simt::GlobalMemoryPort& port,
                                                         const simt::GlobalMemory& memory) {
    auto& hierarchy = dynamic_cast<HierarchyMemoryPort&>(port);
    std::uint64_t input_lines = 0;
    if (op_starting_ && !l2_carry_.empty()) {
        // A new op, a new address space. The trace names no tensors: an op reads the output of the
        // op before it as its first buffer (a chain, as layers are). Those lines move onto that
        // buffer; every other line (weights, older inputs, a longer output's tail) keeps its
        // place in the L2 under an address no buffer of this op has, so it takes space and, if
        // dirty, is written back when it leaves.
        const auto line_bytes = static_cast<std::uint64_t>(params_.memory->l2->line_bytes);
        const simt::GlobalMemory::Allocation* input =
            memory.allocations().empty() ? nullptr : &memory.allocations().front();
        // One tag for every such line, whichever op left it: an op's start then depends on what
        // the L2 holds, not on the op's place in the trace (buffers lie below 4 GiB).
        const std::uint64_t unread = std::uint64_t{1} << 32;
        carry_shared_.reset();
        for (auto& line : l2_carry_) {
            const std::uint64_t address = line.line_address * line_bytes;
            const std::uint64_t offset = carry_output_ ? address - carry_output_->address : ~std::uint64_t{0};
            if (carry_output_ && input && address >= carry_output_->address && offset < carry_output_->bytes &&
                offset < input->bytes) {
                line.line_address = (input->address + offset) / line_bytes;
                ++input_lines;
            } else {
                line.line_address = ((address & 0xffffffffULL) | unread) / line_bytes;
            }
        }
    }
    hierarchy.warm_l2(l2_carry_);
    return {l2_carry_.size(), input_lines};
}

void GpuChip::keep_l2(const simt::GlobalMemoryPort& port, const simt::GlobalMemory& memory) {
    const auto& hierarchy = dynamic_cast<const HierarchyMemoryPort&>(port);
    l2_carry_ = hierarchy.l2_lines();
    carry_shared_.reset();
    // The buffer the launch wrote is the op's output (a split-K sum writes only C).
    const auto written = hierarchy.first_write();
    const simt::GlobalMemory::Allocation* output = written ? allocation_holding(memory, *written) : nullptr;
    carry_output_ = output ? std::optional<simt::GlobalMemory::Allocation>(*output) : std::nullopt;
}

std::uint64_t GpuChip::flush_l2() {
    const auto sector_bytes = static_cast<std::uint64_t>(params_.memory->l2->sector_bytes);
    std::uint64_t dirty = 0;
    for (const auto& line : l2_carry_) dirty += static_cast<std::uint64_t>(__builtin_popcount(line.dirty)) * sector_bytes;
    l2_carry_.clear();
    carry_shared_.reset();
    carry_output_.reset();
    return dirty;
}

const simt::Kernel& GpuChip::kernel_for(const Op& op) {
    auto it = kernels_.find(op.kernel.file);
    if (it != kernels_.end()) return it->second;
    try {
        return kernels_.emplace(op.kernel.file, simt::assemble_file(op.kernel.file)).first->second;
    } catch (const std::exception& e) {  // AssemblyError: "FILE:LINE: message"
        throw std::invalid_argument(op_where(op) + ": " + e.what());
    }
}

OpReport GpuChip::run_kernel(const Op& op) {
    const simt::Kernel& kernel = kernel_for(op);
    const KernelLaunch& launch = op.kernel;
    if (launch.grid[1] != 1 || launch.grid[2] != 1 || launch.block[1] != 1 || launch.block[2] != 1)
        throw std::invalid_argument(op_where(op) + ": the SIMT core runs 1-D grids and blocks (grid=X block=Y)");
    if (launch.grid[0] > UINT32_MAX || launch.block[0] > 1024)
        throw std::invalid_argument(op_where(op) + ": grid must fit 32 bits and block be at most 1024 threads");
    const simt::Dim dims{static_cast<std::uint32_t>(launch.grid[0]), static_cast<std::uint32_t>(launch.block[0])};

    simt::GlobalMemory memory;
    const std::vector<std::uint32_t> args = kernel_arguments(op, kernel, params_.seed, memory);
    return launch_and_report(op, kernel, dims, args, memory);
}

LoweringTarget GpuChip::lowering_target() const {
    LoweringTarget target;
    target.sms = params_.simt.sms;
    target.sm = params_.simt.sm;
    target.seed = params_.seed;
    target.outliers = params_.outliers;
    target.real_data = options_.validate;
    target.reference_on_worker = options_.validation_worker;
    target.launch_overhead_cycles = params_.launch_overhead_cycles;
    target.hbm_bytes_per_cycle = params_.hbm_bytes_per_cycle;
    target.sm_port_bytes_per_cycle = params_.sm_port_bytes_per_cycle;
    target.tensor_macs_per_sm_cycle = {};
    for (const auto& [dtype, rate] : params_.tensor_macs_per_sm_cycle)
        if (const auto member = DTypeRates::member(dtype)) target.tensor_macs_per_sm_cycle.*member = rate;
    if (params_.memory && params_.memory->l2) {
        const memory::L2Params& l2 = *params_.memory->l2;
        target.l2_bytes = l2.size_bytes;
        target.l2_bytes_per_cycle = l2.slices * l2.bytes_per_cycle_per_slice * l2.clock_hz / params_.clock_hz;
    }
    return target;
}

OpReport GpuChip::run_lowered(const Op& op) {
    simt::GlobalMemory memory;
    std::optional<LoweredKernel> lowered;
    try {
        lowered = lower_op(op, memory, lowering_target());
    } catch (const LoweringError& e) {
        throw std::invalid_argument(op_where(op) + ": " + e.what());
    }
    if (!lowered) return roofline_only(op, *this, no_kernel_reason(op, lowering_target()).value_or("no kernel"));
    return finish_lowered(op, *lowered, memory, chip_roofline(op, *this));
}

OpReport GpuChip::run_fused(const FusionGroup& group) {
    std::vector<const Op*> ops;
    for (const std::size_t i : group.ops) ops.push_back(&planned_ops_[i]);
    const Op& op = *ops.front();
    simt::GlobalMemory memory;
    const LoweringTarget target = lowering_target();
    LoweredKernel lowered;
    // The group's own work is a lower bound: the first op's roofline is one for a GEMM epilogue (the
    // GEMM's work and bytes are part of the kernel's) and for the residual layernorm (the add's);
    // attention never writes the scores, so its bound is computed from Q, K, V and O.
    Roofline shape = chip_roofline(op, *this);
    try {
        switch (group.kind) {
            case FusedKind::gemm_epilogue: {
                GemmEpilogue epilogue;
                for (std::size_t i = 1; i < ops.size(); ++i) epilogue.steps.push_back(epilogue_step_of(ops[i]->kind));
                lowered = lower_gemm_epilogue(op, epilogue, memory, target);
                break;
            }
            case FusedKind::residual_layernorm: lowered = lower_residual_layernorm(op, *ops[1], memory, target); break;
            case FusedKind::attention:
                lowered = lower_attention(op, *ops[3], memory, target);
                shape = attention_roofline(op);
                break;
        }
    } catch (const LoweringError& e) {
        throw std::invalid_argument(op_where(op) + ": " + e.what());
    }
    OpReport r = finish_lowered(op, lowered, memory, shape);
    r.stats.push_back(stat_value(stat::fused_ops, static_cast<double>(ops.size())));
    for (std::size_t i = 1; i < ops.size(); ++i) r.fused_ops.push_back(ops[i]->name);
    return r;
}

Roofline GpuChip::attention_roofline(const Op& scores) const {
    // Two GEMMs of b s s d MACs each on the tensor cores; Q, K, V read and O written once.
    Roofline roof = chip_roofline(scores, *this);
    const MemoryPeaks peaks = memory_peaks();
    const GemmShape g = scores.gemm;
    const double macs = 2.0 * static_cast<double>(g.batch * g.m * g.n * g.k);
    const double tensor = matrix_macs_per_cycle(scores.dtype);
    if (tensor > 0) roof.cycles["compute"] = roof.compute_cycles = macs / tensor;
    const std::int64_t bytes = 4 * g.batch * g.m * g.k * bytes_of(scores.dtype);
    for (const std::string& level : peaks.compulsory_levels) {
        roof.bytes[level] = bytes;
        if (peaks.of(level) > 0) roof.cycles[level] = static_cast<double>(bytes) / peaks.of(level);
    }
    choose_bound(roof);
    return roof;
}

OpReport GpuChip::finish_lowered(const Op& op, LoweredKernel& lowered_kernel, simt::GlobalMemory& memory,
                                 const Roofline& shape) {
    LoweredKernel* lowered = &lowered_kernel;
    OpReport r = launch_and_report(op, *lowered->kernel, lowered->dims, lowered->args, memory,
                                   params_.sampling != GpuSampling::off,
                                   params_.sampling == GpuSampling::waves_and_trips ? lowered->loop : std::nullopt);
    // Further launches of the op (split-K's sum) run after it on the same data, each with its own
    // launch overhead and the L2 the launch before left (empty with gpu.cold_l2_per_op): their
    // cycles, bytes and roofline bounds add to the op's; the simt.* counters stay those of the first
    // launch.
    if (!lowered->then.empty()) {
        const simt::KernelStats first = last_;
        double then_cycles = 0, then_issued = 0;
        for (const LoweredLaunch& next : lowered->then) {
            const OpReport more = launch_and_report(op, *next.kernel, next.dims, next.args, memory);
            if (r.activity && more.activity) {
                auto both = std::make_shared<OpActivity>(*r.activity);
                both->append(*more.activity, static_cast<double>(r.cycles));
                r.activity = std::move(both);
            }
            r.cycles += more.cycles;
            for (const auto& [level, bytes] : more.bytes) r.bytes[level] += bytes;
            for (const auto& [key, cycles] : more.roofline.cycles) r.roofline.cycles[key] += cycles;
            then_cycles += static_cast<double>(more.cycles);
            then_issued += static_cast<double>(last_.issued);
        }
        r.roofline.bytes = r.bytes;
        r.roofline.compute_cycles = r.roofline.cycles["compute"];
        last_ = first;
        r.stats.push_back(stat_value(stat::then_launches, static_cast<double>(lowered->then.size())));
        r.stats.push_back(stat_value(stat::then_cycles, then_cycles));
        r.stats.push_back(stat_value(stat::then_issued, then_issued));
    }

    // The op's own roofline (its work at the peak of the unit that runs it, its compulsory bytes)
    // is a lower bound too: keep the larger of each.
    Roofline& roof = r.roofline;
    for (const auto& [key, cycles] : shape.cycles) {
        // Behind an L2 the outputs may stay in it (write-back, never evicted during the op), so the
        // compulsory bytes are no lower bound on HBM traffic: the run's own HBM bytes are.
        if (key == "hbm" && params_.memory && params_.memory->l2) continue;
        double& mine = roof.cycles[key];
        if (cycles > mine) {
            mine = cycles;
            if (key == "compute") roof.compute_unit = shape.compute_unit;
        }
    }
    roof.matrix_fallback = shape.matrix_fallback;
    roof.compute_cycles = roof.cycles["compute"];
    choose_bound(roof);
    // GEMMs run on the tensor cores: their utilization is the tensor cores' share of peak.
    if (is_gemm_like(op.kind) && last_.cycles > 0) {
        const double peak = matrix_macs_per_cycle(op.dtype);
        const double macs = static_cast<double>(last_.mma_issued) * mma_macs_of(op.dtype);
        if (peak > 0) r.utilization = macs / (peak * static_cast<double>(r.cycles));
        r.stats.push_back(stat_value(stat::tensor_utilization, r.utilization.value_or(0)));
    }
    r.stats.insert(r.stats.end(), lowered->stats.begin(), lowered->stats.end());

    if (options_.validate && lowered->check) {
        const LoweringNumerics n = lowered->check(memory);
        NumericsSummary num;
        num.checked = n.checked;
        num.max_abs_err = n.max_abs_err;
        num.max_rel_err = n.max_rel_err;
        num.passed = n.passed;
        num.quantization = n.quantization;
        r.numerics = num;
    }
    return r;
}

std::shared_ptr<const OpActivity> GpuChip::launch_activity(
    const std::string& kernel_name, std::uint64_t overhead, const simt::KernelStats& k,
    const std::vector<std::pair<std::uint64_t, HierarchyTraffic>>& windows) const {
    auto a = std::make_shared<OpActivity>();
    const double start = static_cast<double>(overhead), end = start + static_cast<double>(k.cycles);
    if (overhead > 0) a->spans.push_back({"kernels", "launch overhead", 0.0, start});
    a->spans.push_back({"kernels", kernel_name, start, end});
    for (std::size_t sm = 0; sm < k.resident_warps.size(); ++sm)
        for (const simt::ResidentWarps& w : k.resident_warps[sm])
            a->samples.push_back({"sm" + std::to_string(sm) + ".resident_warps", start + static_cast<double>(w.cycle),
                                  static_cast<double>(w.warps)});
    // Bytes that reached the L2 and the HBM in each window; a window ending after the kernel (the
    // last one, which served what was left) is cut at its end.
    HierarchyTraffic before;
    double from = start;
    for (const auto& [window_end, traffic] : windows) {
        const double to = std::min(end, start + static_cast<double>(std::min<std::uint64_t>(window_end, k.cycles)));
        const double l2 = static_cast<double>(traffic.l2_bytes() - before.l2_bytes());
        const double hbm = static_cast<double>(traffic.hbm_bytes() - before.hbm_bytes());
        if (params_.memory && params_.memory->l2 && l2 > 0) a->transfers.push_back({"l2", from, std::max(from, to), l2});
        if (hbm > 0) a->transfers.push_back({"hbm", from, std::max(from, to), hbm});
        before = traffic;
        from = std::max(from, to);
    }
    return a;
}

namespace {

// The traffic counters that scale with work (latencies are per sector and stay the sampled run's).
constexpr std::array<std::uint64_t HierarchyTraffic::*, 9> kTrafficWorkCounters{
    &HierarchyTraffic::l2_read_bytes,   &HierarchyTraffic::l2_write_bytes,  &HierarchyTraffic::l2_hits,
    &HierarchyTraffic::l2_accesses,     &HierarchyTraffic::hbm_read_bytes,  &HierarchyTraffic::hbm_write_bytes,
    &HierarchyTraffic::hbm_row_hits,    &HierarchyTraffic::hbm_row_misses,  &HierarchyTraffic::hbm_row_conflicts};

// The port's traffic counters extrapolated as simt::extrapolate_stats does the SMs' counters.
HierarchyTraffic extrapolate_traffic(const HierarchyTraffic& sampled, const HierarchyTraffic& at_window_end,
                                     const HierarchyTraffic& at_window_start, std::size_t window_waves,
                                     std::uint64_t waves) {
    HierarchyTraffic t = sampled;  // latencies stay the sampled run's (per sector, not work)
    for (auto field : kTrafficWorkCounters)
        t.*field = simt::extrapolate_counter(sampled.*field, at_window_end.*field, at_window_start.*field, waves,
                                             window_waves);
    return t;
}

// Adds scale x (now - then) of the traffic counters that scale with work to `into`.
void add_scaled_traffic(HierarchyTraffic& into, const HierarchyTraffic& now, const HierarchyTraffic& then, double scale) {
    for (auto field : kTrafficWorkCounters)
        into.*field += static_cast<std::uint64_t>(
            std::llround(static_cast<double>(now.*field - std::min(now.*field, then.*field)) * scale));
}

}  // namespace

OpReport GpuChip::launch_and_report(const Op& op, const simt::Kernel& kernel, simt::Dim dims,
                                     const std::vector<std::uint32_t>& args, simt::GlobalMemory& memory, bool sample,
                                     const std::optional<simt::SampledLoop>& loop) {
    std::unique_ptr<simt::GlobalMemoryPort> port = make_memory_port();
    simt::LaunchOptions options = launch_options(kernel, options_.validate);
    const auto* hierarchy_port = dynamic_cast<const HierarchyMemoryPort*>(port.get());
    std::vector<std::pair<std::uint64_t, HierarchyTraffic>> windows;  // timelines: traffic so far at each window's end
    if (record_activity_) {
        options.record_resident_warps = true;
        if (hierarchy_port)
            options.on_window = [&windows, hierarchy_port](std::uint64_t end) {
                windows.emplace_back(end, hierarchy_port->traffic());
            };
    }
    const bool warm = !params_.cold_l2_per_op && dynamic_cast<const HierarchyMemoryPort*>(port.get()) &&
                      params_.memory->l2;
    if (warm) {
        const auto [lines, input_lines] = warm_l2(*port, memory);
        if (op_starting_) warm_lines_ = lines, warm_input_lines_ = input_lines;
    }
    op_starting_ = false;
    // Sampling skips blocks, so their outputs are never written (no --validate) and their activity
    // never happens (no timelines): both run every block.
    std::optional<simt::WaveSampler> sampler;
    std::vector<HierarchyTraffic> wave_traffic;  // the port's traffic at each wave's end
    // Loop trips run functionally add their extrapolated traffic here; the port's traffic with it
    // is the launch's.
    HierarchyTraffic trip_traffic;
    const auto traffic_now = [&trip_traffic, hierarchy_port] {  // only with a hierarchy port
        HierarchyTraffic t = hierarchy_port->traffic();
        for (auto field : kTrafficWorkCounters) t.*field += trip_traffic.*field;
        return t;
    };
    // Loop trips: their values are computed (the blocks run them functionally), so --validate
    // keeps them; timelines would show the skipped time as nothing, so they do not.
    std::optional<simt::TripSampler> trips;
    std::vector<HierarchyTraffic> series_traffic;  // at each window end of the trip sampler's series
    if (loop && !record_activity_ && simt::loop_can_be_sampled(kernel, *loop)) {
        trips.emplace(params_.sampling_rule);
        trips->loop = *loop;
        if (hierarchy_port) {
            trips->on_snapshot = [&](std::size_t i) {
                if (i == 0) series_traffic.clear();
                series_traffic.push_back(traffic_now());
            };
            trips->on_skip = [&](std::size_t i, double scale) {
                add_scaled_traffic(trip_traffic, traffic_now(), series_traffic.at(i), scale);
            };
        }
        options.trip_sampler = &*trips;
    }
    if (sample && !options_.validate && !record_activity_) {
        sampler.emplace(params_.sampling_rule);
        if (hierarchy_port)
            sampler->on_wave_end = [&wave_traffic, &traffic_now](std::size_t) { wave_traffic.push_back(traffic_now()); };
        // The L2 must have turned over and begun writing dirty lines back before the waves can be
        // steady, unless everything the op touches fits in it.
        if (hierarchy_port && params_.memory->l2) {
            std::uint64_t footprint = 0;
            for (const auto& a : memory.allocations()) footprint += a.bytes;
            const auto l2_bytes = static_cast<std::uint64_t>(params_.memory->l2->size_bytes);
            if (footprint > l2_bytes)
                sampler->steady_state_possible = [hierarchy_port, l2_bytes] {
                    const HierarchyTraffic t = hierarchy_port->traffic();
                    return t.hbm_read_bytes + t.l2_write_bytes >= l2_bytes && t.hbm_write_bytes > 0;
                };
        }
        options.wave_sampler = &*sampler;
    }
    try {
        last_ = sm_threads_ ? sm_threads_->launch(kernel, dims, args, memory, params_.simt, port.get(), options)
                            : simt::launch(kernel, dims, args, memory, params_.simt, port.get(), options);
    } catch (const simt::KernelTimeout& e) {  // the watchdog: the run failed, the input may be fine
        throw std::runtime_error(op_where(op) + ": " + e.what() +
                                 " (raise the limits with --set gpu.max_kernel_cycles=N or --set "
                                 "gpu.max_kernel_instructions=N)");
    } catch (const simt::SimtError& e) {  // a kernel fault, or a block that cannot fit on an SM
        throw std::invalid_argument(op_where(op) + ": " + e.what());
    }
    // A sampled launch leaves the L2 its simulated blocks left: the first waves', then the last
    // full wave's and the tail's, as the full launch's end would (docs/gpu.md "Sampled simulation").
    if (warm) keep_l2(*port, memory);
    const std::uint64_t overhead = static_cast<std::uint64_t>(std::max(0, params_.launch_overhead_cycles));
    std::optional<SamplingSummary> sampled;
    std::optional<HierarchyTraffic> sampled_traffic;
    const bool trips_skipped = trips && !trips->skips().empty();
    if (sampler && sampler->skipped()) {
        // The window: waves first..n (1-based, first >= 2); its counters' increase is the snapshot
        // at wave n's end less the one at the end of wave first - 1.
        const std::size_t n = sampler->wave_ends().size(), first = sampler->window_first_wave();
        const std::size_t window = sampler->steady().waves;  // n - first + 1
        const std::uint64_t waves = sampler->skipped_waves();
        const simt::WaveExtrapolation e = simt::extrapolate_cycles(last_.cycles, sampler->steady(), waves);
        const auto& snaps = sampler->snapshots();
        last_ = simt::extrapolate_stats(last_, snaps[n - 1], snaps[first - 2], window, waves, e.cycles, dims.grid,
                                        params_.simt.sms, params_.simt.sm.sub_partitions);
        if (hierarchy_port && wave_traffic.size() == n)
            sampled_traffic = extrapolate_traffic(traffic_now(), wave_traffic[n - 1],
                                                  wave_traffic[first - 2], window, waves);
        SamplingSummary s;
        s.total_blocks = dims.grid;
        s.wave_blocks = sampler->wave_blocks();
        s.skipped_waves = waves;
        s.simulated_blocks = dims.grid - waves * s.wave_blocks;
        s.steady_wave_cycles = e.steady_wave_cycles;
        s.error_estimate = (e.error_cycles + (trips ? trips->error_cycles() : 0.0)) / static_cast<double>(e.cycles + overhead);
        sampled = s;
    } else if (trips_skipped) {
        SamplingSummary s;
        s.total_blocks = s.simulated_blocks = dims.grid;
        if (sampler) s.wave_blocks = sampler->wave_blocks();
        s.error_estimate = trips->error_cycles() / static_cast<double>(last_.cycles + overhead);
        sampled = s;
    }
    if (trips_skipped) {
        sampled->skipped_trips = trips->skipped_trips();
        sampled->trip_skips = trips->skips().size();
        sampled->trips_per_block = trips->loop.trips_per_block;
    }
    const simt::KernelStats& k = last_;

    OpReport r;
    r.op = op;
    r.model = "simt";
    r.sampling = sampled;
    r.cycles = k.cycles + overhead;
    const double slots = static_cast<double>(params_.simt.sms) * params_.simt.sm.sub_partitions;
    r.utilization = static_cast<double>(k.issue_cycles) / (slots * static_cast<double>(r.cycles));
    r.occupancy_theoretical = k.theoretical.occupancy;
    r.occupancy_achieved = k.achieved_occupancy;
    r.simd_efficiency = k.simd_efficiency;

    // Bytes per level. l1: sectors the warps' global accesses asked of the L1 (or of the L2 when
    // there is no L1); smem: bank bandwidth used (wavefronts x banks x bank width).
    r.bytes["l1"] = static_cast<std::int64_t>(k.global_sectors * 32);
    r.bytes["smem"] = static_cast<std::int64_t>(k.shared_wavefronts * static_cast<std::uint64_t>(params_.simt.sm.smem_banks) *
                                                static_cast<std::uint64_t>(params_.simt.sm.smem_bank_bytes));
    HierarchyTraffic traffic;
    double hbm_per_cycle = 0;
    if (const auto* hierarchy = dynamic_cast<const HierarchyMemoryPort*>(port.get())) {
        traffic = sampled_traffic ? *sampled_traffic : traffic_now();
        hbm_per_cycle = hierarchy->hbm_bytes_per_cycle();
        if (params_.memory->l2) r.bytes["l2"] = static_cast<std::int64_t>(traffic.l2_bytes());
        r.bytes["hbm"] = static_cast<std::int64_t>(traffic.hbm_bytes());
    }

    // Roofline from the run's own counts (compute_roofline has no work to go on for a kernel).
    // Each is a lower bound on the kernel's cycles: a scheduler issues at most one warp
    // instruction per cycle; HBM moves at most its peak; the launch overhead is paid first.
    Roofline& roof = r.roofline;
    roof.compute_unit = "issue";
    roof.compute_cycles = static_cast<double>(k.issued) / slots;
    roof.cycles["compute"] = roof.compute_cycles;
    if (hbm_per_cycle > 0) roof.cycles["hbm"] = static_cast<double>(traffic.hbm_bytes()) / hbm_per_cycle;
    if (overhead > 0) roof.cycles["latency"] = static_cast<double>(overhead);
    roof.bytes = r.bytes;
    choose_bound(roof);

    r.stats.push_back(stat_value(stat::kernel_cycles, static_cast<double>(k.cycles)));
    r.stats.push_back(stat_value(stat::launch_overhead_cycles, static_cast<double>(overhead)));
    r.stats.push_back(stat_value(stat::ipc, k.ipc));
    r.stats.push_back(stat_value(stat::issued, static_cast<double>(k.issued)));
    r.stats.push_back(stat_value(stat::blocks, static_cast<double>(k.blocks)));
    r.stats.push_back(stat_value(stat::mma_issued, static_cast<double>(k.mma_issued)));
    r.stats.push_back(stat_value(stat::active_lanes, static_cast<double>(k.active_lanes)));
    r.stats.push_back(stat_value(stat::slots_issued, static_cast<double>(k.issue_cycles)));
    r.stats.push_back(stat_value(stat::stall_idle, static_cast<double>(k.idle_cycles)));
    r.stats.push_back(stat_value(stat::stall_scoreboard, static_cast<double>(k.scoreboard_cycles)));
    r.stats.push_back(stat_value(stat::stall_pipeline, static_cast<double>(k.pipeline_cycles)));
    r.stats.push_back(stat_value(stat::stall_barrier, static_cast<double>(k.barrier_cycles)));
    // The W1..W32 histogram summarised in five bands (the full histogram is in KernelStats).
    const std::pair<int, int> bands[] = {{1, 8}, {9, 16}, {17, 24}, {25, 31}, {32, 32}};
    for (const auto& [lo, hi] : bands) {
        std::uint64_t n = 0;
        for (int w = lo; w <= hi; ++w) n += k.lanes_histogram[static_cast<std::size_t>(w)];
        const std::string band = lo == hi ? std::to_string(lo) : std::to_string(lo) + "_" + std::to_string(hi);
        r.stats.push_back(stat_value(stat::lanes_band, {band}, static_cast<double>(n)));
    }
    r.stats.push_back(stat_value(stat::global_requests, static_cast<double>(k.global_requests)));
    r.stats.push_back(stat_value(stat::global_sectors, static_cast<double>(k.global_sectors)));
    r.stats.push_back(stat_value(stat::shared_requests, static_cast<double>(k.shared_requests)));
    r.stats.push_back(stat_value(stat::shared_wavefronts, static_cast<double>(k.shared_wavefronts)));
    r.stats.push_back(stat_value(stat::l1_hits, static_cast<double>(k.l1_hits)));
    r.stats.push_back(stat_value(stat::l1_misses, static_cast<double>(k.l1_misses)));
    if (traffic.l2_accesses > 0) {
        r.stats.push_back(stat_value(stat::l2_hits, static_cast<double>(traffic.l2_hits)));
        r.stats.push_back(stat_value(stat::l2_accesses, static_cast<double>(traffic.l2_accesses)));
        r.stats.push_back(stat_value(stat::l2_hit_rate, static_cast<double>(traffic.l2_hits) / static_cast<double>(traffic.l2_accesses)));
    }
    if (traffic.l2_read_bytes + traffic.l2_write_bytes > 0) {
        const double cycle_ns = 1e9 / params_.clock_hz;
        r.stats.push_back(stat_value(stat::memory_latency_avg_cycles, traffic.average_latency_ns / cycle_ns));
        r.stats.push_back(stat_value(stat::memory_latency_max_cycles, traffic.max_latency_ns / cycle_ns));
    }
    if (hbm_per_cycle > 0) {
        r.stats.push_back(stat_value(stat::hbm_row_hits, static_cast<double>(traffic.hbm_row_hits)));
        r.stats.push_back(stat_value(stat::hbm_row_misses, static_cast<double>(traffic.hbm_row_misses)));
        r.stats.push_back(stat_value(stat::hbm_row_conflicts, static_cast<double>(traffic.hbm_row_conflicts)));
    }
    if (hbm_per_cycle > 0)
        r.stats.push_back(stat_value(stat::hbm_bytes_per_cycle,
                                      static_cast<double>(traffic.hbm_bytes()) / static_cast<double>(k.cycles)));
    if (sampled) {
        r.stats.push_back(stat_value(stat::sampling_simulated_blocks, static_cast<double>(sampled->simulated_blocks)));
        r.stats.push_back(stat_value(stat::sampling_total_blocks, static_cast<double>(sampled->total_blocks)));
        r.stats.push_back(stat_value(stat::sampling_wave_blocks, static_cast<double>(sampled->wave_blocks)));
        r.stats.push_back(stat_value(stat::sampling_skipped_waves, static_cast<double>(sampled->skipped_waves)));
        r.stats.push_back(stat_value(stat::sampling_steady_wave_cycles, sampled->steady_wave_cycles));
        if (sampled->trip_skips > 0) {
            r.stats.push_back(stat_value(stat::sampling_skipped_trips, static_cast<double>(sampled->skipped_trips)));
            r.stats.push_back(stat_value(stat::sampling_trips_per_block, static_cast<double>(sampled->trips_per_block)));
        }
        r.stats.push_back(stat_value(stat::sampling_error_estimate, sampled->error_estimate));
    }
    if (record_activity_) r.activity = launch_activity(kernel.name, overhead, k, windows);
    return r;
}

}  // namespace accelsim::gpu
