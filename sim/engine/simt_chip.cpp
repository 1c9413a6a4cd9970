#include "sim/engine/simt_chip.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>

#include "models/common/dtype.h"
#include "models/gpu/lowering.h"
#include "models/gpu/hierarchy_port.h"
#include "sim/input_error.h"
#include "sim/config/model_params.h"
#include "sim/roofline/roofline.h"

namespace accelsim {

namespace {

// Global memory is 32-bit addressed; buffers of one op together stay well inside it (and inside
// the host memory a test machine has).
constexpr std::uint64_t kMaxKernelBufferBytes = std::uint64_t{1} << 30;

// Multiply-accumulates of one mma.m16n8k16 warp instruction.
constexpr double kMmaMacs = 16.0 * 8.0 * 16.0;

std::string op_where(const Op& op) {
    std::string s;
    if (!op.file.empty()) s = op.file + ":" + std::to_string(op.line) + ": ";
    return s + std::string(to_string(op.kind)) + " '" + op.name + "'";
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (;;) {
        const std::size_t at = s.find(sep, start);
        parts.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
        if (at == std::string::npos) return parts;
        start = at + 1;
    }
}

// Whole-string integer parse; nullopt-like via the bool.
bool parse_int64(const std::string& text, std::int64_t& value) {
    if (text.empty()) return false;
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || end != text.c_str() + text.size()) return false;
    value = v;
    return true;
}

bool parse_float(const std::string& text, float& value) {
    if (text.empty()) return false;
    errno = 0;
    char* end = nullptr;
    const float v = std::strtof(text.c_str(), &end);
    if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(v)) return false;
    value = v;
    return true;
}

std::uint32_t float_bits(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

// Uniform in [-1, 1) from the top 24 bits of one draw: exact in fp32 and the same on every
// platform (std::uniform_real_distribution is not specified bit for bit).
float unit_random(std::mt19937_64& rng) {
    return static_cast<float>(rng() >> 40) / static_cast<float>(1u << 23) - 1.0f;
}

enum class Fill { zero, ones, iota, rand };

std::uint32_t allocate_buffer(const Op& op, std::size_t index, const std::string& spec, std::uint64_t seed,
                              simt::GlobalMemory& memory, std::uint64_t& total_bytes, std::uint64_t& bytes_out) {
    const std::string where = op_where(op) + ": argument " + std::to_string(index + 1) + " '" + spec + "'";
    const std::vector<std::string> f = split(spec, ':');
    if (f.size() != 4)
        throw InputError(where + ": a buffer is buf:TYPE:COUNT:FILL (e.g. buf:f32:4096:rand)");
    int element_bytes = 0;
    if (f[1] == "f32" || f[1] == "i32") element_bytes = 4;
    else if (f[1] == "f16") element_bytes = 2;
    else throw InputError(where + ": buffer type '" + f[1] + "' is not f32, i32 or f16");
    std::int64_t count = 0;
    if (!parse_int64(f[2], count) || count <= 0)
        throw InputError(where + ": buffer count '" + f[2] + "' must be a positive integer");
    Fill fill;
    if (f[3] == "zero") fill = Fill::zero;
    else if (f[3] == "ones") fill = Fill::ones;
    else if (f[3] == "iota") fill = Fill::iota;
    else if (f[3] == "rand") fill = Fill::rand;
    else throw InputError(where + ": buffer fill '" + f[3] + "' is not zero, ones, iota or rand");
    const std::uint64_t bytes = static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(element_bytes);
    if (static_cast<std::uint64_t>(count) > kMaxKernelBufferBytes || total_bytes + bytes > kMaxKernelBufferBytes)
        throw InputError(where + ": the op's buffers would exceed " + std::to_string(kMaxKernelBufferBytes >> 20) +
                         " MiB of global memory");
    total_bytes += bytes;
    bytes_out = bytes;
    const std::uint32_t address = memory.allocate(static_cast<std::size_t>(bytes));
    if (fill == Fill::zero) return address;  // allocate() zeroes
    // One stream per argument position, so adding an argument does not change the others' data.
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL + index + 1);
    std::uint8_t* data = memory.data() + address;
    for (std::int64_t i = 0; i < count; ++i) {
        const float value = fill == Fill::ones ? 1.0f
                            : fill == Fill::iota ? static_cast<float>(i)
                                                 : unit_random(rng);
        std::uint8_t* at = data + i * element_bytes;
        if (f[1] == "f32") {
            const std::uint32_t bits = float_bits(value);
            std::memcpy(at, &bits, 4);
        } else if (f[1] == "i32") {
            // rand for integers: uniform in [-128, 127] (the fp value scaled), so products stay small.
            const auto v = static_cast<std::int32_t>(fill == Fill::rand ? std::floor(value * 128.0f) : value);
            std::memcpy(at, &v, 4);
        } else {
            const fp16_t h(value);
            const auto bits = Eigen::numext::bit_cast<std::uint16_t>(h);
            std::memcpy(at, &bits, 2);
        }
    }
    return address;
}

