#include "sim/engine/progress.h"

#include <cstdio>
#include <iomanip>
#include <sstream>

namespace accelsim {

namespace {
constexpr double kQuietSeconds = 1.0;       // a run shorter than this shows nothing
constexpr double kTerminalRefresh = 0.1;    // seconds between rewrites of a terminal line
constexpr double kLogRefresh = 5.0;         // seconds between lines in a log
const char* const kClearToEnd = "\033[K";   // ANSI: erase from the cursor to the end of the line

std::string seconds_text(double s) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(s < 100 ? 1 : 0) << s << " s";
    return out.str();
}
}  // namespace

double ProgressLine::steady_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

ProgressLine::ProgressLine(std::ostream& out, bool terminal, Clock clock)
    : out_(out), terminal_(terminal), clock_(std::move(clock)), started_(clock_()) {}

ProgressLine::~ProgressLine() { finish(); }

std::string ProgressLine::text(std::size_t index, std::size_t total, const Op& op, double elapsed_seconds,
                               double done_share) {
    std::string line = "op " + std::to_string(index + 1) + " of " + std::to_string(total) + ": " + op.name + " (" +
                       std::string(to_string(op.kind)) + "), " + seconds_text(elapsed_seconds) + " elapsed";
    if (done_share > 0 && done_share < 1)
        line += ", about " + seconds_text(elapsed_seconds * (1 - done_share) / done_share) + " left";
    return line;
}

void ProgressLine::op_starts(std::size_t index, std::size_t total, const Op& op, double done_share) {
    const double now = clock_();
    const double elapsed = now - started_;
    if (elapsed < kQuietSeconds) return;
    if (last_shown_ >= 0 && now - last_shown_ < (terminal_ ? kTerminalRefresh : kLogRefresh)) return;
    last_shown_ = now;
    if (terminal_) {
        out_ << '\r' << text(index, total, op, elapsed, done_share) << kClearToEnd << std::flush;
        line_on_screen_ = true;
    } else {
        out_ << "accelsim: " << text(index, total, op, elapsed, done_share) << '\n' << std::flush;
    }
}

void ProgressLine::finish() {
    if (!line_on_screen_) return;
    out_ << '\r' << kClearToEnd << std::flush;
    line_on_screen_ = false;
}

}  // namespace accelsim
