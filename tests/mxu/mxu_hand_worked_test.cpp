// Cycle counts and stats worked out by hand from the schedule in docs/mxu.md, and checked in
// both modes. Notation: R x C array, T = stream length (ws: M, is: N), F = folds.
// SCALE-Sim v2 (scalesim/compute/systolic_compute_{ws,os,is}.py) pads each fold's demand matrix:
//   ws/is: R rows of weight-load prefix + T rows + (C-1) rows drain suffix, then skewed by R-1
//          -> 2R + C + T - 2 cycles per fold;
//   os:    K rows + (C-1) suffix, skewed by R-1 -> K + R + C - 2 cycles per fold;
// folds run back to back, so with overlap_folds=false cycles = F x per-fold cycles.
#include <random>

#include <gtest/gtest.h>

#include "models/mxu/mxu.h"
#include "models/mxu/mxu_sc.h"
#include "models/mxu/mxu_stepped.h"

namespace accelsim {
namespace {

MxuParams array(int rows, int cols, MxuDataflow d, bool overlap) {
    MxuParams p;
    p.rows = rows;
    p.cols = cols;
    p.dataflow = d;
    p.overlap_folds = overlap;
    return p;
}

// Both modes must give the hand-worked number; returns the stepped stats for further checks.
MxuStats both_modes(MxuParams p, const GemmShape& s, DType dtype = DType::bf16) {
    p.mode = MxuMode::fast;
    const MxuStats fast = run_mxu_gemm(p, s, dtype).stats;
    p.mode = MxuMode::stepped;
    const MxuStats stepped = run_mxu_gemm(p, s, dtype).stats;
    EXPECT_TRUE(fast == stepped) << "fast " << fast.cycles << " stepped " << stepped.cycles;
    return stepped;
}

struct SingleTile {
    int n;                    // array n x n, GEMM n x n x n (one fold)
    std::int64_t ws, os, is;  // hand-worked cycles
};

TEST(MxuHandWorked, SingleTileEachDataflow) {
    // One fold, so overlap does not matter. With M = N = K = n on an n x n array:
    // ws: the tile loads in cycles 0..n-1; row m enters array row i in cycle n + m + i and
    //     leaves column j at the bottom in n + m + (n-1) + j; the last (m = j = n-1) leaves in
    //     cycle n + (n-1) + (n-1) + (n-1) = 4n - 3, so cycles = 4n - 2 (= 2R + C + T - 2).
    // os: PE(i,j) does its k-th MAC in cycle k + i + j; the last is k = i = j = n-1 in 3n - 3,
    //     so cycles = 3n - 2 (= K + R + C - 2).
    // is: ws on the transposed problem, T = N: 4n - 2.
    for (const SingleTile t : {SingleTile{4, 14, 10, 14}, SingleTile{8, 30, 22, 30}, SingleTile{128, 510, 382, 510}}) {
        SCOPED_TRACE(t.n);
        const GemmShape s{1, t.n, t.n, t.n};
        EXPECT_EQ(both_modes(array(t.n, t.n, MxuDataflow::ws, true), s).cycles, t.ws);
        EXPECT_EQ(both_modes(array(t.n, t.n, MxuDataflow::os, true), s).cycles, t.os);
        EXPECT_EQ(both_modes(array(t.n, t.n, MxuDataflow::is, true), s).cycles, t.is);
    }
}

TEST(MxuHandWorked, SingleTileNonSquareShapes) {
    // ws 4x4, M=5, N=4, K=4: 2*4 + 4 + 5 - 2 = 15. os 4x4, M=4, N=4, K=5: 5 + 4 + 4 - 2 = 11.
    // is 4x4, M=4, N=5, K=4: 2*4 + 4 + 5 - 2 = 15. ws 2x6 (R=2, C=6), M=3, N=6, K=2: 4 + 6 + 3 - 2 = 11.
    EXPECT_EQ(both_modes(array(4, 4, MxuDataflow::ws, true), {1, 5, 4, 4}).cycles, 15);
    EXPECT_EQ(both_modes(array(4, 4, MxuDataflow::os, true), {1, 4, 4, 5}).cycles, 11);
    EXPECT_EQ(both_modes(array(4, 4, MxuDataflow::is, true), {1, 4, 5, 4}).cycles, 15);
    EXPECT_EQ(both_modes(array(2, 6, MxuDataflow::ws, true), {1, 3, 6, 2}).cycles, 11);
    // 1x1 array: ws fold = 2 + 1 + T - 2 = T + 1; M=3,N=2,K=2 -> F=4 folds; textbook 4 * 4 = 16.
    EXPECT_EQ(both_modes(array(1, 1, MxuDataflow::ws, false), {1, 3, 2, 2}).cycles, 16);
}

TEST(MxuHandWorked, TextbookFoldsFullAndPartial) {
    // overlap_folds = false: cycles = F x per-fold cycles (SCALE-Sim).
    // ws 4x4, M=5, N=6, K=10: F = ceil(10/4) * ceil(6/4) = 3 * 2 = 6 (row tiles of 4,4,2 rows and
    // column tiles of 4,2: partial folds cost a full fold), per fold 2*4 + 4 + 5 - 2 = 15 -> 90.
    const MxuStats ws = both_modes(array(4, 4, MxuDataflow::ws, false), {1, 5, 6, 10}, DType::int8);
    EXPECT_EQ(ws.cycles, 90);
    EXPECT_EQ(ws.folds, 6);
    EXPECT_EQ(ws.compute_cycles, 6 * 5);             // T per fold
    EXPECT_EQ(ws.weight_load_stall_cycles, 6 * 4);   // R per fold
    EXPECT_EQ(ws.fill_drain_cycles, 6 * (4 + 4 - 2));
    // Mapping efficiency: used PEs sum over folds = K*N = 60 out of F*R*C = 96.
    EXPECT_DOUBLE_EQ(ws.mapping_efficiency, 60.0 / 96.0);
    // Utilization: 5*6*10 = 300 MACs / (16 PEs * 90 cycles).
    EXPECT_DOUBLE_EQ(ws.mac_utilization, 300.0 / (16.0 * 90.0));
    // Traffic: A read once per column tile: 5*10*2 = 100; B once: 60; accumulator writes: one
    // per (row, column, K tile) = 5*6*3 = 90, read-backs for the 2 later K tiles = 60.
    EXPECT_EQ(ws.input_reads.elements, 100);
    EXPECT_EQ(ws.input_reads.bytes, 100);  // int8
    EXPECT_EQ(ws.weight_reads.elements, 60);
    EXPECT_EQ(ws.output_writes.elements, 90);
    EXPECT_EQ(ws.output_writes.bytes, 360);  // int32 accumulators
    EXPECT_EQ(ws.output_reads.elements, 60);

    // os 4x4, M=6, N=5, K=3: F = ceil(6/4) * ceil(5/4) = 4, per fold 3 + 4 + 4 - 2 = 9 -> 36.
    const MxuStats os = both_modes(array(4, 4, MxuDataflow::os, false), {1, 6, 5, 3});
    EXPECT_EQ(os.cycles, 36);
    EXPECT_EQ(os.fill_drain_cycles, 4 * 6);
    EXPECT_EQ(os.output_writes.elements, 30);
    EXPECT_EQ(os.input_reads.elements, 6 * 3 * 2);   // A per column tile
    EXPECT_EQ(os.weight_reads.elements, 3 * 5 * 2);  // B per row tile

    // is 4x4, M=6, N=5, K=10: F = ceil(10/4) * ceil(6/4) = 6, per fold 2*4 + 4 + 5 - 2 = 15 -> 90.
    const MxuStats is = both_modes(array(4, 4, MxuDataflow::is, false), {1, 6, 5, 10});
    EXPECT_EQ(is.cycles, 90);
    EXPECT_EQ(is.input_reads.elements, 60);            // A is stationary: read once
    EXPECT_EQ(is.weight_reads.elements, 5 * 10 * 2);   // B streams once per M tile
    EXPECT_EQ(both_modes(array(4, 4, MxuDataflow::is, false), {3, 6, 5, 10}).cycles, 3 * 90);  // batch
}

TEST(MxuHandWorked, OverlappedFolds) {
    // ws, overlap: s_0 = R, s_{f+1} = s_f + max(T, R), cycles = s_{F-1} + T + R + C - 2.
    // 4x4, M=5, N=6, K=10 (F=6, T=5 >= R): 4 + 5*5 + 5 + 6 = 40, stall = the first load only.
    const MxuStats a = both_modes(array(4, 4, MxuDataflow::ws, true), {1, 5, 6, 10});
    EXPECT_EQ(a.cycles, 40);
    EXPECT_EQ(a.weight_load_stall_cycles, 4);
    EXPECT_EQ(a.fill_drain_cycles, 6);
    // M=2 < R: each later fold waits R - T = 2 cycles for its weights: 4 + 5*4 + 2 + 6 = 32,
    // stall = 4 + 5*2 = 14.
    const MxuStats b = both_modes(array(4, 4, MxuDataflow::ws, true), {1, 2, 6, 10});
    EXPECT_EQ(b.cycles, 32);
    EXPECT_EQ(b.weight_load_stall_cycles, 14);
    // os, overlap: s_{f+1} = s_f + max(K, R). 4x4, M=6, N=5, K=3, F=4: 3*4 + 3 + 6 = 21 with
    // 3 * (4 - 3) = 3 cycles waiting for the result buses.
    const MxuStats c = both_modes(array(4, 4, MxuDataflow::os, true), {1, 6, 5, 3});
    EXPECT_EQ(c.cycles, 21);
    EXPECT_EQ(c.drain_stall_cycles, 3);
    // is, overlap, 4x4, M=6, N=5, K=10: F = 3 * 2 = 6, T = N = 5 >= R: 4 + 5*5 + 5 + 6 = 40.
    EXPECT_EQ(both_modes(array(4, 4, MxuDataflow::is, true), {1, 6, 5, 10}).cycles, 40);
    // TPU-like 128x128 ws, BERT qkv projection M=128, N=2304, K=768: F = 6 * 18 = 108, T = R, so
    // no stall after the first load: 128 + 107*128 + 128 + 254 = 14206.
    EXPECT_EQ(both_modes(array(128, 128, MxuDataflow::ws, true), {1, 128, 2304, 768}).cycles, 14206);
}

TEST(MxuHandWorked, RegistersOfATwoByTwoWeightStationaryArray) {
    // A = [[1,2],[3,4]], B = [[5,6],[7,8]] on a 2x2 ws array. Weights load in cycles 0-1, so
    // s_0 = 2; row m reaches PE(i,j) in cycle 2 + m + i + j.
    //   cycle 3: PE(1,0) gets m=0: psum = 1*5 + 2*7 = 19 (PE(0,0) passed 1*5 = 5 down in cycle 2)
    //   cycle 4: PE(1,1) m=0: 1*6 + 2*8 = 22; PE(1,0) m=1: 3*5 + 4*7 = 43; PE(0,1) holds m=1's
    //            left operand 3 and weight 6, psum 3*6 = 18.
    //   cycle 5: PE(1,1) m=1: 3*6 + 4*8 = 50; done after cycle 5 -> 6 cycles (= 2*2+2+2-2).
    const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8};
    const MxuOperands ops{a, b};
    MxuParams p = array(2, 2, MxuDataflow::ws, true);
    MxuSteppedArray arr(p, {1, 2, 2, 2}, DType::int8, &ops);
    for (int i = 0; i < 4; ++i) arr.step();  // cycles 0..3
    EXPECT_EQ(arr.partial_sum(1, 0), 19);
    EXPECT_EQ(arr.partial_sum(0, 0), 3 * 5);  // m=1 at PE(0,0) in cycle 3
    arr.step();                               // cycle 4
    EXPECT_EQ(arr.partial_sum(1, 1), 22);
    EXPECT_EQ(arr.partial_sum(1, 0), 43);
    EXPECT_EQ(arr.left_operand(0, 1), 3);
    EXPECT_EQ(arr.top_operand(0, 1), 6);
    EXPECT_EQ(arr.partial_sum(0, 1), 18);
    arr.step();
    EXPECT_EQ(arr.partial_sum(1, 1), 50);
    EXPECT_TRUE(arr.done());
    const MxuGemmResult r = arr.finish();
    EXPECT_EQ(r.stats.cycles, 6);
    EXPECT_EQ(r.c_int32, (std::vector<std::int32_t>{19, 22, 43, 50}));
}

TEST(MxuHandWorked, RegistersOfATwoByTwoOutputStationaryArray) {
    // Same operands on a 2x2 os array: PE(i,j) does MAC k in cycle k + i + j and its result
    // leaves in the cycle of its last MAC (k = 1): C[0][0] in cycle 1, C[1][1] in cycle 3.
    //   after cycle 1: PE(0,0) = 1*5 + 2*7 = 19 left and cleared to 0; PE(1,0) = 3*5 = 15 (k=0),
    //                  PE(0,1) = 1*6 = 6, with left operand 1 and top operand 6.
    const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8};
    const MxuOperands ops{a, b};
    MxuSteppedArray arr(array(2, 2, MxuDataflow::os, true), {1, 2, 2, 2}, DType::fp16, &ops);
    arr.step();
    arr.step();
    EXPECT_EQ(arr.partial_sum(0, 0), 0);
    EXPECT_EQ(arr.partial_sum(1, 0), 15);
    EXPECT_EQ(arr.partial_sum(0, 1), 6);
    EXPECT_EQ(arr.left_operand(0, 1), 1);
    EXPECT_EQ(arr.top_operand(0, 1), 6);
    const MxuGemmResult r = arr.finish();
    EXPECT_EQ(r.stats.cycles, 4);  // K + R + C - 2
    EXPECT_EQ(r.c_fp32, (std::vector<float>{19, 22, 43, 50}));
}

