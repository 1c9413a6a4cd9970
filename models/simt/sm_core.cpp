#include "models/simt/sm_core.h"

#include "models/simt/shared_access.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace accelsim::simt {

namespace {
constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();
// A register whose load is still in flight at a non-blocking port: not ready before its answer.
constexpr std::uint64_t kPending = SmCore::kWaitsForMemory;
// Tags of the sectors an SM sends: what the answer completes (kind in bits 62-63, a 32-bit id
// below; ports may use the bits in between, gpu::HierarchyMemoryPort does).
constexpr std::uint64_t kTagLoad = 0, kTagFill = std::uint64_t{1} << 62, kTagStore = std::uint64_t{2} << 62;
constexpr std::uint64_t kTagTma = std::uint64_t{3} << 62;
constexpr std::uint64_t kTagKind = std::uint64_t{3} << 62;
}

SmCore::SmCore(const SmParams& params, int sm_index, WarpExecutor& executor, GlobalMemoryPort& memory)
    : params_(params),
      sm_index_(sm_index),
      executor_(executor),
      l1_(params.l1.bytes > 0 ? std::make_unique<L1Cache>(params.l1) : nullptr),
      memory_(memory),
      non_blocking_(memory.lookahead_cycles() > 0),
      kernel_(executor.kernel()) {
    const Dim dims = executor.dims();
    occupancy_ = compute_occupancy(params_.limits, {static_cast<int>(dims.block), kernel_.registers, kernel_.shared_bytes});
    if (occupancy_.blocks_per_sm == 0)
        throw SimtError(kernel_.file + ": kernel '" + kernel_.name + "' cannot launch on " + params_.limits.arch +
                        ": " + occupancy_.unlaunchable_reason);
    if (params_.sub_partitions < 1) throw SimtError("SM: sub_partitions must be at least 1");
    warps_per_block_ = occupancy_.core_warps_per_block;
    const auto slots = static_cast<std::size_t>(occupancy_.blocks_per_sm * warps_per_block_);
    warps_.resize(slots);
    timing_.resize(slots);
    blocked_until_.assign(slots, 0);
    blocked_reason_.assign(slots, Stall::idle);
    generation_.assign(slots, 0);
    const auto registers = static_cast<std::size_t>(kernel_.registers);
    reg_ready_.assign(slots * registers, 0);
    const auto halves = static_cast<std::size_t>(std::max(1, params_.limits.wave_size / kWarpSize));
    wave_halves_ = halves == 2;
    const auto per_block = static_cast<std::size_t>(warps_per_block_);
    const std::size_t waves_per_block = (per_block + halves - 1) / halves;
    for (std::size_t i = 0; i < slots; ++i) {
        timing_[i].reg_ready = reg_ready_.data() + i * registers;
        // A wave of 64 is two consecutive 32-lane warps of its block; both halves issue from one
        // scheduler (SIMD), also when the block has an odd number of halves.
        const std::size_t wave = i / per_block * waves_per_block + i % per_block / halves;
        timing_[i].sub_partition = static_cast<int>(wave % static_cast<std::size_t>(params_.sub_partitions));
    }
    if (wave_halves_) {
        shuffle_waiting_.assign(slots, 0);
        shuffle_pending_.assign(slots, 0);
        shuffle_alone_.assign(slots, 0);
        wave_words_.resize(slots);
    }
    blocks_.resize(static_cast<std::size_t>(occupancy_.blocks_per_sm));
    for (int sp = 0; sp < params_.sub_partitions; ++sp)
        schedulers_.push_back(make_warp_scheduler(params_.warp_scheduler, params_.two_level_active_warps));
    pipe_free_.assign(static_cast<std::size_t>(params_.sub_partitions), {});
    tensor_async_free_.assign(static_cast<std::size_t>(params_.sub_partitions), 0);
    async_.resize(slots);
    woken_phases_.assign(static_cast<std::size_t>(occupancy_.blocks_per_sm), 0);
    block_arrival_.assign(static_cast<std::size_t>(occupancy_.blocks_per_sm), 0);
    executor_.set_timed(true);
    sp_blocked_until_.assign(static_cast<std::size_t>(params_.sub_partitions), 0);
    sp_blocked_class_.assign(static_cast<std::size_t>(params_.sub_partitions), Stall::idle);
}

void SmCore::add_block(std::uint32_t block_id) {
    std::size_t b = 0;
    while (b < blocks_.size() && blocks_[b].resident) ++b;
    if (b == blocks_.size()) throw SimtError("SM: add_block with no free block slot");
    Block& block = blocks_[b];
    block.block_id = block_id;
    block.resident = true;
    block.shared.assign(static_cast<std::size_t>(kernel_.shared_bytes), 0);
    block.live_warps = warps_per_block_;
    block.arrived = 0;
    block.mbarriers.clear();
    ++block.generation;
    woken_phases_[b] = block.mbarrier_phases;
    for (int i = 0; i < warps_per_block_; ++i) {
        const int slot = static_cast<int>(b) * warps_per_block_ + i;
        warps_[static_cast<std::size_t>(slot)].reset(kernel_.registers, block_id, i, executor_.dims().block, static_cast<int>(b));
        WarpTiming& t = timing_[static_cast<std::size_t>(slot)];
        std::fill(t.reg_ready, t.reg_ready + kernel_.registers, 0);
        t.pred_ready.fill(0);
        t.next = instruction_at_pc(warps_[static_cast<std::size_t>(slot)]);
        t.operands_ready = operands_ready(t);
        t.ibuffer_ready = now_;
        blocked_until_[static_cast<std::size_t>(slot)] = 0;
        async_[static_cast<std::size_t>(slot)] = WarpAsync{};
        if (wave_halves_)
            shuffle_waiting_[static_cast<std::size_t>(slot)] = shuffle_pending_[static_cast<std::size_t>(slot)] =
                shuffle_alone_[static_cast<std::size_t>(slot)] = 0;
        ++generation_[static_cast<std::size_t>(slot)];
        schedulers_[static_cast<std::size_t>(t.sub_partition)]->add(slot);
    }
    executor_.set_resident(block_id, &block);
    if (network_) network_->sm_of_block[block_id] = sm_index_;
    ++resident_blocks_;
    block_arrival_[b] = blocks_started_++;
    resident_warps_ += warps_per_block_;
    std::fill(sp_blocked_until_.begin(), sp_blocked_until_.end(), 0);
    if (record_resident_warps_) log_resident_warps();
}

