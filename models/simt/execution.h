#pragma once
// Functional execution of warp instructions on real values: per-warp registers, predicates and
// SIMT reconvergence stack; flat global memory; shared memory per block. The timing model
// (sm_core.h) calls WarpExecutor::step() when it issues an instruction; the functional runner
// (run_functional) calls it in round-robin order. Nothing here allocates per instruction.
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "models/common/dtype.h"
#include "models/simt/isa.h"

namespace accelsim::simt {

// Flat, byte-addressed global memory with 32-bit addresses and a bump allocator for tests and
// kernels' buffers. Accesses are bounds- and alignment-checked by the executor.
class GlobalMemory {
public:
    // Addresses below this are never allocated, so a global access there (a null pointer, or a
    // small offset from one) faults.
    static constexpr std::size_t kNullBytes = 256;
    explicit GlobalMemory(std::size_t bytes = 0) : bytes_(bytes, 0) {}
    // Reserves `bytes` (zeroed) at the next `align`-aligned address and returns that address.
    std::uint32_t allocate(std::size_t bytes, std::size_t align = 256);
    struct Allocation {
        std::uint32_t address;
        std::size_t bytes;
    };
    // Every allocation, in order (the GPU chip finds an op's input and output buffers by them).
    const std::vector<Allocation>& allocations() const { return allocations_; }
    std::size_t size() const { return bytes_.size(); }
    std::uint8_t* data() { return bytes_.data(); }
    const std::uint8_t* data() const { return bytes_.data(); }
    std::uint32_t load32(std::uint32_t address) const {
        std::uint32_t v;
        std::memcpy(&v, &bytes_[address], 4);
        return v;
    }
    void store32(std::uint32_t address, std::uint32_t v) { std::memcpy(&bytes_[address], &v, 4); }
    float load_f32(std::uint32_t address) const;
    void store_f32(std::uint32_t address, float v);
    void write(std::uint32_t address, const void* src, std::size_t n);
    void read(std::uint32_t address, void* dst, std::size_t n) const;

private:
    std::vector<std::uint8_t> bytes_;
    std::vector<Allocation> allocations_;
};

struct Dim {  // 1-D grids and blocks
    std::uint32_t grid = 1;   // blocks
    std::uint32_t block = 32; // threads per block
};

struct StackEntry {
    std::int32_t pc;
    std::int32_t reconverge;  // pop when pc reaches it; -1 on the bottom entry
    std::uint32_t mask;
};

// One resident warp. Registers are [register][lane] so that one operand is 32 consecutive words.
struct Warp {
    std::vector<std::uint32_t> regs;
    std::array<std::uint32_t, kPredicateRegisters> preds{};
    std::vector<StackEntry> stack;  // reserved once; depth bounded by nesting
    std::uint32_t live = 0;         // lanes that exist and have not exited
    std::uint32_t block_id = 0;
    std::uint32_t first_thread = 0; // thread index (in block) of lane 0
    int warp_in_block = 0;
    int block_slot = 0;             // which resident block of the SM
    bool at_barrier = false;
    bool finished = true;
    std::uint32_t trips = 0;        // back-edges taken of the loop WarpExecutor::count_trips_at names

    void reset(int registers, std::uint32_t block, int warp_index, std::uint32_t threads_in_block, int slot);
    int pc() const { return stack.back().pc; }
};

// An mbarrier object (PTX ISA 9.7.13.15) in a block's shared memory: arrivals and an expected
// transaction byte count per phase. Its state lives beside the shared bytes (the 8 bytes at its
// address are reserved, not interpreted). Times are cycles (0 in functional runs).
struct Mbarrier {
    std::uint32_t address = 0;
    std::int64_t expected = 0;          // arrivals per phase (init)
    std::int64_t pending = 0;           // arrivals the current phase still needs
    std::int64_t tx = 0;                // transaction bytes expected and not yet arrived
    std::uint32_t phase = 0;            // phases completed; the current phase's parity is phase & 1
    std::uint64_t phase_time = 0;       // latest arrival or transaction time of the current phase
    std::uint64_t completed_at = 0;     // when the last completed phase completed
};

struct Block {
    std::uint32_t block_id = 0;
    std::vector<std::uint8_t> shared;
    int live_warps = 0;
    int arrived = 0;  // warps waiting at the barrier
    bool resident = false;
    std::uint32_t generation = 0;       // bumped when a new block takes the slot (late async answers)
    std::vector<Mbarrier> mbarriers;    // few per block: looked up by address
    std::uint64_t mbarrier_phases = 0;  // phases completed over all of them (wakes waiting warps)

