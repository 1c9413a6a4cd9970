// doc_figures: the simulated figures quoted in README.md and docs/*.md, regenerated from real runs.
//
// A figure in a document is written between markers:
//     <!--fig bert_tpu_v4:totals.cycles int-->325,220<!--/fig-->
// an expression over the JSON reports of named runs (docs/figures.json says how each run is made),
// then a format. A whole example output is a fenced block after a marker line:
//     <!--fig-output bert_tpu_v4 head=3 tail=6 width=112-->
// which is replaced by the run's standard output (its first `head` lines, a "..." line, its last
// `tail` lines; op-table lines longer than `width` cut there and ended with "...").
//
//   doc_figures --accelsim build/accelsim --root . --check [--tier integration]
//       runs what the markers need and fails (exit 1), listing each figure that drifted;
//   doc_figures --accelsim build/accelsim --root . --update
//       rewrites the documents in place (scripts/figures.sh).
//   --reuse-reports DIR: a run of just `--config configs/C --trace traces/T` reads the report and
//       output that ShippedConfig.LargeTraces kept in DIR, when they are fresh (tests/shipped_reports.h).
// The pseudo-run `ctest` (with --build-dir) counts the build's tests per tier label.
// Host-time figures (seconds of this machine) are measured by hand and carry no marker.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/shipped_reports.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::string read_text(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    if (!f) throw Failure(p.string() + ": cannot be read");
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

// A run of accelsim that figures quote: its arguments (paths relative to the project root), an
// optional `accelsim trace ...` command whose output becomes its --trace (or the trace's lines
// themselves), and its test tier.
struct RunSpec {
    std::vector<std::string> args;
    std::vector<std::string> trace_generator;
    std::string trace_text;  // lines of a trace written to a file and simulated
    std::string tier;
};

struct RunResult {
    json report;
    std::string stdout_text;
};

std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

class Runs {
public:
    Runs(fs::path accelsim, fs::path root, fs::path build, fs::path scratch, fs::path kept_reports,
         std::map<std::string, RunSpec> specs)
        : accelsim_(std::move(accelsim)), root_(std::move(root)), build_(std::move(build)),
          scratch_(std::move(scratch)), kept_reports_(std::move(kept_reports)), specs_(std::move(specs)) {
        specs_.emplace(kTestCounts, RunSpec{{}, {}, {}, "integration"});
    }

    // The pseudo-run `ctest`: how many tests the build holds per tier label, and in all
    // (ctest:unit, ctest:integration, ctest:slow, ctest:all), as README's Tests table quotes.
    static constexpr const char* kTestCounts = "ctest";

    const RunSpec& spec(const std::string& name) const {
        const auto it = specs_.find(name);
        if (it == specs_.end()) throw Failure("run '" + name + "' is not in docs/figures.json");
        return it->second;
    }

