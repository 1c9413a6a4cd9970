#pragma once
// What a run produced, and its three renderings: the terminal table, JSON (schema
// "accelsim.report/1", field names are a contract: add freely, rename never) and CSV.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/common/chip_model.h"
#include "models/common/op.h"
#include "models/common/op_table.h"
#include "models/common/stats.h"
#include "sim/config/chip_config.h"
#include "models/common/roofline.h"

namespace accelsim {

inline constexpr const char* kReportSchema = "accelsim.report/1";

// Matrix-unit peaks in MACs per chip cycle: the config's default dtype's and each operand dtype's
// (0: no matrix unit runs it). MAC utilization counts each op's MACs against its own dtype's peak
// (an int8 GEMM against the int8 peak), or against the default dtype's when no matrix unit runs the
// op's dtype (the op fell to a slower unit) or the op has no dtype.
struct MatrixPeaks {
    double default_dtype = 0;
    std::map<DType, double> by_dtype;
    MatrixPeaks() = default;
    MatrixPeaks(double default_peak) : default_dtype(default_peak) {}  // one peak for every dtype
    double for_op(const Op& op) const;
};

struct RunReport {
    const ChipConfig* config = nullptr;
    std::string trace;
    std::vector<OpReport> ops;
    std::optional<NumericsSummary> numerics;
    // The chip's matrix-unit peaks (the engine asks the chip).
    MatrixPeaks matrix_peaks;
    // What an importer (ONNX, PyTorch profiler) said about the source model: JSON member "import"
    // and lines under the table's header; null and empty for other traces.
    nlohmann::json import_summary;
    std::string import_text;

    // From the host starting the run to it seeing the last op finish: device cycles + host cycles.
    std::uint64_t total_cycles() const;
    // Host time not hidden behind the device (each op's host_cycles and the final sync).
    std::uint64_t host_cycles() const;
    double seconds() const;
    std::int64_t total_macs() const;
    std::int64_t total_flops() const;
    std::map<std::string, std::int64_t> total_bytes() const;
    // Sum over ops of MACs / (the op's matrix-unit peak, MatrixPeaks::for_op), over total cycles.
    double mac_utilization() const;
    std::size_t ops_without_cycle_model() const;
};

// A run's reports written while it runs: add() each op as it finishes (start and end cycles set),
// then finish(). Each op's JSON is written at once; only totals, column sets and the five longest
// ops are kept, and the table's and CSV's rows wait in an anonymous temporary file (their columns
// depend on every op), so memory does not grow with the op count. The output equals write_json,
// write_csv and write_table of the whole RunReport (which use this writer) byte for byte, and the
// JSON equals to_json(report).dump(2). `with_numerics`: finish() will get a numerics summary (a
// run with validation); its JSON member precedes "ops", so the ops' JSON waits in a temporary file.
class ReportWriter {
public:
    ReportWriter(const ChipConfig& config, std::string trace, MatrixPeaks matrix_peaks, bool with_numerics,
                 std::ostream* table, std::ostream* json, std::ostream* csv);
    ~ReportWriter();
    ReportWriter(const ReportWriter&) = delete;
    ReportWriter& operator=(const ReportWriter&) = delete;
    // An importer's summary (JSON member "import") and its lines for the table; before the first add().
    void set_import(const nlohmann::json& summary, const std::string& table_lines);
    void add(const OpReport& op);
    void finish(const std::optional<NumericsSummary>& numerics);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

nlohmann::json to_json(const RunReport& report);
void write_json(std::ostream& out, const RunReport& report);
void write_csv(std::ostream& out, const RunReport& report);
void write_table(std::ostream& out, const RunReport& report);

// "3.54 TB": `value` scaled by powers of 1000 to an SI prefix, `significant` digits, then `unit`.
std::string si_text(double value, const char* unit, int significant);

}  // namespace accelsim
