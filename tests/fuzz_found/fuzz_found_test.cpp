// Inputs the fuzzers (fuzz/, scripts/fuzz.sh) found crashing or misbehaving, minimized, each with
// the one clear error it must give now: the message a user reads, naming the file and the line
// or key. docs/reliability.md lists them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "models/simt/isa.h"

namespace {

std::string assembly_error(const std::string& source) {
    try {
        accelsim::simt::assemble(source, "k.sasm");
    } catch (const accelsim::simt::AssemblyError& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

// "cvt" without its conversion suffix read past the mnemonic (std::out_of_range escaped).
TEST(FuzzFoundAssembler, BareCvtIsAnUnknownConversion) {
    EXPECT_EQ(assembly_error(".reg 4\ncvt r0, r1\n"),
              "k.sasm:2: unknown conversion 'cvt' (cvt.f32.f16.lo|hi, cvt.f32.bf16.lo|hi, cvt.f16x2.f32, "
              "cvt.bf16x2.f32, cvt.rn.f16x2.e4m3x2.lo|hi, cvt.rn.f16x2.e5m2x2.lo|hi, "
              "cvt.rn.satfinite.e4m3x2.f32, cvt.rn.satfinite.e5m2x2.f32)");
}
