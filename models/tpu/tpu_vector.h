#pragma once
// Numerics of the vector unit (--validate): the vector ops computed the way the unit does, in
// fp32 (max, exp, sums in row order, reciprocal, rsqrt), checked against references computed
// independently in double with std:: math:
//   softmax:   every row sums to 1 within 2 (cols + 8) u, and every element within 4 (cols + 8) u
//              relative of the reference plus 2^-126 (fp32 exp underflow; an fp32 sum of cols terms
//              errs by at most cols u relative);
//   layernorm: within 8 (cols + 8) u (|normalised x gamma| + |beta| + 1) of the two-pass reference;
//   gelu (tanh approximation): within 16 u (|x| + 1);  relu: exact;  add, mul: within u |ref|
//   (one correctly rounded fp32 operation).   u = 2^-24.
#include <cstdint>

#include "models/common/op.h"
#include "models/tpu/tpu_numerics.h"

namespace accelsim::tpu {

// Generates the op's inputs from `seed`, computes it as the vector unit does and checks it.
NumericsCheck run_vector_op_checked(const Op& op, std::uint64_t seed);

}  // namespace accelsim::tpu
