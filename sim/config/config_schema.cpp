#include "sim/config/config_schema.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

#include "sim/engine/chip_registry.h"
#include "sim/input_error.h"

namespace accelsim {
namespace {

using nlohmann::json;
using Apply = std::function<void(ChipConfig&, const json&)>;

constexpr double kTiB = 1099511627776.0;  // 2^40: a generous upper bound for any memory size
constexpr double kGiB = 1073741824.0;

// Setters: one per typed field, built from member pointers so a table row names its field once.
template <class T>
Apply top_field(T ChipConfig::*field) {
    return [field](ChipConfig& c, const json& v) { c.*field = v.get<T>(); };
}
template <class Section, class T>
Apply section_field(Section ChipConfig::*section, T Section::*field) {
    return [section, field](ChipConfig& c, const json& v) { (c.*section).*field = v.get<T>(); };
}
template <class Section>
Apply rate_field(Section ChipConfig::*section, DTypeRates Section::*rates,
                 double DTypeRates::*which) {
    return [section, rates, which](ChipConfig& c, const json& v) {
        ((c.*section).*rates).*which = v.get<double>();
    };
}

KeySpec make(std::string path, KeyType type, json default_value, std::string doc,
             Apply apply = {}) {
    KeySpec k;
    k.path = std::move(path);
    k.type = type;
    k.default_value = std::move(default_value);
    k.doc = std::move(doc);
    k.apply = std::move(apply);
    return k;
}
KeySpec section(std::string path, std::string doc,
                std::optional<std::string> only_for = std::nullopt) {
    KeySpec k = make(std::move(path), KeyType::section, nullptr, std::move(doc));
    k.only_for = only_for;
    return k;
}
KeySpec integer(std::string path, double min, double max, json def, std::string doc, Apply apply) {
    KeySpec k =
        make(std::move(path), KeyType::integer, std::move(def), std::move(doc), std::move(apply));
    k.min = min;
    k.max = max;
    return k;
}
KeySpec number(std::string path, double min, double max, json def, std::string doc, Apply apply,
               bool min_exclusive = false) {
    KeySpec k =
        make(std::move(path), KeyType::number, std::move(def), std::move(doc), std::move(apply));
    k.min = min;
    k.max = max;
    k.min_exclusive = min_exclusive;
    return k;
}
KeySpec positive(std::string path, double max, json def, std::string doc, Apply apply) {
    return number(std::move(path), 0, max, std::move(def), std::move(doc), std::move(apply), true);
}
KeySpec choice(std::string path, std::vector<std::string> choices, json def, std::string doc,
               Apply apply) {
    KeySpec k =
        make(std::move(path), KeyType::choice, std::move(def), std::move(doc), std::move(apply));
    k.choices = std::move(choices);
    return k;
}
KeySpec boolean(std::string path, json def, std::string doc, Apply apply) {
    return make(std::move(path), KeyType::boolean, std::move(def), std::move(doc),
                std::move(apply));
}

std::vector<KeySpec> build_schema() {
    const ChipConfig d;  // the struct's defaults are the documented defaults
    std::vector<KeySpec> s;

    // ---- top level ----
    s.push_back(make("name", KeyType::string, nullptr,
                     "Chip name shown in reports. Default: the config file name without `.json`.",
                     top_field(&ChipConfig::name)));
    KeySpec kind =
        choice("kind", chip_kinds(), nullptr,
               "Chip family: `systolic` (TPU-like: tpu, compiler, mxu sections) or `simt` "
               "(GPU-like: gpu, sm sections).",
               [](ChipConfig& c, const json& v) {
                   c.kind = v.get<std::string>();
               });
    kind.required = true;
    s.push_back(kind);
    s.push_back(make("description", KeyType::string, "", "Free text shown in reports.",
                     top_field(&ChipConfig::description)));
    s.push_back(
        make("extends", KeyType::string, nullptr,
             "Path of a base config, relative to this file; this file's keys are deep-merged "
             "over it. Not part of the effective config."));
    s.push_back(make("source", KeyType::free_form, nullptr,
                     "Citations: an object of strings (nested objects allowed), e.g. "
                     "`{\"mxu.rows\": \"Jouppi et al. 2017\"}`. Copied to reports unchanged."));
    KeySpec clock = positive("clock_mhz", 10000, nullptr,
                             "Core clock in MHz; every cycle count is in this clock.",
                             top_field(&ChipConfig::clock_mhz));
    clock.required = true;
    s.push_back(clock);
    s.push_back(choice(
        "default_dtype", {"int8", "fp16", "bf16", "fp32"}, std::string(to_string(d.default_dtype)),
        "Operand dtype of trace ops that name none.", [](ChipConfig& c, const json& v) {
            c.default_dtype = *parse_operand_dtype(v.get<std::string>());
        }));
    s.push_back(
        choice("memory", {"ideal", "hierarchy"}, d.memory,
               "`hierarchy`: operands come through hbm/l2/interconnect; `ideal`: operands are "
               "always ready, so only compute is timed.",
               top_field(&ChipConfig::memory)));
    s.push_back(integer("seed", 0, 9.2e18, d.seed,
                        "Seed of every random number generator (validation inputs).",
                        top_field(&ChipConfig::seed)));
    s.push_back(number(
        "cost_per_hour_usd", 0, 1e6, nullptr,
        "Public on-demand price of one chip-hour in USD, for cost-per-run figures. Optional.",
        [](ChipConfig& c, const json& v) { c.cost_per_hour_usd = v.get<double>(); }));
    s.push_back(positive("tdp_w", 1e5, nullptr,
                         "Thermal design power of one chip in watts. Optional.",
                         [](ChipConfig& c, const json& v) { c.tdp_w = v.get<double>(); }));

    // ---- systolic chips ----
    const std::string sys = "systolic";
    s.push_back(section("tpu", "TensorCores and their on-chip memories (systolic only).", sys));
    s.push_back(integer("tpu.cores", 1, 64, d.tpu.cores, "TensorCores per chip.",
                        section_field(&ChipConfig::tpu, &TpuConfig::cores)));
    s.push_back(integer("tpu.mxus_per_core", 1, 64, d.tpu.mxus_per_core,
                        "Matrix units (MXUs) per TensorCore.",
                        section_field(&ChipConfig::tpu, &TpuConfig::mxus_per_core)));
    s.push_back(integer("tpu.vmem_bytes", 0, kTiB, d.tpu.vmem_bytes,
                        "Vector memory (scratchpad) per core in bytes; 0 = none.",
                        section_field(&ChipConfig::tpu, &TpuConfig::vmem_bytes)));
    s.push_back(integer("tpu.cmem_bytes", 0, kTiB, d.tpu.cmem_bytes,
                        "Common memory shared by the cores of a chip, in bytes; 0 = none.",
                        section_field(&ChipConfig::tpu, &TpuConfig::cmem_bytes)));
    s.push_back(number("tpu.cmem_bytes_per_cycle", 0, 1e6, d.tpu.cmem_bytes_per_cycle,
                       "Bytes per core cycle the CMEM port moves, shared by the cores' DMA engines; "
                       "CMEM is used only when this and tpu.cmem_bytes are > 0.",
                       section_field(&ChipConfig::tpu, &TpuConfig::cmem_bytes_per_cycle)));
    s.push_back(
        section("tpu.vector", "Vector unit of one core: lanes × sublanes 32-bit ALUs.", sys));
    s.push_back(integer("tpu.vector.lanes", 1, 4096, d.tpu.vector_lanes, "Vector lanes per core.",
                        section_field(&ChipConfig::tpu, &TpuConfig::vector_lanes)));
    s.push_back(integer("tpu.vector.sublanes", 1, 1024, d.tpu.vector_sublanes,
                        "Sublanes per lane; elementwise ops per core per cycle = lanes × sublanes.",
                        section_field(&ChipConfig::tpu, &TpuConfig::vector_sublanes)));
    s.push_back(section("tpu.dma", "DMA engine of one core (HBM/CMEM ↔ VMEM).", sys));
    s.push_back(number(
        "tpu.dma.bytes_per_cycle", 0, 1e6, d.tpu.dma_bytes_per_cycle,
        "Bytes per core cycle one core's DMA can move; 0 = limited only by the memory behind it.",
        section_field(&ChipConfig::tpu, &TpuConfig::dma_bytes_per_cycle)));
    s.push_back(integer("tpu.dma.latency_cycles", 0, 1e6, d.tpu.dma_latency_cycles,
                        "Fixed cycles added to each DMA transfer (descriptor issue).",
                        section_field(&ChipConfig::tpu, &TpuConfig::dma_latency_cycles)));
    s.push_back(section("compiler", "Lowering choices (systolic only).", sys));
    s.push_back(
        boolean("compiler.fuse_elementwise", d.tpu.fuse_elementwise,
                "Fuse elementwise ops into the producing matmul's output pass (as XLA does).",
                section_field(&ChipConfig::tpu, &TpuConfig::fuse_elementwise)));
    s.push_back(
        section("mxu", "One matrix unit (systolic array); all MXUs of a chip are alike.", sys));
    s.push_back(integer("mxu.rows", 1, 512, d.mxu.rows,
                        "PE rows (the K dimension of a weight tile).",
                        section_field(&ChipConfig::mxu, &MxuConfig::rows)));
    s.push_back(integer("mxu.cols", 1, 512, d.mxu.cols,
                        "PE columns (the N dimension of a weight tile).",
                        section_field(&ChipConfig::mxu, &MxuConfig::cols)));
    s.push_back(choice("mxu.dataflow", {"ws", "os", "is"}, d.mxu.dataflow,
                       "Stationary operand: `ws` weights, `os` outputs, `is` inputs.",
                       section_field(&ChipConfig::mxu, &MxuConfig::dataflow)));
    s.push_back(
        boolean("mxu.overlap_folds", d.mxu.overlap_folds,
                "Load the next tile while the current one drains (double-buffered weights).",
                section_field(&ChipConfig::mxu, &MxuConfig::overlap_folds)));
    s.push_back(
        choice("mxu.mode", {"fast", "stepped"}, d.mxu.mode,
               "`fast`: closed-form tile timing; `stepped`: cycle by cycle (the reference).",
               section_field(&ChipConfig::mxu, &MxuConfig::mode)));
    s.push_back(
        section("mxu.macs_per_pe_per_cycle",
                "MACs one PE completes per cycle for each operand dtype; 0 = the MXU does not run "
                "that dtype natively.",
                sys));
    const std::pair<const char*, double DTypeRates::*> rates[] = {{"int8", &DTypeRates::int8},
                                                                  {"fp16", &DTypeRates::fp16},
                                                                  {"bf16", &DTypeRates::bf16},
                                                                  {"fp32", &DTypeRates::fp32}};
    for (const auto& [dtype, member] : rates) {
        s.push_back(number(
            std::string("mxu.macs_per_pe_per_cycle.") + dtype, 0, 64,
            d.mxu.macs_per_pe_per_cycle.*member, std::string(dtype) + " MACs per PE per cycle.",
            rate_field(&ChipConfig::mxu, &MxuConfig::macs_per_pe_per_cycle, member)));
    }

    // ---- SIMT chips ----
    const std::string simt = "simt";
    s.push_back(section("gpu", "Chip-level GPU figures (simt only).", simt));
    s.push_back(integer("gpu.sms", 1, 1024, d.gpu.sms, "Streaming multiprocessors per chip.",
                        section_field(&ChipConfig::gpu, &GpuConfig::sms)));
    s.push_back(integer("gpu.launch_overhead_cycles", 0, 1e8, d.gpu.launch_overhead_cycles,
                        "Cycles from a kernel launch to its first block starting.",
                        section_field(&ChipConfig::gpu, &GpuConfig::launch_overhead_cycles)));
    s.push_back(section(
        "sm", "One streaming multiprocessor; all SMs of a chip are alike (simt only).", simt));
    s.push_back(choice(
        "sm.compute_capability", {"sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90"},
        d.sm.compute_capability, "CUDA compute capability (selects the warp-level MMA shapes).",
        section_field(&ChipConfig::sm, &SmConfig::compute_capability)));
    s.push_back(integer("sm.schedulers", 1, 16, d.sm.schedulers,
                        "Warp schedulers per SM (each issues one warp instruction per cycle).",
                        section_field(&ChipConfig::sm, &SmConfig::schedulers)));
    s.push_back(choice("sm.warp_scheduler", {"lrr", "gto", "two_level"}, d.sm.warp_scheduler,
                       "Warp scheduling policy: loose round robin, greedy-then-oldest, two-level.",
                       section_field(&ChipConfig::sm, &SmConfig::warp_scheduler)));
    s.push_back(integer("sm.max_warps", 1, 256, d.sm.max_warps, "Resident warps per SM.",
                        section_field(&ChipConfig::sm, &SmConfig::max_warps)));
    s.push_back(integer("sm.max_threads", 1, 8192, d.sm.max_threads,
                        "Resident threads per SM (at most 32 × max_warps).",
                        section_field(&ChipConfig::sm, &SmConfig::max_threads)));
    s.push_back(integer("sm.max_blocks", 1, 256, d.sm.max_blocks, "Resident thread blocks per SM.",
                        section_field(&ChipConfig::sm, &SmConfig::max_blocks)));
    s.push_back(integer("sm.registers", 1, 1 << 20, d.sm.registers, "32-bit registers per SM.",
                        section_field(&ChipConfig::sm, &SmConfig::registers)));
    s.push_back(integer("sm.register_alloc_unit", 1, 65536, d.sm.register_alloc_unit,
                        "Registers are allocated per warp in multiples of this.",
                        section_field(&ChipConfig::sm, &SmConfig::register_alloc_unit)));
    s.push_back(integer("sm.max_registers_per_thread", 1, 1024, d.sm.max_registers_per_thread,
                        "Most registers one thread may use.",
                        section_field(&ChipConfig::sm, &SmConfig::max_registers_per_thread)));
    s.push_back(integer("sm.shared_memory_bytes", 0, kGiB, d.sm.shared_memory_bytes,
                        "Shared memory per SM in bytes (the largest carveout).",
                        section_field(&ChipConfig::sm, &SmConfig::shared_memory_bytes)));
    s.push_back(integer(
        "sm.shared_memory_per_block_bytes", 0, kGiB, d.sm.shared_memory_per_block_bytes,
        "Most shared memory one block may request (opt-in maximum); at most shared_memory_bytes.",
        section_field(&ChipConfig::sm, &SmConfig::shared_memory_per_block_bytes)));
    s.push_back(integer("sm.shared_memory_alloc_unit", 1, 65536, d.sm.shared_memory_alloc_unit,
                        "Shared memory is allocated per block in multiples of this many bytes.",
                        section_field(&ChipConfig::sm, &SmConfig::shared_memory_alloc_unit)));
    s.push_back(integer(
        "sm.shared_memory_reserved_per_block", 0, 65536, d.sm.shared_memory_reserved_per_block,
        "Bytes of shared memory the system reserves per resident block (1024 on sm_80 and later).",
        section_field(&ChipConfig::sm, &SmConfig::shared_memory_reserved_per_block)));
    s.push_back(integer("sm.smem_banks", 1, 128, d.sm.smem_banks, "Shared memory banks.",
                        section_field(&ChipConfig::sm, &SmConfig::smem_banks)));
    s.push_back(integer("sm.smem_bank_bytes", 1, 64, d.sm.smem_bank_bytes,
                        "Width of one shared memory bank in bytes.",
                        section_field(&ChipConfig::sm, &SmConfig::smem_bank_bytes)));
    s.push_back(integer(
        "sm.l1_bytes", 0, kGiB, d.sm.l1_bytes,
        "Unified L1/shared memory capacity per SM in bytes (L1 gets what shared memory leaves).",
        section_field(&ChipConfig::sm, &SmConfig::l1_bytes)));
    s.push_back(integer("sm.fp32_lanes", 0, 1024, d.sm.fp32_lanes, "FP32 FMAs per SM per cycle.",
                        section_field(&ChipConfig::sm, &SmConfig::fp32_lanes)));
    s.push_back(integer("sm.int_lanes", 0, 1024, d.sm.int_lanes,
                        "INT32 operations per SM per cycle.",
                        section_field(&ChipConfig::sm, &SmConfig::int_lanes)));
    s.push_back(integer("sm.sfu_lanes", 0, 1024, d.sm.sfu_lanes,
                        "Special-function (exp, rsqrt, ...) results per SM per cycle.",
                        section_field(&ChipConfig::sm, &SmConfig::sfu_lanes)));
    s.push_back(
        section("sm.tensor_macs_per_cycle",
                "Dense tensor-core MACs per SM per cycle for each operand dtype (fp32 means TF32); "
                "0 = no tensor-core support.",
                simt));
    for (const auto& [dtype, member] : rates) {
        s.push_back(number(std::string("sm.tensor_macs_per_cycle.") + dtype, 0, 1e6,
                           d.sm.tensor_macs_per_cycle.*member,
                           std::string(dtype) + (member == &DTypeRates::fp32 ? " (TF32)" : "") +
                               " tensor-core MACs per SM per cycle.",
                           rate_field(&ChipConfig::sm, &SmConfig::tensor_macs_per_cycle, member)));
    }

    // ---- memory hierarchy (both kinds) ----
    s.push_back(section(
        "hbm",
        "Off-chip DRAM. Peak bytes/s = channels × bus_width_bits / 8 × data_rate_gbps × 1e9."));
    s.push_back(choice("hbm.preset", {"HBM2", "HBM2E", "HBM3", "DDR3", "DDR4"}, d.hbm.preset,
                       "DRAM timing preset; `hbm.timing` overrides single parameters of it.",
                       section_field(&ChipConfig::hbm, &HbmConfig::preset)));
    s.push_back(integer("hbm.channels", 1, 1024, d.hbm.channels,
                        "Independent channels (all stacks together).",
                        section_field(&ChipConfig::hbm, &HbmConfig::channels)));
    s.push_back(integer("hbm.pseudo_channels", 1, 16, d.hbm.pseudo_channels,
                        "Pseudo-channels per channel (they split the channel's bus).",
                        section_field(&ChipConfig::hbm, &HbmConfig::pseudo_channels)));
    s.push_back(integer("hbm.bus_width_bits", 1, 4096, d.hbm.bus_width_bits,
                        "Data bus width of one channel in bits.",
                        section_field(&ChipConfig::hbm, &HbmConfig::bus_width_bits)));
    s.push_back(positive("hbm.data_rate_gbps", 100, d.hbm.data_rate_gbps,
                         "Data rate per pin in Gb/s.",
                         section_field(&ChipConfig::hbm, &HbmConfig::data_rate_gbps)));
    s.push_back(integer("hbm.bank_groups", 1, 64, d.hbm.bank_groups,
                        "Bank groups per (pseudo-)channel.",
                        section_field(&ChipConfig::hbm, &HbmConfig::bank_groups)));
    s.push_back(integer("hbm.banks_per_group", 1, 64, d.hbm.banks_per_group,
                        "Banks per bank group.",
                        section_field(&ChipConfig::hbm, &HbmConfig::banks_per_group)));
    s.push_back(integer("hbm.row_bytes", 32, 1 << 20, d.hbm.row_bytes, "Row (page) size in bytes.",
                        section_field(&ChipConfig::hbm, &HbmConfig::row_bytes)));
    s.push_back(
        choice("hbm.address_map", {"channel_low", "row_bank_col", "bank_xor"}, d.hbm.address_map,
               "Address bits → channel/bank/row/column: channel bits lowest, row:bank:col, or bank "
               "bits XORed with row bits.",
               section_field(&ChipConfig::hbm, &HbmConfig::address_map)));
    s.push_back(choice("hbm.scheduler", {"fr_fcfs", "fcfs"}, d.hbm.scheduler,
                       "Controller scheduling: first-ready FCFS (row hits first) or plain FCFS.",
                       section_field(&ChipConfig::hbm, &HbmConfig::scheduler)));
    s.push_back(choice("hbm.page_policy", {"open", "closed"}, d.hbm.page_policy,
                       "Keep a row open after an access, or precharge at once.",
                       section_field(&ChipConfig::hbm, &HbmConfig::page_policy)));
    s.push_back(integer("hbm.queue_depth", 1, 4096, d.hbm.queue_depth,
                        "Request queue entries per channel.",
                        section_field(&ChipConfig::hbm, &HbmConfig::queue_depth)));
    s.push_back(number("hbm.controller_latency_ns", 0, 1e6, d.hbm.controller_latency_ns,
                       "Fixed controller + PHY latency added to every access, in ns.",
                       section_field(&ChipConfig::hbm, &HbmConfig::controller_latency_ns)));
    KeySpec timing =
        make("hbm.timing", KeyType::number_map, json::object(),
             "Overrides of single preset timings: tCK in ns, the rest in memory-clock cycles.",
             [](ChipConfig& c, const json& v) {
                 c.hbm.timing.clear();
                 for (const auto& [key, value] : v.items()) c.hbm.timing[key] = value.get<double>();
             });
    timing.choices = {"tCK",    "BL",  "CL",     "CWL",    "tRCD",  "tRP",
                      "tRAS",   "tRC", "tRRD_S", "tRRD_L", "tFAW",  "tCCD_S",
                      "tCCD_L", "tWR", "tWTR",   "tRTP",   "tREFI", "tRFC"};
    s.push_back(timing);
    s.push_back(section(
        "l2", "Last-level cache (GPU L2; on systolic chips the level in front of HBM, if any)."));
    s.push_back(
        integer("l2.size_bytes", 0, kTiB, d.l2.size_bytes,
                "Capacity in bytes; 0 = no L2. Must be a multiple of slices × ways × line_bytes.",
                section_field(&ChipConfig::l2, &L2Config::size_bytes)));
    s.push_back(integer("l2.slices", 1, 1024, d.l2.slices,
                        "Independent slices (address-interleaved).",
                        section_field(&ChipConfig::l2, &L2Config::slices)));
    s.push_back(integer("l2.ways", 1, 128, d.l2.ways, "Associativity.",
                        section_field(&ChipConfig::l2, &L2Config::ways)));
    s.push_back(integer("l2.line_bytes", 1, 4096, d.l2.line_bytes,
                        "Line size in bytes (a multiple of sector_bytes).",
                        section_field(&ChipConfig::l2, &L2Config::line_bytes)));
    s.push_back(integer("l2.sector_bytes", 1, 4096, d.l2.sector_bytes,
                        "Sector (fill granule) size in bytes.",
                        section_field(&ChipConfig::l2, &L2Config::sector_bytes)));
    s.push_back(integer("l2.mshrs_per_slice", 1, 65536, d.l2.mshrs_per_slice,
                        "Outstanding misses per slice.",
                        section_field(&ChipConfig::l2, &L2Config::mshrs_per_slice)));
    s.push_back(positive("l2.bytes_per_cycle_per_slice", 1e6, d.l2.bytes_per_cycle_per_slice,
                         "Bandwidth of one slice in bytes per core cycle.",
                         section_field(&ChipConfig::l2, &L2Config::bytes_per_cycle_per_slice)));
    s.push_back(integer("l2.hit_latency_cycles", 0, 1e6, d.l2.hit_latency_cycles,
                        "Load-to-use latency of an L2 hit in core cycles.",
                        section_field(&ChipConfig::l2, &L2Config::hit_latency_cycles)));
    s.push_back(section("interconnect", "Network between the cores/SMs and the L2 or memory."));
    s.push_back(
        integer("interconnect.latency_cycles", 0, 1e6, d.interconnect.latency_cycles,
                "One-way latency in core cycles.",
                section_field(&ChipConfig::interconnect, &InterconnectConfig::latency_cycles)));
    s.push_back(positive(
        "interconnect.bytes_per_cycle_per_port", 1e6, d.interconnect.bytes_per_cycle_per_port,
        "Bytes per core cycle through one port (one per core or SM).",
        section_field(&ChipConfig::interconnect, &InterconnectConfig::bytes_per_cycle_per_port)));
    return s;
}

std::string format_number(double v) {
    char buf[64];
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e19)
        std::snprintf(buf, sizeof buf, "%.0f", v);
    else
        std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

std::string join(const std::vector<std::string>& items, const char* separator) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + items[i];
    return out;
}

}  // namespace

