#pragma once
// Runs a sweep's points: each in its own forked process (run_isolated_all, as `accelsim compare`
// does), at most `jobs` at a time. The child itself writes DIR/points/<hash>.json atomically as
// soon as its report exists, so killing the driver loses no finished point; points whose file
// exists are reused instead of run again.
#include <cstddef>
#include <ostream>
#include <string>

#include "sim/sweep/sweep_plan.h"

namespace accelsim {

// Shard `index` of `count` (0-based): the distinct points whose position j in plan order has
// j % count == index.
struct Shard {
    std::size_t index = 0, count = 1;
};

// "I/N" (0 <= I < N), or "auto": SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of
// SLURM_ARRAY_TASK_COUNT. Throws InputError.
Shard parse_shard(const std::string& text);

struct SweepRunOptions {
    std::string dir;
    int jobs = 1;
    bool fail_fast = false;
    Shard shard;
    bool progress = true;  // the progress line on the log stream
};

struct SweepRunCounts {
    std::size_t points = 0, distinct = 0, in_shard = 0, reused = 0, ran = 0, failed = 0, not_run = 0;
};

// Creates DIR (points/, failed/, traces/, plan.json), then runs the shard's points not yet done.
SweepRunCounts run_sweep(const SweepPlan& plan, const SweepRunOptions& options, std::ostream& log);

// The number of online cores (the default of -j).
int available_cores();

}  // namespace accelsim
