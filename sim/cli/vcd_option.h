#pragma once
// --vcd: a waveform of one GEMM-like op on one MXU of a systolic chip, for GTKWave.
#include <cstdint>
#include <string>
#include <vector>

#include "models/common/op.h"
#include "sim/config/chip_config.h"

namespace accelsim {

struct VcdRequest {
    std::string path;      // --vcd FILE
    std::string op_name;   // --vcd-op NAME; empty = the trace's first matmul/bmm/conv2d
    std::string cycles;    // --vcd-cycles FIRST:LAST (inclusive), default 0:63
    std::string pes;       // --vcd-pes R0:R1,C0:C1 (inclusive), default 0:7,0:7 clipped to the array
};

// Writes the VCD in a forked child process (SystemC elaborates once per process, and the main run
// may elaborate the chip). Throws InputError for a bad request (no such op, not GEMM-like, window
// outside the array, not a systolic chip); std::runtime_error if the child fails.
void write_vcd(const ChipConfig& config, const std::vector<Op>& ops, const VcdRequest& request);

}  // namespace accelsim
