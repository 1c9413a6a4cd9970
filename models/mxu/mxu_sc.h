#pragma once
// Thin SystemC wrapper around MxuSteppedArray: one SC_THREAD steps the whole array once per
// clock period. For waveforms it mirrors the registers of a chosen sub-rectangle of PEs into
// plain doubles that sc_trace records; only those PEs are traced, and only inside a cycle window
// (outside it the mirrors hold their last value, so the VCD stays small).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "models/mxu/mxu.h"
#include "models/mxu/mxu_stepped.h"

namespace accelsim {

// Cycles [first_cycle, last_cycle] and PEs rows [row0, row1] x cols [col0, col1], all inclusive.
struct VcdWindow {
    std::int64_t first_cycle = 0;
    std::int64_t last_cycle = 63;
    int row0 = 0, row1 = 7;
    int col0 = 0, col1 = 7;
    // Throws std::invalid_argument unless first <= last and the rectangle lies inside the array.
    void validate(const MxuParams& params) const;
};

class MxuModule : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(MxuModule);
    // operands may be null (timing only). The operands must outlive elaboration (they are read
    // when the module is constructed).
    MxuModule(sc_core::sc_module_name name, const MxuParams& params, const GemmShape& shape, DType dtype,
              const MxuOperands* operands, sc_core::sc_time clock_period = sc_core::sc_time(1, sc_core::SC_NS));

    // Registers the window's PEs with tf as <module>.pe_r<R>_c<C>_{left,top,psum} plus
    // <module>.cycle; call before sc_start.
    void trace_pes(sc_core::sc_trace_file* tf, const VcdWindow& window);

    bool done() const { return finished_; }
    // Stats and C once done() (the thread calls MxuSteppedArray::finish()).
    const MxuGemmResult& result() const { return result_; }

private:
    void run();
    void sample();

    MxuSteppedArray array_;
    sc_core::sc_time period_;
    bool tracing_ = false;
    VcdWindow window_;
    std::vector<double> left_, top_, psum_;  // mirrors of the traced PEs, row-major in the window
    unsigned int cycle_mirror_ = 0;
    bool finished_ = false;
    MxuGemmResult result_;
};

// Elaborates an MxuModule, runs it until the window's last cycle (or the GEMM's end) and writes
// the VCD to vcd_path (".vcd" is appended when missing). One clock = 1 ns, and the VCD time unit
// is 1 ns, so VCD time t shows the registers after cycle t. Without operands the inputs are
// the deterministic pattern of mxu_vcd_pattern_operands. SystemC elaborates once per process:
// call this at most once per process.
void write_mxu_vcd(const MxuParams& params, const GemmShape& shape, DType dtype, const std::string& vcd_path,
                   const VcdWindow& window, const MxuOperands* operands = nullptr);

// The operands write_mxu_vcd uses when none are given: small integers, easy to follow by hand
// and exact in every dtype: A[b][m][k] = 1 + (m + 2k) mod 5, B[b][k][n] = 1 + (2k + n) mod 3.
struct MxuPatternOperands {
    std::vector<float> a, b;
};
MxuPatternOperands mxu_vcd_pattern_operands(const GemmShape& shape);

}  // namespace accelsim
