#include "sim/sweep/sweep_command.h"

#include <sys/resource.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "sim/cli/exit_codes.h"
#include "sim/input_error.h"
#include "sim/output/gnuplot.h"
#include "sim/sweep/sweep_files.h"
#include "sim/sweep/sweep_plan.h"
#include "sim/sweep/sweep_plot.h"
#include "sim/sweep/sweep_results.h"
#include "sim/sweep/sweep_runner.h"
#include "sim/sweep/sweep_slurm.h"
#include "sim/trace/import_command.h"

namespace accelsim {

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

const char* kSweepUsage =
    "usage: accelsim sweep SPEC.json [-j N] [-o DIR] [options]     run a design-space sweep\n"
    "       accelsim sweep SPEC.json --emit-slurm FILE [--array-size N] [--partition P] [--time T]\n"
    "       accelsim sweep merge DIR [--objectives A,B]           rebuild DIR/results.csv\n"
    "       accelsim sweep plot DIR --x COL --y METRIC [--color COL] [--pareto] -o FILE.svg|.png\n"
    "       accelsim sweep plot DIR --x AXIS --y AXIS --z METRIC -o FILE.svg   (heatmap)\n"
    "\n"
    "Runs every point of the spec (base configs x traces x axis values) in its own process and\n"
    "writes DIR/points/<hash>.json (each point's report), DIR/results.csv (one row per point) and\n"
    "DIR/summary.json. Finished points are reused when the sweep runs again. See docs/sweep.md.\n";

std::string self_executable() {
    std::error_code ec;
    const fs::path p = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw std::runtime_error("cannot find the accelsim executable (/proc/self/exe): " + ec.message());
    return p.string();
}

void print_results(std::ostream& err, const std::string& dir, const SweepResults& r) {
    std::size_t pareto = 0;
    for (const SweepRow& row : r.rows) pareto += row.pareto ? 1 : 0;
    err << "sweep: wrote " << (fs::path(dir) / "results.csv").string() << " (" << r.rows.size() << " rows: " << r.ok
        << " ok, " << r.failed << " failed";
    if (r.missing) err << ", " << r.missing << " not run yet";
    err << ") and summary.json";
    if (!r.objectives.empty()) err << "; " << pareto << " Pareto-optimal";
    err << "\n";
}

double cpu_seconds(int who) {
    rusage u{};
    ::getrusage(who, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// The driver's own cost (planning, forking, bookkeeping, results) apart from the points' processes.
void print_cpu(std::ostream& err, std::size_t points) {
    const double self = cpu_seconds(RUSAGE_SELF), children = cpu_seconds(RUSAGE_CHILDREN);
    char line[200];
    std::snprintf(line, sizeof line, "sweep: driver CPU %.2f s (%.2f ms per point), points' processes %.1f s CPU\n",
                  self, points ? self * 1e3 / static_cast<double>(points) : 0.0, children);
    err << line;
}

int merge_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    std::string dir, objectives;
    po::options_description options("sweep merge options");
    options.add_options()("help,h", "print this help")(
        "objectives", po::value(&objectives), "metrics for the Pareto front, e.g. latency,cost (default: the spec's)");
    po::positional_options_description positional;
    positional.add("dir", 1);
    po::options_description all;
    all.add(options).add_options()("dir", po::value(&dir));
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
        out << "usage: accelsim sweep merge DIR [--objectives A,B]\n\nRebuilds DIR/results.csv and summary.json from "
               "DIR/plan.json and whatever points exist.\n\n"
            << options;
        return kExitOk;
    }
    if (dir.empty()) throw InputError("sweep merge: missing DIR (the sweep's output folder)");
    const std::string plan_path = plan_file(dir);
    nlohmann::json plan_json;
    try {
        plan_json = nlohmann::json::parse(read_whole_file(plan_path));
    } catch (const nlohmann::json::exception& e) {
        throw InputError(plan_path + ": " + e.what());
    }
    const SweepPlan plan = plan_from_json(plan_json, plan_path);
    const std::vector<Objective> objs = objectives.empty()
                                            ? parse_objectives(plan.objectives, plan_path, plan.axis_names)
                                            : parse_objectives(split_commas(objectives), "--objectives", plan.axis_names);
    const SweepResults r = write_sweep_results(plan, dir, objs);
    print_results(err, dir, r);
    return r.failed > 0 ? kExitFailure : kExitOk;
}

int plot_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    SweepPlotOptions o;
    po::options_description options("sweep plot options");
    options.add_options()("help,h", "print this help")("x", po::value(&o.x), "column on the x axis (an axis, config, trace...)")(
        "y", po::value(&o.y), "metric on the y axis (heatmap: the second axis)")(
        "z", po::value(&o.z), "draw a heatmap of this metric over --x and --y")(
        "color", po::value(&o.color), "one series per value of this column")(
        "pareto", "ring the Pareto-optimal points (needs objectives)")("scatter", "points only, no lines")(
        "logx", "logarithmic x axis")("logy", "logarithmic y axis")("title", po::value(&o.title), "plot title")(
        "output,o", po::value(&o.output), "FILE.svg or FILE.png");
    po::positional_options_description positional;
    positional.add("dir", 1);
    po::options_description all;
    all.add(options).add_options()("dir", po::value(&o.dir));
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
        out << "usage: accelsim sweep plot DIR --x COL --y METRIC [--color COL] [--pareto] -o FILE.svg|.png\n"
               "       accelsim sweep plot DIR --x AXIS --y AXIS --z METRIC -o FILE.svg|.png   (heatmap)\n\n"
            << options;
        return kExitOk;
    }
    if (o.dir.empty()) throw InputError("sweep plot: missing DIR (the sweep's output folder)");
    if (o.x.empty() || o.y.empty()) throw InputError("sweep plot: --x and --y are required");
    if (o.output.empty()) throw InputError("sweep plot: -o FILE.svg or FILE.png is required");
    if (!o.z.empty() && (vm.count("pareto") || !o.color.empty()))
        throw InputError("sweep plot: --z (heatmap) cannot be combined with --color or --pareto");
    o.pareto = vm.count("pareto") > 0;
    o.scatter = vm.count("scatter") > 0;
    o.logx = vm.count("logx") > 0;
    o.logy = vm.count("logy") > 0;
    const CsvTable table = read_csv((fs::path(o.dir) / "results.csv").string());
    const std::string script = gnuplot_script(o, table);
    if (const std::string problem = run_gnuplot(script); !problem.empty()) {
        err << "accelsim: sweep plot: " << problem << "\n";
        return kExitFailure;
    }
    err << "sweep plot: wrote " << o.output << "\n";
    return kExitOk;
}

