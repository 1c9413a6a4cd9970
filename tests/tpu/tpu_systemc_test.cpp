// The SystemC driver (one SC_THREAD per core, tpu_sc.h) gives exactly the results of the plain
// time-ordered loop: the same cycles, bytes and stall counts op by op, on a 2-core chip whose
// cores contend for the same HBM (so the order of their requests matters). Elaborates SystemC:
// runs in its own process (ctest runs each case alone; by hand, ACCELSIM_IN_CHILD_PROCESS forks).
#include <gtest/gtest.h>

#include "models/memory/dram.h"
#include "models/tpu/tpu_chip.h"
#include "models/tpu/tpu_sc.h"
#include "tests/systemc_in_child.h"

namespace accelsim::tpu::tpu_systemc_test {
namespace {

TpuChipParams two_core_chip() {
    TpuChipParams p;
    p.cores = 2;
    p.mxus_per_core = 2;
    p.mxu.rows = p.mxu.cols = 32;
    p.vmem_bytes = 512 * 1024;
    p.clock_hz = 1e9;
    memory::MemoryHierarchyParams m;
    m.requesters = 2;
    m.clock_hz = p.clock_hz;
    m.crossbar.bytes_per_cycle_per_port = 64;
    m.dram = memory::dram_preset("HBM2");
    m.dram.channels = 2;  // 64 B/cycle: the cores contend
    p.memory = m;
    return p;
}

std::vector<Op> ops() {
    std::vector<Op> out;
    Op mm;
    mm.kind = OpKind::matmul;
    mm.name = "mm";
    mm.gemm = GemmShape{1, 200, 300, 500};
    out.push_back(mm);
    Op bmm = mm;
    bmm.kind = OpKind::bmm;
    bmm.gemm = GemmShape{5, 64, 64, 96};
    out.push_back(bmm);
    Op sm;
    sm.kind = OpKind::softmax;
    sm.rows = 300;
    sm.cols = 128;
    out.push_back(sm);
    Op add;
    add.kind = OpKind::add;
    add.elements = 60000;
    out.push_back(add);
    return out;
}

void compare_drivers() {
        TpuChip plain(two_core_chip()), driven(two_core_chip());
        TpuCoresModule cores("cores", 2);
        driven.set_pipeline_driver(cores.driver());
        for (const Op& op : ops()) {
            const TpuOpResult a = plain.run(op, false), b = driven.run(op, false);
            EXPECT_EQ(a.cycles, b.cycles) << op.name;
            EXPECT_EQ(a.bytes, b.bytes) << op.name;
            ASSERT_EQ(a.stats.size(), b.stats.size());
            for (std::size_t i = 0; i < a.stats.size(); ++i)
                EXPECT_EQ(a.stats[i].value, b.stats[i].value) << op.name << " " << a.stats[i].name;
        }
        // The threads really ran in simulated time: the kernel clock reached the last request.
        EXPECT_GT(sc_core::sc_time_stamp().value(), 0u);
}

TEST(TpuSystemC, OneThreadPerCoreMatchesThePlainLoop) { ACCELSIM_IN_CHILD_PROCESS(compare_drivers()); }

}  // namespace
}  // namespace accelsim::tpu::tpu_systemc_test
