#pragma once
// Running a trace file through the engine in-process, and reading one stat of an op's report:
// shared by the GPU engine tests.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/config/config_loader.h"
#include "sim/engine/engine.h"
#include "sim/trace/trace_reader.h"

namespace accelsim::test {

// A shipped config (configs/NAME.json) with --set style overrides.
inline ChipConfig shipped_config(const std::string& name, const std::vector<std::string>& overrides = {}) {
    return load_config(std::string(ACCELSIM_SOURCE_DIR) + "/configs/" + name + ".json", overrides);
}

// Writes a trace of the given op lines into a fresh folder for the running test; returns its path.
inline std::string write_trace(const std::vector<std::string>& lines) {
    namespace fs = std::filesystem;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const fs::path dir = fs::path(::testing::TempDir()) /
                         (std::string("accelsim_") + info->test_suite_name() + "_" + info->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path path = dir / "t.trace";
    std::ofstream f(path);
    f << "# accelsim-trace 1\n";
    for (const auto& l : lines) f << l << "\n";
    return path.string();
}

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
