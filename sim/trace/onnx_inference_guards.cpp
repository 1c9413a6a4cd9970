#include "sim/trace/onnx_inference_guards.h"

#include <map>
#include <mutex>
#include <set>

#include <onnx/defs/schema.h>

namespace accelsim::onnx_guards {

namespace {

// Position of the weight input (whose dimensions 2.. are the kernel) per guarded operator; -1 for
// pools, whose kernel is an attribute.
const std::map<std::string, int>& weight_position() {
    static const std::map<std::string, int> positions = {
        {"Conv", 1},        {"ConvInteger", 1},  {"QLinearConv", 3}, {"ConvTranspose", 1},
        {"MaxPool", -1},    {"AveragePool", -1}, {"LpPool", -1},     {"MaxUnpool", -1},
    };
    return positions;
}

std::string ints_text(const onnx::AttributeProto& a) {
    std::string text;
    for (const std::int64_t v : a.ints()) text += (text.empty() ? "" : ",") + std::to_string(v);
    return "[" + text + "]";
}

}  // namespace

bool is_guarded(const std::string& op_type) { return weight_position().count(op_type) > 0; }

std::optional<std::string> conv_pool_violation(const std::string& op_type, const AttributeOf& attribute,
                                               const InputRankOf& input_rank) {
    const auto position = weight_position().find(op_type);
    if (position == weight_position().end()) return std::nullopt;
    const int rank = input_rank(0);
    if (rank < 0) return std::nullopt;
    if (rank < 2)
        return "its input has rank " + std::to_string(rank) + "; " + op_type +
               " needs at least 2 (batch, channels, spatial axes...)";
    const int spatial = rank - 2;
    const std::string axes = std::to_string(spatial) + " spatial ax" + (spatial == 1 ? "is" : "es") + " (input rank " +
                             std::to_string(rank) + ")";

    // Each list attribute: INTS, one value per spatial axis (two for pads), each at least `least`.
    const auto check_list = [&](const char* name, int per_axis, std::int64_t least) -> std::optional<std::string> {
        const onnx::AttributeProto* a = attribute(name);
        if (!a) return std::nullopt;
        if (a->type() != onnx::AttributeProto::INTS)
            return std::string("attribute '") + name + "' is not a list of integers";
        if (a->ints_size() != per_axis * spatial)
            return std::string("attribute '") + name + "' " + ints_text(*a) + " has " + std::to_string(a->ints_size()) +
                   " value(s); the input has " + axes + ", so it needs " + std::to_string(per_axis * spatial);
        for (const std::int64_t v : a->ints())
            if (v < least)
                return std::string("attribute '") + name + "' " + ints_text(*a) + " holds " + std::to_string(v) +
                       "; each value must be at least " + std::to_string(least);
        return std::nullopt;
    };
    struct ListRule {
        const char* name;
        int per_axis;
        std::int64_t least;
    };
    static constexpr ListRule list_rules[] = {{"kernel_shape", 1, 1}, {"strides", 1, 1},        {"dilations", 1, 1},
                                              {"pads", 2, 0},         {"output_padding", 1, 0}, {"output_shape", 1, 1}};
    for (const ListRule& rule : list_rules)
        if (auto message = check_list(rule.name, rule.per_axis, rule.least)) return message;

    if (const onnx::AttributeProto* group = attribute("group");
        group && (group->type() != onnx::AttributeProto::INT || group->i() < 1))
        return "attribute 'group' must be an integer of at least 1";
    if (const onnx::AttributeProto* auto_pad = attribute("auto_pad");
        auto_pad && auto_pad->type() != onnx::AttributeProto::STRING)
        return "attribute 'auto_pad' is not a string";

    if (position->second >= 0) {
        const int weight_rank = input_rank(position->second);
        if (weight_rank >= 0 && weight_rank != rank)
            return "its weight (input " + std::to_string(position->second + 1) + ") has rank " +
                   std::to_string(weight_rank) + " but its input has rank " + std::to_string(rank) +
                   "; the ONNX specification requires the same rank (the kernel is the weight's dimensions 2..)";
    }
    return std::nullopt;
}

void install_inference_guards() {
    static std::once_flag once;
    std::call_once(once, [] {
        for (const auto& [op_type, weight] : weight_position()) {
            (void)weight;
            // Every registered version of the operator (Schema(name, v) gives the newest at most v).
            std::set<const onnx::OpSchema*> versions;
            for (int opset = kOnnxKnownOpset; opset >= 1; --opset)
                if (const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op_type, opset, ""))
                    versions.insert(schema);
            for (const onnx::OpSchema* schema : versions) {
                onnx::InferenceFunction original = schema->GetTypeAndShapeInferenceFunction();
                // The registry hands out const schemas; they are plain objects in its map, and the
                // importer is their only user in this process.
                const_cast<onnx::OpSchema*>(schema)->TypeAndShapeInferenceFunction(
                    [op = op_type, original](onnx::InferenceContext& ctx) {
                        const auto attribute = [&ctx](const std::string& name) { return ctx.getAttribute(name); };
                        const auto input_rank = [&ctx](int position) {
                            if (position < 0 || static_cast<std::size_t>(position) >= ctx.getNumInputs()) return -1;
                            const onnx::TypeProto* type = ctx.getInputType(position);
                            if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape()) return -1;
                            return type->tensor_type().shape().dim_size();
                        };
                        if (conv_pool_violation(op, attribute, input_rank)) return;  // outputs stay unknown
                        if (original) original(ctx);
                    });
            }
        }
    });
}

}  // namespace accelsim::onnx_guards
