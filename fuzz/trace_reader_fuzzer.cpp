// libFuzzer harness: accelsim's text trace reader (docs/trace-format.md). Bad input must come back
// as InputError ("FILE:LINE: ..."); any other exception, crash, leak or undefined behaviour is a
// finding. Seeds: traces/*.trace.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "sim/trace/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto path = accelsim_fuzz::write_input("input.trace", {reinterpret_cast<const char*>(data), size});
    try {
        accelsim::read_trace(path.string(), accelsim::DType::bf16, accelsim::TraceFormat::accelsim);
    } catch (const accelsim::InputError&) {
    }
    return 0;
}
