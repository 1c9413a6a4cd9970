// The assembled hierarchy (requesters -> crossbar -> L2 -> HBM): the unloaded latency closed form,
// and TLM-2.0 runs at two quanta that must give identical statistics.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <sstream>
#include <string>

#include "models/memory/memory_hierarchy.h"
#include "models/memory/memory_tlm.h"

namespace accelsim::memory::hierarchy_test {
namespace {

MemoryHierarchyParams small_chip() {
    MemoryHierarchyParams p;
    p.requesters = 4;
    p.clock_hz = 1e9;  // 1 ns cycles
    p.crossbar.latency_cycles = 5;
    p.crossbar.bytes_per_cycle_per_port = 64;
    L2Params l2;
    l2.size_bytes = 256 * 1024;  // 2 slices x 16 ways x 64 sets x 128 B
    l2.slices = 2;
    l2.ways = 16;
    l2.hit_latency_cycles = 20;
    l2.bytes_per_cycle_per_slice = 64;
    p.l2 = l2;
    p.dram = dram_preset("HBM2");  // tCK 1 ns, tRCD 14, CL 14, 64 B burst in 2 ns
    p.dram.controller_latency_ns = 3;
    return p;
}

TEST(MemoryHierarchy, UnloadedReadLatencyIsTheClosedForm) {
    MemoryHierarchy h(small_chip());
    // Miss: crossbar 64 B / 64 B per cycle = 1 cycle + 5 cycles latency = 6 ns; the L2 misses and
    // fetches the two 32 B sectors as one 64 B read: controller 3 + tRCD 14 + CL 14 + burst 2 = 33 ns;
    // the data returns through the L2 pipeline: + 20 ns. Total 6 + 33 + 20 = 59 ns.
    EXPECT_EQ(h.access(0, 0, 64, false, 0), 59000u);
    // The same read later hits: 6 + 20 = 26 ns.
    const Picoseconds t = 1000000;
    EXPECT_EQ(h.access(1, 0, 64, false, t) - t, 26000u);
    const MemoryHierarchyStats s = h.stats();
    ASSERT_TRUE(s.l2.has_value());
    EXPECT_EQ(s.l2->hits, 1u);
    EXPECT_EQ(s.l2->misses, 1u);
    EXPECT_EQ(s.dram.reads, 1u);
    EXPECT_EQ(s.dram.bytes_read, 64u);
    EXPECT_DOUBLE_EQ(s.latency.average_ns(), (59.0 + 26.0) / 2);
}

TEST(MemoryHierarchy, WithoutL2TheCrossbarFeedsTheDram) {
    MemoryHierarchyParams p = small_chip();
    p.l2.reset();
    MemoryHierarchy h(p);
    // 6 ns crossbar + 33 ns DRAM.
    EXPECT_EQ(h.access(2, 4096, 64, false, 0), 39000u);
}

TEST(MemoryHierarchy, RequestsCrossingLinesAreSplit) {
    MemoryHierarchy h(small_chip());
    h.access(0, 64, 128, false, 0);  // bytes 64..191: two lines
    EXPECT_EQ(h.stats().l2->accesses, 2u);
    EXPECT_EQ(h.stats().requests, 1u);
}

// One full TLM simulation; returns its statistics as text. Runs in a child process because the
// SystemC kernel elaborates once per process.
std::string simulate(double quantum_ns) {
    tlm::tlm_global_quantum::instance().set(sc_core::sc_time(quantum_ns, sc_core::SC_NS));
    MemoryHierarchy model(small_chip());
    std::vector<TrafficParams> ports(4);
    const TrafficPattern patterns[4] = {TrafficPattern::stream, TrafficPattern::random, TrafficPattern::strided,
                                        TrafficPattern::mixed};
    for (int i = 0; i < 4; ++i) {
        ports[static_cast<std::size_t>(i)].pattern = patterns[i];
        ports[static_cast<std::size_t>(i)].total_bytes = 64 * 3000;
        ports[static_cast<std::size_t>(i)].base_address = static_cast<std::uint64_t>(i) << 28;
        ports[static_cast<std::size_t>(i)].footprint_bytes = 1 << 24;
        ports[static_cast<std::size_t>(i)].seed = 7 + static_cast<std::uint64_t>(i);
    }
    MemoryHierarchyTarget target("memory", model);
    TrafficInitiator initiator("requesters", ports, DriverParams{16, 2000});
    for (int i = 0; i < 4; ++i) initiator.socket(i).bind(target.socket(i));
    sc_core::sc_start();
    const MemoryHierarchyStats s = model.stats();
    std::ostringstream out;
    out << "requests " << s.requests << " last " << initiator.result().last_completion << " kernel_ps "
        << static_cast<std::uint64_t>(sc_core::sc_time_stamp().to_seconds() * 1e12) << " avg "
        << s.latency.average_ns() << " p99 " << s.latency.quantile_ns(0.99) << " l2 " << s.l2->hits << "/"
        << s.l2->misses << "/" << s.l2->sector_misses << "/" << s.l2->mshr_merges << "/" << s.l2->evictions << "/"
        << s.l2->writebacks << " dram " << s.dram.reads << "/" << s.dram.writes << "/" << s.dram.bursts.row_hits << "/"
        << s.dram.bursts.row_misses << "/" << s.dram.bursts.row_conflicts << "/" << s.dram.bursts.refreshes
        << " xbar_wait " << s.crossbar.input_wait_ps << "/" << s.crossbar.output_wait_ps;
    return out.str();
}

std::string simulate_in_child(double quantum_ns) {
    int fds[2];
    if (pipe(fds) != 0) return "pipe failed";
    const pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        const std::string s = simulate(quantum_ns);
        const ssize_t n = write(fds[1], s.data(), s.size());
        close(fds[1]);
        _exit(n == static_cast<ssize_t>(s.size()) ? 0 : 1);
    }
    close(fds[1]);
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "child failed: " + text;
    return text;
}

TEST(MemoryHierarchyTlm, TwoQuantaGiveIdenticalStatistics) {
    // 1 ns: the initiator synchronises with the kernel almost every transaction; 10 us: it runs
    // thousands of transactions ahead. The targets use the annotated time, so nothing may change.
    const std::string fine = simulate_in_child(1.0);
    const std::string coarse = simulate_in_child(10000.0);
    EXPECT_EQ(fine.rfind("requests 12000 ", 0), 0u) << fine;
    EXPECT_EQ(fine, coarse);
    RecordProperty("statistics", fine);
    // The run must have contention for the comparison to mean anything.
    EXPECT_EQ(fine.find("xbar_wait 0/0"), std::string::npos) << fine;
}

}  // namespace
}  // namespace accelsim::memory::hierarchy_test
