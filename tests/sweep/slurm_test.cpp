// The Slurm path against a real Slurm: munged, slurmctld and slurmd started by hand on this
// machine (tests/sweep/local_slurm.sh), the script `--emit-slurm` writes submitted with
// `sbatch --wait`, and the merged results.csv compared byte for byte with a local -j 2 run. If
// Slurm cannot start, the test fails and says why.
#include <stdlib.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "../accelsim_process.h"

namespace accelsim_test::slurm_test {
namespace {

Result shell(const std::string& command) { return run_shell(command, "shell"); }

// Stops the daemons (and removes the folder) however the test ends.
struct LocalSlurm {
    std::string dir, script;
    ~LocalSlurm() {
        if (dir.empty()) return;
        std::system(("bash '" + script + "' stop '" + dir + "' >/dev/null 2>&1").c_str());
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
};

std::string task_logs(const fs::path& dir) {
    std::string logs;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) logs += "--- " + e.path().string() + ":\n" + slurp(e.path());
    return logs;
}

TEST(SweepSlurm, JobArrayOnALocalSlurmEqualsALocalRun) {
    LocalSlurm slurm;
    slurm.script = std::string(ACCELSIM_SOURCE_DIR) + "/tests/sweep/local_slurm.sh";
    // A short folder name: munged's socket path must stay under the 108-byte Unix socket limit.
    char cluster[] = "/tmp/accelsim-slurm.XXXXXX";
    ASSERT_NE(::mkdtemp(cluster), nullptr);
    slurm.dir = cluster;
    const Result start = shell("timeout 300 bash '" + slurm.script + "' start '" + slurm.dir + "'");
    ASSERT_EQ(start.exit_code, 0) << "Slurm could not start on this machine:\n" << start.err;
    std::string conf = start.out;
    while (!conf.empty() && conf.back() == '\n') conf.pop_back();
    ::setenv("SLURM_CONF", conf.c_str(), 1);

    const fs::path dir = scratch_dir("sweep");
    std::string spec_text = R"({"name": "slurm_check", "configs": "@ROOT@/configs/tpu_v4.json",
        "traces": ["@ROOT@/traces/tiny_gemm.trace", {"bert": {"size": "base", "layers": 1, "seq": [64, 128]}}],
        "objectives": ["latency", "mxu.rows"], "axes": {"mxu.rows": [64, 128]}})";
    for (std::size_t at; (at = spec_text.find("@ROOT@")) != std::string::npos;) spec_text.replace(at, 6, ACCELSIM_SOURCE_DIR);
    const fs::path spec = dir / "spec.json";
    write_file(spec, spec_text);
    const fs::path local = dir / "local", shared = dir / "shared", job = dir / "job.sbatch";

    const Result l = run("sweep '" + spec.string() + "' -j 2 -q -o '" + local.string() + "'");
    ASSERT_EQ(l.exit_code, 0) << l.err;
    const Result emit = run("sweep '" + spec.string() + "' -o '" + shared.string() + "' --emit-slurm '" + job.string() +
                            "' --array-size 3 --time 00:05:00");
    ASSERT_EQ(emit.exit_code, 0) << emit.err;
    EXPECT_TRUE(contains(slurp(job), "#SBATCH --array=0-2"));
    EXPECT_FALSE(fs::exists(shared / "points"));  // emitting runs nothing

    const Result submitted = shell("timeout 120 sbatch --wait '" + job.string() + "'");
    ASSERT_EQ(submitted.exit_code, 0) << "sbatch --wait failed:\n"
                                      << submitted.out << submitted.err << task_logs(shared / "slurm");
    // The merge job runs after the array; wait for what it writes.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    while (!fs::exists(shared / "results.csv") && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ASSERT_TRUE(fs::exists(shared / "results.csv")) << "the merge job wrote no results.csv:\n" << task_logs(shared / "slurm");
    EXPECT_EQ(slurp(shared / "results.csv"), slurp(local / "results.csv"));
    // Three array tasks each ran a shard of the six distinct points.
    const std::string logs = task_logs(shared / "slurm");
    for (const char* shard : {"shard 0/3: 2;", "shard 1/3: 2;", "shard 2/3: 2;"}) EXPECT_TRUE(contains(logs, shard)) << logs;
}

}  // namespace
}  // namespace accelsim_test::slurm_test