// The bound is the largest lower bound; ties go to the first in this order.
void choose_bound(Roofline& roof) {
    roof.bound.clear();
    roof.bound_cycles = 0;
    for (const char* key : {"compute", "hbm", "l2", "latency"}) {
        auto it = roof.cycles.find(key);
        if (it != roof.cycles.end() && (roof.bound.empty() || it->second > roof.bound_cycles)) {
            roof.bound = key;
            roof.bound_cycles = it->second;
        }
    }
}

}  // namespace

std::vector<std::uint32_t> kernel_arguments(const Op& op, const simt::Kernel& kernel, std::uint64_t seed,
                                            simt::GlobalMemory& memory, std::vector<KernelBuffer>* buffers) {
    const std::vector<std::string>& args = op.kernel.args;
    if (args.size() != kernel.params.size()) {
        std::string names;
        for (const auto& p : kernel.params) names += (names.empty() ? "" : ",") + p;
        throw InputError(op_where(op) + ": kernel " + kernel.name + " takes " + std::to_string(kernel.params.size()) +
                         " argument(s) (" + names + "), args= gives " + std::to_string(args.size()));
    }
    std::vector<std::uint32_t> words;
    std::uint64_t total_bytes = 0;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        const std::string where = op_where(op) + ": argument " + std::to_string(i + 1) + " (" + kernel.params[i] +
                                  ") '" + a + "'";
        std::int64_t integer = 0;
        float real = 0;
        if (a.rfind("buf:", 0) == 0) {
            std::uint64_t bytes = 0;
            const std::uint32_t address = allocate_buffer(op, i, a, seed, memory, total_bytes, bytes);
            words.push_back(address);
            if (buffers) buffers->push_back({a, address, bytes});
        } else if (a.rfind("f:", 0) == 0) {
            if (!parse_float(a.substr(2), real)) throw InputError(where + ": not a finite fp32 number");
            words.push_back(float_bits(real));
        } else {
            const std::string text = a.rfind("i:", 0) == 0 ? a.substr(2) : a;
            if (!parse_int64(text, integer) || integer < INT32_MIN || integer > static_cast<std::int64_t>(UINT32_MAX))
                throw InputError(where + ": expected a 32-bit integer (123, i:-4), f:FLOAT or buf:TYPE:COUNT:FILL");
            words.push_back(static_cast<std::uint32_t>(integer));
        }
    }
    return words;
}

int ideal_memory_latency(const ChipConfig& config) {
    return config.l2.size_bytes > 0 ? config.l2.hit_latency_cycles : 200;
}

std::unique_ptr<simt::GlobalMemoryPort> make_simt_memory_port(const ChipConfig& config) {
    if (config.memory == "ideal") return std::make_unique<simt::FixedLatencyMemory>(ideal_memory_latency(config));
    try {
        return std::make_unique<gpu::HierarchyMemoryPort>(memory_hierarchy_params_from_config(config));
    } catch (const std::invalid_argument& e) {
        throw InputError((config.file.empty() ? std::string("config") : config.file) + ": " + e.what());
    }
}

simt::LaunchOptions simt_launch_options(const ChipConfig& config, const simt::Kernel& kernel, bool validate) {
    simt::LaunchOptions o;
    o.skip_fp_payload = kernel.fp_payload_skippable && !validate;
    // The hierarchy's non-blocking port sets its own windows; only a blocking one (no L2) shared
    // by several SMs needs lock-step windows to be served in time order.
    const bool blocking_shared = config.memory == "hierarchy" && config.l2.size_bytes <= 0 && config.gpu.sms > 1;
    o.sm_quantum_cycles = blocking_shared ? kBlockingPortQuantumCycles : 0;
    return o;
}

std::unique_ptr<Chip> make_simt_chip(const ChipConfig& config, const RunOptions& options) {
    return std::make_unique<SimtChip>(config, options);
}

