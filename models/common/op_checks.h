#pragma once
// Shape checks shared by every producer of Ops (the trace reader, the SCALE-Sim importer, the
// trace generator): a shape that passes gives the models only positive dimensions and counts
// (MACs, FLOPs, bytes, elements) that fit in 64 bits, so no later arithmetic can overflow.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

#include "models/common/op.h"

namespace accelsim {

// a * b, or nullopt when the product does not fit in int64.
std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b);
// The product of all factors, or nullopt on overflow.
std::optional<std::int64_t> checked_product(std::initializer_list<std::int64_t> factors);

// The first problem with op's shape as one message without file or line (e.g. "k (12) is not
// divisible by groups (5)"), or an empty string when the shape is valid. Byte counts are checked
// at 4 bytes per element (the widest operand or accumulator type) whatever op.dtype is, so a
// roofline that counts fp32 partial sums cannot overflow either.
std::string shape_problem(const Op& op);

// Running totals over a trace (what a report sums: MACs, FLOPs, compulsory bytes), so that a trace
// of individually valid ops whose totals overflow is rejected at the op where it happens.
class TraceTotals {
public:
    // Adds op; returns a message naming the total that overflowed, or an empty string.
    std::string add(const Op& op);

private:
    std::int64_t macs_ = 0, flops_ = 0, bytes_ = 0;
};

}  // namespace accelsim