    Mbarrier* mbarrier(std::uint32_t address) {
        for (Mbarrier& m : mbarriers)
            if (m.address == address) return &m;
        return nullptr;
    }
    // Arrivals and transaction bytes (expect_tx adds, complete_tx subtracts) at cycle `time`; the
    // phase completes when no arrival and no byte is outstanding. False if `address` holds no
    // initialized mbarrier.
    bool mbarrier_update(std::uint32_t address, std::int64_t arrivals, std::int64_t tx_bytes, std::uint64_t time);
};

// Counters the issue asks for: every issued warp instruction (branches and exits too), active lanes
// summed (lanes of the SIMT mask at issue, before the guard predicate), and the W1..W32 histogram.
struct ExecutionCounters {
    std::uint64_t issued = 0;
    std::uint64_t mma_issued = 0;  // tensor-core warp instructions (mma), skipped payload included
    std::uint64_t active_lanes = 0;
    std::array<std::uint64_t, 33> lanes_histogram{};  // [n] = issues with n active lanes (index 0 unused)
    double simd_efficiency() const { return issued ? static_cast<double>(active_lanes) / (32.0 * issued) : 0.0; }
    void add(const ExecutionCounters& o);
};

// What the timing model needs to know about one executed instruction.
struct StepResult {
    const Instruction* instruction = nullptr;
    std::uint32_t active = 0;    // SIMT mask at issue
    std::uint32_t executed = 0;  // active lanes whose guard held
    bool redirected = false;     // next pc is not pc + 1 (taken branch, divergence, reconvergence)
    bool barrier = false;        // the warp arrived at bar.sync
    bool warp_finished = false;  // every lane has exited
    std::array<std::uint32_t, 32> addresses{};  // byte addresses of executed lanes (memory ops; the
                                                // first word of a .v2 / .v4 access)
    // cp.async.bulk.tensor (one executing lane): the box's first global byte, its row pitch, the
    // shared destination and the mbarrier that counts its bytes; the rows and bytes per row read
    // from global memory (the whole box, or the part of a bounded box inside the tensor).
    std::uint32_t tma_global = 0, tma_pitch = 0, tma_shared = 0, tma_mbarrier = 0;
    std::uint32_t tma_rows = 0, tma_row_bytes = 0;
    // The im2col form: row i's first global byte (0 for a row of zeros), tma_rows of them; the
    // executor owns them until its next step.
    const std::uint32_t* tma_row_starts = nullptr;
    // mbarrier.arrive.remote: the cluster block arrived on, the barrier's address and the arrivals.
    std::uint32_t remote_block = 0, remote_mbarrier = 0, remote_arrivals = 0;
};

class WarpExecutor {
public:
    // args: one 32-bit value per kernel .param. skip_fp_payload: do not compute fp_payload
    // instructions (only allowed when kernel.fp_payload_skippable).
    WarpExecutor(const Kernel& kernel, GlobalMemory& memory, Dim dims, std::vector<std::uint32_t> args,
                 bool skip_fp_payload);
    // Executes the instruction at the warp's pc on all its active lanes.
    void step(Warp& warp, Block& block, StepResult& result);
    // Timed runs (SmCore): mbarrier arrivals are stamped with set_cycle()'s cycle, and a
    // cp.async.bulk.tensor's bytes are left for the caller to complete when they arrive.
    void set_timed(bool timed) { timed_ = timed; }
    void set_cycle(std::uint64_t cycle) { cycle_ = cycle; }
    // Loop-trip sampling (trip_sampling.h): every time a warp takes the branch at `back_edge_pc`
    // with all its active lanes, its `trips` counts one (-1: nothing is counted).
    void count_trips_at(int back_edge_pc) { counted_back_edge_ = back_edge_pc; }
    // How fp8 mma operands are read (the SM's sm.fp8_encoding; OCP unless set).
    void set_fp8_encoding(Fp8Encoding encoding) { fp8_encoding_ = encoding; }
    // Waves of 64 (sm.wave_size 64) run as two 32-lane warps (halves). A shfl is the wave's: the
    // timed core gathers the 64 source words of both halves (wave_words[32 h + l]: half h, lane l)
    // and sets them for the next step of half `half`, whose lanes are then lanes 32 half .. 32 half
    // + 31 of the wave (lane numbers, offsets and masks taken mod 64). nullptr: a 32-lane shfl.
    void set_wave_shuffle(const std::uint32_t* wave_words, int half) {
        wave_words_ = wave_words;
        wave_half_ = half;
    }
    // The 32 lanes' values of an operand of `warp` (a register, an immediate, a parameter, a special).
    void operand_words(const Operand& o, const Warp& warp, std::uint32_t* out) const;
    // Clusters (Kernel::cluster > 1): the resident blocks by id, so that a block can reach its
    // cluster peers' shared memory (nullptr: not resident).
    void set_resident(std::uint32_t block_id, Block* block);
    Block* resident(std::uint32_t block_id) const {
        return block_id < resident_.size() ? resident_[block_id] : nullptr;
    }
    // mbarrier.wait.parity of `warp` (its first executing lane): the barrier it waits on (nullptr
    // when the guard holds on no lane) and whether the phase of that parity has completed.
    const Mbarrier* mbarrier_waited(const Warp& warp, Block& block, const Instruction& in, bool& satisfied) const;
    const ExecutionCounters& counters() const { return counters_; }
    const Kernel& kernel() const { return kernel_; }
    Dim dims() const { return dims_; }
    // What a second executor of the same launch needs (run_blocks_untimed).
    GlobalMemory& memory() const { return memory_; }
    const std::vector<std::uint32_t>& args() const { return args_; }
    bool skips_fp_payload() const { return skip_fp_payload_; }
    Fp8Encoding fp8_encoding() const { return fp8_encoding_; }

private:
    const std::uint32_t* fetch(const Operand& o, const Warp& w, std::uint32_t* scratch) const;
    [[noreturn]] void fault(const Instruction& in, const std::string& msg) const;
    void execute_mma(const Instruction& in, Warp& w);
    void execute_mma_k32(const Instruction& in, Warp& w);  // mma.m16n8k32: s8, e4m3, e5m2
    void execute_wgmma(const Instruction& in, Warp& w, const Block& block);
    void execute_wgmma_k32(const Instruction& in, Warp& w, const Block& block);  // m64nNk32: s8, e4m3, e5m2
    // An fp8 operand's value (e4m3 or e5m2, in the SM's encoding).
    float fp8_operand(std::uint8_t code, MmaType type) const;
    void execute_async(const Instruction& in, Warp& w, Block& block, std::uint32_t exec, StepResult& r);
    // cp.async.bulk.tensor.im2col: the box's row starts (im2col_rows_) from the tensor map, and the copy.
    void execute_tma_im2col(const Instruction& in, Warp& w, Block& block, int lane, std::uint32_t dst, StepResult& r);
    std::array<std::uint32_t, 256> im2col_rows_{};
    std::uint32_t shared_operand(const Instruction& in, const Warp& w, int lane, std::uint32_t bytes,
                                 const Block& block) const;
    bool timed_ = false;
    int counted_back_edge_ = -1;
    std::uint64_t cycle_ = 0;
    const std::uint32_t* wave_words_ = nullptr;
    int wave_half_ = 0;
    Fp8Encoding fp8_encoding_ = Fp8Encoding::ocp;
    std::vector<Block*> resident_;  // by block id, cluster kernels only
    Block& cluster_peer(const Instruction& in, const Warp& w, std::uint32_t rank) const;