    const RunResult& get(const std::string& name) {
        auto it = results_.find(name);
        if (it != results_.end()) return it->second;
        const RunSpec& s = spec(name);
        const fs::path dir = scratch_ / name;
        fs::create_directories(dir);
        if (name == kTestCounts) return results_.emplace(name, RunResult{count_tests(dir), ""}).first->second;
        if (const auto kept = kept_run(s)) {
            std::cerr << "doc_figures: " << name << " from " << kept.report.string() << "\n";
            RunResult r;
            r.report = json::parse(read_text(kept.report));
            r.stdout_text = read_text(kept.standard_output);
            return results_.emplace(name, std::move(r)).first->second;
        }
        std::string cmd = "cd " + shell_quote(root_.string()) + " && ";
        std::vector<std::string> args = s.args;
        if (!s.trace_generator.empty()) {
            std::string gen = shell_quote(accelsim_.string());
            for (const auto& a : s.trace_generator) gen += " " + shell_quote(a);
            const fs::path trace = dir / "generated.trace";
            cmd += gen + " -o " + shell_quote(trace.string()) + " && ";
            args.push_back("--trace");
            args.push_back(trace.string());
        } else if (!s.trace_text.empty()) {
            const fs::path trace = dir / "inline.trace";
            std::ofstream(trace, std::ios::binary) << s.trace_text;
            args.push_back("--trace");
            args.push_back(trace.string());
        }
        std::string sim = shell_quote(accelsim_.string());
        for (const auto& a : args) sim += " " + shell_quote(a);
        const fs::path report = dir / "report.json", out = dir / "stdout", err = dir / "stderr";
        cmd += sim + " --json " + shell_quote(report.string()) + " >" + shell_quote(out.string()) + " 2>" +
               shell_quote(err.string());
        std::cerr << "doc_figures: running " << name << "\n";
        const int status = std::system(cmd.c_str());
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            throw Failure("run '" + name + "' failed: " + cmd + "\n" + read_text(err));
        RunResult r;
        r.report = json::parse(read_text(report));
        r.stdout_text = read_text(out);
        return results_.emplace(name, std::move(r)).first->second;
    }

private:
    // The fresh report LargeTraces kept of this run, if it is a plain `--config configs/C --trace
    // traces/T` run.
    accelsim_shipped::KeptRun kept_run(const RunSpec& s) const {
        if (kept_reports_.empty() || !s.trace_generator.empty() || !s.trace_text.empty() || s.args.size() != 4 ||
            s.args[0] != "--config" || s.args[2] != "--trace")
            return {};
        const fs::path config(s.args[1]), trace(s.args[3]);
        if (config.parent_path() != "configs" || trace.parent_path() != "traces") return {};
        return accelsim_shipped::find_fresh(kept_reports_, root_, accelsim_, config.filename().string(),
                                            trace.filename().string());
    }

    json count_tests(const fs::path& dir) const {
        if (build_.empty()) throw Failure("the ctest figures need --build-dir");
        const fs::path listing = dir / "tests.json";
        const std::string cmd = "ctest --test-dir " + shell_quote(build_.string()) + " --show-only=json-v1 >" +
                                shell_quote(listing.string());
        if (std::system(cmd.c_str()) != 0) throw Failure("cannot list the tests: " + cmd);
        json counts = {{"all", 0}};
        const json listed = json::parse(read_text(listing));
        for (const auto& test : listed.at("tests")) {
            counts["all"] = counts["all"].get<int>() + 1;
            for (const auto& property : test.value("properties", json::array()))
                if (property.at("name") == "LABELS")
                    for (const auto& label : property.at("value")) {
                        const std::string l = label.get<std::string>();
                        counts[l] = counts.value(l, 0) + 1;
                    }
        }
        return counts;
    }

    fs::path accelsim_, root_, build_, scratch_, kept_reports_;
    std::map<std::string, RunSpec> specs_;
    std::map<std::string, RunResult> results_;
};

// RUN:PATH, where PATH is dotted keys, array indices, [KEY] for a key holding dots, or op(NAME)
// for the op of that name.
const json& lookup_json(Runs& runs, const std::string& term) {
    const auto colon = term.find(':');
    if (colon == std::string::npos) throw Failure("'" + term + "' names no run (RUN:PATH)");
    const json* node = &runs.get(term.substr(0, colon)).report;
    std::string path = term.substr(colon + 1);
    while (!path.empty()) {
        std::string key;
        if (path.rfind("op(", 0) == 0) {
            const auto close = path.find(')');
            if (close == std::string::npos) throw Failure("'" + term + "': op( without )");
            const std::string op_name = path.substr(3, close - 3);
            const json* found = nullptr;
            for (const auto& op : node->at("ops"))
                if (op.at("name") == op_name) found = &op;
            if (!found) throw Failure("'" + term + "': no op named " + op_name);
            node = found;
            path = path.substr(close + 1);
            if (!path.empty() && path[0] == '.') path = path.substr(1);
            continue;
        }
        if (path[0] == '[') {  // a key holding dots, such as a stat's name: [chip.cmem.bytes_read]
            const auto close = path.find(']');
            if (close == std::string::npos) throw Failure("'" + term + "': [ without ]");
            key = path.substr(1, close - 1);
            path = path.substr(close + 1);
            if (!path.empty() && path[0] == '.') path = path.substr(1);
        } else {
            const auto dot = path.find('.');
            key = path.substr(0, dot);
            path = dot == std::string::npos ? "" : path.substr(dot + 1);
        }
        if (node->is_array()) {
            const std::size_t i = std::stoul(key);
            if (i >= node->size()) throw Failure("'" + term + "': index " + key + " out of range");
            node = &(*node)[i];
        } else {
            if (!node->contains(key)) throw Failure("'" + term + "': no key '" + key + "'");
            node = &node->at(key);
        }
    }
    return *node;
}

