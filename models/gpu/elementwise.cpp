#include "models/gpu/elementwise.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace accelsim::gpu {

namespace {

// Shared prologue and loop of every elementwise kernel; BODY loads, computes r5 and stores.
//   i = ctaid * ntid + tid; stride = nctaid * ntid
//   loop: if (i >= n) exit; y[i] = f(...); i += stride
std::string grid_stride(const std::string& name, const std::string& params, const std::string& body) {
    return ".kernel " + name + "\n.param " + params + "\n.reg 10\n" +
           "    mov r0, %ctaid\n"
           "    mov r1, %ntid\n"
           "    mad r0, r0, r1, %tid\n"
           "    mov r2, %nctaid\n"
           "    mul r2, r2, r1\n"
           "loop:\n"
           "    setp.ge.s32 p0, r0, n\n"
           "    @p0 exit\n"
           "    shl r3, r0, 2\n" +
           body +
           "    add r0, r0, r2\n"
           "    bra loop\n";
}

const std::string kAdd = grid_stride("ew_add", "n, a, b, y",
                                     "    add r4, r3, a\n    ld.global r5, [r4]\n"
                                     "    add r4, r3, b\n    ld.global r6, [r4]\n"
                                     "    fadd r5, r5, r6\n"
                                     "    add r4, r3, y\n    st.global [r4], r5\n");
const std::string kMul = grid_stride("ew_mul", "n, a, b, y",
                                     "    add r4, r3, a\n    ld.global r5, [r4]\n"
                                     "    add r4, r3, b\n    ld.global r6, [r4]\n"
                                     "    fmul r5, r5, r6\n"
                                     "    add r4, r3, y\n    st.global [r4], r5\n");
const std::string kRelu = grid_stride("ew_relu", "n, x, y",
                                      "    add r4, r3, x\n    ld.global r5, [r4]\n"
                                      "    fmax r5, r5, 0.0\n"
                                      "    add r4, r3, y\n    st.global [r4], r5\n");
// -1.702 * log2(e) = -2.4554669...
const std::string kGelu = grid_stride("ew_gelu", "n, x, y",
                                      "    add r4, r3, x\n    ld.global r5, [r4]\n"
                                      "    fmul r6, r5, -2.4554669\n"
                                      "    ex2 r6, r6\n"
                                      "    fadd r6, r6, 1.0\n"
                                      "    rcp r6, r6\n"
                                      "    fmul r5, r5, r6\n"
                                      "    add r4, r3, y\n    st.global [r4], r5\n");

}  // namespace

const simt::Kernel* elementwise_kernel(OpKind kind) {
    static const simt::Kernel add = simt::assemble(kAdd, "<gpu library>/ew_add");
    static const simt::Kernel mul = simt::assemble(kMul, "<gpu library>/ew_mul");
    static const simt::Kernel relu = simt::assemble(kRelu, "<gpu library>/ew_relu");
    static const simt::Kernel gelu = simt::assemble(kGelu, "<gpu library>/ew_gelu");
    switch (kind) {
        case OpKind::add: return &add;
        case OpKind::mul: return &mul;
        case OpKind::relu: return &relu;
        case OpKind::gelu: return &gelu;
        default: return nullptr;
    }
}

simt::Dim elementwise_dims(std::int64_t n, int sms, int blocks_per_sm) {
    const std::int64_t blocks = (n + kElementwiseBlock - 1) / kElementwiseBlock;
    const std::int64_t wave = static_cast<std::int64_t>(std::max(1, sms)) * std::max(1, blocks_per_sm);
    return {static_cast<std::uint32_t>(std::max<std::int64_t>(1, std::min(blocks, wave))), kElementwiseBlock};
}

float elementwise_reference(OpKind kind, float a, float b) {
    switch (kind) {
        case OpKind::add: return a + b;
        case OpKind::mul: return a * b;
        case OpKind::relu: return std::fmax(a, 0.0f);
        case OpKind::gelu: return a * (1.0f / (std::exp2(a * -2.4554669f) + 1.0f));
        default: return 0.0f;
    }
}

}  // namespace accelsim::gpu
