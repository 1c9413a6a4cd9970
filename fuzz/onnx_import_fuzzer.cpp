// libFuzzer harness: the ONNX importer (docs/import.md): the bytes are a file holding an ONNX
// ModelProto. Bad input must come back as InputError ("FILE: message"); any other exception,
// crash, leak or undefined behaviour is a finding. Seeds: the models the tests build
// (tests/onnx_test_models.h), written by fuzz_onnx_seeds.
//
// Every symbolic dimension of a graph input is bound (to 3), as --dim would bind it, so that a
// seed gets past the dimension check into shape inference and the mapping; an input of odd length
// runs with --strict, so the unmapped-operator error is reached too.
#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "sim/trace/model_import.h"
#include "sim/input_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    const auto path = accelsim_fuzz::write_input("input.onnx", bytes);
    accelsim::ImportOptions options;
    options.strict = size % 2 == 1;
    onnx::ModelProto model;
    if (model.ParseFromArray(data, static_cast<int>(size)))
        for (const auto& input : model.graph().input())
            for (const auto& dim : input.type().tensor_type().shape().dim())
                if (dim.has_dim_param()) options.dims[dim.dim_param()] = 3;
    try {
        accelsim::import_onnx(path.string(), accelsim::DType::bf16, options);
    } catch (const accelsim::InputError&) {
    }
    return 0;
}