int run_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    std::string spec_path, dir, store, shard_text, objectives, slurm_path, partition, time_limit;
    int jobs = available_cores(), cpus_per_task = 1;
    std::size_t array_size = 0;
    std::vector<std::string> dims;
    po::options_description options("sweep options");
    options.add_options()("help,h", "print this help")("jobs,j", po::value(&jobs),
                                                         "points simulated at once, each in its own process (default: cores)")(
        "output,o", po::value(&dir), "output folder (default: sweep-<spec name>)")(
        "fail-fast", "start no new point once one has failed")(
        "store", po::value(&store), "keep points in STORE/points, shared by sweeps (default: DIR)")(
        "shard", po::value(&shard_text), "run only shard I/N (0 <= I < N) of the points, or 'auto' in a Slurm array")(
        "objectives", po::value(&objectives), "metrics for the Pareto front, e.g. latency,cost")(
        "dry-run", "validate the spec and every point, print the plan size, run nothing")(
        "emit-slurm", po::value(&slurm_path), "write an sbatch job-array script to FILE instead of running")(
        "array-size", po::value(&array_size), "--emit-slurm: array tasks (default: min(distinct points, 64))")(
        "cpus-per-task", po::value(&cpus_per_task), "--emit-slurm: cores per task, also its -j (default 1)")(
        "partition", po::value(&partition), "--emit-slurm: Slurm partition")(
        "time", po::value(&time_limit), "--emit-slurm: time limit per task, e.g. 01:00:00")(
        "dim", po::value(&dims)->composing(), "ONNX: bind a symbolic dimension, NAME=N (repeatable)")(
        "strict", "ONNX, PyTorch: an operator with no accelsim mapping is an error, not a report line")(
        "quiet,q", "no progress output");
    po::positional_options_description positional;
    positional.add("spec", 1);
    po::options_description all;
    all.add(options).add_options()("spec", po::value(&spec_path));
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
    if (vm.count("help") || spec_path.empty()) {
        (spec_path.empty() && !vm.count("help") ? err : out) << kSweepUsage << "\n" << options;
        return vm.count("help") ? kExitOk : kExitBadInput;
    }
    if (jobs < 1 || jobs > 1024) throw InputError("sweep: --jobs " + std::to_string(jobs) + ": expected 1 to 1024");
    if (cpus_per_task < 1 || cpus_per_task > 1024)
        throw InputError("sweep: --cpus-per-task " + std::to_string(cpus_per_task) + ": expected 1 to 1024");
    const Shard shard = shard_text.empty() ? Shard{} : parse_shard(shard_text);

    // Everything is checked before any point runs.
    const ImportOptions import_options = parse_import_options(dims, vm.count("strict") > 0);
    const SweepSpec spec = load_sweep_spec(spec_path, import_options);
    std::vector<std::string> axis_names;
    for (const SweepAxis& a : spec.axes) axis_names.push_back(a.name);
    const std::vector<Objective> objs =
        objectives.empty() ? parse_objectives(spec.objectives, spec_path + ": objectives", axis_names)
                           : parse_objectives(split_commas(objectives), "--objectives", axis_names);
    if (dir.empty()) dir = "sweep-" + spec.name;
    const auto plan_start = std::chrono::steady_clock::now();
    SweepPlan plan = plan_sweep(spec);
    if (!objectives.empty()) plan.objectives = split_commas(objectives);
    if (!store.empty()) plan.store = fs::absolute(store).lexically_normal().string();
    const double plan_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - plan_start).count();
    const std::size_t distinct = plan.unique_hashes().size();

    if (vm.count("dry-run")) {
        out << "sweep " << plan.name << ": " << plan.points.size() << " points (" << distinct << " distinct), every config valid ("
            << plan_seconds << " s to check)\n";
        return kExitOk;
    }
    if (!slurm_path.empty()) {
        SlurmScriptOptions s;
        s.name = plan.name;
        s.accelsim = self_executable();
        s.workdir = fs::current_path().string();
        s.spec = spec_path;
        s.dir = dir;
        s.store = store;
        s.array_size = array_size ? array_size : std::min<std::size_t>(distinct, 64);
        if (s.array_size < 1) s.array_size = 1;
        s.cpus_per_task = cpus_per_task;
        s.partition = partition;
        s.time = time_limit;
        s.objectives = split_commas(objectives);
        s.import_args = import_option_words(import_options);
        s.points = plan.points.size();
        s.distinct = distinct;
        std::error_code ec;
        fs::create_directories(fs::path(dir) / "slurm", ec);  // Slurm opens the task logs there
        if (ec) throw InputError("-o " + dir + ": cannot create " + dir + "/slurm: " + ec.message());
        std::ofstream f(slurm_path, std::ios::binary);
        if (!(f << slurm_script(s)) || !f.flush()) throw InputError("--emit-slurm " + slurm_path + ": cannot write");
        err << "sweep: wrote " << slurm_path << ": " << s.array_size << " array tasks over " << distinct
            << " distinct points into " << dir << "; submit with: sbatch " << slurm_path << "\n";
        return kExitOk;
    }

    SweepRunOptions run;
    run.dir = dir;
    run.jobs = jobs;
    run.fail_fast = vm.count("fail-fast") > 0;
    run.shard = shard;
    run.progress = !vm.count("quiet");
    const SweepRunCounts counts = run_sweep(plan, run, err);
    if (run.progress && counts.not_run)
        err << "sweep: --fail-fast: " << counts.not_run << " points not started after a failure\n";
    if (shard.count > 1) {
        if (run.progress)
            err << "sweep: shard " << shard.index << "/" << shard.count << " done (" << counts.reused << " reused, "
                << counts.ran << " ran, " << counts.failed << " failed); 'accelsim sweep merge " << dir
                << "' writes results.csv once every shard has run\n";
        return counts.failed > 0 ? kExitFailure : kExitOk;
    }
    const SweepResults r = write_sweep_results(plan, dir, objs);
    if (run.progress) {
        print_results(err, dir, r);
        print_cpu(err, plan.points.size());
    }
    return counts.failed > 0 || r.failed > 0 ? kExitFailure : kExitOk;
}

}  // namespace

int run_sweep_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    try {
        if (!args.empty() && args[0] == "merge") return merge_command({args.begin() + 1, args.end()}, out, err);
        if (!args.empty() && args[0] == "plot") return plot_command({args.begin() + 1, args.end()}, out, err);
        return run_command(args, out, err);
    } catch (const InputError& e) {
        err << "accelsim: error: " << e.what() << "\n";
        return kExitBadInput;
    } catch (const po::error& e) {
        err << "accelsim: error: sweep: " << e.what() << "\n" << "try 'accelsim sweep --help'\n";
        return kExitBadInput;
    } catch (const std::exception& e) {
        err << "accelsim: sweep failed: " << e.what() << "\n";
        return kExitFailure;
    }
}

}  // namespace accelsim
