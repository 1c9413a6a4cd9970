// Sweep throughput: N (default 1000) distinct TPU-v4 BERT-base points (timing only, a Latin
// hypercube over MXU size, HBM bandwidth and dataflow) run by `accelsim sweep -j 2` into a fresh
// folder. Reports the wall time of the whole sweep and the driver's own CPU per point (planning,
// forking, bookkeeping, results; the driver prints it from getrusage). Targets (issue 12): 1000
// points in under 5 minutes on the 2-core machine, driver under 20 ms per point.
//   build/bench/sweep_bench [POINTS] [JOBS]
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

int main(int argc, char** argv) {
    const int points = argc > 1 ? std::atoi(argv[1]) : 1000;
    const std::string jobs = argc > 2 ? argv[2] : "2";
    const fs::path accelsim = fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "accelsim";
    if (!fs::exists(accelsim)) {
        std::cerr << "sweep_bench: " << accelsim << " not found (build the accelsim target)\n";
        return 1;
    }
    char tmpl[] = "/tmp/accelsim-sweep-bench.XXXXXX";
    if (!::mkdtemp(tmpl)) return 1;
    const fs::path dir = tmpl;
    const std::string root = ACCELSIM_SOURCE_DIR;
    std::ofstream(dir / "spec.json") << R"({"name": "bench", "configs": ")" << root << R"(/configs/tpu_v4.json",
  "traces": [")" << root << R"(/traces/bert_base.trace"], "mode": "lhs", "points": )" << points << R"(, "seed": 1,
  "axes": {"mxu": {"keys": ["mxu.rows", "mxu.cols"], "from": 64, "to": 256},
           "hbm.data_rate_gbps": {"from": 1.2, "to": 4.8},
           "mxu.dataflow": ["ws", "os", "is"]}})";

    const std::string command = "'" + accelsim.string() + "' sweep '" + (dir / "spec.json").string() + "' -j " + jobs +
                                " -o '" + (dir / "out").string() + "' 2>'" + (dir / "log").string() + "'";
    const auto start = std::chrono::steady_clock::now();
    const int status = std::system(command.c_str());
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::ifstream log_file(dir / "log");
    std::stringstream log;
    log << log_file.rdbuf();
    // Exit 1 means some point failed (recorded in results.csv); the timing still stands.
    if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) {
        std::cerr << "sweep_bench: the sweep failed:\n" << log.str();
        return 1;
    }
    std::smatch m;
    const std::string text = log.str();
    if (!std::regex_search(text, m, std::regex("driver CPU ([0-9.]+) s \\(([0-9.]+) ms per point\\), points' processes ([0-9.]+) s"))) {
        std::cerr << "sweep_bench: no driver CPU line in the log:\n" << text;
        return 1;
    }
    std::printf("sweep of %d TPU-v4 BERT-base points, -j %s: %.1f s wall (%.3f s per point), target < 300 s for 1000\n",
                points, jobs.c_str(), wall, wall / points);
    std::smatch f;
    if (std::regex_search(text, f, std::regex("rows: ([0-9]+) ok, ([0-9]+) failed")))
        std::printf("points ok: %s, failed: %s (see the failures in results.csv)\n", f[1].str().c_str(), f[2].str().c_str());
    std::printf("driver CPU: %s s = %s ms per point (target < 20 ms); points' processes: %s s CPU (%.3f s per point)\n",
                m[1].str().c_str(), m[2].str().c_str(), m[3].str().c_str(), std::atof(m[3].str().c_str()) / points);
    fs::remove_all(dir);
    return 0;
}
