// Benchmark (run by hand, not by ctest): BERT-base (traces/bert_base.trace) on tpu_v4, whole
// accelsim processes, timing only and with --validate, against the same GEMMs computed in plain
// Eigen (fp32, one thread, Eigen's threads off; operands made before the clock starts, so only
// the GEMMs are timed). Targets: timing only under 1 s; --validate at most 2.5x the Eigen GEMMs
// (issue 15). --validate also runs pinned to one CPU, where the chip checks inline (no worker
// thread: tpu_validation.h), which gives the second core's speed-up.
//
// Each round runs every binary once per mode, alternating binaries, then the Eigen GEMMs; the
// figures are medians over the rounds. Several binaries compare builds (before/after) on the same
// machine state, e.g. `tpu_bench 3 /tmp/accelsim_before build/accelsim`.
//   usage: tpu_bench [rounds=3] [accelsim binary...]   (default: this build's accelsim)
#include <systemc>  // declares sc_main extern "C"; libsystemc needs the symbol
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "sim/config/config_loader.h"
#include "sim/trace/trace_reader.h"

int sc_main(int, char**) { return 0; }

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct ProcessTime {
    double wall = 0, cpu = 0;  // seconds; cpu = user + system of the child
};

// Runs `args` as a child with its output discarded; one_cpu pins it to the first CPU it may use.
ProcessTime run_process(const std::vector<std::string>& args, bool one_cpu) {
    const auto t0 = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid < 0) {
        std::perror("fork");
        std::exit(2);
    }
    if (pid == 0) {
        if (one_cpu) {
            cpu_set_t allowed, first;
            sched_getaffinity(0, sizeof allowed, &allowed);
            CPU_ZERO(&first);
            for (int c = 0; c < CPU_SETSIZE; ++c)
                if (CPU_ISSET(c, &allowed)) {
                    CPU_SET(c, &first);
                    break;
                }
            sched_setaffinity(0, sizeof first, &first);
        }
        const int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        std::vector<char*> argv;
        for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execv(argv[0], argv.data());
        std::perror(argv[0]);
        _exit(127);
    }
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    ProcessTime t;
    t.wall = seconds_since(t0);
    t.cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
            1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "%s failed (status %d)\n", args[0].c_str(), status);
        std::exit(1);
    }
    return t;
}

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct EigenGemm {
    Mat a, b, c;  // one batch's operands and output
    std::int64_t batch = 1;
};

// The trace's GEMMs (every GEMM-like op, convolutions as their implicit GEMM), with random fp32
// operands made here, outside the timed part.
std::vector<EigenGemm> make_gemms(const std::vector<accelsim::Op>& ops) {
    std::vector<EigenGemm> gemms;
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (const auto& op : ops) {
        if (!accelsim::is_gemm_like(op.kind)) continue;
        const accelsim::GemmShape g = op.as_gemm();
        EigenGemm e;
        e.a.resize(g.m, g.k);
        e.b.resize(g.k, g.n);
        e.c.resize(g.m, g.n);
        for (Eigen::Index i = 0; i < e.a.size(); ++i) e.a.data()[i] = uniform(rng);
        for (Eigen::Index i = 0; i < e.b.size(); ++i) e.b.data()[i] = uniform(rng);
        e.batch = g.batch;
        gemms.push_back(std::move(e));
    }
    return gemms;
}

double thread_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Wall and CPU seconds of the GEMMs.
ProcessTime time_gemms(std::vector<EigenGemm>& gemms) {
    const double cpu0 = thread_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    float sink = 0;
    for (EigenGemm& e : gemms)
        for (std::int64_t i = 0; i < e.batch; ++i) {
            e.c.noalias() = e.a * e.b;
            sink += e.c(0, 0);
        }
    ProcessTime t;
    t.wall = seconds_since(t0);
    t.cpu = thread_cpu_seconds() - cpu0;
    if (sink == 12345.0f) std::printf(" ");  // keeps the products
    return t;
}

double load_average() {
    double load = -1;
    if (FILE* f = std::fopen("/proc/loadavg", "r")) {
        if (std::fscanf(f, "%lf", &load) != 1) load = -1;
        std::fclose(f);
    }
    return load;
}

}  // namespace

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
    std::vector<std::string> binaries;
    for (int i = 2; i < argc; ++i) binaries.push_back(argv[i]);
    if (binaries.empty()) binaries.push_back(ACCELSIM_BINARY);
    Eigen::setNbThreads(1);
    const std::string root = ACCELSIM_SOURCE_DIR;
    const std::string config_path = root + "/configs/tpu_v4.json", trace_path = root + "/traces/bert_base.trace";
    const accelsim::ChipConfig config = accelsim::load_config(config_path);
    const auto ops = accelsim::read_trace(trace_path, config.default_dtype);
    std::vector<EigenGemm> gemms = make_gemms(ops);
    double macs = 0;
    for (const auto& op : ops)
        if (accelsim::is_gemm_like(op.kind)) macs += static_cast<double>(op.macs());

    struct Times {
        std::vector<double> timing, validate, validate_cpu, validate_one_cpu;
    };
    std::vector<Times> times(binaries.size());
    std::vector<double> eigen, eigen_cpu, loads;
    const std::vector<std::string> run = {"--config", config_path, "--trace", trace_path, "-q"};
    for (int r = 0; r < rounds; ++r) {
        loads.push_back(load_average());
        for (std::size_t b = 0; b < binaries.size(); ++b) {
            std::vector<std::string> args = {binaries[b]};
            args.insert(args.end(), run.begin(), run.end());
            times[b].timing.push_back(run_process(args, false).wall);
            args.push_back("--validate");
            const ProcessTime v = run_process(args, false);
            times[b].validate.push_back(v.wall);
            times[b].validate_cpu.push_back(v.cpu);
            times[b].validate_one_cpu.push_back(run_process(args, true).wall);
        }
        const ProcessTime e = time_gemms(gemms);
        eigen.push_back(e.wall);
        eigen_cpu.push_back(e.cpu);
    }
    const double eigen_s = median(eigen);
    std::printf("BERT-base on tpu_v4 (%zu ops, %zu GEMMs, %.3g MACs), medians of %d rounds, load average %.1f-%.1f:\n",
                ops.size(), gemms.size(), macs, rounds, *std::min_element(loads.begin(), loads.end()),
                *std::max_element(loads.begin(), loads.end()));
    // CPU seconds say what the work costs whatever the load; wall seconds are the target's measure.
    const double eigen_cpu_s = median(eigen_cpu);
    std::printf("  same GEMMs in plain Eigen (fp32, 1 thread): %.3f s wall, %.3f s CPU\n", eigen_s, eigen_cpu_s);
    for (std::size_t b = 0; b < binaries.size(); ++b) {
        const Times& t = times[b];
        const double v = median(t.validate), v1 = median(t.validate_one_cpu);
        std::printf("  %s\n", binaries[b].c_str());
        std::printf("    timing only:               %.3f s wall (target < 1 s)\n", median(t.timing));
        std::printf("    --validate:                %.3f s wall, %.3f s CPU; %.2fx the Eigen GEMMs' wall "
                    "(target <= 2.5x), CPU %.2fx theirs\n",
                    v, median(t.validate_cpu), v / eigen_s, median(t.validate_cpu) / eigen_cpu_s);
        std::printf("    --validate on one CPU:     %.3f s wall, %.2fx the Eigen GEMMs; second core: %.2fx faster\n",
                    v1, v1 / eigen_s, v1 / v);
    }
    return 0;
}
