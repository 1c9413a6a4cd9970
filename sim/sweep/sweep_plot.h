#pragma once
// `accelsim sweep plot DIR`: draws DIR/results.csv with gnuplot (no Python needed). A line or
// scatter plot of a metric against a column, one series per value of --color, with the Pareto
// points ringed; or, with --z, a heatmap of a metric over two columns.
#include <string>
#include <vector>

namespace accelsim {

struct SweepPlotOptions {
    std::string dir;
    std::string x, y;   // column names; with z, both are the heatmap's axes
    std::string z;      // heatmap metric (empty: line/scatter plot of y against x)
    std::string color;  // series column (line/scatter)
    bool pareto = false;
    bool scatter = false;  // points only (default: points joined by lines within a series)
    bool logx = false, logy = false;
    std::string output;  // .svg or .png
    std::string title;
};

// A CSV table (RFC 4180 quoting), as results.csv is written.
struct CsvTable {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
    // Index of a column; throws InputError naming `file` and listing the columns when absent.
    std::size_t column(const std::string& name, const std::string& file) const;
};
CsvTable read_csv(const std::string& path);

// The gnuplot script (data inline) for the plot; throws InputError for unknown columns, no
// finished points, or non-numeric metrics.
std::string gnuplot_script(const SweepPlotOptions& options, const CsvTable& table);

}  // namespace accelsim
