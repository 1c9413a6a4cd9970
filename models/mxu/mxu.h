#pragma once
// The systolic matrix unit (MXU): an R x C array of multiply-accumulate PEs running whole GEMMs
// (batch x M x N x K) in one of three dataflows, in two modes that give identical results:
//   stepped: the array is simulated one clock at a time (registers, skew, weight double buffer);
//   fast:    closed-form fold timing (docs/mxu.md derives every formula) and blocked numerics that
//            accumulate in exactly the order the PEs do, so outputs match stepped bit for bit.
// No SystemC and no JSON here; models/mxu/mxu_sc.h holds the thin SystemC wrapper.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/common/dtype.h"
#include "models/common/enum_names.h"
#include "models/common/param_table.h"
#include "models/common/op.h"

namespace accelsim {

// ws: weight-stationary (TPU). B tiles (K x N) sit in the PEs, A rows stream in from the left,
//     partial sums flow down; K folds accumulate in the output accumulators.
// os: output-stationary. Each PE owns one C element; A enters from the left, B from the top.
// is: input-stationary. A^T tiles (K x M) sit in the PEs, B columns stream in from the left.
enum class MxuDataflow : std::uint8_t { ws, os, is };
enum class MxuMode : std::uint8_t { stepped, fast };

inline constexpr EnumNames<MxuDataflow, 3> kMxuDataflowNames{
    {{MxuDataflow::ws, "ws"}, {MxuDataflow::os, "os"}, {MxuDataflow::is, "is"}}};
inline constexpr EnumNames<MxuMode, 2> kMxuModeNames{{{MxuMode::fast, "fast"}, {MxuMode::stepped, "stepped"}}};

std::string_view to_string(MxuDataflow d);
std::string_view to_string(MxuMode m);
std::optional<MxuDataflow> parse_mxu_dataflow(std::string_view s);  // a name of kMxuDataflowNames
std::optional<MxuMode> parse_mxu_mode(std::string_view s);          // a name of kMxuModeNames

struct MxuParams {
    int rows = 128;                        // R: PEs per column (1..512); the K dimension in ws/is
    int cols = 128;                        // C: PEs per row (1..512)
    MxuDataflow dataflow = MxuDataflow::ws;
    // true: the next fold's stationary tile shifts in while the current one computes (ws/is) and
    // the next output tile starts as soon as the result buses allow (os). false: the textbook /
    // SCALE-Sim model, each fold loads, fills and drains before the next one starts.
    bool overlap_folds = true;
    MxuMode mode = MxuMode::fast;
    // MACs one PE completes per cycle for each operand dtype; 0 = the MXU does not run the dtype
    // (it falls to the vector unit, as the roofline assumes).
    DTypeRates macs_per_pe_per_cycle{1, 1, 1, 0};
    // Throws std::invalid_argument naming the offending key ("mxu.rows must be in 1..512, got 0").
    void validate() const;
};

// The config's `mxu` section: every configurable MxuParams field.
const ParamTable<MxuParams>& mxu_param_table();

// Traffic of one on-chip buffer, in elements and in bytes (what a memory hierarchy will charge).
struct BufferTraffic {
    std::int64_t elements = 0;
    std::int64_t bytes = 0;
    bool operator==(const BufferTraffic& o) const { return elements == o.elements && bytes == o.bytes; }
};

// Per-GEMM statistics. cycles = compute_cycles + fill_drain_cycles + weight_load_stall_cycles
// + drain_stall_cycles: every cycle of the run falls in exactly one category, decided by what the
// array's input edge does in that cycle (docs/mxu.md, "Cycle accounting").
struct MxuStats {
    std::int64_t cycles = 0;                    // first operand load to last result written
    std::int64_t compute_cycles = 0;            // operands stream into the array edge
    std::int64_t fill_drain_cycles = 0;         // edge idle while the skewed wavefront fills/drains
    std::int64_t weight_load_stall_cycles = 0;  // edge idle waiting for a stationary tile (ws/is)
    std::int64_t drain_stall_cycles = 0;        // edge idle waiting for the result buses (os)
    std::int64_t folds = 0;                     // tiles mapped onto the array
    std::int64_t macs = 0;                      // useful multiply-accumulates (batch*M*N*K)
    double mac_utilization = 0;                 // macs / (R*C*cycles)
    double mapping_efficiency = 0;              // mean over folds of used PEs / (R*C)
    BufferTraffic input_reads;                  // A (activations / ifmap) buffer
    BufferTraffic weight_reads;                 // B (weights / filter) buffer
    BufferTraffic output_writes;                // accumulator writes (one per partial sum leaving)
    BufferTraffic output_reads;                 // accumulator read-backs for K-fold accumulation
    bool operator==(const MxuStats& o) const;
};

// Operands of a GEMM, row-major: a is [batch][m][k], b is [batch][k][n]. Every value must be
// exactly representable in the dtype (int8: an integer in -128..127; fp16/bf16: a value that
// survives conversion to that type unchanged); run_mxu_gemm checks and throws otherwise.
struct MxuOperands {
    const float* a = nullptr;
    const float* b = nullptr;
};

struct MxuGemmResult {
    MxuStats stats;
    DType accumulator = DType::fp32;     // int32 for int8 operands, fp32 otherwise
    std::vector<float> c_fp32;           // [batch][m][n] when accumulator == fp32 (with data)
    std::vector<std::int32_t> c_int32;   // [batch][m][n] when accumulator == int32 (with data)
    bool has_output() const { return !c_fp32.empty() || !c_int32.empty(); }
    double c(std::int64_t index) const {  // element of C, whichever the accumulator type
        return accumulator == DType::int32 ? static_cast<double>(c_int32[static_cast<std::size_t>(index)])
                                           : static_cast<double>(c_fp32[static_cast<std::size_t>(index)]);
    }
};

// Runs one whole GEMM on the MXU in params.mode. With operands == nullptr the run is timing-only
// (identical cycle counts and stats, no C). Throws std::invalid_argument for bad params, a shape
// with a dimension < 1, a dtype that is not an operand type, or an unrepresentable operand value.
MxuGemmResult run_mxu_gemm(const MxuParams& params, const GemmShape& shape, DType dtype,
                           const MxuOperands* operands = nullptr);

// The closed-form stats alone (what fast mode returns); O(1) in the shape.
MxuStats mxu_gemm_timing(const MxuParams& params, const GemmShape& shape, DType dtype);

}  // namespace accelsim