int SmCore::block_rank(std::size_t slot) const {
    int rank = 0;
    for (std::size_t b = 0; b < blocks_.size(); ++b)
        rank += blocks_[b].resident && block_arrival_[b] < block_arrival_[slot] ? 1 : 0;
    return rank;
}

std::size_t SmCore::block_slot_of_rank(int rank) const {
    for (std::size_t b = 0; b < blocks_.size(); ++b)
        if (blocks_[b].resident && block_rank(b) == rank) return b;
    throw std::logic_error("loop-trip sampling: no resident block of rank " + std::to_string(rank));
}

bool SmCore::loop_progress(int head_pc, int back_edge_pc, std::uint32_t trips_per_block,
                           std::vector<std::uint32_t>& fewest_left) const {
    fewest_left.assign(static_cast<std::size_t>(resident_blocks_), trips_per_block);
    for (std::size_t b = 0; b < blocks_.size(); ++b) {
        const Block& block = blocks_[b];
        if (!block.resident) continue;
        if (block.live_warps != warps_per_block_) return false;
        std::uint32_t& left = fewest_left[static_cast<std::size_t>(block_rank(b))];
        for (int i = 0; i < warps_per_block_; ++i) {
            const Warp& w = warps_[b * static_cast<std::size_t>(warps_per_block_) + static_cast<std::size_t>(i)];
            if (w.finished) return false;
            if (w.pc() > back_edge_pc && w.trips != trips_per_block)  // left the loop: its lowering's count checked
                throw std::logic_error("loop-trip sampling: a warp left the loop after " + std::to_string(w.trips) +
                                       " back-edges, its lowering said " + std::to_string(trips_per_block));
            if (w.pc() < head_pc || w.pc() > back_edge_pc) return false;
            if (w.trips > trips_per_block)
                throw std::logic_error("loop-trip sampling: a warp took more trips than its lowering said (" +
                                       std::to_string(w.trips) + " > " + std::to_string(trips_per_block) + ")");
            left = std::min(left, trips_per_block - w.trips);
        }
    }
    return true;
}

void SmCore::take_trip_edges(std::vector<std::vector<std::uint64_t>>& by_rank) {
    for (const auto& [cycle, slot] : edge_log_) {
        const auto rank = static_cast<std::size_t>(block_rank(static_cast<std::size_t>(slot)));
        if (rank >= by_rank.size()) by_rank.resize(rank + 1);
        by_rank[rank].push_back(cycle);
    }
    edge_log_.clear();
}

void SmCore::advance_resident_block(int rank, WarpExecutor& exec, std::uint32_t trips,
                                    const std::function<void(std::uint32_t, bool)>& on_sector, std::uint64_t max_issued) {
    const std::size_t b = block_slot_of_rank(rank);
    std::vector<Warp*> block_warps;
    for (int i = 0; i < warps_per_block_; ++i)
        block_warps.push_back(&warps_[b * static_cast<std::size_t>(warps_per_block_) + static_cast<std::size_t>(i)]);
    advance_loop_trips(exec, blocks_[b], block_warps, trips, on_sector, max_issued);
}

void SmCore::log_resident_warps() {
    if (!resident_warps_log_.empty() && resident_warps_log_.back().cycle == now_) resident_warps_log_.back().warps = resident_warps_;
    else resident_warps_log_.push_back({now_, resident_warps_});
}

Stall SmCore::try_issue(int sp, std::uint64_t& next_change) {
    // The scheduler-cycle's class when nothing issues: pipeline if some warp was held only by a
    // busy pipeline, else scoreboard if some warp waited on an operand, else barrier, else idle
    // (no warp with a valid instruction). Every timestamp that would change a warp's state is
    // folded into next_change so that the classification holds until then.
    IssueScan scan;
    WarpScheduler& scheduler = *schedulers_[static_cast<std::size_t>(sp)];
    const int preferred = scheduler.preferred();
    if (preferred >= 0 && check_warp(sp, preferred, scan, next_change)) return Stall::issued;
    // Hottest loop of the simulator: most warps are still blocked by their cached check, so the
    // first pass only looks for the first unblocked one in priority order. Which warp issues
    // does not depend on the others' reasons, so those are gathered only when nothing issued.
    const std::vector<int>& order = scheduler.order();
    const std::uint64_t* until = blocked_until_.data();
    for (const int slot : order) {
        if (until[static_cast<std::size_t>(slot)] > now_ || slot == preferred) continue;
        if (check_warp(sp, slot, scan, next_change)) return Stall::issued;
    }
    // Nothing issued: every warp checked has its blocked time and reason cached (check_warp
    // caches every failure), so the class and the next change are the union over the warps.
    for (const int slot : order) {
        scan.reasons |= 1u << static_cast<unsigned>(blocked_reason_[static_cast<std::size_t>(slot)]);
        next_change = std::min(next_change, until[static_cast<std::size_t>(slot)]);
    }
    auto saw = [&](Stall s) { return (scan.reasons >> static_cast<unsigned>(s)) & 1u; };
    if (saw(Stall::pipeline)) return Stall::pipeline;
    if (saw(Stall::scoreboard)) return Stall::scoreboard;
    if (saw(Stall::barrier)) return Stall::barrier;
    return Stall::idle;
}

