#pragma once
// Importers of models from other tools: ONNX files (onnx_importer.cpp) and PyTorch profiler
// Chrome traces (pytorch_importer.cpp). Both produce the same [Op] as the trace reader, plus an
// ImportSummary that accounts for every node or event of the source, so nothing is dropped in
// silence: each lands in exactly one of mapped, fused, folded, shape_only or unmapped
// (docs/import.md).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/common/op.h"

namespace accelsim {

struct ImportOptions {
    // Values of symbolic dimensions (ONNX dim_param), from --dim NAME=VALUE.
    std::map<std::string, std::int64_t> dims;
    // Unmapped source operators are an error instead of a line in the report.
    bool strict = false;
};

struct ImportSummary {
    std::string format;  // "onnx" or "pytorch"
    std::string file;
    std::int64_t source_ops = 0;  // ONNX nodes, or PyTorch aten:: events considered
    std::int64_t ops = 0;         // accelsim ops produced
    // Source operator type -> count. Every source operator is counted in exactly one map.
    std::map<std::string, std::int64_t> mapped;      // became one accelsim op each
    std::map<std::string, std::int64_t> fused;       // part of a pattern that became one op
    std::map<std::string, std::int64_t> folded;      // absorbed into the op before it (no cost)
    std::map<std::string, std::int64_t> shape_only;  // views, layout and bookkeeping (no cost)
    std::map<std::string, std::int64_t> nested;      // PyTorch: an outer event whose inner event was taken
    std::map<std::string, std::int64_t> unmapped;    // no accelsim op: listed, not simulated
    // Patterns recognized, e.g. "layernorm <- ReduceMean,Sub,Pow,ReduceMean,Add,Sqrt,Div" -> 2.
    std::map<std::string, std::int64_t> patterns;
    std::vector<std::string> notes;  // approximations made, in source order

    std::int64_t unmapped_count() const;
    nlohmann::json to_json() const;
    // Lines for the report table and the header of a written trace ("import: onnx ...").
    std::string text() const;
};

struct ImportedModel {
    std::vector<Op> ops;
    ImportSummary summary;
};

// Both throw InputError "FILE: message" (naming the node or event) for unreadable or malformed
// input, an unbound symbolic dimension, or (strict) an unmapped operator. Ops whose source dtype
// is fp32 (or has no accelsim counterpart) take default_dtype; fp16, bf16 and int8 keep theirs.
ImportedModel import_onnx(const std::string& path, DType default_dtype, const ImportOptions& options);
ImportedModel import_pytorch_profile(const std::string& path, DType default_dtype, const ImportOptions& options);

// numpy / ONNX / torch.matmul of A and B (1-D operands promoted): a matmul with the batch rows
// stacked into M when B has no batch dimensions, else a bmm over the broadcast batch. Returns an
// empty string, or the problem ("inner dimensions differ (768 and 512)").
std::string numpy_matmul(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b, OpKind& kind,
                         GemmShape& gemm);

// "" when a convolution's weight, with weight_channels input channels per group, fits an input of
// channels in groups; else the problem, naming all three.
std::string conv_channels_problem(std::int64_t channels, std::int64_t weight_channels, std::int64_t groups);

// Checks each op's shape and the running totals as the trace reader does, fills file and line
// (line: the 1-based position of the source node or event) and makes names unique and one word.
void finish_imported_ops(ImportedModel& model, bool strict);

}  // namespace accelsim
