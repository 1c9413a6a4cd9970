#pragma once
// Running a trace file through the engine in-process, and reading one stat of an op's report:
// shared by the GPU engine tests.
#include <gtest/gtest.h>

#include <string>

#include "sim/engine/engine.h"
#include "sim/trace/trace_reader.h"

namespace accelsim::test {

inline RunReport run(const ChipConfig& chip, const std::string& trace, bool validate = false) {
    RunOptions options;
    options.validate = validate;
    return run_trace(chip, trace, read_trace(trace, chip.default_dtype), options);
}

// The value of the op's stat `name`; a missing stat is a test failure (and -1).
inline double stat(const OpReport& r, const std::string& name) {
    for (const auto& s : r.stats)
        if (s.name == name) return s.value;
    ADD_FAILURE() << "no stat " << name << " in " << r.op.name;
    return -1;
}

}  // namespace accelsim::test