SimtChip::SimtChip(const ChipConfig& config, const RunOptions& options)
    : config_(config), options_(options), params_(simt_params_from(config)) {
    if (config.memory != "ideal" && config.memory != "hierarchy")
        throw InputError(config.file + ": memory = \"" + config.memory + "\" is not ideal or hierarchy");
    if (params_.sms < 1) throw InputError(config.file + ": gpu.sms must be at least 1");
}

OpReport SimtChip::run(const Op& op) {
    if (op.kind == OpKind::kernel) return run_kernel(op);
    return run_lowered(op);
}

const simt::Kernel& SimtChip::kernel_for(const Op& op) {
    auto it = kernels_.find(op.kernel.file);
    if (it != kernels_.end()) return it->second;
    try {
        return kernels_.emplace(op.kernel.file, simt::assemble_file(op.kernel.file)).first->second;
    } catch (const std::exception& e) {  // AssemblyError: "FILE:LINE: message"
        throw InputError(op_where(op) + ": " + e.what());
    }
}

OpReport SimtChip::run_kernel(const Op& op) {
    const simt::Kernel& kernel = kernel_for(op);
    const KernelLaunch& launch = op.kernel;
    if (launch.grid[1] != 1 || launch.grid[2] != 1 || launch.block[1] != 1 || launch.block[2] != 1)
        throw InputError(op_where(op) + ": the SIMT core runs 1-D grids and blocks (grid=X block=Y)");
    if (launch.grid[0] > UINT32_MAX || launch.block[0] > 1024)
        throw InputError(op_where(op) + ": grid must fit 32 bits and block be at most 1024 threads");
    const simt::Dim dims{static_cast<std::uint32_t>(launch.grid[0]), static_cast<std::uint32_t>(launch.block[0])};

    simt::GlobalMemory memory;
    const std::vector<std::uint32_t> args = kernel_arguments(op, kernel, config_.seed, memory);
    return launch_and_report(op, kernel, dims, args, memory);
}

OpReport SimtChip::run_lowered(const Op& op) {
    simt::GlobalMemory memory;
    gpu::LoweringTarget target;
    target.sms = params_.sms;
    target.sm = params_.sm;
    target.seed = config_.seed;
    target.real_data = options_.validate;
    target.launch_overhead_cycles = std::max(0, config_.gpu.launch_overhead_cycles);
    target.hbm_bytes_per_cycle = hbm_bytes_per_cycle(config_);
    target.sm_port_bytes_per_cycle = config_.interconnect.bytes_per_cycle_per_port;
    std::optional<gpu::LoweredKernel> lowered;
    try {
        lowered = gpu::lower_op(op, memory, target);
    } catch (const gpu::LoweringError& e) {
        throw InputError(op_where(op) + ": " + e.what());
    }
    if (!lowered) return roofline_only(op, config_);  // a dtype the ISA has no unit for (docs/gpu.md)
    OpReport r = launch_and_report(op, *lowered->kernel, lowered->dims, lowered->args, memory);
    // Further launches of the op (split-K's sum) run after it on the same data, each with its own
    // launch overhead and a fresh memory system (as every op starts cold): their cycles, bytes and
    // roofline bounds add to the op's; the simt.* counters stay those of the first launch.
    if (!lowered->then.empty()) {
        const simt::KernelStats first = last_;
        double then_cycles = 0, then_issued = 0;
        for (const gpu::LoweredLaunch& next : lowered->then) {
            const OpReport more = launch_and_report(op, *next.kernel, next.dims, next.args, memory);
            r.cycles += more.cycles;
            for (const auto& [level, bytes] : more.bytes) r.bytes[level] += bytes;
            for (const auto& [key, cycles] : more.roofline.cycles) r.roofline.cycles[key] += cycles;
            then_cycles += static_cast<double>(more.cycles);
            then_issued += static_cast<double>(last_.issued);
        }
        r.roofline.bytes = r.bytes;
        r.roofline.compute_cycles = r.roofline.cycles["compute"];
        last_ = first;
        r.stats.push_back({"simt.then.launches", "launches", "launches after the first (split-K's sum)",
                           static_cast<double>(lowered->then.size())});
        r.stats.push_back({"simt.then.cycles", "cycles", "their cycles, launch overheads included (in the op's cycles)",
                           then_cycles});
        r.stats.push_back({"simt.then.issued", "instructions", "their warp instructions", then_issued});
    }

    // The op's own roofline (its work at the peak of the unit that runs it, its compulsory bytes)
    // is a lower bound too: keep the larger of each.
    const Roofline shape = compute_roofline(op, config_);
    Roofline& roof = r.roofline;
    for (const auto& [key, cycles] : shape.cycles) {
        // Behind an L2 the outputs may stay in it (write-back, never evicted during the op), so the
        // compulsory bytes are no lower bound on HBM traffic: the run's own HBM bytes are.
        if (key == "hbm" && config_.l2.size_bytes > 0 && config_.memory == "hierarchy") continue;
        double& mine = roof.cycles[key];
        if (cycles > mine) {
            mine = cycles;
            if (key == "compute") roof.compute_unit = shape.compute_unit;
        }
    }
    roof.compute_cycles = roof.cycles["compute"];
    choose_bound(roof);
    // GEMMs run on the tensor cores: their utilization is the tensor cores' share of peak.
    if (is_gemm_like(op.kind) && last_.cycles > 0) {
        const double peak = matrix_macs_per_cycle(config_, op.dtype);
        const double macs = static_cast<double>(last_.mma_issued) * kMmaMacs;
        if (peak > 0) r.utilization = macs / (peak * static_cast<double>(r.cycles));
        r.stats.push_back({"simt.tensor_utilization", "ratio",
                           "tensor-core MACs issued / (tensor peak x cycles); the op's utilization", r.utilization.value_or(0)});
    }
    r.stats.insert(r.stats.end(), lowered->stats.begin(), lowered->stats.end());

    if (options_.validate && lowered->check) {
        const gpu::LoweringNumerics n = lowered->check(memory);
        NumericsSummary num;
        num.checked = n.checked;
        num.max_abs_err = n.max_abs_err;
        num.max_rel_err = n.max_rel_err;
        num.passed = n.passed;
        r.numerics = num;
    }
    return r;
}

