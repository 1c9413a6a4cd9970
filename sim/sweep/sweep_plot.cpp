#include "sim/sweep/sweep_plot.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>

#include "sim/input_error.h"
#include "sim/output/gnuplot.h"
#include "sim/sweep/sweep_files.h"

namespace accelsim {

namespace {

namespace fs = std::filesystem;

bool numeric(const std::string& text, double& value) {
    if (text.empty()) return false;
    char* end = nullptr;
    value = std::strtod(text.c_str(), &end);
    return end == text.c_str() + text.size();
}

// Maps the values of a column to positions: numbers as themselves, anything else to 0, 1, 2, ...
// in order of first appearance, with tic labels.
struct AxisMap {
    bool categorical = false;
    std::vector<std::string> categories;
    double position(const std::string& text) const {
        double v = 0;
        if (!categorical && numeric(text, v)) return v;
        return static_cast<double>(std::find(categories.begin(), categories.end(), text) - categories.begin());
    }
    std::string tics(const char* axis) const {
        if (!categorical) return "";
        std::string t = std::string("set ") + axis + "tics (";
        for (std::size_t i = 0; i < categories.size(); ++i)
            t += (i ? ", " : "") + gnuplot_quote(categories[i]) + " " + std::to_string(i);
        return t + ")\nset " + axis + "range [-0.5:" + std::to_string(categories.size()) + "-0.5]\n";
    }
};

AxisMap axis_map(const std::vector<const std::vector<std::string>*>& rows, std::size_t column) {
    AxisMap m;
    double v = 0;
    for (const auto* r : rows) {
        const std::string& text = (*r)[column];
        if (!numeric(text, v)) m.categorical = true;
        if (std::find(m.categories.begin(), m.categories.end(), text) == m.categories.end()) m.categories.push_back(text);
    }
    if (m.categorical) return m;
    m.categories.clear();
    return m;
}

std::string ten_significant(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    return buf;
}

}  // namespace

std::size_t CsvTable::column(const std::string& name, const std::string& file) const {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it != header.end()) return static_cast<std::size_t>(it - header.begin());
    std::string columns;
    for (const std::string& h : header) columns += (columns.empty() ? "" : ", ") + h;
    throw InputError(file + ": no column '" + name + "' (columns: " + columns + ")");
}

CsvTable read_csv(const std::string& path) {
    const std::string text = read_whole_file(path);
    std::vector<std::vector<std::string>> records(1, std::vector<std::string>(1));
    bool quoted = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        std::string& field = records.back().back();
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
                field += '"', ++i;
            else if (c == '"')
                quoted = false;
            else
                field += c;
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            records.back().emplace_back();
        } else if (c == '\n') {
            records.emplace_back(1);
        } else if (c != '\r') {
            field += c;
        }
    }
    if (records.back().size() == 1 && records.back()[0].empty()) records.pop_back();
    if (records.empty()) throw InputError(path + ": empty CSV");
    CsvTable t;
    t.header = records.front();
    for (std::size_t i = 1; i < records.size(); ++i) {
        if (records[i].size() != t.header.size())
            throw InputError(path + ":" + std::to_string(i + 1) + ": " + std::to_string(records[i].size()) +
                             " fields, the header has " + std::to_string(t.header.size()));
        t.rows.push_back(std::move(records[i]));
    }
    return t;
}