bool SmCore::check_warp(int sp, int slot, IssueScan& scan, std::uint64_t& next_change) {
    const auto i = static_cast<std::size_t>(slot);
    const std::uint64_t until = blocked_until_[i];
    if (until > now_) {
        scan.reasons |= 1u << static_cast<unsigned>(blocked_reason_[i]);
        next_change = std::min(next_change, until);
        return false;
    }
    const WarpTiming& t = timing_[i];
    if (t.ibuffer_ready > now_) {
        blocked_until_[i] = t.ibuffer_ready;
        blocked_reason_[i] = Stall::idle;
        next_change = std::min(next_change, t.ibuffer_ready);
        return false;
    }
    const Instruction& in = *t.next;
    const std::uint64_t operands = t.operands_ready;
    if (operands > now_) {
        scan.reasons |= 1u << static_cast<unsigned>(Stall::scoreboard);
        blocked_until_[i] = operands;
        blocked_reason_[i] = Stall::scoreboard;
        next_change = std::min(next_change, operands);
        return false;
    }
    const std::uint64_t pipe =
        in.unit == Unit::control ? 0 : pipe_free_[static_cast<std::size_t>(sp)][static_cast<std::size_t>(in.unit)];
    if (pipe > now_) {
        scan.reasons |= 1u << static_cast<unsigned>(Stall::pipeline);
        blocked_until_[i] = pipe;
        blocked_reason_[i] = Stall::pipeline;
        next_change = std::min(next_change, pipe);
        return false;
    }
    if (in.op == Opcode::shfl && wave_halves_ && !wave_shuffle_ready(slot, in)) {
        // Waits for its sibling (released by it: no time to fold into next_change).
        scan.reasons |= 1u << static_cast<unsigned>(Stall::barrier);
        blocked_until_[i] = kNever;
        blocked_reason_[i] = Stall::barrier;
        return false;
    }
    if (in.op >= Opcode::wgmma_fence) {  // the sm_90 operations (last in Opcode)
        Stall reason = Stall::scoreboard;
        const std::uint64_t ready = async_ready(slot, in, reason);
        if (ready > now_) {
            scan.reasons |= 1u << static_cast<unsigned>(reason);
            blocked_until_[i] = ready;
            blocked_reason_[i] = reason;
            next_change = std::min(next_change, ready);
            return false;
        }
    }
    issue(sp, slot);
    return true;
}

std::uint64_t SmCore::operands_ready(const WarpTiming& t) {
    if (!t.next) return 0;
    const Instruction& in = *t.next;
    std::uint64_t operands = 0;
    for (int r = 0; r < in.reads_count; ++r) operands = std::max(operands, t.reg_ready[in.reads[r]]);
    for (int r = 0; r < in.writes_count; ++r) operands = std::max(operands, t.reg_ready[in.writes[r]]);
    const std::uint8_t preds = in.predicates_read | in.predicates_written;
    if (preds)
        for (int p = 0; p < kPredicateRegisters; ++p)
            if ((preds >> p) & 1) operands = std::max(operands, t.pred_ready[static_cast<std::size_t>(p)]);
    return operands;
}

