#pragma once
// The GPU kernel library's elementwise ops: add, mul, relu, gelu (one row each in elementwise.cpp) as grid-stride loops in
// the project's warp ISA. The grid is one wave of resident blocks (or fewer when the op is small);
// each thread handles word i, i + grid*block, ... so the last trip is a real tail where lanes past
// the end leave and the rest run on with a partial mask.
//
// Tensors are stored in the op's dtype: fp32 one element per 32-bit word; fp16 and bf16 two per
// word (packed pairs, the lower-indexed element in the low half), so a 16-bit kernel loads a word,
// converts both halves to fp32, computes in fp32 and packs the two results back. An odd element
// count leaves the high half of the last word as padding (zero on input, don't-care on output).
// int8, fp8_e4m3 and fp8_e5m2 tensors are held four per word (element 4w in the low byte; a tail
// word's unused bytes likewise padding): an 8-bit kernel unpacks the word's four values to fp32,
// computes in fp32 and packs four results (docs/gpu.md, "8-bit elementwise kernels").
// The storage helpers below are shared with the reduction kernels (reduction.h).
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "models/common/op.h"
#include "models/gpu/lowering.h"
#include "models/simt/execution.h"
#include "models/simt/isa.h"

namespace accelsim::gpu {

inline constexpr std::uint32_t kElementwiseBlock = 256;

// ---- storage of tensors in global memory -------------------------------------------------------

// How a dtype is held in memory by the library's vector kernels: fp16 and bf16 as packed pairs;
// everything else (fp32, and int8/int32 traces, which these float kernels run in fp32) as fp32.
// The 8-bit storages (four per word) are only the elementwise kernels' so far, so storage_of keeps
// mapping int8 and fp8 to f32 (the GEMM epilogue and reductions' form) and eight_bit_storage names them:
//   s8:   int8 q with a per-tensor scale, real = q * scale (models/common/quantization.h);
//   e4m3, e5m2: fp8 bytes in the chip's encoding (dtype.h; OCP on NVIDIA); the library's inputs
//         carry no scale, the outputs of ops that compute new values carry one (elementwise.cpp
//         fp8_output_scaled, reduction.cpp), real = value * scale.
enum class Storage : std::uint8_t { f32, f16, bf16, s8, e4m3, e5m2 };
Storage storage_of(DType dtype);
// s8, e4m3 or e5m2 for int8, fp8_e4m3, fp8_e5m2; nullopt for any other dtype.
std::optional<Storage> eight_bit_storage(DType dtype);
constexpr bool is_eight_bit(Storage s) { return s == Storage::s8 || s == Storage::e4m3 || s == Storage::e5m2; }
const char* to_string(Storage s);
// Elements per 32-bit word (1, 2 or 4) and words holding `elements` elements.
int elements_per_word(Storage s);
std::int64_t storage_words(std::int64_t elements, Storage s);
// Unit roundoff of the stored format (2^-24 fp32, 2^-11 fp16, 2^-8 bf16, 2^-4 e4m3, 2^-3 e5m2):
// rounding a value v to the format changes it by at most u * |v| (normal range; see
// subnormal_spacing). s8 is fixed point (its error is half a step of its scale): 0.
double unit_roundoff(Storage s);
// Half the spacing of the format's subnormals: the absolute rounding error floor near zero (fp8:
// the OCP encodings' 2^-10 and 2^-17, which also bound FNUZ's finer subnormals; s8: 0).
double subnormal_half_spacing(Storage s);
// The value `v` becomes when stored in `s` (round to nearest even; s8: `v` is already divided by
// the scale, and becomes round_half_even(v) clamped to [-127, 127]; fp8: saturating).
float round_to(Storage s, float v, Fp8Encoding encoding = Fp8Encoding::ocp);
// Element `index` of a tensor stored at `address` (s8: the integer q, not yet times its scale).
float load_element(const simt::GlobalMemory& memory, std::uint32_t address, std::int64_t index, Storage s,
                   Fp8Encoding encoding = Fp8Encoding::ocp);
// Stores `values` (rounded to `s`; s8: values already divided by the scale) from element 0 at
// `address`, which must hold storage_words.
void store_elements(simt::GlobalMemory& memory, std::uint32_t address, const std::vector<float>& values, Storage s,
                    Fp8Encoding encoding = Fp8Encoding::ocp);
// Uniform in [-1, 1) from the top 24 bits of one draw: exact in fp32 and the same on every
// platform (std::uniform_real_distribution is not specified bit for bit).
float unit_random(std::mt19937_64& rng);
// One random stream per (seed, tensor), so adding a tensor does not change the others' data.
std::mt19937_64 tensor_rng(std::uint64_t seed, int tensor);
// Occupancy-limited blocks per SM of `kernel` at `threads` per block on the target's SMs (at least
// 1); throws LoweringError when such a block cannot run at all.
int blocks_per_sm(const simt::Kernel& kernel, std::uint32_t threads, const LoweringTarget& target);

// The grid-stride loop every one-thread-per-word kernel shares (elementwise ops, pool):
//   i = ctaid * ntid + tid; stride = nctaid * ntid
//   loop: if (i >= n) exit; BODY; i += stride
// with r0 = i, r2 = stride, r3 = 4 i (the word's byte offset) on entry to `body`, which must keep
// r0 and r2. `params` must name n (the words to cover).
std::string grid_stride_source(const std::string& name, const std::string& params, const std::string& body,
                               int registers = 10);

// ---- elementwise ops ---------------------------------------------------------------------------

// The assembled kernel for an elementwise op kind and storage (add, mul: params n, a, b, y; relu,
// gelu: n, x, y; n counts 32-bit words; s8 adds each input's scale and the output's 1/scale:
// scale_a, scale_b or scale_x, then inv_scale_y; fp8 add, mul and gelu add inv_scale_y), assembled
// once per process; nullptr for other kinds.
const simt::Kernel* elementwise_kernel(OpKind kind, Storage storage = Storage::f32);

// Whether the target runs the 8-bit elementwise kernels (and the 8-bit softmax and layernorm:
// reduction.h) of `dtype`: int8 on every SIMT chip (prmt,
// i2f and fp32 arithmetic are in every ISA level); fp8 only where PTX has the e4m3x2 / e5m2x2
// cvt forms (compute capability sm_89 and later). Otherwise the op keeps its roofline row.
bool runs_eight_bit_elementwise(DType dtype, const LoweringTarget& target);

// The 8-bit kernels' unpacking and packing, shared with the 8-bit row reductions (reduction.h):
// unpack_eight_bit unpacks the word in register `word` to fp32 values in registers
// first..first+3 (element 4w + j in register first + j; s8 multiplies each integer by the
// parameter `scale`); `word` may be first + 3, which is written last. pack_eight_bit requantizes
// the four fp32 values in first..first+3 (s8: times the parameter inv_scale_y, clamped to
// [-127, 127], rounded half to even; fp8: cvt.rn.satfinite, first times inv_scale_y when
// `scaled_fp8`) and packs them into register `first`.
std::string unpack_eight_bit(Storage s, const std::string& word, int first, const std::string& scale);
std::string pack_eight_bit(Storage s, int first, bool scaled_fp8 = false);
// A float's bits as a kernel argument.
std::uint32_t float_argument(float v);
// The error bound of an output whose fp32 result is within fp32_error of `want`, once stored in
// `s`: 16-bit and fp8 round once more (fp8: and saturate at fp8_largest, when > 0; an fp8 output
// with an output_scale other than 1 was multiplied by fl(1 / output_scale) first and is read back
// times output_scale); int8 is requantized with output_scale (half a step). The derivation is at
// the definition; the 8-bit row reductions (reduction.h) use it too.
double stored_output_tolerance(Storage s, double fp32_error, double want, double output_scale = 1.0,
                               double fp8_largest = 0.0);

// The report's words for what an 8-bit elementwise op (add, mul, relu, gelu, copy) or row op
// (softmax, layernorm) computes (QuantizationError::scheme): how its inputs are quantized, that the
// op runs in fp32, and how its output is stored: int8 requantized with its own calibrated scale (a
// copy keeps its input's), fp8 rounded to the format after the power-of-two output scale
// (fp8_output_scaled; relu and copy are exact in the format and unscaled).
std::string eight_bit_vector_scheme(OpKind kind, DType dtype, Fp8Encoding encoding = Fp8Encoding::ocp);
// The first clause of such a scheme (and of the pools'): how the op's inputs, named by `inputs`
// ("input x"; `several`: more than one tensor), were quantized: int8 per-tensor scales, or fp8
// rounding in the chip's encoding.
std::string eight_bit_inputs_wording(DType dtype, Fp8Encoding encoding, const std::string& inputs, bool several);

// An int8 output's per-tensor scale, calibrated statically on the host: max|reference output| /
// 127 (1 when every output is 0), the convention of int8_symmetric_scale (quantization.h).
float int8_output_scale(const std::vector<double>& reference_outputs);
// An fp8 output's per-tensor scale, calibrated on the host as amax scaling does (Transformer
// Engine's delayed scaling, cuDNN's fp8 attention), rounded to a power of two as OCP's MX formats
// (E8M0 scales) and Transformer Engine's power-of-two option do: the smallest 2^k with
// max|reference output| / 2^k <= `largest` (the format's largest finite value), 1 when every
// output is 0. A power of two moves no value within its binade, so a scaled output is never less
// precise than an unscaled one below the largest value, and fewer fall below the smallest normal.
float fp8_output_scale(const std::vector<double>& reference_outputs, double largest);

// Grid and block for n words on `sms` SMs that each hold `blocks_per_sm` blocks of
// kElementwiseBlock threads: ceil(n / block) blocks, capped at one full wave.
simt::Dim elementwise_dims(std::int64_t n, int sms, int blocks_per_sm);

// Whether the library has a kernel for this elementwise kind (without one, gpu chips keep the op's
// roofline row).
bool has_elementwise_kernel(OpKind kind);

// What one element computes, in double (the --validate reference): gelu is the sigmoid form
// x / (1 + e^(-1.702 x)), which the kernel evaluates as x * 1 / (1 + 2^(-1.702 * log2(e) * x)).
double elementwise_reference_double(OpKind kind, double a, double b);

}  // namespace accelsim::gpu
