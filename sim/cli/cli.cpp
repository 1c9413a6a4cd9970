#include "sim/cli/cli.h"

#include <unistd.h>

#include <boost/program_options.hpp>
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <systemc>
#include <vector>

#include "models/simt/isa.h"
#include "sim/advise/advise_command.h"
#include "sim/cli/exit_codes.h"
#include "sim/cli/vcd_option.h"
#include "sim/compare/compare_command.h"
#include "sim/config/config_docs.h"
#include "sim/config/config_loader.h"
#include "sim/engine/engine.h"
#include "sim/engine/progress.h"
#include "sim/input_error.h"
#include "sim/membench/membench_command.h"
#include "sim/occupancy/occupancy_command.h"
#include "sim/output/gnuplot.h"
#include "sim/output/output_file.h"
#include "sim/report/hardware_docs.h"
#include "sim/report/perfetto.h"
#include "sim/report/report.h"
#include "sim/report/roofline_plot.h"
#include "sim/report/scalesim_reports.h"
#include "sim/report/stat_docs.h"
#include "sim/sweep/sweep_command.h"
#include "sim/trace/import_command.h"
#include "sim/trace/trace_reader.h"
#include "sim/tracegen/trace_command.h"

namespace accelsim {

namespace po = boost::program_options;

namespace {

const char* kUsage =
    "usage: accelsim --config FILE --trace FILE [options]\n"
    "       accelsim trace bert|resnet50|gpt2 [options]     generate a trace (see 'accelsim trace --help')\n"
    "       accelsim import onnx|pytorch FILE [--dim N=V] [-o OUT]   a model as a trace (docs/import.md)\n"
    "       accelsim membench --config FILE --pattern P      drive the memory hierarchy alone\n"
    "       accelsim occupancy --config FILE --threads T --regs R [--smem BYTES]\n"
    "       accelsim compare --trace FILE --config A --config B ...   designs side by side\n"
    "       accelsim sweep SPEC.json [-j N] [-o DIR]        design-space sweep (also merge, plot)\n"
    "       accelsim advise --trace MODEL --configs A,B [--batch ...] [--latency-ms X]   which chip, batch, dtype\n"
    "       accelsim config-docs [--update FILE | --check FILE]   the config key table (docs/config.md)\n"
    "       accelsim stat-docs [--update FILE | --check FILE]     every stat with its unit (docs/stats.md)\n"
    "       accelsim hardware-docs [--configs DIR] [--update FILE | --check FILE]   the chip table (docs/hardware.md)\n"
    "\n"
    "Simulates every operator of a trace on the chip a config describes and reports, per operator,\n"
    "cycles, utilization, bytes per memory level and the bound (compute, hbm, l2, latency).\n";

// The watchdog's limits and their defaults (models/simt/isa.h), for --help.
std::string limits_help() {
    return "Limits (docs/reliability.md): a SIMT kernel still running after gpu.max_kernel_cycles cycles\n"
           "(default " + std::to_string(simt::kDefaultMaxKernelCycles) + ") or gpu.max_kernel_instructions warp instructions (default " +
           std::to_string(simt::kDefaultMaxKernelInstructions) + ") is\n"
           "stopped with exit 1, naming its running warps and their PCs; raise them with\n"
           "--set gpu.max_kernel_cycles=N (or --set gpu.max_kernel_instructions=N).\n"
           "Before anything runs, every op's host cost is estimated; an op over a limit stops the run with\n"
           "exit 2, naming the op, the estimate and the option that raises the limit (--max-memory,\n"
           "--max-traffic, --max-pe-cycles, --validate-max-macs).\n";
}

// A limit given on the command line: a positive number (1e12 notation allowed).
double positive_limit(const char* option, double value) {
    if (!(value > 0) || !std::isfinite(value))
        throw po::error(std::string("--") + option + " must be a positive number");
    return value;
}

struct Subcommand {
    const char* name;
    int (*run)(const std::vector<std::string>&, std::ostream&, std::ostream&);
};

std::vector<Subcommand> subcommands();

// Every token must belong to an option: a stray word is usually a second key=value after one
// --set ("--set a=1 b=2"), which would otherwise be dropped in silence, or a misspelt subcommand.
void refuse_stray_arguments(const po::parsed_options& parsed, const std::string& first_argument) {
    const std::vector<std::string> stray = po::collect_unrecognized(parsed.options, po::include_positional);
    if (stray.empty()) return;
    const std::string& word = stray.front();
    if (word.find('=') != std::string::npos)
        throw po::error("unexpected argument '" + word + "': each --set takes one key.path=value (write --set before each)");
    if (word == first_argument) {
        std::string known, nearest;
        std::size_t best = 3;  // suggest only a near miss
        for (const Subcommand& sub : subcommands()) {
            known += std::string(known.empty() ? "" : ", ") + sub.name;
            if (const std::size_t d = edit_distance(word, sub.name); d < best) best = d, nearest = sub.name;
        }
        throw po::error("unknown subcommand '" + word + "'" +
                        (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)") + "; subcommands: " + known);
    }
    throw po::error("unexpected argument '" + word + "'");
}

int run_simulation(int argc, char* argv[]) {
    std::string config_path, trace_path, trace_format = "auto", json_path, csv_path;
    std::string perfetto_path, roofline_plot_path, scalesim_dir;
    std::vector<std::string> sets, dims;
    VcdRequest vcd;
    const SimulationLimits default_limits;
    SimulationLimits limits;
    po::options_description options("options");
    options.add_options()
        ("help,h", "print this help")
        ("version", "print the version")
        ("config,c", po::value(&config_path), "chip config (configs/*.json)")
        ("trace,t", po::value(&trace_path),
         "operator trace (.trace), SCALE-Sim topology (.csv), ONNX model (.onnx) or PyTorch profiler trace (.json, .json.gz)")
        ("trace-format", po::value(&trace_format), "auto | accelsim | scalesim | onnx | pytorch (auto: by extension)")
        ("dim", po::value(&dims)->composing(), "ONNX: bind a symbolic dimension, NAME=N (repeatable)")
        ("strict", "ONNX, PyTorch: an operator with no accelsim mapping is an error, not a report line")
        ("set", po::value(&sets)->composing(), "override a config value: key.path=value (repeatable)")
        ("json", po::value(&json_path), "write the report as JSON to FILE")
        ("csv", po::value(&csv_path), "write one CSV row per operator to FILE")
        ("perfetto", po::value(&perfetto_path), "write a timeline (Chrome Trace Event JSON, opens in ui.perfetto.dev) to FILE")
        ("plot-roofline", po::value(&roofline_plot_path), "draw every op on the chip's roofline into FILE.svg or FILE.png (gnuplot)")
        ("scalesim-reports", po::value(&scalesim_dir),
         "write SCALE-Sim's COMPUTE_REPORT.csv, BANDWIDTH_REPORT.csv, DETAILED_ACCESS_REPORT.csv into DIR (systolic chips)")
        ("vcd", po::value(&vcd.path), "write a waveform (VCD) of one GEMM on one MXU (systolic chips)")
        ("vcd-op", po::value(&vcd.op_name), "op for --vcd (default: the first matmul/bmm/conv2d)")
        ("vcd-cycles", po::value(&vcd.cycles), "cycle window FIRST:LAST for --vcd (default 0:63)")
        ("vcd-pes", po::value(&vcd.pes), "PE rectangle R0:R1,C0:C1 for --vcd (default 0:7,0:7)")
        ("validate", "run real data through the datapaths and check it against Eigen")
        ("max-memory", po::value(&limits.max_memory_bytes),
         ("host memory one op's simulation may hold, in bytes (default " +
          std::to_string(static_cast<long long>(default_limits.max_memory_bytes)) + ")").c_str())
        ("max-traffic", po::value(&limits.max_traffic_bytes),
         "bytes the memory model may move for one op (default 2e11: minutes of host time)")
        ("max-pe-cycles", po::value(&limits.max_stepped_pe_cycles),
         "PE-cycles a stepped systolic array may simulate for one op (default 1e12)")
        ("validate-max-macs", po::value(&limits.validate_max_macs),
         "MACs one op may check against Eigen with --validate (default 1e12)")
        ("no-systemc", "run the chip's units with the plain C++ scheduler instead of SystemC processes (identical "
                       "results; for checking the two against each other)")
        ("no-op-reuse", "simulate every GPU op, also one identical to an op already run on the same L2 contents "
                        "(identical results; for checking)")
        ("progress", "show the progress line (op i of N, elapsed, time left) even when stderr is not a terminal")
        ("quiet,q", "do not print the table (nor the progress line)");
    po::variables_map vm;
    const po::parsed_options parsed = po::command_line_parser(argc, argv).options(options).run();
    refuse_stray_arguments(parsed, argc > 1 ? argv[1] : "");
    po::store(parsed, vm);
    po::notify(vm);
    if (vm.count("help")) {
        std::cout << kUsage << "\n" << limits_help() << "\n" << options << "\nDocumentation: README.md and docs/.\n";
        return kExitOk;
    }
    if (vm.count("version")) {
        std::cout << "accelsim " << ACCELSIM_VERSION << " (SystemC " << sc_core::sc_release() << ")\n";
        return kExitOk;
    }
    if (config_path.empty() || trace_path.empty())
        throw po::error("both --config and --trace are required (see accelsim --help)");

    const ChipConfig config = load_config(config_path, sets);
    const LoadedTrace trace = load_trace(trace_path, config.default_dtype, parse_trace_format(trace_format),
                                         parse_import_options(dims, vm.count("strict") > 0));
    const std::vector<Op>& ops = trace.ops;
    RunOptions run_options;
    run_options.validate = vm.count("validate") > 0;
    run_options.limits.max_memory_bytes = positive_limit("max-memory", limits.max_memory_bytes);
    run_options.limits.max_traffic_bytes = positive_limit("max-traffic", limits.max_traffic_bytes);
    run_options.limits.max_stepped_pe_cycles = positive_limit("max-pe-cycles", limits.max_stepped_pe_cycles);
    run_options.limits.validate_max_macs = positive_limit("validate-max-macs", limits.validate_max_macs);
    run_options.systemc = vm.count("no-systemc") == 0;  // this process runs exactly one simulation
    run_options.reuse_repeated_ops = vm.count("no-op-reuse") == 0;

    // Outputs are opened before the run so a bad path fails fast; they replace their files only
    // once complete.
    const std::string scalesim_compute = scalesim_dir.empty() ? "" : scalesim_dir + "/COMPUTE_REPORT.csv";
    const std::string scalesim_bandwidth = scalesim_dir.empty() ? "" : scalesim_dir + "/BANDWIDTH_REPORT.csv";
    const std::string scalesim_detail = scalesim_dir.empty() ? "" : scalesim_dir + "/DETAILED_ACCESS_REPORT.csv";
    check_outputs_are_distinct({{"--json", json_path}, {"--csv", csv_path}, {"--vcd", vcd.path}, {"--perfetto", perfetto_path},
                                {"--plot-roofline", roofline_plot_path}, {"--scalesim-reports", scalesim_compute},
                                {"--scalesim-reports", scalesim_bandwidth}, {"--scalesim-reports", scalesim_detail}},
                               {{"--config", config_path}, {"--trace", trace_path}});
    std::optional<ScaleSimReports> scalesim;
    if (!scalesim_dir.empty()) scalesim.emplace(config);  // refuses a non-systolic chip before the run
    if (!roofline_plot_path.empty()) {
        (void)gnuplot_terminal("--plot-roofline", roofline_plot_path);  // the extension, before the run
        if (!gnuplot_installed()) throw InputError(std::string("--plot-roofline: ") + kGnuplotMissing);
    }
    if (!scalesim_dir.empty()) create_output_directory("--scalesim-reports", scalesim_dir);
    std::optional<OutputFile> json_file, csv_file, perfetto_file, compute_file, bandwidth_file, detail_file;
    if (!json_path.empty()) json_file.emplace("--json", json_path);
    if (!csv_path.empty()) csv_file.emplace("--csv", csv_path);
    if (!perfetto_path.empty()) perfetto_file.emplace("--perfetto", perfetto_path);
    if (scalesim) {
        compute_file.emplace("--scalesim-reports", scalesim_compute);
        bandwidth_file.emplace("--scalesim-reports", scalesim_bandwidth);
        detail_file.emplace("--scalesim-reports", scalesim_detail);
    }

    if (!vcd.path.empty()) write_vcd(config, ops, vcd);
    // Reports stream: each op is written as it finishes and not kept (docs/reliability.md, "Memory
    // per op"); the table and the files are completed after the last op. The timeline, the
    // roofline plot and the SCALE-Sim reports keep a little of each op, only when asked for.
    const std::unique_ptr<ChipModel> chip = make_chip(config, run_options);
    std::optional<PerfettoTimeline> timeline;
    if (perfetto_file) {
        chip->record_activity();
        timeline.emplace(config, trace_path, chip->memory_peaks().bytes_per_cycle);
    }
    std::optional<RooflinePlot> roofline_plot;
    if (!roofline_plot_path.empty()) roofline_plot.emplace(*chip, config);
    // A run over a second shows which op it is on (stderr; a terminal's line is rewritten in place).
    std::optional<ProgressLine> progress;
    const bool stderr_is_terminal = ::isatty(STDERR_FILENO) == 1;
    if (!vm.count("quiet") && (stderr_is_terminal || vm.count("progress"))) {
        progress.emplace(std::cerr, stderr_is_terminal);
        run_options.progress = [&progress](std::size_t index, std::size_t total, const Op& op, double done_share) {
            progress->op_starts(index, total, op, done_share);
        };
    }
    ReportWriter writer(config, trace_path, matrix_peaks_of(*chip, config.default_dtype), run_options.validate,
                        vm.count("quiet") ? nullptr : &std::cout, json_file ? &json_file->stream() : nullptr,
                        csv_file ? &csv_file->stream() : nullptr);
    if (trace.import) writer.set_import(trace.import->to_json(), trace.import->text());
    const RunReport report = run_trace(*chip, config, trace_path, ops, run_options, [&](const OpReport& r) {
        writer.add(r);
        if (timeline) timeline->add(r);
        if (roofline_plot) roofline_plot->add(r);
        if (scalesim) scalesim->add(r);
    });
    if (progress) progress->finish();  // before the table
    writer.finish(report.numerics);
    if (json_file) json_file->commit();
    if (csv_file) csv_file->commit();
    if (timeline) {
        timeline->write(perfetto_file->stream());
        perfetto_file->commit();
    }
    if (scalesim) {
        compute_file->stream() << scalesim->compute_report();
        bandwidth_file->stream() << scalesim->bandwidth_report();
        detail_file->stream() << scalesim->detailed_access_report();
        compute_file->commit();
        bandwidth_file->commit();
        detail_file->commit();
    }
    if (roofline_plot) {
        if (const std::string problem = run_gnuplot(roofline_plot->script(roofline_plot_path)); !problem.empty())
            throw InputError("--plot-roofline " + roofline_plot_path + ": " + problem);
    }
    if (report.numerics && !report.numerics->passed) {
        std::cerr << "accelsim: numerics check FAILED (max abs err " << report.numerics->max_abs_err
                  << ")\n";
        return kExitFailure;
    }
    return kExitOk;
}

}  // namespace

int cli_main(int argc, char* argv[]) {
    // SystemC's informational messages (e.g. the VCD timescale notice) would mix into the report.
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    try {
        if (argc > 1) {
            const std::string first = argv[1];
            for (const Subcommand& sub : subcommands()) {
                if (first == sub.name)
                    return sub.run(std::vector<std::string>(argv + 2, argv + argc), std::cout, std::cerr);
            }
        }
        return run_simulation(argc, argv);
    } catch (const InputError& e) {
        std::cerr << "accelsim: error: " << e.what() << "\n";
        return kExitBadInput;
    } catch (const po::error& e) {
        std::cerr << "accelsim: error: " << e.what() << "\n" << "try 'accelsim --help'\n";
        return kExitBadInput;
    } catch (const sc_core::sc_report& e) {
        std::cerr << "accelsim: simulation error: " << e.what() << "\n";
        return kExitFailure;
    } catch (const std::exception& e) {
        std::cerr << "accelsim: simulation failed: " << e.what() << "\n";
        return kExitFailure;
    }
}

namespace {
std::vector<Subcommand> subcommands() {
    return {{"trace", run_trace_command},
            {"import", run_import_command},
            {"membench", run_membench_command},
            {"occupancy", run_occupancy_command},
            {"compare", run_compare_command},
            {"config-docs", run_config_docs_command},
            {"stat-docs", run_stat_docs_command},
            {"hardware-docs", run_hardware_docs_command},
            {"sweep", run_sweep_command},
            {"advise", run_advise_command}};
}
}  // namespace

}  // namespace accelsim
