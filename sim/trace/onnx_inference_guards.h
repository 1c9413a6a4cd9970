// Preconditions ONNX 1.12's shape inference assumes but does not check.
//
// Its inference functions for convolutions and pools (convPoolShapeInference and the
// ConvTranspose one) take the kernel sizes from the weight's dimensions 2.. and then index them,
// and the strides, dilations and pads, once per spatial axis of the input: a damaged model whose
// weight has a different rank than its input (or whose attributes have the wrong length) makes
// libonnx read out of bounds (found by fuzz/onnx_import_fuzzer.cpp). The ONNX specification
// states these rules; the importer checks them before ONNX's function runs and names the node.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <onnx/onnx_pb.h>

namespace accelsim {

// The newest default-domain opset ONNX 1.12 (Debian's libonnx) registers schemas for; operators
// of newer opsets get accelsim's fallback shape rules.
constexpr int kOnnxKnownOpset = 17;

namespace onnx_guards {

// The attribute of that name, or nullptr.
using AttributeOf = std::function<const onnx::AttributeProto*(const std::string& name)>;
// The rank of the node's input at that position, -1 when unknown (or the input is absent).
using InputRankOf = std::function<int(int position)>;

// Whether the operator's inference relies on the rules below (Conv, ConvInteger, QLinearConv,
// ConvTranspose, MaxPool, AveragePool, LpPool, MaxUnpool).
bool is_guarded(const std::string& op_type);

// What breaks the rules for a node of that operator, in words for an error message; nullopt
// when nothing does (or when the input's rank is not known yet, as ONNX then infers nothing).
std::optional<std::string> conv_pool_violation(const std::string& op_type, const AttributeOf& attribute,
                                               const InputRankOf& input_rank);

// Wraps the inference function of every version of the guarded operators in ONNX's schema
// registry (once per process): a node that breaks the rules gets no inferred output shape, and the
// importer then reports it by name (conv_pool_violation on the inferred shapes).
void install_inference_guards();

}  // namespace onnx_guards
}  // namespace accelsim