    const Kernel& kernel_;
    GlobalMemory& memory_;
    Dim dims_;
    std::vector<std::uint32_t> args_;
    bool skip_fp_payload_;
    ExecutionCounters counters_;
};

// Runs a whole grid functionally (no timing): blocks one after another, warps of a block in
// round-robin order one instruction at a time. Returns the counters. Throws SimtError past
// max_issued warp instructions (an endless loop).
ExecutionCounters run_functional(const Kernel& kernel, GlobalMemory& memory, Dim dims,
                                 const std::vector<std::uint32_t>& args,
                                 std::uint64_t max_issued = 10'000'000'000ULL);

// Runs blocks first .. first + count - 1 of `launch`'s grid functionally on an executor of its
// own (same kernel, memory, arguments, payload skipping and fp8 encoding; `launch`'s counters do
// not move), `together` blocks at a time side by side (their warps round-robin, one instruction
// each, as resident blocks progress together; 1: one block after another, as run_functional),
// and hands every 32-byte sector their global accesses touch to `on_sector(sector_address,
// write)` in execution order: a load's or store's executed lanes coalesced as the timed SM
// coalesces them, a TMA box's rows. Wave sampling replays the blocks it skipped this way, so that
// the caches hold their lines afterwards. Throws SimtError past max_issued warp instructions.
void run_blocks_untimed(const WarpExecutor& launch, std::uint32_t first, std::uint32_t count, std::uint32_t together,
                        const std::function<void(std::uint32_t sector_address, bool write)>& on_sector,
                        std::uint64_t max_issued = 10'000'000'000ULL);

// Loop-trip sampling: runs the warps of one block, as a timed SM holds them mid-run, on from where
// they stand until each has taken `trips` more back-edges of the loop `exec` counts
// (count_trips_at) and stands where it stood again (the same pc and barrier state), warps in
// round-robin order one instruction at a time and barriers released as run_functional does. The
// block is then `trips` loop trips further on, every register, shared byte and global store as
// running those trips gives them; only `exec`'s counters see the instructions. The caller
// guarantees the trips are left (no warp finishes); throws SimtError if one does, on a deadlock,
// or past max_issued warp instructions. on_sector (may be empty) hears the 32-byte sectors the
// trips' global accesses touch, as run_blocks_untimed's does.
void advance_loop_trips(WarpExecutor& exec, Block& block, const std::vector<Warp*>& warps, std::uint32_t trips,
                        const std::function<void(std::uint32_t sector_address, bool write)>& on_sector,
                        std::uint64_t max_issued = 10'000'000'000ULL);

}  // namespace accelsim::simt
