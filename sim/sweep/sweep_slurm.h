#pragma once
// `accelsim sweep SPEC --emit-slurm FILE`: an sbatch script whose job-array tasks each run one
// shard of the sweep into one shared DIR (`--shard auto`), and whose first task submits the merge
// job (`accelsim sweep merge DIR`) with a dependency on the whole array, so results.csv appears
// once every task has ended, whether or not all succeeded.
#include <string>
#include <vector>

namespace accelsim {

struct SlurmScriptOptions {
    std::string name;          // the sweep's name (job names)
    std::string accelsim;      // absolute path of the accelsim executable
    std::string workdir;       // absolute: where relative paths (SPEC, DIR) are resolved
    std::string spec, dir;     // as given on the command line
    std::string store;         // --store, if given
    std::size_t array_size = 1;
    int cpus_per_task = 1;     // also each task's -j
    std::string partition, time;  // empty: the cluster's defaults
    std::vector<std::string> objectives;  // passed to the merge job
    std::vector<std::string> import_args; // --dim NAME=N ... --strict, passed to every task
    std::size_t points = 0, distinct = 0;  // for the header comment
};

std::string slurm_script(const SlurmScriptOptions& options);

// A word quoted for POSIX sh.
std::string shell_quote(const std::string& word);

}  // namespace accelsim