TEST(MxuHandWorked, BadInputsThrowClearErrors) {
    MxuParams p;
    p.rows = 0;
    EXPECT_THROW(run_mxu_gemm(p, {1, 2, 2, 2}, DType::bf16), std::invalid_argument);
    p.rows = 513;
    EXPECT_THROW(run_mxu_gemm(p, {1, 2, 2, 2}, DType::bf16), std::invalid_argument);
    p.rows = 4;
    EXPECT_THROW(run_mxu_gemm(p, {1, 0, 2, 2}, DType::bf16), std::invalid_argument);
    EXPECT_THROW(run_mxu_gemm(p, {1, 2, 2, 2}, DType::int32), std::invalid_argument);
    const float a[] = {1, 2, 300, 4}, b[] = {1, 2, 3, 4};  // 300 is not an int8
    const MxuOperands ops{a, b};
    try {
        run_mxu_gemm(p, {1, 2, 2, 2}, DType::int8, &ops);
        FAIL() << "expected a throw";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("A[2]"), std::string::npos) << e.what();
    }
    const float half_unsafe[] = {1.0f + 1.0f / 4096.0f, 0, 0, 0};  // needs 12 mantissa bits
    const MxuOperands ops2{half_unsafe, b};
    EXPECT_THROW(run_mxu_gemm(p, {1, 2, 2, 2}, DType::fp16, &ops2), std::invalid_argument);
    VcdWindow w;  // default window is 8x8 PEs: too big for a 4x4 array
    EXPECT_THROW(w.validate(p), std::invalid_argument);
    w.row1 = w.col1 = 3;
    EXPECT_NO_THROW(w.validate(p));
    w.last_cycle = -1;
    EXPECT_THROW(w.validate(p), std::invalid_argument);
    EXPECT_EQ(parse_mxu_dataflow("os"), MxuDataflow::os);
    EXPECT_FALSE(parse_mxu_dataflow("wss").has_value());
    EXPECT_EQ(parse_mxu_mode("stepped"), MxuMode::stepped);
}

}  // namespace
}  // namespace accelsim

