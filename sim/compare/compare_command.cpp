#include "sim/compare/compare_command.h"

#include <boost/program_options.hpp>
#include <functional>
#include <optional>
#include <stdexcept>

#include "sim/cli/exit_codes.h"
#include "sim/compare/comparison.h"
#include "sim/compare/isolated_run.h"
#include "sim/config/config_loader.h"
#include "sim/input_error.h"
#include "sim/output/output_file.h"
#include "sim/trace/import_command.h"
#include "sim/trace/trace_reader.h"

namespace accelsim {

namespace po = boost::program_options;

namespace {

const char* kCompareUsage =
    "usage: accelsim compare --trace FILE --config A [--config B ...] [options]\n"
    "\n"
    "Runs one trace on every config (each in its own process) and prints the designs side by side:\n"
    "per op and in total cycles, time, achieved TFLOP/s and share of peak, utilization or occupancy,\n"
    "bound and the model that produced the cycles; speedup relative to the first config; cost per\n"
    "million inferences and energy per inference (upper bound) where the config has\n"
    "cost_per_hour_usd and tdp_w. One --config is allowed (a single column). See docs/compare.md.\n";

std::string design_name(const std::string& config_path, const ChipConfig& config) {
    return "config " + config_path + " (" + config.name + ")";
}

}  // namespace

int run_compare_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    try {
        std::string trace_path, trace_format = "auto", json_path, csv_path;
        std::vector<std::string> config_paths, sets, dims;
        int jobs = 1;
        po::options_description options("compare options");
        options.add_options()
            ("help,h", "print this help")
            ("trace,t", po::value(&trace_path), "operator trace (.trace), SCALE-Sim topology .csv, ONNX model or PyTorch profile")
            ("trace-format", po::value(&trace_format), "auto | accelsim | scalesim | onnx | pytorch (auto: by extension)")
            ("dim", po::value(&dims)->composing(), "ONNX: bind a symbolic dimension, NAME=N (repeatable)")
            ("strict", "ONNX, PyTorch: an operator with no accelsim mapping is an error, not a report line")
            ("config,c", po::value(&config_paths)->composing(), "a design's config (repeat: one per design)")
            ("set", po::value(&sets)->composing(), "override a value in every config: key.path=value")
            ("json", po::value(&json_path), "write the comparison (accelsim.compare/1) to FILE")
            ("csv", po::value(&csv_path), "write one CSV row per op x design to FILE")
            ("jobs,j", po::value(&jobs), "designs simulated at once, each in its own process (default 1)")
            ("quiet,q", "print neither the table nor progress");
        po::variables_map vm;
        const po::parsed_options parsed = po::command_line_parser(args).options(options).run();
        if (const auto stray = po::collect_unrecognized(parsed.options, po::include_positional); !stray.empty())
            throw InputError("compare: unexpected argument '" + stray.front() +
                             "' (each --set and --config takes one value; repeat the option)");
        po::store(parsed, vm);
        po::notify(vm);
        if (vm.count("help")) {
            out << kCompareUsage << "\n" << options;
            return kExitOk;
        }
        const bool quiet = vm.count("quiet") > 0;
        if (trace_path.empty()) throw InputError("compare: --trace is required (see accelsim compare --help)");
        if (config_paths.empty())
            throw InputError("compare: at least one --config is required (see accelsim compare --help)");
        const TraceFormat format = parse_trace_format(trace_format);
        const ImportOptions import_options = parse_import_options(dims, vm.count("strict") > 0);
        if (jobs < 1 || jobs > 256) throw InputError("compare: --jobs " + std::to_string(jobs) + ": expected 1 to 256");

        // Everything the parent can check is checked before any simulation starts.
        std::vector<DesignInput> designs;
        for (const std::string& path : config_paths) designs.push_back(DesignInput{path, load_config(path, sets), {}});
        load_trace(trace_path, designs.front().config.default_dtype, format, import_options);
        // Opened before the runs so a bad path fails fast; a file is replaced only once complete.
        std::vector<NamedPath> inputs{{"--trace", trace_path}};
        for (const std::string& path : config_paths) inputs.push_back({"--config", path});
        check_outputs_are_distinct({{"--json", json_path}, {"--csv", csv_path}}, inputs);
        std::optional<OutputFile> json_file, csv_file;
        if (!json_path.empty()) json_file.emplace("--json", json_path);
        if (!csv_path.empty()) csv_file.emplace("--csv", csv_path);

        std::vector<std::function<nlohmann::json()>> runs;
        for (std::size_t i = 0; i < designs.size(); ++i) {
            const DesignInput& d = designs[i];
            if (!quiet)
                err << "compare: design [" << (i + 1) << "/" << designs.size() << "] "
                    << design_name(d.config_file, d.config) << " on " << trace_path << "\n";
            runs.push_back(design_run(d.config_file, sets, trace_path, format, import_options));
        }
        if (!quiet && jobs > 1) err << "compare: up to " << jobs << " designs at once\n";
        std::vector<IsolatedRunResult> results = run_isolated_all(runs, jobs, /*stop_after_failure=*/true);
        // The first failure in --config order is the one reported, whatever order the children ended in.
        for (std::size_t i = 0; i < designs.size(); ++i) {
            DesignInput& d = designs[i];
            IsolatedRunResult& run = results[i];
            switch (run.status) {
                case IsolatedRunResult::Status::ok: d.report = std::move(run.report); break;
                case IsolatedRunResult::Status::input_error:
                    throw InputError("compare: " + design_name(d.config_file, d.config) + ": " + run.message);
                case IsolatedRunResult::Status::failed:
                    err << "accelsim: compare: " << design_name(d.config_file, d.config) << ": " << run.message
                        << "\n";
                    return kExitFailure;
            }
        }

        const Comparison comparison = build_comparison(trace_path, designs);
        if (!quiet) write_compare_table(out, comparison);
        if (json_file) {
            write_compare_json(json_file->stream(), comparison);
            json_file->commit();
        }
        if (csv_file) {
            write_compare_csv(csv_file->stream(), comparison);
            csv_file->commit();
        }
        return kExitOk;
    } catch (const InputError& e) {
        err << "accelsim: error: " << e.what() << "\n";
        return kExitBadInput;
    } catch (const po::error& e) {
        err << "accelsim: error: compare: " << e.what() << "\n" << "try 'accelsim compare --help'\n";
        return kExitBadInput;
    } catch (const std::exception& e) {
        err << "accelsim: compare failed: " << e.what() << "\n";
        return kExitFailure;
    }
}

}  // namespace accelsim