void SmCore::issue(int sp, int slot) {
    Warp& w = warps_[static_cast<std::size_t>(slot)];
    WarpTiming& t = timing_[static_cast<std::size_t>(slot)];
    Block& block = blocks_[static_cast<std::size_t>(w.block_slot)];
    if (params_.record_issue_order)
        issue_order_.push_back({now_, sp, slot, w.block_id, w.warp_in_block, w.pc()});
    executor_.set_cycle(now_);
    const bool wave_shuffle = t.next->op == Opcode::shfl && wave_halves_;
    if (wave_shuffle) executor_.set_wave_shuffle(wave_words_of(slot).data(), w.warp_in_block % 2);
    const std::uint32_t trips_before = w.trips;
    executor_.step(w, block, step_);
    if (w.trips != trips_before && trip_series_) edge_log_.emplace_back(now_, w.block_slot);
    if (wave_shuffle) {
        executor_.set_wave_shuffle(nullptr, 0);
        shuffle_pending_[static_cast<std::size_t>(slot)] = 0;
    }
    t.next = instruction_at_pc(w);
    const Instruction& in = *step_.instruction;
    auto& pipes = pipe_free_[static_cast<std::size_t>(sp)];
    std::uint64_t ready = now_ + 1;
    std::uint64_t busy_until = now_ + 1;
    bool long_latency = false;
    // The sm_90 operations take one issue slot of their pipe; their work proceeds asynchronously.
    const bool asynchronous = in.op >= Opcode::wgmma_fence;
    if (asynchronous) issue_async(sp, slot, in, block);
    switch (asynchronous ? Unit::control : in.unit) {
        case Unit::int_alu:
        case Unit::fp32:
        case Unit::sfu:
        case Unit::tensor: {
            const PipelineTiming p = in.unit == Unit::int_alu ? params_.int_alu
                                     : in.unit == Unit::fp32  ? params_.fp32
                                     : in.unit == Unit::sfu   ? params_.sfu
                                                              : params_.tensor_of(static_cast<MmaType>(in.modifier),
                                                                                  static_cast<MmaType>(in.b_type));
            ready = now_ + static_cast<std::uint64_t>(p.latency);
            busy_until = now_ + static_cast<std::uint64_t>(p.initiation_interval);
            break;
        }
        case Unit::ldst: {
            if (in.op == Opcode::shfl) {
                ready = now_ + static_cast<std::uint64_t>(params_.shared_latency);
                busy_until = now_ + static_cast<std::uint64_t>(params_.shuffle_initiation_interval);
            } else if (step_.executed == 0) {
                // every lane predicated off: one slot in the pipe, nothing moves
            } else if (in.op == Opcode::ld_shared || in.op == Opcode::st_shared) {
                const int degree = shared_access_wavefronts(step_.addresses, step_.executed, in.vector,
                                                            params_.smem_banks, params_.smem_bank_bytes);
                ++stats_.shared_requests;
                stats_.shared_wavefronts += static_cast<std::uint64_t>(degree);
                busy_until = now_ + static_cast<std::uint64_t>(degree);
                ready = now_ + static_cast<std::uint64_t>(params_.shared_latency + degree - 1);
            } else {
                // Each lane's access (4, 8 or 16 bytes, aligned to its size) lies in one sector.
                const bool write = in.op == Opcode::st_global;
                const int n = coalesce_sectors(step_.addresses, step_.executed, 32, sectors_);
                ++stats_.global_requests;
                stats_.global_sectors += static_cast<std::uint64_t>(n);
                const int per_cycle = std::max(1, params_.global_sectors_per_cycle);
                busy_until = now_ + static_cast<std::uint64_t>((n + per_cycle - 1) / per_cycle);
                // The sectors' L1 sets load together instead of one host miss after another.
                if (l1_)
                    for (int i = 0; i < n; ++i) l1_->prefetch_set(sectors_[static_cast<std::size_t>(i)]);
                if (write) {
                    for (int i = 0; i < n; ++i) {
                        const std::uint32_t sector = sectors_[static_cast<std::size_t>(i)];
                        if (l1_) l1_->write(sector);
                        send(now_ + static_cast<std::uint64_t>(i / per_cycle), sector, true, kTagStore);
                    }
                    ready = now_ + 1;
                } else {
                    // One guard count keeps the load open while its sectors go out (a blocking port
                    // answers inside the loop); if all are answered, the registers get the time now.
                    const std::uint32_t load = start_load(slot, in);
                    for (int i = 0; i < n; ++i)
                        load_sector(load, now_ + static_cast<std::uint64_t>(i / per_cycle), sectors_[static_cast<std::size_t>(i)]);
                    PendingLoad& p = loads_[load];
                    if (--p.outstanding == 0) {
                        ready = p.done;
                        stats_.last_memory_cycle = std::max(stats_.last_memory_cycle, p.done);
                        free_loads_.push_back(load);
                    } else {
                        ready = kPending;
                    }
                    long_latency = true;
                }
            }
            break;
        }
        case Unit::control: break;
    }
    if (in.unit != Unit::control) pipes[static_cast<std::size_t>(in.unit)] = busy_until;
    for (int i = 0; i < in.writes_count; ++i) t.reg_ready[in.writes[i]] = ready;
    if (in.predicates_written)
        for (int p = 0; p < kPredicateRegisters; ++p)
            if ((in.predicates_written >> p) & 1) t.pred_ready[static_cast<std::size_t>(p)] = ready;
    t.operands_ready = operands_ready(t);
    if (t.next) {
        // The next instruction's register values (a warp's registers span kilobytes; an SM's,
        // a megabyte): start loading them now, cycles before it can issue.
        const Instruction& next = *t.next;
        const std::uint32_t* regs = w.regs.data();
        for (const Operand& o : next.src)
            if (o.kind == Operand::Kind::reg) {
                __builtin_prefetch(regs + static_cast<std::size_t>(o.value) * 32);
                __builtin_prefetch(regs + static_cast<std::size_t>(o.value) * 32 + 16);
            }
        if (next.dst.kind == Operand::Kind::reg) {
            __builtin_prefetch(regs + static_cast<std::size_t>(next.dst.value) * 32, 1);
            __builtin_prefetch(regs + static_cast<std::size_t>(next.dst.value) * 32 + 16, 1);
        }
    }
    t.ibuffer_ready = now_ + 1 + (step_.redirected ? static_cast<std::uint64_t>(params_.branch_refetch_cycles) : 0);
    if (step_.barrier) {
        blocked_until_[static_cast<std::size_t>(slot)] = kNever;
        blocked_reason_[static_cast<std::size_t>(slot)] = Stall::barrier;
    }
    schedulers_[static_cast<std::size_t>(sp)]->issued(slot, long_latency, step_.barrier);
    if (wave_halves_ && (step_.barrier || step_.warp_finished)) release_shuffle_waiter(slot);
    if (step_.warp_finished) finish_warp(slot);
    if (step_.barrier && block.arrived == block.live_warps) release_barrier(block);
}

int SmCore::sibling(int slot) const {
    const int in_block = slot % warps_per_block_, other = in_block ^ 1;
    return other < warps_per_block_ ? slot - in_block + other : -1;
}

std::array<std::uint32_t, 64>& SmCore::wave_words_of(int slot) {
    const int sib = sibling(slot);
    return wave_words_[static_cast<std::size_t>(sib >= 0 ? std::min(slot, sib) : slot)];
}

void SmCore::gather_wave_words(int slot, int sib, const Instruction& in) {
    // Half h's lanes are the wave's lanes 32 h .. 32 h + 31; the sibling's words are its values of
    // the same operand now.
    const Warp& w = warps_[static_cast<std::size_t>(slot)];
    auto& words = wave_words_of(slot);
    const int half = w.warp_in_block % 2;
    executor_.operand_words(in.src[0], w, words.data() + 32 * half);
    if (sib >= 0) executor_.operand_words(in.src[0], warps_[static_cast<std::size_t>(sib)], words.data() + 32 * (1 - half));
    else std::fill(words.begin() + 32 * (1 - half), words.begin() + 32 * (2 - half), 0u);  // no lanes there
}