double lookup(Runs& runs, const std::string& term) {
    const json& v = lookup_json(runs, term);
    if (!v.is_number()) throw Failure("'" + term + "' is not a number");
    return v.get<double>();
}

// The `str` format quotes a string (a bound's name, say) as it is.
std::string lookup_string(Runs& runs, const std::string& term) {
    const json& v = lookup_json(runs, term);
    if (!v.is_string()) throw Failure("'" + term + "' is not a string");
    return v.get<std::string>();
}

// EXPR: numbers and RUN:PATH values with + - * / and parentheses, by the usual precedence.
class Expression {
public:
    Expression(Runs& runs, std::string text) : runs_(runs), text_(std::move(text)) {}

    double value() {
        const double v = sum();
        if (pos_ != text_.size()) fail("unexpected '" + text_.substr(pos_) + "'");
        return v;
    }

    // The runs an expression names, without running them.
    static std::set<std::string> runs_named(const std::string& text) {
        std::set<std::string> names;
        static const std::regex run_term(R"(([A-Za-z_][A-Za-z0-9_]*):)");
        for (std::sregex_iterator it(text.begin(), text.end(), run_term), end; it != end; ++it)
            names.insert((*it)[1]);
        return names;
    }

private:
    [[noreturn]] void fail(const std::string& why) const { throw Failure("expression '" + text_ + "': " + why); }

    double sum() {
        double v = product();
        while (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) {
            const char op = text_[pos_++];
            const double rhs = product();
            v = op == '+' ? v + rhs : v - rhs;
        }
        return v;
    }

    double product() {
        double v = factor();
        while (pos_ < text_.size() && (text_[pos_] == '*' || text_[pos_] == '/')) {
            const char op = text_[pos_++];
            const double rhs = factor();
            v = op == '*' ? v * rhs : v / rhs;
        }
        return v;
    }

    double factor() {
        if (pos_ >= text_.size()) fail("ends where a value was expected");
        if (text_[pos_] == '(') {
            ++pos_;
            const double v = sum();
            if (pos_ >= text_.size() || text_[pos_] != ')') fail("( without )");
            ++pos_;
            return v;
        }
        // A term runs to the next operator outside op(...) and [...].
        const std::size_t start = pos_;
        int depth = 0;
        for (; pos_ < text_.size(); ++pos_) {
            const char c = text_[pos_];
            if (c == '(' || c == '[') ++depth;
            else if ((c == ')' || c == ']') && depth > 0) --depth;
            else if (depth == 0 && (c == '+' || c == '-' || c == '*' || c == '/' || c == ')')) break;
        }
        const std::string term = text_.substr(start, pos_ - start);
        if (term.empty()) fail("empty term");
        char* end = nullptr;
        const double v = std::strtod(term.c_str(), &end);
        return *end == '\0' ? v : lookup(runs_, term);
    }

    Runs& runs_;
    std::string text_;
    std::size_t pos_ = 0;
};

std::string with_commas(long long v) {
    std::string digits = std::to_string(v < 0 ? -v : v), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return (v < 0 ? "-" : "") + out;
}

// Formats: int (rounded, thousands separated), fN (N decimals), cN (N decimals, thousands separated);
// `str` (a string value, not an expression) is handled by the caller.
std::string format(double v, const std::string& fmt) {
    if (fmt == "int") return with_commas(std::llround(v));
    if (fmt.size() == 2 && (fmt[0] == 'f' || fmt[0] == 'c') && std::isdigit(static_cast<unsigned char>(fmt[1]))) {
        const int decimals = fmt[1] - '0';
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
        if (fmt[0] == 'f') return buf;
        std::string s = buf;
        const auto point = s.find('.');
        const double whole = std::stod(s.substr(0, point));
        return with_commas(static_cast<long long>(whole)) + (point == std::string::npos ? "" : s.substr(point));
    }
    throw Failure("unknown format '" + fmt + "' (int, fN, cN)");
}