OpReport SimtChip::launch_and_report(const Op& op, const simt::Kernel& kernel, simt::Dim dims,
                                     const std::vector<std::uint32_t>& args, simt::GlobalMemory& memory) {
    std::unique_ptr<simt::GlobalMemoryPort> port = make_simt_memory_port(config_);
    try {
        last_ = simt::launch(kernel, dims, args, memory, params_, port.get(),
                             simt_launch_options(config_, kernel, options_.validate));
    } catch (const simt::SimtError& e) {  // a kernel fault, or a block that cannot fit on an SM
        throw InputError(op_where(op) + ": " + e.what());
    }
    const simt::KernelStats& k = last_;

    OpReport r;
    r.op = op;
    r.model = "simt";
    const std::uint64_t overhead = static_cast<std::uint64_t>(std::max(0, config_.gpu.launch_overhead_cycles));
    r.cycles = k.cycles + overhead;
    const double slots = static_cast<double>(params_.sms) * params_.sm.sub_partitions;
    r.utilization = static_cast<double>(k.issue_cycles) / (slots * static_cast<double>(r.cycles));
    r.occupancy_theoretical = k.theoretical.occupancy;
    r.occupancy_achieved = k.achieved_occupancy;
    r.simd_efficiency = k.simd_efficiency;

    // Bytes per level. l1: sectors the warps' global accesses asked of the L1 (or of the L2 when
    // there is no L1); smem: bank bandwidth used (wavefronts x banks x bank width).
    r.bytes["l1"] = static_cast<std::int64_t>(k.global_sectors * 32);
    r.bytes["smem"] = static_cast<std::int64_t>(k.shared_wavefronts * static_cast<std::uint64_t>(params_.sm.smem_banks) *
                                                static_cast<std::uint64_t>(params_.sm.smem_bank_bytes));
    gpu::HierarchyTraffic traffic;
    double hbm_per_cycle = 0;
    if (const auto* hierarchy = dynamic_cast<const gpu::HierarchyMemoryPort*>(port.get())) {
        traffic = hierarchy->traffic();
        hbm_per_cycle = hierarchy->hbm_bytes_per_cycle();
        if (config_.l2.size_bytes > 0) r.bytes["l2"] = static_cast<std::int64_t>(traffic.l2_bytes());
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

    auto stat = [&r](std::string name, std::string unit, std::string description, double value) {
        r.stats.push_back({std::move(name), std::move(unit), std::move(description), value});
    };
    stat("simt.kernel_cycles", "cycles", "launch to last block done, without the launch overhead",
         static_cast<double>(k.cycles));
    stat("simt.launch_overhead_cycles", "cycles", "gpu.launch_overhead_cycles", static_cast<double>(overhead));
    stat("simt.ipc", "ratio", "warp instructions issued per kernel cycle, whole GPU", k.ipc);
    stat("simt.issued", "instructions", "warp instructions issued (branches and exits included)",
         static_cast<double>(k.issued));
    stat("simt.blocks", "blocks", "thread blocks run", static_cast<double>(k.blocks));
    stat("simt.mma_issued", "instructions", "tensor-core warp instructions (mma.m16n8k16, 2048 MACs each)",
         static_cast<double>(k.mma_issued));
    stat("simt.active_lanes", "lanes", "active lanes summed over issues", static_cast<double>(k.active_lanes));
    stat("simt.slots.issued", "scheduler-cycles", "scheduler-cycles that issued", static_cast<double>(k.issue_cycles));
    stat("simt.stall.idle", "scheduler-cycles", "no valid instruction (no warp, or waiting for fetch)",
         static_cast<double>(k.idle_cycles));
    stat("simt.stall.scoreboard", "scheduler-cycles", "every ready warp waits on a register dependency",
         static_cast<double>(k.scoreboard_cycles));
    stat("simt.stall.pipeline", "scheduler-cycles", "the next instruction's pipeline is busy",
         static_cast<double>(k.pipeline_cycles));
    stat("simt.stall.barrier", "scheduler-cycles", "warps wait at bar.sync", static_cast<double>(k.barrier_cycles));
    // The W1..W32 histogram summarised in five bands (the full histogram is in KernelStats).
    const std::pair<int, int> bands[] = {{1, 8}, {9, 16}, {17, 24}, {25, 31}, {32, 32}};
    for (const auto& [lo, hi] : bands) {
        std::uint64_t n = 0;
        for (int w = lo; w <= hi; ++w) n += k.lanes_histogram[static_cast<std::size_t>(w)];
        const std::string band = lo == hi ? "W" + std::to_string(lo) : "W" + std::to_string(lo) + "_" + std::to_string(hi);
        stat("simt.lanes." + band, "instructions", "issues with " + std::to_string(lo) + ".." + std::to_string(hi) +
             " active lanes", static_cast<double>(n));
    }
    stat("simt.global_requests", "requests", "warp global loads and stores", static_cast<double>(k.global_requests));
    stat("simt.global_sectors", "sectors", "32-byte sectors after coalescing", static_cast<double>(k.global_sectors));
    stat("simt.shared_requests", "requests", "warp shared-memory accesses", static_cast<double>(k.shared_requests));
    stat("simt.shared_wavefronts", "wavefronts", "shared-memory wavefronts (more than requests = bank conflicts)",
         static_cast<double>(k.shared_wavefronts));
    stat("simt.l1_hits", "sectors", "global load sectors that hit in L1", static_cast<double>(k.l1_hits));
    stat("simt.l1_misses", "sectors", "global load sectors that missed in L1", static_cast<double>(k.l1_misses));
    if (traffic.l2_accesses > 0) {
        stat("simt.l2_hits", "accesses", "L2 lookups that hit", static_cast<double>(traffic.l2_hits));
        stat("simt.l2_accesses", "accesses", "L2 lookups (one per sector)", static_cast<double>(traffic.l2_accesses));
        stat("simt.l2_hit_rate", "ratio", "L2 hits / lookups",
             static_cast<double>(traffic.l2_hits) / static_cast<double>(traffic.l2_accesses));
    }
    if (traffic.l2_read_bytes + traffic.l2_write_bytes > 0) {
        const double cycle_ns = 1e9 / config_.clock_hz();
        stat("simt.memory_latency_avg_cycles", "cycles", "sector leaving the SM to data back / write accepted, mean",
             traffic.average_latency_ns / cycle_ns);
        stat("simt.memory_latency_max_cycles", "cycles", "sector leaving the SM to data back / write accepted, max",
             traffic.max_latency_ns / cycle_ns);
    }
    if (hbm_per_cycle > 0) {
        stat("simt.hbm_row_hits", "bursts", "HBM bursts that found their row open", static_cast<double>(traffic.hbm_row_hits));
        stat("simt.hbm_row_misses", "bursts", "HBM bursts that opened a row in an idle bank",
             static_cast<double>(traffic.hbm_row_misses));
        stat("simt.hbm_row_conflicts", "bursts", "HBM bursts that closed another row first",
             static_cast<double>(traffic.hbm_row_conflicts));
    }
    if (hbm_per_cycle > 0)
        stat("simt.hbm_bytes_per_cycle", "bytes/cycle", "achieved HBM bandwidth over the kernel's cycles (peak: " +
             std::to_string(hbm_per_cycle) + ")", static_cast<double>(traffic.hbm_bytes()) / static_cast<double>(k.cycles));
    return r;
}

}  // namespace accelsim
