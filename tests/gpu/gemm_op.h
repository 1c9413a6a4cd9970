#pragma once
// A matmul or bmm op of the given shape and dtype, as the GEMM kernel tests lower it.
#include <cstdint>

#include "models/common/op.h"

namespace accelsim::gpu::test {

inline Op gemm_op(OpKind kind, std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k, DType dtype) {
    Op op;
    op.kind = kind;
    op.name = "g";
    op.dtype = dtype;
    op.gemm = {batch, m, n, k};
    return op;
}

}  // namespace accelsim::gpu::test
