#include "models/simt/sm_core.h"

#include <algorithm>
#include <limits>

namespace accelsim::simt {

namespace {
constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();
}

SmCore::SmCore(const SmParams& params, int sm_index, WarpExecutor& executor, GlobalMemoryPort& memory)
    : params_(params),
      sm_index_(sm_index),
      executor_(executor),
      l1_(params.l1.bytes > 0 ? std::make_unique<L1Cache>(params.l1, memory) : nullptr),
      memory_(l1_ ? static_cast<GlobalMemoryPort&>(*l1_) : memory),
      kernel_(executor.kernel()) {
    const Dim dims = executor.dims();
    occupancy_ = compute_occupancy(params_.limits, {static_cast<int>(dims.block), kernel_.registers, kernel_.shared_bytes});
    if (occupancy_.blocks_per_sm == 0)
        throw SimtError(kernel_.file + ": kernel '" + kernel_.name + "' cannot launch on " + params_.limits.arch +
                        ": " + occupancy_.unlaunchable_reason);
    if (params_.sub_partitions < 1) throw SimtError("SM: sub_partitions must be at least 1");
    warps_per_block_ = occupancy_.warps_per_block;
    const auto slots = static_cast<std::size_t>(occupancy_.blocks_per_sm * warps_per_block_);
    warps_.resize(slots);
    timing_.resize(slots);
    blocked_until_.assign(slots, 0);
    blocked_reason_.assign(slots, Stall::idle);
    for (std::size_t i = 0; i < slots; ++i) {
        timing_[i].reg_ready.assign(static_cast<std::size_t>(kernel_.registers), 0);
        timing_[i].sub_partition = static_cast<int>(i % static_cast<std::size_t>(params_.sub_partitions));
    }
    blocks_.resize(static_cast<std::size_t>(occupancy_.blocks_per_sm));
    for (int sp = 0; sp < params_.sub_partitions; ++sp)
        schedulers_.push_back(make_warp_scheduler(params_.warp_scheduler, params_.two_level_active_warps));
    pipe_free_.assign(static_cast<std::size_t>(params_.sub_partitions), {});
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
    for (int i = 0; i < warps_per_block_; ++i) {
        const int slot = static_cast<int>(b) * warps_per_block_ + i;
        warps_[static_cast<std::size_t>(slot)].reset(kernel_.registers, block_id, i, executor_.dims().block, static_cast<int>(b));
        WarpTiming& t = timing_[static_cast<std::size_t>(slot)];
        std::fill(t.reg_ready.begin(), t.reg_ready.end(), 0);
        t.pred_ready.fill(0);
        t.ibuffer_ready = now_;
        blocked_until_[static_cast<std::size_t>(slot)] = 0;
        schedulers_[static_cast<std::size_t>(t.sub_partition)]->add(slot);
    }
    ++resident_blocks_;
    resident_warps_ += warps_per_block_;
    std::fill(sp_blocked_until_.begin(), sp_blocked_until_.end(), 0);
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
    const Warp& w = warps_[i];
    const WarpTiming& t = timing_[i];
    if (t.ibuffer_ready > now_) {
        blocked_until_[i] = t.ibuffer_ready;
        blocked_reason_[i] = Stall::idle;
        next_change = std::min(next_change, t.ibuffer_ready);
        return false;
    }
    const Instruction& in = kernel_.code[static_cast<std::size_t>(w.pc())];
    std::uint64_t operands = 0;
    for (int r = 0; r < in.reads_count; ++r) operands = std::max(operands, t.reg_ready[in.reads[r]]);
    for (int r = 0; r < in.writes_count; ++r) operands = std::max(operands, t.reg_ready[in.writes[r]]);
    const std::uint8_t preds = in.predicates_read | in.predicates_written;
    if (preds)
        for (int p = 0; p < kPredicateRegisters; ++p)
            if ((preds >> p) & 1) operands = std::max(operands, t.pred_ready[static_cast<std::size_t>(p)]);
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
    issue(sp, slot);
    return true;
}

void SmCore::issue(int sp, int slot) {
    Warp& w = warps_[static_cast<std::size_t>(slot)];
    WarpTiming& t = timing_[static_cast<std::size_t>(slot)];
    Block& block = blocks_[static_cast<std::size_t>(w.block_slot)];
    if (params_.record_issue_order)
        issue_order_.push_back({now_, sp, slot, w.block_id, w.warp_in_block, w.pc()});
    executor_.step(w, block, step_);
    const Instruction& in = *step_.instruction;
    auto& pipes = pipe_free_[static_cast<std::size_t>(sp)];
    std::uint64_t ready = now_ + 1;
    std::uint64_t busy_until = now_ + 1;
    bool long_latency = false;
    switch (in.unit) {
        case Unit::int_alu:
        case Unit::fp32:
        case Unit::sfu:
        case Unit::tensor: {
            const PipelineTiming& p = in.unit == Unit::int_alu ? params_.int_alu
                                      : in.unit == Unit::fp32  ? params_.fp32
                                      : in.unit == Unit::sfu   ? params_.sfu
                                                               : params_.tensor;
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
                const int degree = shared_bank_conflict_degree(step_.addresses, step_.executed, params_.smem_banks,
                                                               params_.smem_bank_bytes);
                ++stats_.shared_requests;
                stats_.shared_wavefronts += static_cast<std::uint64_t>(degree);
                busy_until = now_ + static_cast<std::uint64_t>(degree);
                ready = now_ + static_cast<std::uint64_t>(params_.shared_latency + degree - 1);
            } else {
                const bool write = in.op == Opcode::st_global;
                const int n = coalesce_sectors(step_.addresses, step_.executed, 32, sectors_);
                ++stats_.global_requests;
                stats_.global_sectors += static_cast<std::uint64_t>(n);
                const int per_cycle = std::max(1, params_.global_sectors_per_cycle);
                std::uint64_t done = now_;
                for (int i = 0; i < n; ++i)
                    done = std::max(done, memory_.access(now_ + static_cast<std::uint64_t>(i / per_cycle),
                                                         sectors_[static_cast<std::size_t>(i)], write, sm_index_));
                stats_.last_memory_cycle = std::max(stats_.last_memory_cycle, done);
                busy_until = now_ + static_cast<std::uint64_t>((n + per_cycle - 1) / per_cycle);
                ready = write ? now_ + 1 : done;
                long_latency = !write;
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
    t.ibuffer_ready = now_ + 1 + (step_.redirected ? static_cast<std::uint64_t>(params_.branch_refetch_cycles) : 0);
    if (step_.barrier) {
        blocked_until_[static_cast<std::size_t>(slot)] = kNever;
        blocked_reason_[static_cast<std::size_t>(slot)] = Stall::barrier;
    }
    schedulers_[static_cast<std::size_t>(sp)]->issued(slot, long_latency, step_.barrier);
    if (step_.warp_finished) finish_warp(slot);
    if (step_.barrier && block.arrived == block.live_warps) release_barrier(block);
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
    if (block.live_warps == 0) {
        block.resident = false;
        --resident_blocks_;
        ++stats_.blocks_completed;
        block_completed_ = true;
    } else if (block.arrived > 0 && block.arrived == block.live_warps) {
        release_barrier(block);
    }
}

SmStats SmCore::stats() const {
    SmStats s = stats_;
    if (l1_) {
        s.l1_hits = l1_->hits();
        s.l1_misses = l1_->misses();
    }
    return s;
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
            // Idle stretch: nothing changes before next_change (the per-sub-partition blocked
            // caches stay valid, so cutting the stretch at stop_at changes nothing).
            advance = std::min(next_change, stop_at) - now_;
        }
        for (int sp = 0; sp < n; ++sp) stats_.scheduler_cycles[static_cast<std::size_t>(classes_[static_cast<std::size_t>(sp)])] += advance;
        stats_.busy_cycles += advance;
        stats_.active_warp_cycles += warps_this_cycle * advance;
        now_ += advance;
        if (block_completed_) return true;
        if (now_ > params_.max_cycles)
            throw SimtError(kernel_.file + ": kernel '" + kernel_.name + "' still running after " +
                            std::to_string(params_.max_cycles) + " cycles (SmParams::max_cycles): endless loop?");
    }
    return false;
}

}  // namespace accelsim::simt
