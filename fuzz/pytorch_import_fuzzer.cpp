// libFuzzer harness: the PyTorch profiler importer (docs/import.md): the bytes are a Chrome-trace
// JSON file from torch.profiler, plain or gzip-compressed. Bad input must come back as InputError;
// anything else is a finding. Seeds: tests/trace/fixtures/*.json (written by hand in the format
// torch.profiler records). An input of odd length runs with --strict.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "sim/input_error.h"
#include "sim/trace/model_import.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto path = accelsim_fuzz::write_input("input.json", {reinterpret_cast<const char*>(data), size});
    accelsim::ImportOptions options;
    options.strict = size % 2 == 1;
    try {
        accelsim::import_pytorch_profile(path.string(), accelsim::DType::bf16, options);
    } catch (const accelsim::InputError&) {
    }
    return 0;
}
