// The op table: one row per kind, in enum order; each kind's trace keys, counts and shape text come
// from it, and what the writer prints the reader reads back.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "models/common/op_checks.h"
#include "models/common/op_table.h"
#include "sim/tracegen/trace_writer.h"
#include "trace_test_util.h"

namespace accelsim::op_table_test {
namespace {

using test::read_error;
using test::write_file;

TEST(OpTable, RowsAreInEnumOrderWithUniqueNamesThatParseBack) {
    std::set<std::string_view> names;
    for (std::size_t i = 0; i < op_kinds().size(); ++i) {
        const OpKindInfo& info = op_kinds()[i];
        EXPECT_EQ(static_cast<std::size_t>(info.kind), i) << info.name;
        EXPECT_TRUE(names.insert(info.name).second) << info.name;
        EXPECT_EQ(parse_op_kind(info.name), info.kind);
        EXPECT_FALSE(info.description.empty()) << info.name;
    }
    EXPECT_EQ(parse_op_kind("matmull"), std::nullopt);
}

// One op of every kind with every optional field away from its default.
std::vector<Op> one_of_each_kind(const std::string& kernel_file) {
    std::vector<Op> ops;
    for (const OpKindInfo& info : op_kinds()) {
        Op op;
        op.kind = info.kind;
        op.name = std::string(info.name) + "_op";
        op.dtype = DType::fp16;
        switch (info.layout) {
            case OpLayout::gemm: op.gemm = {info.batched ? 3 : 1, 5, 7, 11}; break;
            case OpLayout::conv2d: op.conv = {2, 9, 10, 4, 6, 3, 2, 2, 1, 1, 0, 2, 1, 2}; break;
            case OpLayout::rows_cols:
                op.rows = 13;
                op.cols = 17;
                break;
            case OpLayout::elements: op.elements = 19; break;
            case OpLayout::pool:
                // max (dilation is max-only; count_pad, avg-only, is covered in test_pool.cpp)
                op.pool = {2, 9, 10, 4, 3, 2, 2, 1, 1, 0, 2, 1, PoolMode::max, true, false, false};
                break;
            case OpLayout::kernel:
                op.kernel.file = kernel_file;
                op.kernel.grid[0] = 4;
                op.kernel.block[0] = 32;
                op.kernel.block[1] = 2;
                op.kernel.args = {"8", "buf:64"};
                break;
        }
        EXPECT_EQ(shape_problem(op), "") << info.name;
        ops.push_back(op);
    }
    return ops;
}

TEST(OpTable, EveryKindWrittenByTheTableIsReadBackByTheTable) {
    const std::string kernel = write_file("k.s", ".kernel k\n    exit\n");
    const std::vector<Op> ops = one_of_each_kind(kernel);
    std::ostringstream text;
    write_trace(text, ops, "", std::nullopt);
    const std::vector<Op> back = read_trace(write_file("all.trace", text.str()), DType::bf16);
    ASSERT_EQ(back.size(), ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
        SCOPED_TRACE(ops[i].name);
        EXPECT_EQ(back[i].kind, ops[i].kind);
        EXPECT_EQ(shape_json(back[i]), shape_json(ops[i]));
        EXPECT_EQ(shape_text(back[i]), shape_text(ops[i]));
        // The kernel has no dtype; the reader gives it the default, and nothing reports it.
        EXPECT_EQ(back[i].dtype, op_info(ops[i].kind).has_dtype ? DType::fp16 : DType::bf16);
    }
}

TEST(OpTable, EveryRequiredKeyIsRequiredAndNothingElseIsAccepted) {
    const std::string kernel = write_file("k.s", ".kernel k\n    exit\n");
    for (const Op& op : one_of_each_kind(kernel)) {
        std::ostringstream shape;
        write_shape(shape, op);
        const std::string kind(to_string(op.kind));
        SCOPED_TRACE(kind);
        // An unknown key is refused with the kind's own keys as suggestions.
        EXPECT_NE(read_error("x.trace", "# accelsim-trace 1\n" + kind + " x " + shape.str() + " zz=1\n")
                      .find("x.trace:2: " + kind + ": unknown key 'zz'"),
                  std::string::npos);
        for (const std::string& key : required_keys(op.kind)) {
            // The line without `key=...`.
            std::istringstream words(shape.str());
            std::string line = kind + " x";
            for (std::string w; words >> w;)
                if (w.rfind(key + "=", 0) != 0) line += " " + w;
            EXPECT_EQ(read_error("x.trace", "# accelsim-trace 1\n" + line + "\n"),
                      "x.trace:2: " + kind + ": missing required key '" + key + "'");
        }
    }
}

// Counts worked by hand from each layout's definition (fp16: 2 bytes per element).
TEST(OpTable, CountsOfEachLayoutMatchTheirClosedForms) {
    const std::vector<Op> ops = one_of_each_kind("k.s");
    const auto of = [&](OpKind k) -> const Op& { return ops[static_cast<std::size_t>(k)]; };
    // matmul 5x7x11: 385 MACs; A 5*11, B 11*7, C 5*7 elements.
    EXPECT_EQ(of(OpKind::matmul).macs(), 385);
    EXPECT_EQ(of(OpKind::matmul).flops(), 770);
    EXPECT_EQ(of(OpKind::matmul).compulsory_bytes(), (55 + 77 + 35) * 2);
    // bmm 3 x (5x7x11).
    EXPECT_EQ(of(OpKind::bmm).macs(), 1155);
    EXPECT_EQ(of(OpKind::bmm).compulsory_bytes(), 3 * (55 + 77 + 35) * 2);
    // conv2d n=2 9x10x4, k=6 3x2, stride 2x1, pad 1x0, dilation 2x1, groups 2:
    // out_h = (9 + 2 - 2*2 - 1)/2 + 1 = 4, out_w = (10 + 0 - 1 - 1)/1 + 1 = 9;
    // MACs = 2*4*9 outputs x 6 filters x (4/2)*3*2 = 72 * 6 * 12 = 5184.
    // pool n=2 9x10x4, window 3x2, stride 2x1, pad 1x0, dilation 2x1, ceil: out_h = ceil((9 + 2 - 5)/2)
    // + 1 = 4 (window 4 starts at 6 - 1 < 9 + 1: kept), out_w = (10 - 2)/1 + 1 = 9; 2*4*9*4 = 288
    // outputs of 6 window elements: 1728 FLOPs; bytes (720 in + 288 out) * 2.
    const Op& pool = of(OpKind::pool);
    EXPECT_EQ(pool.pool.out_h(), 4);
    EXPECT_EQ(pool.pool.out_w(), 9);
    EXPECT_EQ(pool.macs(), 0);
    EXPECT_EQ(pool.flops(), 1728);
    EXPECT_EQ(pool.compulsory_bytes(), (720 + 288) * 2);
    const Op& conv = of(OpKind::conv2d);
    EXPECT_EQ(conv.conv.out_h(), 4);
    EXPECT_EQ(conv.conv.out_w(), 9);
    EXPECT_EQ(conv.macs(), 5184);
    EXPECT_EQ(conv.input_bytes(), 2 * 9 * 10 * 4 * 2);
    EXPECT_EQ(conv.weight_bytes(), 6 * 2 * 3 * 2 * 2);
    EXPECT_EQ(conv.output_bytes(), 72 * 6 * 2);
    // softmax 13x17: 5 operations per element; layernorm 7, plus gamma and beta per column.
    EXPECT_EQ(of(OpKind::softmax).flops(), 13 * 17 * 5);
    EXPECT_EQ(of(OpKind::softmax).compulsory_bytes(), 2 * 13 * 17 * 2);
    EXPECT_EQ(of(OpKind::layernorm).flops(), 13 * 17 * 7);
    EXPECT_EQ(of(OpKind::layernorm).weight_bytes(), 2 * 17 * 2);
    // gelu 7 operations per element, relu 1; add and mul read two operands.
    EXPECT_EQ(of(OpKind::gelu).flops(), 19 * 7);
    EXPECT_EQ(of(OpKind::relu).flops(), 19);
    EXPECT_EQ(of(OpKind::relu).compulsory_bytes(), 2 * 19 * 2);
    EXPECT_EQ(of(OpKind::add).compulsory_bytes(), 3 * 19 * 2);
    EXPECT_EQ(of(OpKind::mul).compulsory_bytes(), 3 * 19 * 2);
    // A kernel's program decides its work: no counts.
    EXPECT_EQ(of(OpKind::kernel).macs(), 0);
    EXPECT_EQ(of(OpKind::kernel).compulsory_bytes(), 0);
    EXPECT_FALSE(op_info(OpKind::kernel).has_flops);
}

TEST(OpTable, AKernelOpRefusesADtype) {
    write_file("k.s", ".kernel k\n    exit\n");
    EXPECT_EQ(read_error("x.trace", "# accelsim-trace 1\nkernel x file=k.s grid=1 block=32 dtype=fp16\n"),
              "x.trace:2: kernel: takes no dtype: its program decides its element types");
}

TEST(OpTable, MatmulWithABatchIsRefusedByTheSharedCheck) {
    Op op;
    op.kind = OpKind::matmul;
    op.gemm = {2, 4, 4, 4};
    EXPECT_EQ(shape_problem(op), "matmul has no batch (use bmm)");
}

// docs/trace-format.md's op table lists every kind with the required keys the reader requires.
TEST(OpTable, TheTraceFormatDocListsEveryKindWithItsKeys) {
    std::ifstream in(std::string(ACCELSIM_SOURCE_DIR) + "/docs/trace-format.md");
    ASSERT_TRUE(in) << "docs/trace-format.md not found";
    std::vector<std::string> rows;
    for (std::string line; std::getline(in, line);)
        if (line.rfind("| `", 0) == 0) rows.push_back(line);
    for (const OpKindInfo& info : op_kinds()) {
        std::string keys;
        for (const std::string& k : required_keys(info.kind)) keys += (keys.empty() ? "" : " ") + k;
        const std::string name = "`" + std::string(info.name) + "`";
        bool found = false;
        for (const std::string& row : rows) {
            const std::string first_cell = row.substr(0, row.find('|', 1));
            if (first_cell.find(name) == std::string::npos) continue;
            found = true;
            EXPECT_NE(row.find("| `" + keys + "` |"), std::string::npos) << row;
        }
        EXPECT_TRUE(found) << info.name << " is missing from docs/trace-format.md";
    }
}

}  // namespace
}  // namespace accelsim::op_table_test
