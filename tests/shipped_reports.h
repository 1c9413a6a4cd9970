#pragma once
// Reports of the slow tier's whole-model runs, shared between the tests that need the same run.
//
// ShippedConfig.LargeTraces runs every whole-model shipped trace on every shipped config
// (`accelsim --config configs/C --trace traces/T`) and keeps each run's JSON report and standard
// output here, under the names below. validation.doc_figures_slow and the BERT-base compare test
// need some of the same runs (BERT-base on six GPU configs, BERT-base on a100): a GPU run of
// BERT-base costs 30-50 s of a core, so they read the kept report instead of running it again,
// when it is fresh. The simulator is deterministic, so a report made by the same binary from the
// same config and trace files is the report a new run would write; "fresh" checks exactly that
// by modification times: the report is newer than the binary, every shipped config (a config may
// extend another) and the trace. ctest runs LargeTraces first (DEPENDS); a test run alone finds
// no fresh report and runs the simulation itself.
#include <filesystem>
#include <string>
#include <system_error>

namespace accelsim_shipped {

namespace fs = std::filesystem;

// The report (extension ".json") or standard output (".stdout") of `accelsim --config
// configs/CONFIG_FILE --trace traces/TRACE_FILE` kept in `dir`.
inline fs::path report_path(const fs::path& dir, const std::string& config_file, const std::string& trace_file,
                            const std::string& extension) {
    return dir / (fs::path(config_file).stem().string() + "__" + fs::path(trace_file).stem().string() + extension);
}

// Whether `file` is newer than the binary, every file in root/configs and root/traces/TRACE_FILE.
inline bool is_fresh(const fs::path& file, const fs::path& root, const fs::path& binary,
                     const std::string& trace_file) {
    std::error_code ec;
    const auto made = fs::last_write_time(file, ec);
    if (ec) return false;
    const auto older = [&](const fs::path& input) {
        std::error_code e;
        const auto t = fs::last_write_time(input, e);
        return !e && t < made;
    };
    if (!older(binary) || !older(root / "traces" / trace_file)) return false;
    for (const auto& entry : fs::directory_iterator(root / "configs", ec))
        if (entry.path().extension() == ".json" && !older(entry.path())) return false;
    return !ec;
}

// The kept report and standard output of that run, if both are fresh; empty paths otherwise.
struct KeptRun {
    fs::path report, standard_output;
    explicit operator bool() const { return !report.empty(); }
};

inline KeptRun find_fresh(const fs::path& dir, const fs::path& root, const fs::path& binary,
                          const std::string& config_file, const std::string& trace_file) {
    const fs::path report = report_path(dir, config_file, trace_file, ".json");
    const fs::path out = report_path(dir, config_file, trace_file, ".stdout");
    if (is_fresh(report, root, binary, trace_file) && is_fresh(out, root, binary, trace_file))
        return KeptRun{report, out};
    return KeptRun{};
}

}  // namespace accelsim_shipped
