// libFuzzer harness: the SIMT assembler (docs/simt-isa.md): parsing, label resolution, the
// reconvergence (post-dominator) analysis and scoreboard lists. Bad input must come back as
// AssemblyError ("FILE:LINE: ..."); anything else is a finding. Seeds: models/simt/kernels/*.sasm.
#include <cstddef>
#include <cstdint>
#include <string>

#include "models/simt/isa.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        accelsim::simt::assemble(std::string(reinterpret_cast<const char*>(data), size), "input.sasm");
    } catch (const accelsim::simt::AssemblyError&) {
    }
    return 0;
}
