// Writes the ONNX models the importer tests build (tests/onnx_test_models.h) into a directory, as
// seeds for fuzz_onnx_import (scripts/fuzz.sh runs it before the harness): the seeds follow the
// builder code instead of being binary files that drift from it.
//   fuzz_onnx_seeds DIR
#include <cstdio>
#include <filesystem>

#include "tests/onnx_test_models.h"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    namespace t = accelsim_test;
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    t::bert_layer(true).save((dir / "bert_fused.onnx").string());
    t::bert_layer(false).save((dir / "bert_decomposed.onnx").string());
    t::bert_layer(false, onnx::TensorProto_DataType_FLOAT, true).save((dir / "bert_decomposed_opset18.onnx").string());
    t::bert_layer(true, onnx::TensorProto_DataType_FLOAT16).save((dir / "bert_fused_fp16.onnx").string());
    t::small_cnn().save((dir / "small_cnn.onnx").string());
    return 0;
}
