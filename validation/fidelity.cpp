// Fidelity against measured A100s: simulates every row of validation/reference/a100_calibration.csv
// (GEMMs and softmax on configs/a100.json, BERT-base on configs/a100_40gb.json, the parts they
// were measured on) and prints reference, simulated and signed error per row and the mean
// absolute error. docs/fidelity.md shows the output of a whole run and explains the errors.
//
// How each source launched its ops is a property of its measurement method, set once per source
// (kSources), never per row: LLMCompass timed one PyTorch call and a synchronize (host.launch
// eager); TensorRT's BERT demo runs an engine (host.launch engine). Everything else is the shipped
// config.
//
//   validate_fidelity            the small rows (ctest runs this: about a minute of one core)
//   validate_fidelity --all      every row (8192^3 alone takes minutes; run by hand)
//   validate_fidelity --csv F    also write the table as CSV
//   validate_fidelity --case C   only the rows of case C (e.g. --all --case bert_base_trt_fp16)
//
// What ctest checks of the small rows is independent of the calibration: no simulated latency
// may beat the chip's published peaks (312 TFLOP/s fp16 dense, 2039 GB/s; A100 whitepaper and
// datasheet) applied to the op's FLOPs and compulsory bytes. The errors themselves are reported,
// not asserted: they are what issue work on host overhead, fusion and kernels moves.
#include <systemc>  // declares sc_main extern "C"; libsystemc needs the symbol

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sim/config/config_loader.h"
#include "sim/engine/engine.h"
#include "sim/trace/trace_reader.h"
#include "sim/tracegen/models.h"

int sc_main(int, char**) { return 0; }

namespace {

struct Row {
    std::string kind;  // gemm_fp16, softmax_fp16, bert_base_trt_fp16
    long long m = 0, n = 0, k = 0, batch = 0;
    double reference_ms = 0;
};

std::vector<std::string> split(const std::string& line, char sep) {
    std::vector<std::string> cells;
    std::stringstream s(line);
    for (std::string cell; std::getline(s, cell, sep);) cells.push_back(cell);
    return cells;
}

long long number_or_zero(const std::string& s) { return s.empty() ? 0 : std::stoll(s); }

std::vector<Row> read_reference(const std::string& path) {
    std::ifstream f(path);
    if (!f) {
        std::fprintf(stderr, "%s: cannot read\n", path.c_str());
        std::exit(2);
    }
    std::vector<Row> rows;
    std::string line;
    std::getline(f, line);  // header: case,m_or_rows_or_seq,n_or_cols,k,batch,latency,unit,source
    while (std::getline(f, line)) {
        const auto c = split(line, ',');
        if (c.size() < 7 || c[6] != "ms") {
            std::fprintf(stderr, "%s: unexpected row '%s'\n", path.c_str(), line.c_str());
            std::exit(2);
        }
        rows.push_back({c[0], number_or_zero(c[1]), number_or_zero(c[2]), number_or_zero(c[3]),
                        number_or_zero(c[4]), std::stod(c[5])});
    }
    return rows;
}

// The row as operators, through the trace reader (the same path a user's trace takes).
std::vector<accelsim::Op> row_ops(const Row& row, accelsim::DType dtype) {
    if (row.kind == "bert_base_trt_fp16") {
        accelsim::BertParams p;
        p.seq = row.m;
        p.batch = row.batch;
        std::vector<accelsim::Op> ops = accelsim::bert_ops(p);
        for (auto& op : ops) op.dtype = dtype;
        return ops;
    }
    std::string line;
    if (row.kind == "gemm_fp16")
        line = "matmul gemm m=" + std::to_string(row.m) + " n=" + std::to_string(row.n) + " k=" + std::to_string(row.k);
    else if (row.kind == "softmax_fp16")
        line = "softmax softmax rows=" + std::to_string(row.m) + " cols=" + std::to_string(row.n);
    else {
        std::fprintf(stderr, "unknown reference case '%s'\n", row.kind.c_str());
        std::exit(2);
    }
    const std::string path = "/tmp/accelsim_fidelity_" + std::to_string(::getpid()) + ".trace";
    std::ofstream(path) << "# accelsim-trace 1\n" << line << " dtype=fp16\n";
    auto ops = accelsim::read_trace(path, dtype);
    std::remove(path.c_str());
    return ops;
}

// One source's measurement method: the config of the part it measured and its host launch mode.
struct Source {
    const char* kind;    // the csv's `case`
    const char* config;  // configs/...
    const char* launch;  // host.launch
};
const Source kSources[] = {
    {"gemm_fp16", "a100.json", "eager"},            // torch.matmul + synchronize, median (LLMCompass)
    {"softmax_fp16", "a100.json", "eager"},         // torch.softmax + synchronize, median (LLMCompass)
    {"bert_base_trt_fp16", "a100_40gb.json", "engine"},  // TensorRT engine (demo/BERT)
};

const Source& source_of(const Row& row) {
    for (const Source& s : kSources)
        if (row.kind == s.kind) return s;
    std::fprintf(stderr, "unknown reference case '%s'\n", row.kind.c_str());
    std::exit(2);
}

// Rows ctest runs: each simulates in seconds on one core.
bool small(const Row& r) {
    if (r.kind == "gemm_fp16") return r.m * r.n * r.k <= 8192LL * 512 * 512;
    if (r.kind == "softmax_fp16") return r.m * r.n <= 4096LL * 1024;
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    bool all = false;
    std::string csv_path, only_case;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--all") all = true;
        else if (a == "--csv" && i + 1 < argc) csv_path = argv[++i];
        else if (a == "--case" && i + 1 < argc) only_case = argv[++i];
        else {
            std::fprintf(stderr, "usage: validate_fidelity [--all] [--csv FILE] [--case CASE]\n");
            return 2;
        }
    }
    const std::string root = ACCELSIM_SOURCE_DIR;
    const std::vector<Row> rows = read_reference(root + "/validation/reference/a100_calibration.csv");
    std::map<std::string, accelsim::ChipConfig> configs;  // by source
    for (const Source& s : kSources)
        configs.emplace(s.kind, accelsim::load_config(root + "/configs/" + s.config,
                                                      {std::string("host.launch=") + s.launch}));