bool SmCore::wave_shuffle_ready(int slot, const Instruction& in) {
    const auto i = static_cast<std::size_t>(slot);
    if (shuffle_pending_[i]) return true;  // its sibling issued this shfl on the gathered words
    const int sib = sibling(slot);
    const auto s = static_cast<std::size_t>(sib);
    if (sib >= 0 && shuffle_pending_[s]) {  // the sibling has yet to issue on the last words: wait for it here
        shuffle_waiting_[i] = 1;
        return false;
    }
    const bool alone = shuffle_alone_[i] != 0;
    shuffle_alone_[i] = 0;
    if (!alone && sib >= 0) {
        const Warp& other = warps_[s];
        if (!other.finished && !other.at_barrier && !shuffle_waiting_[s]) {
            shuffle_waiting_[i] = 1;  // the sibling is on its way
            return false;
        }
        // Waiting at this shfl: the wave's, both halves issue on these words; at another: each
        // goes alone.
        if (shuffle_waiting_[s]) wake_shuffle_waiter(sib, other.pc() == warps_[i].pc());
    }
    shuffle_waiting_[i] = 0;
    gather_wave_words(slot, sib, in);
    return true;
}

void SmCore::release_shuffle_waiter(int slot) {
    const int sib = sibling(slot);
    if (sib >= 0 && shuffle_waiting_[static_cast<std::size_t>(sib)]) wake_shuffle_waiter(sib, false);
}

void SmCore::wake_shuffle_waiter(int slot, bool together) {
    const auto s = static_cast<std::size_t>(slot);
    shuffle_waiting_[s] = 0;
    (together ? shuffle_pending_ : shuffle_alone_)[s] = 1;
    blocked_until_[s] = 0;
    timing_[s].ibuffer_ready = std::max(timing_[s].ibuffer_ready, now_ + 1);
    sp_blocked_until_[static_cast<std::size_t>(timing_[s].sub_partition)] = 0;
}

void SmCore::release_barrier(Block& block) {
    const int first = static_cast<int>(&block - blocks_.data()) * warps_per_block_;
    for (int i = 0; i < warps_per_block_; ++i) {
        const auto slot = static_cast<std::size_t>(first + i);
        if (!warps_[slot].at_barrier) continue;
        warps_[slot].at_barrier = false;
        timing_[slot].ibuffer_ready = std::max(timing_[slot].ibuffer_ready, now_ + 1);
        blocked_until_[slot] = 0;
        schedulers_[static_cast<std::size_t>(timing_[slot].sub_partition)]->released(static_cast<int>(slot));
    }
    block.arrived = 0;
    std::fill(sp_blocked_until_.begin(), sp_blocked_until_.end(), 0);
}

void SmCore::finish_warp(int slot) {
    const Warp& w = warps_[static_cast<std::size_t>(slot)];
    schedulers_[static_cast<std::size_t>(timing_[static_cast<std::size_t>(slot)].sub_partition)]->remove(slot);
    Block& block = blocks_[static_cast<std::size_t>(w.block_slot)];
    --block.live_warps;
    --resident_warps_;
    if (record_resident_warps_) log_resident_warps();
    if (block.live_warps == 0) {
        block.resident = false;
        executor_.set_resident(block.block_id, nullptr);
        if (network_) network_->sm_of_block[block.block_id] = -1;
        --resident_blocks_;
        ++stats_.blocks_completed;
        block_completed_ = true;
    } else if (block.arrived > 0 && block.arrived == block.live_warps) {
        release_barrier(block);
    }
}

SmStats SmCore::stats() const { return stats_; }

void SmCore::stop_endless_kernel() const {
    // Names the warps still running where they are, so the loop that never ends can be found.
    constexpr int kWarpsNamed = 8;
    std::string warps;
    int running = 0;
    for (std::size_t slot = 0; slot < warps_.size(); ++slot) {
        const Warp& w = warps_[slot];
        if (w.finished || w.stack.empty()) continue;
        if (++running > kWarpsNamed) continue;
        const int pc = w.pc();
        warps += std::string(running > 1 ? "; " : "") + "block " + std::to_string(w.block_id) + " warp " +
                 std::to_string(w.warp_in_block) + " at pc " + std::to_string(pc);
        if (pc >= 0 && static_cast<std::size_t>(pc) < kernel_.code.size()) {
            const Instruction& in = kernel_.code[static_cast<std::size_t>(pc)];
            warps += " (" + kernel_.where(in) + ": " + opcode_name(in.op) + ")";
        }
        if (w.at_barrier) warps += " waiting at bar.sync";
    }
    if (running > kWarpsNamed) warps += "; and " + std::to_string(running - kWarpsNamed) + " more";
    throw KernelTimeout(kernel_.file + ": kernel '" + kernel_.name + "' stopped by the watchdog at cycle " +
                        std::to_string(now_) + " (limit " + std::to_string(params_.max_cycles) + ") after " +
                        std::to_string(executor_.counters().issued) + " warp instructions (limit " +
                        std::to_string(params_.max_issued) + "): endless loop? SM " + std::to_string(sm_index_) +
                        " has " + std::to_string(running) + " warp" + (running == 1 ? "" : "s") +
                        " running: " + warps);
}

std::uint32_t SmCore::start_load(int slot, const Instruction& in) {
    std::uint32_t load;
    if (free_loads_.empty()) {
        load = static_cast<std::uint32_t>(loads_.size());
        loads_.emplace_back();
    } else {
        load = free_loads_.back();
        free_loads_.pop_back();
    }
    loads_[load] = PendingLoad{&in, slot, generation_[static_cast<std::size_t>(slot)], 1, now_};
    return load;
}

