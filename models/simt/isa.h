#pragma once
// The SIMT warp ISA (docs/simt-isa.md is the reference): 32-bit registers per thread, 8 predicate
// registers, special registers, integer/FP32/SFU arithmetic, shuffles, global and shared memory,
// barrier, predicated branch, exit, fp16/bf16 conversions and the tensor-core MMAs (m16n8k16 on
// fp16/bf16, m16n8k32 on int8 and fp8). A Kernel is what the
// assembler produces: decoded instructions with branch targets, reconvergence points (immediate
// post-dominators) and per-instruction scoreboard lists already resolved, so the hot loops never
// look anything up.
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace accelsim::simt {

constexpr int kPredicateRegisters = 8;
constexpr int kMaxRegisters = 255;

enum class Opcode : std::uint8_t {
    mov, add, sub, mul, mad, div, rem, min, max, shl, shr, and_, or_, xor_, not_,
    fadd, fsub, fmul, ffma, fmin, fmax, i2f, f2i,
    setp, selp,
    ex2, rcp, rsqrt,
    shfl,
    ld_global, st_global, ld_shared, st_shared,
    bar, bra, exit, mma, nop,
    cvt, prmt,
    // sm_90 asynchronous operations (docs/simt-isa.md, "Hopper: warpgroup MMA, TMA, mbarriers")
    wgmma_fence, wgmma_mma, wgmma_commit, wgmma_wait,
    mbarrier_init, mbarrier_arrive, mbarrier_expect_tx, mbarrier_wait,
    tma_load, mbarrier_arrive_remote
};

// The pipeline an instruction issues to (timing); control instructions use no pipeline.
enum class Unit : std::uint8_t { int_alu, fp32, sfu, ldst, tensor, control };
constexpr int kUnitCount = 6;

enum class Compare : std::uint8_t { eq, ne, lt, le, gt, ge };
enum class CompareType : std::uint8_t { s32, u32, f32 };
enum class ShuffleMode : std::uint8_t { idx, up, down, bfly };
// f16, bf16: mma.m16n8k16 with fp32 accumulators; s8: mma.m16n8k32 on signed 8-bit inputs with
// s32 accumulators (PTX's mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32); e4m3, e5m2:
// mma.m16n8k32 on fp8 inputs with fp32 accumulators (PTX's
// mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32, sm_89+; A's and B's fp8 types are chosen
// independently, e.g. .e5m2.e4m3).
enum class MmaType : std::uint8_t { f16, bf16, s8, e4m3, e5m2 };
constexpr bool is_k32(MmaType type) { return type == MmaType::s8 || type == MmaType::e4m3 || type == MmaType::e5m2; }
// Multiply-accumulates of one mma warp instruction of the type: m16n8k16 = 2048, m16n8k32 = 4096.
constexpr int mma_macs(MmaType type) { return is_k32(type) ? 16 * 8 * 32 : 16 * 8 * 16; }
// The type's name as PTX spells it (.f16, .bf16, .s8, .e4m3, .e5m2), without the dot.
constexpr const char* mma_type_name(MmaType type) {
    return type == MmaType::f16 ? "f16" : type == MmaType::bf16 ? "bf16" : type == MmaType::s8 ? "s8" : type == MmaType::e4m3 ? "e4m3" : "e5m2";
}
// Bytes of one operand element: 1 for the k32 (8-bit) types, 2 for f16/bf16.
constexpr int mma_element_bytes(MmaType type) { return is_k32(type) ? 1 : 2; }
// cvt forms: unpack one 16-bit half of a register to fp32, or pack two fp32 into one register
// (round to nearest even, the first source in the low half). The fp8 forms (PTX's cvt with
// .e4m3x2 / .e5m2x2, sm_89+): two fp8 bytes of one 16-bit half to an f16x2 (exact), or two fp32
// to two fp8 bytes (round to nearest even, satfinite; PTX's order: the first source in the upper
// byte), zero-extended to 32 bits.
enum class Conversion : std::uint8_t {
    f32_f16_lo, f32_f16_hi, f32_bf16_lo, f32_bf16_hi, f16x2_f32, bf16x2_f32,
    f16x2_e4m3x2_lo, f16x2_e4m3x2_hi, f16x2_e5m2x2_lo, f16x2_e5m2x2_hi, e4m3x2_f32, e5m2x2_f32
};
enum class Special : std::uint8_t { tid, ctaid, ntid, nctaid, laneid, warpid, cluster_ctarank };

struct Operand {
    enum class Kind : std::uint8_t { none, reg, imm, special, param, pred };
    Kind kind = Kind::none;
    std::uint32_t value = 0;  // register / predicate / param index, immediate bits, or Special
};

// cp.async.bulk.tensor's modifier bits. kTmaIm2col: PTX's .im2col load mode (a convolution's
// input rows gathered through a tensor map in global memory; docs/simt-isa.md).
inline constexpr std::uint8_t kTmaMulticast = 1, kTmaBounded = 2, kTmaIm2col = 4;

// The im2col tensor map (PTX's CUtensorMap as cuTensorMapEncodeIm2col fills it, reduced to what a
// 2-D convolution on an NHWC tensor needs): 32-bit words at a 64-byte aligned global address.
enum Im2colMapWord : int {
    kIm2colBase,            // the tensor's first byte
    kIm2colImages,          // N
    kIm2colHeight,          // H
    kIm2colWidth,           // W
    kIm2colPixelBytes,      // bytes from one pixel to the next (C' elements)
    kIm2colOutHeight,       // OH: output rows (the pixels the box walks are output pixels)
    kIm2colOutWidth,        // OW
    kIm2colStrideH,         // PTX's elementStrides (the convolution's stride)
    kIm2colStrideW,
    kIm2colPadH,            // PTX's pixelBoxLowerCorner is -pad
    kIm2colPadW,
    kIm2colDilationH,
    kIm2colDilationW,
    kIm2colWords
};

struct Instruction {
    Opcode op = Opcode::nop;
    Unit unit = Unit::control;
    std::uint8_t modifier = 0;      // Compare, ShuffleMode, MmaType or Conversion, by opcode;
                                    // cp.async.bulk.tensor: kTmaMulticast | kTmaBounded | kTmaIm2col
    std::uint8_t vector = 1;        // memory ops: 32-bit words per lane (1, or 2 / 4 for .v2 / .v4)
    CompareType compare_type = CompareType::s32;
    std::int8_t guard = -1;         // predicate index guarding the instruction, -1 = always
    bool guard_negated = false;
    Operand dst;
    // The fourth to sixth only for cp.async.bulk.tensor: its mbarrier, and (bounded form) the rows
    // and bytes per row of the tensor from the box's origin on.
    Operand src[6];
    std::int32_t offset = 0;        // memory: byte offset added to the address operand (src[0])
    std::int32_t target = -1;       // bra: instruction index of the label
    std::int32_t reconverge = -1;   // bra: immediate post-dominator; == code size when it is kernel exit
    bool fp_payload = false;        // computes payload only: skipped in timing-only runs
    bool payload_data = false;      // a load/store moving payload: timing-only runs check and time
                                    // the addresses but do not copy the data
    // wgmma: N of m64nNk16 / m64nNk32 and the shared-memory row pitches (bytes) of its A (m rows of
    // k) and B (16-bit: k rows of n, or n rows of k with imm-trans-b 0; 8-bit: n rows of k) operands. cp.async.bulk.tensor: the box
    // (rows x bytes per row).
    std::uint16_t wgmma_n = 0, a_pitch = 0, b_pitch = 0;
    // wgmma k16 (.f16 / .bf16): PTX's imm-trans-b. 1 (the default here): B N-major, k rows of n;
    // 0: K-major, n rows of k (PTX's untransposed B, the 8-bit forms' only layout).
    bool wgmma_trans_b = true;
    // mma and wgmma: B's MmaType (modifier is A's); only the fp8 types may differ (.e4m3 x .e5m2).
    std::uint8_t b_type = 0;
    std::uint16_t box_rows = 0, box_row_bytes = 0;
    int line = 0;                   // source line, for messages
    // Scoreboard: registers read / written (mma touches register ranges), predicates as bit masks.
    std::uint8_t reads_count = 0, writes_count = 0;
    std::uint8_t reads[12] = {};
    std::uint8_t writes[4] = {};
    std::uint8_t predicates_read = 0, predicates_written = 0;
};

struct Kernel {
    std::string name;
    std::string file;                 // for messages
    std::vector<std::string> params;  // each a 32-bit value (integers, float bits or byte addresses)
    int registers = 0;                // per thread (.reg)
    std::int64_t shared_bytes = 0;    // per block (.shared)
    int cluster = 1;                  // blocks per thread-block cluster (.cluster), co-scheduled
    std::vector<Instruction> code;
    std::map<std::string, int> labels;
    // True when no branch, guard, address or shuffle lane depends on a floating-point payload, so
    // timing-only runs may skip fp_payload instructions and get identical cycles. Otherwise
    // fp_dependence says which instruction (file:line) made it unsafe.
    bool fp_payload_skippable = false;
    std::string fp_dependence;

    std::string where(const Instruction& in) const { return file + ":" + std::to_string(in.line); }
};

// Every assembly error is "FILE:LINE: message".
struct AssemblyError : std::runtime_error {
    explicit AssemblyError(const std::string& m) : std::runtime_error(m) {}
};

// A run-time fault of a kernel (address out of range, misaligned, mma with inactive lanes, ...);
// the message names the kernel file and line.
struct SimtError : std::runtime_error {
    explicit SimtError(const std::string& m) : std::runtime_error(m) {}
};

// The watchdog's defaults (docs/reliability.md, "Watchdog"): far beyond any kernel a simulation
// can afford (the longest shipped kernel runs 41,066 cycles and 1.8 M warp instructions; an
// 8192^3 fp16 GEMM would issue about 1.6 G at the 0.0029 per MAC of BERT's fc1 GEMM on a100), yet
// an endless loop reaches one of them within about a minute of host time: one warp hits the cycle
// limit (16 s measured), a whole a100 grid of warps the instruction limit (about 50 s).
inline constexpr std::uint64_t kDefaultMaxKernelCycles = 1'000'000'000ULL;
inline constexpr std::uint64_t kDefaultMaxKernelInstructions = 2'000'000'000ULL;

// A kernel the watchdog stopped (SmParams::max_cycles): no fault of its input, but a run that
// would not end (an endless loop) or not within the limit; the message names the warps still
// running and their PCs.
struct KernelTimeout : SimtError {
    explicit KernelTimeout(const std::string& m) : SimtError(m) {}
};

Kernel assemble(const std::string& source, const std::string& file_name);
Kernel assemble_file(const std::string& path);

// Immediate post-dominator of every instruction over the kernel's CFG (index == code.size() is the
// virtual exit). Exposed for tests; assemble() stores it in each branch's `reconverge`.
std::vector<int> immediate_post_dominators(const std::vector<Instruction>& code);

const char* opcode_name(Opcode op);

}  // namespace accelsim::simt
