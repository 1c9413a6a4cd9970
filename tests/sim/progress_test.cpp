// The progress line (sim/engine/progress.h) on a clock the test sets: silent for the first second,
// the time left scaled from the work done, a terminal line rewritten in place and cleared at the
// end, a log line at most every 5 s.
#include <gtest/gtest.h>

#include <sstream>

#include "sim/engine/engine.h"
#include "sim/engine/progress.h"

namespace accelsim::progress_test {
namespace {

Op op_named(const std::string& name, OpKind kind) {
    Op op;
    op.name = name;
    op.kind = kind;
    return op;
}

TEST(ProgressLine, TimeLeftIsElapsedScaledByTheWorkLeft) {
    // 2 s for a quarter of the work: three quarters left take 2 x 3 = 6 s.
    EXPECT_EQ(ProgressLine::text(2, 10, op_named("fc1", OpKind::matmul), 2.0, 0.25),
              "op 3 of 10: fc1 (matmul), 2.0 s elapsed, about 6.0 s left");
    // Nothing done yet: no estimate; minutes are whole seconds.
    EXPECT_EQ(ProgressLine::text(0, 156, op_named("emb", OpKind::add), 125.4, 0.0),
              "op 1 of 156: emb (add), 125 s elapsed");
}

TEST(ProgressLine, ATerminalLineIsRewrittenInPlaceAfterTheFirstSecondAndClearedAtTheEnd) {
    double now = 100.0;
    std::ostringstream out;
    {
        ProgressLine progress(out, true, [&now] { return now; });
        now = 100.5;  // under a second: silent
        progress.op_starts(0, 4, op_named("a", OpKind::relu), 0.0);
        EXPECT_EQ(out.str(), "");
        now = 102.0;
        progress.op_starts(1, 4, op_named("b", OpKind::matmul), 0.5);
        EXPECT_EQ(out.str(), "\rop 2 of 4: b (matmul), 2.0 s elapsed, about 2.0 s left\033[K");
        now = 102.05;  // within 0.1 s of the last line: not rewritten
        progress.op_starts(2, 4, op_named("c", OpKind::relu), 0.6);
        EXPECT_EQ(out.str(), "\rop 2 of 4: b (matmul), 2.0 s elapsed, about 2.0 s left\033[K");
        progress.finish();
        EXPECT_EQ(out.str(), "\rop 2 of 4: b (matmul), 2.0 s elapsed, about 2.0 s left\033[K\r\033[K");
    }
    // finish() cleared it once; the destructor adds nothing.
    EXPECT_EQ(out.str(), "\rop 2 of 4: b (matmul), 2.0 s elapsed, about 2.0 s left\033[K\r\033[K");
}

TEST(ProgressLine, ALogGetsWholeLinesAtMostEveryFiveSeconds) {
    double now = 0.0;
    std::ostringstream out;
    ProgressLine progress(out, false, [&now] { return now; });
    now = 1.0;
    progress.op_starts(0, 3, op_named("a", OpKind::matmul), 0.0);
    now = 5.5;  // 4.5 s after the last line
    progress.op_starts(1, 3, op_named("b", OpKind::matmul), 0.5);
    now = 6.0;
    progress.op_starts(2, 3, op_named("c", OpKind::softmax), 0.75);
    progress.finish();  // nothing to clear in a log
    EXPECT_EQ(out.str(),
              "accelsim: op 1 of 3: a (matmul), 1.0 s elapsed\n"
              "accelsim: op 3 of 3: c (softmax), 6.0 s elapsed, about 2.0 s left\n");
}

}  // namespace
}  // namespace accelsim::progress_test

// The share the progress line scales the elapsed time by: the work done over all work, until ops
// reuse an earlier op's outcome (no host time); then the work the run simulated, with the work left
// expected to be simulated in the same proportion. Four ops of 10 units each:
TEST(ProgressShare, ReusedOpsLeaveTheRateAndScaleTheWorkLeft) {
    const std::vector<double> before = {0, 10, 20, 30, 40};
    EXPECT_DOUBLE_EQ(accelsim::progress_share(before, 0, 0), 0.0);
    EXPECT_DOUBLE_EQ(accelsim::progress_share(before, 2, 20), 0.5);  // nothing reused: 20 of 40
    // Op 2 reused: 20 of 30 simulated (2/3); 10 left, 20/3 of it expected simulated:
    // 20 / (20 + 20/3) = 0.75, so the time left is a third of the elapsed time, not half.
    EXPECT_DOUBLE_EQ(accelsim::progress_share(before, 3, 20), 0.75);
}