void SmCore::load_sector(std::uint32_t load, std::uint64_t cycle, std::uint32_t sector) {
    if (!l1_) {
        ++loads_[load].outstanding;
        send(cycle, sector, false, kTagLoad | load);
        return;
    }
    const L1Cache::Read r = l1_->read(cycle, sector);
    switch (r.outcome) {
        case L1Cache::Outcome::hit:
            ++stats_.l1_hits;
            loads_[load].done = std::max(loads_[load].done, r.ready);
            return;
        case L1Cache::Outcome::merge:
            ++stats_.l1_misses;
            ++stats_.l1_merges;
            loads_[load].done = std::max(loads_[load].done, r.ready);
            return;
        case L1Cache::Outcome::merge_pending:
            ++stats_.l1_misses;
            ++stats_.l1_merges;
            ++loads_[load].outstanding;
            fill_waiters_[r.fill].more.push_back({load, cycle});
            return;
        case L1Cache::Outcome::miss:
            ++stats_.l1_misses;
            ++loads_[load].outstanding;
            if (r.fill >= fill_waiters_.size()) fill_waiters_.resize(r.fill + 1);
            fill_waiters_[r.fill].first = {load, cycle};
            fill_waiters_[r.fill].any = true;
            send(cycle + static_cast<std::uint64_t>(l1_->hit_latency()), sector, false, kTagFill | r.fill);
            return;
    }
}

void SmCore::send(std::uint64_t cycle, std::uint32_t sector, bool write, std::uint64_t tag) {
    if (non_blocking_) memory_.submit(cycle, sector, write, sm_index_, tag);
    else deliver({sm_index_, tag, memory_.access(cycle, sector, write, sm_index_)});
}

void SmCore::deliver(const SectorAnswer& answer) {
    const std::uint64_t id = answer.tag & ~kTagKind;
    switch (answer.tag & kTagKind) {
        case kTagLoad: answer_load(static_cast<std::uint32_t>(id), answer.done); break;
        case kTagFill: {
            const auto fill = static_cast<std::uint32_t>(id);
            l1_->fill_done(fill, answer.done);
            // A waiter looked the sector up at its own cycle: its data comes no earlier than
            // that lookup's latency (the originating miss's answer is always later than that).
            const std::uint64_t latency = static_cast<std::uint64_t>(l1_->hit_latency());
            FillWaiters& waiters = fill_waiters_[fill];
            if (waiters.any) answer_load(waiters.first.load, std::max(answer.done, waiters.first.cycle + latency));
            for (const FillWaiter& w : waiters.more) answer_load(w.load, std::max(answer.done, w.cycle + latency));
            waiters.any = false;
            waiters.more.clear();
            break;
        }
        case kTagTma: answer_tma(static_cast<std::uint32_t>(id), answer.done); break;
        default: stats_.last_memory_cycle = std::max(stats_.last_memory_cycle, answer.done); break;
    }
}

std::uint64_t SmCore::async_ready(int slot, const Instruction& in, Stall& reason) {
    const auto i = static_cast<std::size_t>(slot);
    switch (in.op) {
        case Opcode::wgmma_fence: {
            // PTX ISA 9.7.15.4 (async proxy): registers a wgmma reads or accumulates into must be
            // written before it; the fence waits for every register write of the warp in flight.
            const WarpTiming& t = timing_[i];
            reason = Stall::scoreboard;
            return *std::max_element(t.reg_ready, t.reg_ready + kernel_.registers);
        }
        case Opcode::wgmma_wait: {
            // All but the newest N committed groups must be complete; groups complete in order.
            const std::vector<std::uint64_t>& groups = async_[i].groups;
            const std::size_t keep = in.src[0].value;
            reason = Stall::scoreboard;
            return groups.size() > keep ? groups[groups.size() - keep - 1] : 0;
        }
        case Opcode::mbarrier_wait: {
            Warp& w = warps_[i];
            bool satisfied = true;
            const Mbarrier* m = executor_.mbarrier_waited(w, blocks_[static_cast<std::size_t>(w.block_slot)], in, satisfied);
            reason = Stall::barrier;
            // Not yet: woken when a phase of the block's mbarriers completes. Bytes in flight at a
            // non-blocking port, and cluster peers' events, come at a window's end; otherwise
            // another warp of the block must arrive.
            if (!satisfied) return (non_blocking_ && m->tx > 0) || network_ ? kPending : kNever;
            return m ? m->completed_at : 0;
        }
        default: return 0;
    }
}

void SmCore::issue_async(int sp, int slot, const Instruction& in, Block& block) {
    WarpAsync& a = async_[static_cast<std::size_t>(slot)];
    switch (in.op) {
        case Opcode::wgmma_mma: {
            // This warp's share: 16 rows of m64nNk16 on its sub-partition's tensor core, whose rate
            // is one m16n8k16 (2048 MACs) per tensor initiation interval: 16 N 16 MACs take N * II / 8
            // cycles (h100: II 4, so m64n128k16 = 64 cycles, 2048 MACs per SM cycle over 4 warps).
            // The 8-bit m64nNk32 the same at its type's rate (tensor_of: one m16n8k32 of 4096 MACs
            // per II; h100: II 4 at 4096 fp8/int8 MACs per SM cycle); mixed fp8 at the slower type's.
            // Operands come through the SM's shared-memory port (banks x bank bytes per cycle): the
            // warp's 16 rows of A (512 B: 16 x 16 x 2, or 16 x 32 x 1) and a quarter of B (16 x N x 2
            // or 32 x N x 1, / 4; the warpgroup reads B once, broadcast to its four tensor cores).
            const auto a_type = static_cast<MmaType>(in.modifier), b_type = static_cast<MmaType>(in.b_type);
            const PipelineTiming timing = params_.tensor_of(a_type, b_type);
            const int interval = timing.initiation_interval;
            const std::uint64_t compute = static_cast<std::uint64_t>(in.wgmma_n) * static_cast<std::uint64_t>(interval) / 8;
            const std::uint64_t bytes = 512 + 8 * static_cast<std::uint64_t>(in.wgmma_n);
            const auto port = static_cast<std::uint64_t>(std::max(1, params_.smem_banks * params_.smem_bank_bytes));
            smem_operand_free_ = std::max(smem_operand_free_, now_) + (bytes + port - 1) / port;
            std::uint64_t& tensor = tensor_async_free_[static_cast<std::size_t>(sp)];
            tensor = std::max(std::max(tensor, now_) + compute, smem_operand_free_);
            a.open_done = std::max(a.open_done, tensor + static_cast<std::uint64_t>(timing.latency));
            a.open = true;
            break;
        }
        case Opcode::wgmma_commit:
            a.groups.push_back(a.open ? a.open_done : now_);  // an empty group is complete at once
            a.open = false;
            a.open_done = 0;
            break;
        case Opcode::wgmma_wait: {
            const std::size_t keep = in.src[0].value;
            if (a.groups.size() > keep) a.groups.erase(a.groups.begin(), a.groups.end() - static_cast<std::ptrdiff_t>(keep));
            break;
        }
        case Opcode::tma_load:
            if (step_.executed != 0) start_tma(slot, in, block);
            break;
        case Opcode::mbarrier_arrive_remote:
            if (step_.remote_arrivals > 0)
                send_cluster_event(step_.remote_block, step_.remote_mbarrier, step_.remote_arrivals, 0,
                                   now_ + static_cast<std::uint64_t>(params_.cluster_latency));
            break;
        default: break;
    }
    // An arrival (here, or a copy's bytes landing at once through a blocking port) may have
    // completed a phase that warps of the block wait for; bytes newly expected turn a waiter's
    // "until another warp arrives" into "until memory answers".
    if (in.op == Opcode::mbarrier_expect_tx ||
        block.mbarrier_phases != woken_phases_[static_cast<std::size_t>(&block - blocks_.data())])
        wake_mbarrier_waiters(block);
}