const std::vector<KeySpec>& config_schema() {
    static const std::vector<KeySpec> schema = build_schema();
    return schema;
}

const KeySpec* find_key(const std::string& path) {
    static const std::map<std::string, const KeySpec*> index = [] {
        std::map<std::string, const KeySpec*> m;
        for (const KeySpec& k : config_schema()) m[k.path] = &k;
        return m;
    }();
    const auto it = index.find(path);
    return it == index.end() ? nullptr : it->second;
}

std::string describe_allowed(const KeySpec& spec) {
    switch (spec.type) {
        case KeyType::integer:
        case KeyType::number:
            return std::string(spec.type == KeyType::integer ? "integer" : "number") + " in " +
                   (spec.min_exclusive ? "(" : "[") + format_number(spec.min) + ", " +
                   format_number(spec.max) + "]";
        case KeyType::boolean:
            return "true or false";
        case KeyType::string:
            return "string";
        case KeyType::choice:
            return "one of " + join(spec.choices, ", ");
        case KeyType::section:
            return "object";
        case KeyType::number_map:
            return "object of numbers >= 0 with keys " + join(spec.choices, ", ");
        case KeyType::free_form:
            return "object of strings";
    }
    return "?";
}

std::string check_value(const KeySpec& spec, const nlohmann::json& value) {
    const std::string shown = spec.path + " = " + value.dump();
    const std::string allowed = " (allowed: " + describe_allowed(spec) + ")";
    const std::string wrong_type = shown + " has the wrong type" + allowed;
    switch (spec.type) {
        case KeyType::integer: {
            if (!value.is_number_integer()) return wrong_type;
            if (value.is_number_unsigned() &&
                value.get<std::uint64_t>() >
                    static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
                return shown + " is out of range" + allowed;
            const double v = static_cast<double>(value.get<std::int64_t>());
            if (v < spec.min || v > spec.max) return shown + " is out of range" + allowed;
            return {};
        }
        case KeyType::number: {
            if (!value.is_number()) return wrong_type;
            const double v = value.get<double>();
            const bool below = spec.min_exclusive ? v <= spec.min : v < spec.min;
            if (!std::isfinite(v) || below || v > spec.max)
                return shown + " is out of range" + allowed;
            return {};
        }
        case KeyType::boolean:
            return value.is_boolean() ? std::string() : wrong_type;
        case KeyType::string:
            return value.is_string() ? std::string() : wrong_type;
        case KeyType::choice: {
            if (!value.is_string()) return wrong_type;
            const std::string v = value.get<std::string>();
            for (const std::string& c : spec.choices)
                if (c == v) return {};
            std::string nearest;
            std::size_t best = 3;  // suggest only a choice within two edits
            for (const std::string& c : spec.choices) {
                const std::size_t dist = edit_distance(v, c);
                if (dist < best) best = dist, nearest = c;
            }
            return shown + " is not a valid choice" + allowed +
                   (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)");
        }
        case KeyType::section:
        case KeyType::number_map:
        case KeyType::free_form:
            return value.is_object() ? std::string() : wrong_type;
    }
    return wrong_type;
}

std::string config_keys_markdown() {
    std::ostringstream out;
    out << "| key | type and range | default | meaning |\n";
    out << "|---|---|---|---|\n";
    for (const KeySpec& k : config_schema()) {
        std::string def;
        if (k.required)
            def = "**required**";
        else if (k.is_object())
            def = k.type == KeyType::number_map ? "`{}`" : "";
        else if (k.default_value.is_null())
            def = k.path == "name" ? "file name" : "none";
        else
            def = "`" + k.default_value.dump() + "`";
        std::string type = describe_allowed(k);
        if (k.only_for)
            type += "; " + *k.only_for + " only";
        out << "| `" << k.path << "` | " << type << " | " << def << " | " << k.doc << " |\n";
    }
    return out.str();
}

}  // namespace accelsim