std::string output_block(const std::string& text, std::size_t head, std::size_t tail, std::size_t width) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    // Only the op table's rows (and its header) are cut: their trailing columns are per-level bytes.
    auto cut = [&](std::string l) {
        while (!l.empty() && l.back() == ' ') l.pop_back();
        const auto first = l.find_first_not_of(' ');
        const bool table_row = first != std::string::npos && (std::isdigit(static_cast<unsigned char>(l[first])) ||
                                                               l[first] == '#');
        if (table_row && width > 0 && l.size() > width) {
            l.resize(width);
            while (!l.empty() && l.back() == ' ') l.pop_back();
            l += " ...";
        }
        return l;
    };
    std::string out;
    if (head + tail >= lines.size()) {
        for (const auto& l : lines) out += cut(l) + "\n";
        return out;
    }
    for (std::size_t i = 0; i < head; ++i) out += cut(lines[i]) + "\n";
    out += "...\n";
    for (std::size_t i = lines.size() - tail; i < lines.size(); ++i) out += cut(lines[i]) + "\n";
    return out;
}

struct Drift {
    std::string where, old_text, new_text;
};

std::size_t line_of(const std::string& text, std::size_t pos) {
    return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<long>(pos), '\n'));
}

// Processes one document: returns its new text, adding what differs to `drifts`. Markers whose
// runs are not in the selected tiers are left as they are.
std::string process(const fs::path& doc, const std::string& text, Runs& runs, const std::set<std::string>& tiers,
                    std::vector<Drift>& drifts, std::size_t& checked) {
    auto selected = [&](const std::set<std::string>& names) {
        for (const auto& n : names)
            if (!tiers.count(runs.spec(n).tier)) return false;
        return true;
    };
    static const std::regex inline_marker(R"(<!--fig ([^ ]+) ([a-z0-9]+)-->([^<]*)<!--/fig-->)");
    static const std::regex block_marker(R"(<!--fig-output ([A-Za-z0-9_]+) head=(\d+) tail=(\d+) width=(\d+)-->\n```\n)");
    std::string out;
    std::size_t pos = 0;
    while (true) {
        std::smatch mi, mb;
        const auto begin = text.cbegin() + static_cast<long>(pos);
        const bool has_i = std::regex_search(begin, text.cend(), mi, inline_marker);
        const bool has_b = std::regex_search(begin, text.cend(), mb, block_marker);
        if (!has_i && !has_b) break;
        const bool block = has_b && (!has_i || mb.position(0) < mi.position(0));
        const std::smatch& m = block ? mb : mi;
        const std::size_t at = pos + static_cast<std::size_t>(m.position(0));
        const std::string where = doc.string() + ":" + std::to_string(line_of(text, at));
        out += text.substr(pos, at - pos);
        if (!block) {
            const std::string expr = m[1], fmt = m[2], old_value = m[3];
            std::string value = old_value;
            if (selected(Expression::runs_named(expr))) {
                ++checked;
                value = fmt == "str" ? lookup_string(runs, expr) : format(Expression(runs, expr).value(), fmt);
                if (value != old_value) drifts.push_back({where + " (" + expr + ")", old_value, value});
            }
            out += "<!--fig " + expr + " " + fmt + "-->" + value + "<!--/fig-->";
            pos = at + static_cast<std::size_t>(m.length(0));
        } else {
            const std::size_t body = at + static_cast<std::size_t>(m.length(0));
            const std::size_t fence = text.find("```\n", body);
            if (fence == std::string::npos) throw Failure(where + ": the output block has no closing ```");
            const std::string old_body = text.substr(body, fence - body);
            std::string new_body = old_body;
            if (selected({m[1]})) {
                ++checked;
                new_body = output_block(runs.get(m[1]).stdout_text, std::stoul(m[2]), std::stoul(m[3]),
                                        std::stoul(m[4]));
                if (new_body != old_body) drifts.push_back({where + " (output of " + std::string(m[1]) + ")",
                                                            old_body, new_body});
            }
            out += m.str(0) + new_body + "```\n";
            pos = fence + 4;
        }
    }
    out += text.substr(pos);
    return out;
}