void SmCore::start_tma(int slot, const Instruction& in, Block& block) {
    std::uint32_t copy;
    if (free_tma_.empty()) {
        copy = static_cast<std::uint32_t>(tma_.size());
        tma_.emplace_back();
    } else {
        copy = free_tma_.back();
        free_tma_.pop_back();
    }
    const auto block_slot = static_cast<int>(&block - blocks_.data());
    tma_[copy] = PendingTma{(in.modifier & kTmaMulticast) != 0, block.block_id, block_slot, block.generation, step_.tma_mbarrier,
                            static_cast<std::int64_t>(in.box_rows) * in.box_row_bytes, 1, now_};
    ++stats_.global_requests;
    // The SM's TMA unit sends the box's sectors to the L2 (not through the L1) at the LSU's rate;
    // a bounded box only those inside the tensor (its zeros cost no memory traffic), while its
    // whole size counts toward the mbarrier's transaction bytes.
    const int per_cycle = std::max(1, params_.global_sectors_per_cycle);
    const std::uint64_t start = std::max(tma_free_, now_);
    std::uint64_t sent = 0;
    for (std::uint32_t row = 0; row < step_.tma_rows && step_.tma_row_bytes > 0; ++row) {
        // im2col boxes gather their rows (0: a row of zeros, nothing to read).
        const std::uint32_t first = step_.tma_row_starts ? step_.tma_row_starts[row] : step_.tma_global + row * step_.tma_pitch;
        if (first == 0) continue;
        for (std::uint32_t sector = first / 32; sector <= (first + step_.tma_row_bytes - 1) / 32; ++sector, ++sent) {
            ++tma_[copy].outstanding;
            send(start + sent / static_cast<std::uint64_t>(per_cycle), sector * 32, false, kTagTma | copy);
        }
    }
    (void)slot;
    stats_.global_sectors += sent;
    tma_free_ = start + (sent + static_cast<std::uint64_t>(per_cycle) - 1) / static_cast<std::uint64_t>(per_cycle);
    answer_tma(copy, now_);  // the guard count
}

void SmCore::answer_tma(std::uint32_t copy, std::uint64_t done) {
    PendingTma& p = tma_[copy];
    p.done = std::max(p.done, done);
    if (--p.outstanding > 0) return;
    stats_.last_memory_cycle = std::max(stats_.last_memory_cycle, p.done);
    Block& block = blocks_[static_cast<std::size_t>(p.block_slot)];
    if (block.resident && block.generation == p.generation) {
        block.mbarrier_update(p.mbarrier, 0, -p.bytes, p.done);
        if (block.mbarrier_phases != woken_phases_[static_cast<std::size_t>(p.block_slot)]) wake_mbarrier_waiters(block);
    }
    if (p.multicast) {
        // The same bytes land in every peer of the cluster when the last sector is back.
        const auto size = static_cast<std::uint32_t>(kernel_.cluster);
        const std::uint32_t first = p.block_id / size * size;
        for (std::uint32_t id = first; id < first + size; ++id)
            if (id != p.block_id) send_cluster_event(id, p.mbarrier, 0, -p.bytes, p.done);
    }
    free_tma_.push_back(copy);
}

void SmCore::send_cluster_event(std::uint32_t block_id, std::uint32_t mbarrier, std::int64_t arrivals, std::int64_t tx_bytes,
                                std::uint64_t time) {
    if (!network_) throw SimtError(kernel_.file + ": kernel '" + kernel_.name + "' reaches a cluster peer without .cluster");
    const int sm = network_->sm_of_block[block_id];
    if (sm < 0) return;  // the peer has left (the kernel did not wait for it)
    network_->events.push_back({sm, block_id, mbarrier, arrivals, tx_bytes, time});
}

void SmCore::deliver_cluster_event(const ClusterEvent& event) {
    for (Block& block : blocks_) {
        if (!block.resident || block.block_id != event.block_id) continue;
        if (!block.mbarrier_update(event.mbarrier, event.arrivals, event.tx_bytes, event.time))
            throw SimtError(kernel_.file + ": kernel '" + kernel_.name + "': a cluster peer reached block " +
                            std::to_string(event.block_id) + "'s shared address " + std::to_string(event.mbarrier) +
                            " at cycle " + std::to_string(event.time) + ", where no mbarrier was initialized");
        if (block.mbarrier_phases != woken_phases_[static_cast<std::size_t>(&block - blocks_.data())]) wake_mbarrier_waiters(block);
        return;
    }
}

