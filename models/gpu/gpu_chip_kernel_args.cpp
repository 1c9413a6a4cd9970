#include "models/gpu/gpu_chip_kernel_args.h"

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>

#include "models/common/chip_model.h"
#include "models/common/dtype.h"

namespace accelsim::gpu {

namespace {

// Global memory is 32-bit addressed; buffers of one op together stay well inside it (and inside
// the host memory a test machine has).
constexpr std::uint64_t kMaxKernelBufferBytes = std::uint64_t{1} << 30;

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (;;) {
        const std::size_t at = s.find(sep, start);
        parts.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
        if (at == std::string::npos) return parts;
        start = at + 1;
    }
}

// Whole-string integer parse; nullopt-like via the bool.
bool parse_int64(const std::string& text, std::int64_t& value) {
    if (text.empty()) return false;
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || end != text.c_str() + text.size()) return false;
    value = v;
    return true;
}

bool parse_float(const std::string& text, float& value) {
    if (text.empty()) return false;
    errno = 0;
    char* end = nullptr;
    const float v = std::strtof(text.c_str(), &end);
    if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(v)) return false;
    value = v;
    return true;
}

std::uint32_t float_bits(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

// Uniform in [-1, 1) from the top 24 bits of one draw: exact in fp32 and the same on every
// platform (std::uniform_real_distribution is not specified bit for bit).
float unit_random(std::mt19937_64& rng) {
    return static_cast<float>(rng() >> 40) / static_cast<float>(1u << 23) - 1.0f;
}

enum class Fill { zero, ones, iota, rand };

std::uint32_t allocate_buffer(const Op& op, std::size_t index, const std::string& spec, std::uint64_t seed,
                              simt::GlobalMemory& memory, std::uint64_t& total_bytes, std::uint64_t& bytes_out) {
    const std::string where = op_where(op) + ": argument " + std::to_string(index + 1) + " '" + spec + "'";
    const std::vector<std::string> f = split(spec, ':');
    if (f.size() != 4)
        throw std::invalid_argument(where + ": a buffer is buf:TYPE:COUNT:FILL (e.g. buf:f32:4096:rand)");
    int element_bytes = 0;
    if (f[1] == "f32" || f[1] == "i32") element_bytes = 4;
    else if (f[1] == "f16") element_bytes = 2;
    else throw std::invalid_argument(where + ": buffer type '" + f[1] + "' is not f32, i32 or f16");
    std::int64_t count = 0;
    if (!parse_int64(f[2], count) || count <= 0)
        throw std::invalid_argument(where + ": buffer count '" + f[2] + "' must be a positive integer");
    Fill fill;
    if (f[3] == "zero") fill = Fill::zero;
    else if (f[3] == "ones") fill = Fill::ones;
    else if (f[3] == "iota") fill = Fill::iota;
    else if (f[3] == "rand") fill = Fill::rand;
    else throw std::invalid_argument(where + ": buffer fill '" + f[3] + "' is not zero, ones, iota or rand");
    const std::uint64_t bytes = static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(element_bytes);
    if (static_cast<std::uint64_t>(count) > kMaxKernelBufferBytes || total_bytes + bytes > kMaxKernelBufferBytes)
        throw std::invalid_argument(where + ": the op's buffers would exceed " + std::to_string(kMaxKernelBufferBytes >> 20) +
                         " MiB of global memory");
    total_bytes += bytes;
    bytes_out = bytes;
    const std::uint32_t address = memory.allocate(static_cast<std::size_t>(bytes));
    if (fill == Fill::zero) return address;  // allocate() zeroes
    // One stream per argument position, so adding an argument does not change the others' data.
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL + index + 1);
    std::uint8_t* data = memory.data() + address;
    for (std::int64_t i = 0; i < count; ++i) {
        const float value = fill == Fill::ones ? 1.0f
                            : fill == Fill::iota ? static_cast<float>(i)
                                                 : unit_random(rng);
        std::uint8_t* at = data + i * element_bytes;
        if (f[1] == "f32") {
            const std::uint32_t bits = float_bits(value);
            std::memcpy(at, &bits, 4);
        } else if (f[1] == "i32") {
            // rand for integers: uniform in [-128, 127] (the fp value scaled), so products stay small.
            const auto v = static_cast<std::int32_t>(fill == Fill::rand ? std::floor(value * 128.0f) : value);
            std::memcpy(at, &v, 4);
        } else {
            const fp16_t h(value);
            const auto bits = Eigen::numext::bit_cast<std::uint16_t>(h);
            std::memcpy(at, &bits, 2);
        }
    }
    return address;
}

}  // namespace

std::string op_where(const Op& op) {
    return op_location(op) + std::string(to_string(op.kind)) + " '" + op.name + "'";
}

std::vector<std::uint32_t> kernel_arguments(const Op& op, const simt::Kernel& kernel, std::uint64_t seed,
                                            simt::GlobalMemory& memory, std::vector<KernelBuffer>* buffers) {
    const std::vector<std::string>& args = op.kernel.args;
    if (args.size() != kernel.params.size()) {
        std::string names;
        for (const auto& p : kernel.params) names += (names.empty() ? "" : ",") + p;
        throw std::invalid_argument(op_where(op) + ": kernel " + kernel.name + " takes " + std::to_string(kernel.params.size()) +
                         " argument(s) (" + names + "), args= gives " + std::to_string(args.size()));
    }
    std::vector<std::uint32_t> words;
    std::uint64_t total_bytes = 0;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        const std::string where = op_where(op) + ": argument " + std::to_string(i + 1) + " (" + kernel.params[i] +
                                  ") '" + a + "'";
        std::int64_t integer = 0;
        float real = 0;
        if (a.rfind("buf:", 0) == 0) {
            std::uint64_t bytes = 0;
            const std::uint32_t address = allocate_buffer(op, i, a, seed, memory, total_bytes, bytes);
            words.push_back(address);
            if (buffers) buffers->push_back({a, address, bytes});
        } else if (a.rfind("f:", 0) == 0) {
            if (!parse_float(a.substr(2), real)) throw std::invalid_argument(where + ": not a finite fp32 number");
            words.push_back(float_bits(real));
        } else {
            const std::string text = a.rfind("i:", 0) == 0 ? a.substr(2) : a;
            if (!parse_int64(text, integer) || integer < INT32_MIN || integer > static_cast<std::int64_t>(UINT32_MAX))
                throw std::invalid_argument(where + ": expected a 32-bit integer (123, i:-4), f:FLOAT or buf:TYPE:COUNT:FILL");
            words.push_back(static_cast<std::uint32_t>(integer));
        }
    }
    return words;
}

}  // namespace accelsim::gpu
