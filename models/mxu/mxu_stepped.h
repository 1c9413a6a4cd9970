#pragma once
// The cycle-stepped MXU: the reference model. One step() is one clock of the whole array; the
// PE registers live in plain in-place arrays (no allocation, no virtual call per PE). The
// SystemC wrapper (mxu_sc.h) calls step() once per clock and peeks at the registers for VCDs.
#include <cstdint>
#include <memory>

#include "models/mxu/mxu.h"

namespace accelsim {

class MxuSteppedArray {
public:
    // Prepares the run (converts and checks operands, zeroes registers); throws like run_mxu_gemm.
    // operands == nullptr gives a timing-only run: the controller, skew, weight double buffer and
    // result collection are stepped cycle by cycle, the PE arithmetic is skipped.
    MxuSteppedArray(const MxuParams& params, const GemmShape& shape, DType dtype,
                    const MxuOperands* operands = nullptr);
    ~MxuSteppedArray();
    MxuSteppedArray(const MxuSteppedArray&) = delete;
    MxuSteppedArray& operator=(const MxuSteppedArray&) = delete;

    bool done() const;           // the last result has left the array
    void step();                 // advance one clock (no-op once done)
    std::int64_t cycle() const;  // clocks stepped so far

    // PE registers after the last step (all zero before the first), as doubles:
    //  left_operand:  the value PE(row,col) multiplied this cycle that arrived from the left
    //                 (A for ws/os, B for is); it moves one PE right per clock.
    //  top_operand:   ws/is: the active stationary value (B for ws, A for is);
    //                 os: the B value that arrived from the top (moves one PE down per clock).
    //  partial_sum:   ws/is: the partial sum PE(row,col) passed down this cycle;
    //                 os: the accumulator of PE(row,col) (reset after its result leaves).
    double left_operand(int row, int col) const;
    double top_operand(int row, int col) const;
    double partial_sum(int row, int col) const;

    // Runs any remaining cycles and returns the stats and (with operands) C.
    MxuGemmResult finish();

    class Core;  // the dataflow-specific register model (mxu_stepped.cpp)

private:
    MxuParams params_;
    GemmShape shape_;
    DType dtype_;
    bool has_data_ = false;
    std::unique_ptr<Core> core_;
};

}  // namespace accelsim