void SmCore::wake_mbarrier_waiters(Block& block) {
    const auto b = static_cast<std::size_t>(&block - blocks_.data());
    woken_phases_[b] = block.mbarrier_phases;
    const int first = static_cast<int>(b) * warps_per_block_;
    for (int k = 0; k < warps_per_block_; ++k) {
        const auto slot = static_cast<std::size_t>(first + k);
        const WarpTiming& t = timing_[slot];
        if (!t.next || t.next->op != Opcode::mbarrier_wait || warps_[slot].at_barrier) continue;
        blocked_until_[slot] = 0;
        sp_blocked_until_[static_cast<std::size_t>(t.sub_partition)] = 0;
    }
}

void SmCore::prefetch_delivery(const SectorAnswer& answer, int stage) const {
    const auto id = static_cast<std::uint32_t>(answer.tag & ~kTagKind);
    switch (answer.tag & kTagKind) {
        case kTagLoad:
            if (stage == 0) __builtin_prefetch(&loads_[id]);
            else __builtin_prefetch(&timing_[static_cast<std::size_t>(loads_[id].slot)]);
            break;
        case kTagFill:
            if (stage == 0) {
                l1_->prefetch_fill(id);
                __builtin_prefetch(&fill_waiters_[id]);
            } else {
                l1_->prefetch_fill_line(id);
                const FillWaiters& waiters = fill_waiters_[id];
                if (waiters.any) __builtin_prefetch(&loads_[waiters.first.load]);
            }
            break;
        default: break;
    }
}

void SmCore::answer_load(std::uint32_t load, std::uint64_t done) {
    PendingLoad& p = loads_[load];
    p.done = std::max(p.done, done);
    if (--p.outstanding == 0) complete_load(load);
}

void SmCore::complete_load(std::uint32_t load) {
    const PendingLoad& p = loads_[load];
    stats_.last_memory_cycle = std::max(stats_.last_memory_cycle, p.done);
    const auto slot = static_cast<std::size_t>(p.slot);
    if (p.generation == generation_[slot]) {
        // The warp's registers become ready; its cached blocked state (and its sub-partition's)
        // was computed with them pending, so it is recomputed at the next scan. A warp waiting at
        // a barrier stays there: loads may be in flight across bar.sync, and only the barrier's
        // release may unblock it.
        WarpTiming& t = timing_[slot];
        const Instruction& in = *p.instruction;
        for (int i = 0; i < in.writes_count; ++i) t.reg_ready[in.writes[i]] = p.done;
        if (in.predicates_written)
            for (int q = 0; q < kPredicateRegisters; ++q)
                if ((in.predicates_written >> q) & 1) t.pred_ready[static_cast<std::size_t>(q)] = p.done;
        // Only a next instruction waiting on a pending register (kPending is the largest time)
        // can have changed.
        if (t.operands_ready >= kPending) t.operands_ready = operands_ready(t);
        if (!warps_[slot].at_barrier) blocked_until_[slot] = 0;
        sp_blocked_until_[static_cast<std::size_t>(t.sub_partition)] = 0;
    }
    free_loads_.push_back(load);
}

std::uint64_t SmCore::next_event_cycle() const {
    std::uint64_t next = kNever;
    for (const std::uint64_t until : sp_blocked_until_) {
        if (until <= now_) return now_;
        next = std::min(next, until);
    }
    return next;
}

bool SmCore::run_until_block_completes(std::uint64_t stop_at) {
    block_completed_ = false;
    const int n = params_.sub_partitions;
    classes_.resize(static_cast<std::size_t>(n));
    while (resident_warps_ > 0 && now_ < stop_at) {
        const std::uint64_t warps_this_cycle = static_cast<std::uint64_t>(resident_warps_);
        std::uint64_t next_change = kNever;
        bool issued_any = false;
        for (int sp = 0; sp < n; ++sp) {
            const auto i = static_cast<std::size_t>(sp);
            if (sp_blocked_until_[i] > now_) {
                classes_[i] = sp_blocked_class_[i];
                next_change = std::min(next_change, sp_blocked_until_[i]);
                continue;
            }
            std::uint64_t sp_next = kNever;
            const Stall s = try_issue(sp, sp_next);
            classes_[i] = s;
            if (s == Stall::issued) {
                issued_any = true;
            } else {
                sp_blocked_until_[i] = sp_next;
                sp_blocked_class_[i] = s;
                next_change = std::min(next_change, sp_next);
            }
        }
        std::uint64_t advance = 1;
        if (!issued_any && !block_completed_) {
            if (next_change == kNever)
                throw SimtError(kernel_.file + ": kernel '" + kernel_.name + "' deadlocked on SM " +
                                std::to_string(sm_index_) + " (warps wait at a barrier others never reach)");
            // Waiting for memory answers only: they come at the window's end (stop_at).
            if (next_change >= kPending && stop_at == kNever)
                throw SimtError("SM: waits for memory answers outside a window (non-blocking port run without launch()'s windows)");
            // Idle stretch: nothing changes before next_change (the per-sub-partition blocked
            // caches stay valid, so cutting the stretch at stop_at changes nothing).
            advance = std::min(next_change, stop_at) - now_;
        }
        for (int sp = 0; sp < n; ++sp) stats_.scheduler_cycles[static_cast<std::size_t>(classes_[static_cast<std::size_t>(sp)])] += advance;
        stats_.busy_cycles += advance;
        stats_.active_warp_cycles += warps_this_cycle * advance;
        now_ += advance;
        if (block_completed_) return true;
        if (now_ > params_.max_cycles || executor_.counters().issued > params_.max_issued) stop_endless_kernel();
    }
    return false;
}

}  // namespace accelsim::simt
