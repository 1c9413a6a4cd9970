#pragma once
// The progress line of a long run on stderr: which op of how many is simulating, the time spent
// and an estimate of the time left. A GPU-like run of BERT-base takes tens of seconds and would
// otherwise print nothing until its table. Reports are not touched: it only writes to its stream.
#include <chrono>
#include <cstddef>
#include <functional>
#include <ostream>
#include <string>

#include "models/common/op.h"

namespace accelsim {

class ProgressLine {
public:
    using Clock = std::function<double()>;  // seconds, monotonic

    // terminal: one line rewritten in place (carriage return, clear to end of line), refreshed at
    // most every 0.1 s; otherwise one line per update, at most every 5 s (logs, `--progress`).
    ProgressLine(std::ostream& out, bool terminal, Clock clock = steady_seconds);
    ~ProgressLine();  // clears a line left on a terminal (an error message then starts clean)
    ProgressLine(const ProgressLine&) = delete;
    ProgressLine& operator=(const ProgressLine&) = delete;

    // Op `index` (0-based) of `total` starts; `done_share` of the run's estimated work is behind it.
    // Nothing shows during the first second: a short run stays silent.
    void op_starts(std::size_t index, std::size_t total, const Op& op, double done_share);
    // The run is over: a terminal line is cleared.
    void finish();

    // "op 3 of 10: fc1 (matmul), 2.0 s elapsed, about 6.0 s left": the time left is the elapsed
    // time scaled by the estimated work left over the work done (none before any is done).
    static std::string text(std::size_t index, std::size_t total, const Op& op, double elapsed_seconds,
                            double done_share);

    static double steady_seconds();

private:
    std::ostream& out_;
    bool terminal_;
    Clock clock_;
    double started_;
    double last_shown_ = -1;  // when a line was last written; -1: never
    bool line_on_screen_ = false;
};

}  // namespace accelsim