namespace accelsim {
namespace {

TEST(MxuHandWorked, TextbookModeMatchesScaleSimPerFoldFormulaOnRandomShapes) {
    // SCALE-Sim v2 per-fold cycles (see the header of this file), written out independently of
    // models/mxu: ws 2R + C + M - 2 over ceil(K/R)*ceil(N/C) folds, is 2R + C + N - 2 over
    // ceil(K/R)*ceil(M/C), os K + R + C - 2 over ceil(M/R)*ceil(N/C); batch multiplies the folds.
    std::mt19937 rng(3);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    auto cdiv = [](std::int64_t a, std::int64_t b) { return (a + b - 1) / b; };
    for (int trial = 0; trial < 200; ++trial) {
        const int R = pick(1, 20), C = pick(1, 20);
        const GemmShape s{pick(1, 2), pick(1, 50), pick(1, 50), pick(1, 50)};
        for (const MxuDataflow d : {MxuDataflow::ws, MxuDataflow::os, MxuDataflow::is}) {
            std::int64_t expected = 0;
            if (d == MxuDataflow::ws) expected = s.batch * cdiv(s.k, R) * cdiv(s.n, C) * (2 * R + C + s.m - 2);
            if (d == MxuDataflow::is) expected = s.batch * cdiv(s.k, R) * cdiv(s.m, C) * (2 * R + C + s.n - 2);
            if (d == MxuDataflow::os) expected = s.batch * cdiv(s.m, R) * cdiv(s.n, C) * (s.k + R + C - 2);
            MxuParams p = array(R, C, d, false);
            p.mode = MxuMode::stepped;
            ASSERT_EQ(run_mxu_gemm(p, s, DType::int8).stats.cycles, expected)
                << R << "x" << C << " " << to_string(d) << " b=" << s.batch << " m=" << s.m << " n=" << s.n
                << " k=" << s.k;
        }
    }
}

}  // namespace
}  // namespace accelsim