std::string gnuplot_script(const SweepPlotOptions& o, const CsvTable& table) {
    const std::string file = (fs::path(o.dir) / "results.csv").string();
    const std::size_t status = table.column("status", file);
    std::vector<const std::vector<std::string>*> ok;
    for (const auto& r : table.rows)
        if (r[status] == "ok") ok.push_back(&r);
    if (ok.empty()) throw InputError(file + ": no finished point to plot");
    const std::size_t xc = table.column(o.x, file), yc = table.column(o.y, file);

    std::ostringstream s;
    s << gnuplot_terminal("sweep plot: -o", o.output) << "\n"
      << "set output " << gnuplot_quote(o.output, false) << "\n"
      << "set grid\nset key outside right top\n"
      << "set xlabel " << gnuplot_quote(o.x) << "\n";
    if (!o.title.empty()) s << "set title " << gnuplot_quote(o.title) << "\n";
    if (o.logx) s << "set logscale x\n";
    if (o.logy) s << "set logscale y\n";

    if (!o.z.empty()) {
        // Heatmap: one cell per (x, y) pair; when other axes vary too, a cell shows the best
        // (smallest) value of z over them.
        const std::size_t zc = table.column(o.z, file);
        AxisMap xm = axis_map(ok, xc), ym = axis_map(ok, yc);
        xm.categorical = ym.categorical = true;  // cells are evenly spaced whatever the values
        xm.categories.clear();
        ym.categories.clear();
        for (const auto* r : ok) {
            if (std::find(xm.categories.begin(), xm.categories.end(), (*r)[xc]) == xm.categories.end()) xm.categories.push_back((*r)[xc]);
            if (std::find(ym.categories.begin(), ym.categories.end(), (*r)[yc]) == ym.categories.end()) ym.categories.push_back((*r)[yc]);
        }
        auto by_value = [](std::vector<std::string>& c) {
            double a = 0, b = 0;
            if (std::all_of(c.begin(), c.end(), [&](const std::string& t) { return numeric(t, a); }))
                std::sort(c.begin(), c.end(), [&](const std::string& p, const std::string& q) {
                    numeric(p, a);
                    numeric(q, b);
                    return a < b;
                });
        };
        by_value(xm.categories);
        by_value(ym.categories);
        std::map<std::pair<double, double>, double> cells;
        for (const auto* r : ok) {
            double z = 0;
            if (!numeric((*r)[zc], z)) throw InputError(file + ": column '" + o.z + "' is not numeric ('" + (*r)[zc] + "')");
            const auto key = std::make_pair(xm.position((*r)[xc]), ym.position((*r)[yc]));
            const auto it = cells.find(key);
            if (it == cells.end() || z < it->second) cells[key] = z;
        }
        s << "set ylabel " << gnuplot_quote(o.y) << "\n" << xm.tics("x") << ym.tics("y")
          << "set cblabel " << gnuplot_quote(o.z) << "\nset palette rgbformulae 33,13,10\nunset grid\n"
          << "$cells << EOD\n";
        for (const auto& [xy, z] : cells)
            s << ten_significant(xy.first) << " " << ten_significant(xy.second) << " "
              << ten_significant(z) << "\n";
        s << "EOD\n"
          << "plot $cells using 1:2:(0.5):(0.5):3 with boxxyerror fillstyle solid noborder fillcolor palette notitle, \\\n"
          << "     $cells using 1:2:(sprintf(\"%.4g\", $3)) with labels font \",10\" notitle\n";
        return s.str();
    }

    s << "set ylabel " << gnuplot_quote(o.y) << "\n";
    const AxisMap xm = axis_map(ok, xc);
    s << xm.tics("x");
    // Series: one per value of --color, in order of first appearance.
    std::vector<std::string> series_names;
    std::map<std::string, std::vector<std::pair<double, double>>> series;
    std::vector<std::pair<double, double>> front;
    std::size_t color_column = 0, pareto_column = 0;
    if (!o.color.empty()) color_column = table.column(o.color, file);
    if (o.pareto) {
        const auto it = std::find(table.header.begin(), table.header.end(), "pareto");
        if (it == table.header.end())
            throw InputError(file + ": no 'pareto' column: give \"objectives\" in the spec or --objectives to the sweep");
        pareto_column = static_cast<std::size_t>(it - table.header.begin());
    }
    for (const auto* r : ok) {
        double y = 0;
        if (!numeric((*r)[yc], y)) throw InputError(file + ": column '" + o.y + "' is not numeric ('" + (*r)[yc] + "')");
        const std::string name = o.color.empty() ? o.y : o.color + "=" + (*r)[color_column];
        if (!series.count(name)) series_names.push_back(name);
        const std::pair<double, double> xy(xm.position((*r)[xc]), y);
        series[name].push_back(xy);
        if (o.pareto && (*r)[pareto_column] == "1") front.push_back(xy);
    }
    std::string plot = "plot ";
    for (std::size_t i = 0; i < series_names.size(); ++i) {
        auto& points = series[series_names[i]];
        std::stable_sort(points.begin(), points.end());
        s << "$s" << i << " << EOD\n";
        for (const auto& [x, y] : points)
            s << ten_significant(x) << " " << ten_significant(y) << "\n";
        s << "EOD\n";
        plot += std::string(i ? ", \\\n     " : "") + "$s" + std::to_string(i) + " using 1:2 with " +
                (o.scatter ? "points" : "linespoints") + " pointtype 7 pointsize 0.8 title " + gnuplot_quote(series_names[i]);
    }
    if (o.pareto) {
        std::sort(front.begin(), front.end());
        s << "$pareto << EOD\n";
        for (const auto& [x, y] : front)
            s << ten_significant(x) << " " << ten_significant(y) << "\n";
        s << "EOD\n";
        plot += ", \\\n     $pareto using 1:2 with points pointtype 6 pointsize 2 linewidth 2 linecolor rgb \"black\" title \"Pareto-optimal\"";
    }
    s << plot << "\n";
    return s.str();
}

}  // namespace accelsim
