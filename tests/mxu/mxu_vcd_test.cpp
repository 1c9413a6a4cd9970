// The VCD of a 4x4 ws array running the default pattern (mxu_vcd_pattern_operands), read back
// and checked against a hand-worked partial sum. This is the only test here that elaborates
// SystemC (one elaboration per process; ctest runs each test case in its own process).
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/mxu/mxu_sc.h"

namespace accelsim::mxu_vcd_test {
namespace {

// value of a traced variable at VCD time t (the last change at or before t); NaN if absent
struct VcdTrace {
    std::map<std::string, std::string> id_of;                 // variable name -> id code
    std::map<std::string, std::map<long, double>> changes;    // id -> time -> value
    double at(const std::string& name, long t) const {
        const auto id = id_of.find(name);
        if (id == id_of.end()) return std::nan("");
        const auto& ch = changes.at(id->second);
        auto it = ch.upper_bound(t);
        if (it == ch.begin()) return std::nan("");
        return std::prev(it)->second;
    }
};

VcdTrace read_vcd(const std::string& path) {
    VcdTrace v;
    std::ifstream in(path);
    std::string line;
    long now = 0;
    std::vector<std::string> scopes;  // SystemC splits hierarchical names into nested scopes
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string tok;
        ls >> tok;
        if (tok == "$scope") {
            std::string kind, scope;
            ls >> kind >> scope;
            scopes.push_back(scope);
        } else if (tok == "$upscope") {
            if (!scopes.empty()) scopes.pop_back();
        } else if (tok == "$var") {  // $var real 1 <id> <name> [range] $end
            std::string type, width, id, name, full;
            ls >> type >> width >> id >> name;
            for (std::size_t i = 1; i < scopes.size(); ++i) full += scopes[i] + ".";  // skip "SystemC"
            v.id_of[full + name] = id;
        } else if (!tok.empty() && tok[0] == '#') {
            now = std::stol(tok.substr(1));
        } else if (!tok.empty() && (tok[0] == 'r' || tok[0] == 'b')) {
            std::string id;
            ls >> id;
            const double value = tok[0] == 'r' ? std::stod(tok.substr(1))
                                               : static_cast<double>(std::stoll(tok.substr(1), nullptr, 2));
            v.changes[id][now] = value;
        }
    }
    return v;
}

TEST(MxuVcd, PartialSumOfAChosenPeAtAHandWorkedCycle) {
    MxuParams p;
    p.rows = 4;
    p.cols = 4;
    p.dataflow = MxuDataflow::ws;
    p.mode = MxuMode::stepped;
    const GemmShape shape{1, 4, 4, 4};
    VcdWindow w;
    w.first_cycle = 0;
    w.last_cycle = 20;
    w.row0 = 1;
    w.row1 = 2;
    w.col0 = 0;
    w.col1 = 1;
    const std::string path = ::testing::TempDir() + "mxu_vcd_test.vcd";
    std::remove(path.c_str());
    write_mxu_vcd(p, shape, DType::int8, path, w);
    const VcdTrace v = read_vcd(path);
    ASSERT_FALSE(v.id_of.empty()) << "no variables in " << path;
    // Pattern: A[m][k] = 1 + (m + 2k) mod 5, B[k][n] = 1 + (2k + n) mod 3.
    // ws 4x4: the tile loads in cycles 0-3, row m reaches PE(i,j) in cycle 4 + m + i + j.
    // PE(2,1) in cycle 8 holds m = 1: A[1][0..2] = 2, 4, 1 and B[0..2][1] = 2, 1, 3, so its
    // partial sum is 2*2 + 4*1 + 1*3 = 11, its left operand A[1][2] = 1 and its weight B[2][1] = 3.
    // In cycle 7 it held m = 0: A[0][0..2] = 1, 3, 5 -> 1*2 + 3*1 + 5*3 = 20.
    EXPECT_EQ(v.at("mxu.pe_r2_c1_psum", 8), 11);
    EXPECT_EQ(v.at("mxu.pe_r2_c1_left", 8), 1);
    EXPECT_EQ(v.at("mxu.pe_r2_c1_top", 8), 3);
    EXPECT_EQ(v.at("mxu.pe_r2_c1_psum", 7), 20);
    EXPECT_EQ(v.at("mxu.cycle", 8), 8);
    // Only the chosen sub-rectangle is traced.
    EXPECT_EQ(v.id_of.count("mxu.pe_r0_c0_psum"), 0u);
    EXPECT_EQ(v.id_of.count("mxu.pe_r3_c1_psum"), 0u);
    EXPECT_EQ(v.id_of.size(), 1u + 2u * 2u * 3u);
}

}  // namespace
}  // namespace accelsim::mxu_vcd_test
