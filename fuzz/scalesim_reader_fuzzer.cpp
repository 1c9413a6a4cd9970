// libFuzzer harness: the SCALE-Sim topology CSV importer (conv and GEMM forms). Bad input must come
// back as InputError; anything else is a finding. Seeds: traces/scalesim/*.csv.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "sim/trace/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto path = accelsim_fuzz::write_input("input.csv", {reinterpret_cast<const char*>(data), size});
    try {
        accelsim::read_trace(path.string(), accelsim::DType::int8, accelsim::TraceFormat::scalesim);
    } catch (const accelsim::InputError&) {
    }
    return 0;
}