    std::ostringstream csv;
    csv << "case,m_or_rows_or_seq,n_or_cols,k,batch,config,reference_ms,simulated_ms,error\n";
    for (const Source& s : kSources) {
        // compiler.gpu_fusion stays the shipped `auto`: fused as TensorRT does for an engine, op by op
        // for eager PyTorch (docs/gpu.md "Fused graphs").
        const accelsim::ChipConfig& c = configs.at(s.kind);
        const auto fusion = accelsim::gpu::resolve_gpu_fusion(c.gpu.fusion, c.host.launch == accelsim::HostLaunch::engine);
        std::printf("%s: configs/%s, host.launch=%s, compiler.gpu_fusion=%s\n", s.kind, s.config, s.launch,
                    std::string(accelsim::gpu::to_string(fusion)).c_str());
    }
    std::printf("%-20s %28s %-10s %12s %12s %9s %9s\n", "case", "shape", "config", "measured ms", "simulated ms",
                "host ms", "error");
    int failures = 0, counted = 0;
    double sum_abs_error = 0, worst = 0;
    for (const Row& row : rows) {
        if (!all && !small(row)) continue;
        if (!only_case.empty() && row.kind != only_case) continue;
        const bool bert = row.kind == "bert_base_trt_fp16";
        const accelsim::ChipConfig& config = configs.at(source_of(row).kind);
        const auto ops = row_ops(row, accelsim::DType::fp16);
        const accelsim::RunReport report = accelsim::run_trace(config, row.kind, ops, accelsim::RunOptions{});
        const double simulated_ms = report.seconds() * 1e3;
        const double error = simulated_ms / row.reference_ms - 1;
        sum_abs_error += std::fabs(error);
        worst = std::max(worst, std::fabs(error));
        ++counted;
        const std::string shape = bert ? "seq " + std::to_string(row.m) + " batch " + std::to_string(row.batch)
                                       : std::to_string(row.m) + "x" + std::to_string(row.n) +
                                             (row.k ? "x" + std::to_string(row.k) : "");
        const double host_ms = 1e3 * static_cast<double>(report.host_cycles()) / config.clock_hz();
        std::printf("%-20s %28s %-10s %12.4f %12.4f %9.4f %+8.1f%%\n", row.kind.c_str(), shape.c_str(),
                    config.name.c_str(), row.reference_ms, simulated_ms, host_ms, 100 * error);
        std::fflush(stdout);
        csv << row.kind << ',' << row.m << ',' << row.n << ',' << row.k << ',' << row.batch << ',' << config.name
            << ',' << row.reference_ms << ',' << simulated_ms << ',' << error << '\n';

        // Independent bound: the published peaks applied to FLOPs and compulsory bytes.
        std::int64_t flops = 0, bytes = 0;
        for (const auto& op : ops) flops += op.flops(), bytes += op.compulsory_bytes();
        const double peak_bytes_per_s = bert ? 1555e9 : 2039e9;
        const double floor_ms = 1e3 * std::max(flops / 312e12, bytes / peak_bytes_per_s);
        if (simulated_ms < floor_ms * (1 - 1e-9)) {
            std::printf("FAIL  %s %s: %.4f ms beats the published-peak floor %.4f ms\n", row.kind.c_str(),
                        shape.c_str(), simulated_ms, floor_ms);
            ++failures;
        }
    }
    std::printf("%d rows: mean absolute error %.1f%%, worst %.1f%%\n", counted, 100 * sum_abs_error / counted,
                100 * worst);
    if (!csv_path.empty()) std::ofstream(csv_path) << csv.str();
    return failures == 0 ? 0 : 1;
}
