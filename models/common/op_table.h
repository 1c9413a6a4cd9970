#pragma once
// The op table: every operator kind in one row (name, field layout, per-element costs, whether it
// has a dtype), and per layout its trace keys, how its shape is read, written, printed and checked.
// The trace reader and writer, the checks, the counts on Op (MACs, FLOPs, bytes) and the reports go
// through it, so a new kind of an existing layout (say a new elementwise op) is one enum value, one
// row here and its lowerings in the chips that run it.
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/common/op.h"

namespace accelsim {

// Which fields of Op a kind uses; kinds of one layout share trace syntax, checks and byte counts.
enum class OpLayout : std::uint8_t {
    gemm,       // gemm: b (bmm only), m, n, k
    conv2d,     // conv
    rows_cols,  // rows, cols: reduce over cols, rows independent
    elements,   // elements: one output per element
    pool,       // pool: a window reduced (max or mean) per output element
    kernel,     // kernel: a SIMT program launch
};

struct OpKindInfo {
    OpKind kind;
    std::string_view name;
    OpLayout layout;
    std::string_view description;  // one line, for docs and help
    bool batched = false;          // gemm layout: the trace gives a batch b (bmm)
    // Vector ops: operands read per output element, operations per element (docs/roofline.md),
    // parameters read per column (layernorm's gamma and beta).
    int vector_inputs = 0;
    int vector_ops_per_element = 0;
    int params_per_column = 0;
    // A kernel's program decides its element types and its work: it has no dtype, and no MAC or
    // FLOP count to report (they would read as zero).
    bool has_dtype = true;
    bool has_flops = true;
};

// Every kind, in enum order.
const std::vector<OpKindInfo>& op_kinds();
const OpKindInfo& op_info(OpKind kind);
std::vector<std::string> op_kind_names();

// Where a reader takes key=value fields from; it reports errors with its own file and line.
class OpFieldSource {
public:
    virtual ~OpFieldSource() = default;
    virtual bool has(const std::string& key) const = 0;
    virtual std::int64_t positive(const std::string& key) const = 0;
    virtual std::int64_t non_negative(const std::string& key) const = 0;
    // "X", "XxY" or "XxYxZ" of positive integers; missing dimensions are 1 (CUDA's dim3).
    virtual void dims(const std::string& key, std::int64_t (&out)[3]) const = 0;
    // A file that must exist, resolved against the source's folder.
    virtual std::string existing_file(const std::string& key) const = 0;
    // A comma-separated list, as written.
    virtual std::vector<std::string> list(const std::string& key) const = 0;
    [[noreturn]] virtual void error(const std::string& message) const = 0;
};

// Trace keys of a kind (dtype is accepted by every kind that has one, and is not listed).
const std::vector<std::string>& required_keys(OpKind kind);
const std::vector<std::string>& optional_keys(OpKind kind);

// Fills op's shape fields from the source (op.kind set, dtype handled by the caller).
void read_shape(const OpFieldSource& source, Op& op);
// The shape in trace syntax, e.g. "m=128 n=2304 k=768"; read_shape reads it back.
void write_shape(std::ostream& out, const Op& op);
// Short text of an op's shape for tables, e.g. "m=128 n=2304 k=768".
std::string shape_text(const Op& op);
// The shape as a JSON object (report schema field "shape").
nlohmann::json shape_json(const Op& op);

}  // namespace accelsim
