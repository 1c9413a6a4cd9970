#include "sim/advise/advise_command.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <filesystem>
#include <fstream>
#include <optional>

#include "sim/advise/advice.h"
#include "sim/cli/exit_codes.h"
#include "sim/config/config_loader.h"
#include "sim/input_error.h"
#include "sim/output/output_file.h"
#include "sim/sweep/sweep_files.h"
#include "sim/sweep/sweep_plan.h"
#include "sim/sweep/sweep_results.h"
#include "sim/sweep/sweep_runner.h"
#include "sim/sweep/sweep_spec.h"

namespace accelsim {

namespace po = boost::program_options;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* kAdviseUsage =
    "usage: accelsim advise --trace MODEL|FILE --configs A,B,... [--batch 1,2,4,...] [--dtype bf16,int8,...]\n"
    "                       [--latency-ms X] [--rank-by cost|throughput|energy|latency] [-j N] [-o DIR]\n"
    "                       [--json FILE] [--csv FILE] [--host-io]\n"
    "\n"
    "Simulates every chip x batch x dtype (each in its own process, as a sweep; finished points are\n"
    "reused when advise runs again with the same DIR) and ranks the chips: for each, the best batch\n"
    "and dtype under the latency bound, its latency, throughput, cost per million inferences, energy\n"
    "per inference, its bound and why. MODEL is a trace generator (bert, resnet50, gpt2; options with\n"
    "--trace-option KEY=VALUE, as 'accelsim trace MODEL --KEY VALUE'), whose batch --batch varies; a\n"
    "trace FILE holds a fixed batch (--batch N says how many inferences it is, default 1). See\n"
    "docs/advise.md.\n";

std::vector<std::int64_t> parse_batches(const std::string& text) {
    std::vector<std::int64_t> out;
    for (const std::string& s : split_commas(text)) {
        std::size_t used = 0;
        long long v = 0;
        try {
            v = std::stoll(s, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != s.size() || v < 1 || v > 1 << 20)
            throw InputError("--batch: '" + s + "' is not a batch size (an integer from 1 to 1048576)");
        out.push_back(v);
    }
    if (out.empty()) throw InputError("--batch: no batch sizes given");
    return out;
}

bool is_generator(const std::string& trace) { return trace == "bert" || trace == "resnet50" || trace == "gpt2"; }

// A number or a bare word, as the sweep spec's generator options take them.
json option_value(const std::string& text) {
    try {
        std::size_t used = 0;
        const long long v = std::stoll(text, &used);
        if (used == text.size()) return json(v);
    } catch (const std::exception&) {
    }
    return json(text);
}

}  // namespace

int run_advise_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    std::string trace, configs_text, batch_text, dtype_text, rank_text = "cost", dir, json_path, csv_path;
    std::vector<std::string> trace_options;
    double latency_ms = 0;
    int jobs = available_cores();
    po::options_description options("advise options");
    options.add_options()("help,h", "print this help")("trace", po::value(&trace), "bert, resnet50, gpt2 or a trace file")(
        "trace-option", po::value(&trace_options)->composing(), "KEY=VALUE for the trace generator (repeatable)")(
        "configs", po::value(&configs_text), "chip configs, comma-separated (e.g. configs/tpu_v4.json,configs/a100.json)")(
        "batch", po::value(&batch_text), "batch sizes, comma-separated (generator traces; default 1)")(
        "dtype", po::value(&dtype_text), "dtypes, comma-separated (default: each config's default_dtype)")(
        "latency-ms", po::value(&latency_ms), "latency bound per batch, in milliseconds (default: none)")(
        "rank-by", po::value(&rank_text), "cost (default), throughput, energy or latency")(
        "jobs,j", po::value(&jobs), "points simulated at once (default: cores)")(
        "output,o", po::value(&dir), "folder for the points (default: advise-<trace>)")(
        "json", po::value(&json_path), "write the advice as JSON")("csv", po::value(&csv_path), "write the advice as CSV")(
        "host-io", "count copying each batch's input to the chip and its output back over the chip's host link "
                   "(host.io; every config must give host.link_gb_per_s)")(
        "quiet,q", "no progress output");
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(options).run(), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        err << "accelsim: error: advise: " << e.what() << "\n" << kAdviseUsage;
        return kExitBadInput;
    }
    if (vm.count("help")) {
        out << kAdviseUsage << "\n" << options;
        return kExitOk;
    }
    try {
        if (trace.empty()) throw InputError("advise: --trace is required (bert, resnet50, gpt2 or a trace file)");
        const std::vector<std::string> configs = split_commas(configs_text);
        if (configs.empty()) throw InputError("advise: --configs is required (one or more chip configs)");
        if (jobs < 1 || jobs > 1024) throw InputError("advise: --jobs " + std::to_string(jobs) + ": expected 1 to 1024");
        if (vm.count("latency-ms") && !(latency_ms > 0))
            throw InputError("advise: --latency-ms must be a positive number of milliseconds");
        const RankBy rank_by = parse_rank_by(rank_text);
        const bool generated = is_generator(trace);
        std::vector<std::int64_t> batches = batch_text.empty() ? std::vector<std::int64_t>{1} : parse_batches(batch_text);
        if (!generated) {
            if (!fs::is_regular_file(trace))
                throw InputError("advise: --trace '" + trace + "' is neither a trace generator (bert, resnet50, gpt2) "
                                 "nor a file");
            if (batches.size() != 1)
                throw InputError("advise: --batch: a trace file holds one batch; give one value, how many inferences "
                                 "the trace is (or use a generator: --trace bert)");
            if (!trace_options.empty()) throw InputError("advise: --trace-option applies to trace generators only");
        }
        const std::vector<std::string> dtypes = split_commas(dtype_text);
        const bool host_io = vm.count("host-io") > 0;
        if (host_io)
            for (const std::string& c : configs)
                if (!(load_config(c, {}).host.link_gb_per_s > 0))
                    throw InputError("advise: --host-io: " + c +
                                     " gives no host link (host.link_gb_per_s is 0): leave the chip out, or give "
                                     "its link in a config that extends it (docs/host.md)");
        if (dir.empty()) dir = "advise-" + fs::path(trace).stem().string();
        // Outputs are checked and opened before anything runs.
        std::vector<NamedPath> inputs;
        for (const std::string& c : configs) inputs.push_back({"--configs", c});
        if (!generated) inputs.push_back({"--trace", trace});
        check_outputs_are_distinct({{"--json", json_path}, {"--csv", csv_path}}, inputs);
        std::optional<OutputFile> json_file, csv_file;
        if (!json_path.empty()) json_file.emplace("--json", json_path);
        if (!csv_path.empty()) csv_file.emplace("--csv", csv_path);

        // The sweep spec: configs x traces (generator batches) x the dtype axis.
        json spec;
        spec["name"] = "advise-" + fs::path(trace).stem().string();
        json config_list = json::array();
        for (const std::string& c : configs) config_list.push_back(fs::absolute(c).lexically_normal().string());
        spec["configs"] = config_list;
        if (generated) {
            json opts = json::object();
            for (const std::string& kv : trace_options) {
                const auto eq = kv.find('=');
                if (eq == std::string::npos || eq == 0)
                    throw InputError("advise: --trace-option '" + kv + "': expected KEY=VALUE");
                if (kv.substr(0, eq) == "batch") throw InputError("advise: give the batch sizes with --batch");
                opts[kv.substr(0, eq)] = option_value(kv.substr(eq + 1));
            }
            opts["batch"] = batches;
            spec["traces"] = json::array({json{{trace, opts}}});
        } else {
            spec["traces"] = json::array({fs::absolute(trace).lexically_normal().string()});
        }
        if (!dtypes.empty()) spec["axes"]["default_dtype"] = dtypes;
        if (host_io) spec["axes"]["host.io"] = json::array({true});
        fs::create_directories(dir);
        const std::string spec_path = (fs::path(dir) / "advise.json").string();
        write_file_atomically(spec_path, spec.dump(2) + "\n");

        const SweepSpec loaded = load_sweep_spec(spec_path);
        const SweepPlan plan = plan_sweep(loaded);
        SweepRunOptions run;
        run.dir = dir;
        run.jobs = jobs;
        run.progress = !vm.count("quiet");
        run_sweep(plan, run, err);
        const SweepResults results = collect_results(plan, dir, {});

        // One advice point per plan point.
        const auto batch_column = std::find(plan.trace_param_names.begin(), plan.trace_param_names.end(), "batch");
        std::vector<AdvicePoint> points;
        for (std::size_t i = 0; i < plan.points.size(); ++i) {
            const SweepPoint& sp = plan.points[i];
            const SweepRow& row = results.rows[i];
            AdvicePoint p;
            p.chip = sp.config_label;
            p.batch = batches.front();
            if (batch_column != plan.trace_param_names.end()) {
                const std::string& b = sp.trace_params[static_cast<std::size_t>(batch_column - plan.trace_param_names.begin())];
                if (!b.empty()) p.batch = std::stoll(b);
            }
            const auto dtype_axis = std::find(plan.axis_names.begin(), plan.axis_names.end(), "default_dtype");
            if (dtype_axis != plan.axis_names.end())
                p.dtype = sp.axis_values[static_cast<std::size_t>(dtype_axis - plan.axis_names.begin())];
            p.ok = row.status == "ok";
            p.failure = row.message;
            if (p.ok) {
                const json t = json::parse(read_whole_file(totals_file(plan.store_for(dir), sp.hash)));
                const json& totals = t.at("totals");
                p.seconds = totals.at("seconds").get<double>();
                p.utilization = totals.at("utilization").get<double>();
                p.ops = totals.at("ops").get<std::int64_t>();
                p.ops_without_cycle_model = totals.value("ops_without_cycle_model", std::int64_t{0});
                const double cycles = totals.at("cycles").get<double>();
                for (const auto& [bound, c] : totals.at("cycles_by_bound").items())
                    p.bound_shares[bound] = cycles > 0 ? c.get<double>() / cycles : 0.0;
                for (const auto& [level, b] : totals.at("bytes").items()) p.bytes[level] = b.get<double>();
                if (t.at("config").contains("cost_per_hour_usd"))
                    p.cost_per_hour_usd = t["config"]["cost_per_hour_usd"].get<double>();
                if (t.at("config").contains("tdp_w")) p.tdp_w = t["config"]["tdp_w"].get<double>();
                if (p.dtype.empty()) {
                    const json report_config =
                        json::parse(read_whole_file(point_file(plan.store_for(dir), sp.hash)))["config"];
                    p.dtype = report_config.value("default_dtype", std::string());
                }
            }
            points.push_back(std::move(p));
        }
        const Advice advice =
            advise(points, rank_by, vm.count("latency-ms") ? std::optional<double>(latency_ms / 1e3) : std::nullopt);
        write_advice_table(out, advice);
        if (json_file) {
            json_file->stream() << advice_json(advice).dump(2) << "\n";
            json_file->commit();
        }
        if (csv_file) {
            write_advice_csv(csv_file->stream(), advice);
            csv_file->commit();
        }
        return results.failed > 0 ? kExitFailure : kExitOk;
    } catch (const InputError& e) {
        err << "accelsim: error: " << e.what() << "\n";
        return kExitBadInput;
    }
}

}  // namespace accelsim