std::map<std::string, RunSpec> read_specs(const fs::path& file) {
    json j;
    try {
        j = json::parse(read_text(file));
    } catch (const json::parse_error& e) {
        throw Failure(file.string() + ": " + e.what());
    }
    std::map<std::string, RunSpec> specs;
    for (const auto& [name, r] : j.at("runs").items()) {
        RunSpec s;
        s.args = r.at("args").get<std::vector<std::string>>();
        if (r.contains("trace_generator")) s.trace_generator = r.at("trace_generator").get<std::vector<std::string>>();
        if (r.contains("trace_lines")) {
            s.trace_text = "# accelsim-trace 1\n";
            for (const auto& line : r.at("trace_lines")) s.trace_text += line.get<std::string>() + "\n";
        }
        s.tier = r.at("tier").get<std::string>();
        if (s.tier != "integration" && s.tier != "slow")
            throw Failure(file.string() + ": run '" + name + "': tier must be integration or slow");
        specs.emplace(name, std::move(s));
    }
    return specs;
}

int usage() {
    std::cerr << "usage: doc_figures --accelsim PATH --root DIR [--build-dir DIR] [--reuse-reports DIR]"
                 " (--check | --update) [--tier integration|slow]...\n";
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    fs::path accelsim, root, build, kept_reports;
    bool check = false, update = false;
    std::set<std::string> tiers;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--accelsim" && i + 1 < argc) accelsim = fs::absolute(argv[++i]);
        else if (a == "--root" && i + 1 < argc) root = fs::absolute(argv[++i]);
        else if (a == "--build-dir" && i + 1 < argc) build = fs::absolute(argv[++i]);
        else if (a == "--tier" && i + 1 < argc) tiers.insert(argv[++i]);
        else if (a == "--reuse-reports" && i + 1 < argc) kept_reports = fs::absolute(argv[++i]);
        else if (a == "--check") check = true;
        else if (a == "--update") update = true;
        else return usage();
    }
    if (accelsim.empty() || root.empty() || check == update) return usage();
    if (tiers.empty()) tiers = {"integration", "slow"};
    try {
        const fs::path scratch = fs::temp_directory_path() / ("accelsim_doc_figures_" + std::to_string(getpid()));
        fs::remove_all(scratch);
        Runs runs(accelsim, root, build, scratch, kept_reports, read_specs(root / "docs" / "figures.json"));
        std::vector<fs::path> docs = {root / "README.md"};
        for (const auto& e : fs::recursive_directory_iterator(root / "docs"))
            if (e.path().extension() == ".md") docs.push_back(e.path());
        std::sort(docs.begin(), docs.end());
        std::vector<Drift> drifts;
        std::size_t checked = 0;
        for (const auto& doc : docs) {
            const std::string text = read_text(doc);
            const std::string updated = process(fs::relative(doc, root), text, runs, tiers, drifts, checked);
            if (update && updated != text) {
                std::ofstream f(doc, std::ios::binary);
                f << updated;
                if (!f) throw Failure(doc.string() + ": cannot be written");
            }
        }
        fs::remove_all(scratch);
        for (const auto& d : drifts)
            std::cout << d.where << ": document says\n" << d.old_text << "\n  a run gives\n" << d.new_text << "\n";
        std::cout << "doc_figures: " << checked << " figures checked, " << drifts.size()
                  << (update ? " updated\n" : " drifted\n");
        if (check && (checked == 0 || !drifts.empty())) {
            if (checked == 0) std::cout << "doc_figures: no figure was checked (no marker in the selected tiers)\n";
            else std::cout << "doc_figures: run scripts/figures.sh to regenerate them, and say why in the commit\n";
            return 1;
        }
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "doc_figures: " << e.what() << "\n";
        return 1;
    }
}
