#pragma once
// The layout of a sweep's output folder, and atomic writes into it.
//   DIR/plan.json            the expanded points (sweep_plan.h)
//   DIR/points/<hash>.json   a finished point: its whole accelsim.report/1
//   DIR/totals/<hash>.json   the part of it results.csv needs (totals, price, power), written just
//                            before the point file, so the CSV need not parse whole reports
//   DIR/failed/<hash>.json   a failed point: exit code and message (removed when it later succeeds)
//   DIR/traces/<sha>.trace   generated traces
//   DIR/results.csv, DIR/summary.json
#include <string>

namespace accelsim {

std::string point_file(const std::string& dir, const std::string& hash);
std::string totals_file(const std::string& dir, const std::string& hash);
std::string failure_file(const std::string& dir, const std::string& hash);
std::string plan_file(const std::string& dir);

// Writes to a temporary file in the same folder, then renames it over `path`: a reader (or a
// driver killed at any moment) sees the old file or the whole new one, never part of one.
// Throws std::runtime_error on failure.
void write_file_atomically(const std::string& path, const std::string& content);

// Reads a whole file; throws InputError naming it when it cannot be opened.
std::string read_whole_file(const std::string& path);

}  // namespace accelsim
