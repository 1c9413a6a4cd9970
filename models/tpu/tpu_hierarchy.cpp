#include "models/tpu/tpu_hierarchy.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <string>

#include <Eigen/Core>

#include "models/tpu/tpu_vector.h"
#include "models/tpu/tpu_stats.h"

namespace accelsim::tpu {

namespace {
using memory::Picoseconds;
constexpr std::uint64_t kAlignment = 4096;
}  // namespace

CorePipeline::CorePipeline(HierarchyModel& model, int core, const CoreSteps& steps, Picoseconds start)
    : end(start), model_(&model), core_(core), steps_(&steps), start_(start) {}

namespace {
constexpr Picoseconds kNever = ~Picoseconds{0};
}  // namespace

Picoseconds CorePipeline::prefetch_time() const {
    // A step's inputs are requested when their buffer is free: double buffering, so the buffer of
    // step i is the one step i-2 computed from (known once step i-2 has computed).
    if (next_ >= steps_->size()) return kNever;
    if (next_ < 2) return start_;
    return next_ - 2 < computed_ ? compute_end_[(next_ - 2) % kWindow] : kNever;
}

Picoseconds CorePipeline::piece_time() const {
    if (pieces_.empty()) return kNever;
    return model_->piece_entry(core_, pieces_.front().level, pieces_.front().issue);
}

Picoseconds CorePipeline::next_request() const {
    const Picoseconds prefetch = prefetch_time();
    Picoseconds t = std::min(prefetch, piece_time());
    if (!writebacks_.empty()) t = std::min(t, writebacks_.front().first);
    return t;
}

void CorePipeline::execute_next() {
    const Picoseconds prefetch = prefetch_time(), piece = piece_time();
    // Ties: write-backs first, then the prefetch, then the pieces already issued (a request only
    // queues pieces behind them, so that order changes nothing in the memory system).
    if (!writebacks_.empty() && writebacks_.front().first <= std::min(prefetch, piece)) request_writeback();
    else if (prefetch <= piece) request_inputs();
    else execute_piece();
}

void CorePipeline::request_writeback() {
    const auto [request, segment] = writebacks_.front();
    writebacks_.pop_front();
    queue_pieces(segment, true, -1, request);
    bytes_out += segment.bytes;
    if (segment.copy_to_cmem) cmem_out += segment.bytes;
    vmem_bytes += segment.bytes;
}

std::int64_t CorePipeline::queue_pieces(const DmaSegment& segment, bool write, std::int64_t step, Picoseconds request) {
    // The transfer enters the memory system one piece at a time, each piece ending at a DRAM row
    // stripe boundary: the cores' pieces interleave in time, and a piece opens each row it needs
    // once, as a lone stream would (finer interleaving would make the cores' streams evict each
    // other's rows on every chunk, which a real controller's reordering avoids).
    const Picoseconds start = model_->dma_start(core_, segment.bytes, request);
    ActivityRecorder* recorder = model_->recorder();
    const std::int32_t transfer = recorder ? recorder->transfer_started(core_, write, start) : -1;
    const std::int64_t stripe = model_->piece_bytes();
    std::int64_t count = 0;
    for (std::int64_t off = 0; off < segment.bytes;) {
        const std::uint64_t at = segment.address + static_cast<std::uint64_t>(off);
        const std::int64_t to_boundary = stripe - static_cast<std::int64_t>(at % static_cast<std::uint64_t>(stripe));
        const std::int64_t n = std::min(segment.bytes - off, to_boundary);
        pieces_.push_back(
            Piece{model_->dma_issue_time(start, off), at, n, segment.level, write, segment.copy_to_cmem, step, transfer});
        off += n;
        ++count;
    }
    return count;
}

void CorePipeline::request_inputs() {
    const Picoseconds request = prefetch_time();
    const std::size_t index = next_++;
    const TileStep step = (*steps_)[index];
    ready_[index % kWindow] = request;
    pieces_left_[index % kWindow] = 0;
    for (int i = 0; i < step.in_count; ++i) {
        const DmaSegment& segment = step.in[static_cast<std::size_t>(i)];
        pieces_left_[index % kWindow] += queue_pieces(segment, false, static_cast<std::int64_t>(index), request);
        (segment.level == MemLevel::cmem ? cmem_in : bytes_in) += segment.bytes;
        if (segment.copy_to_cmem) cmem_out += segment.bytes;
        vmem_bytes += segment.bytes;
    }
    advance_compute();
}

void CorePipeline::execute_piece() {
    const Piece c = pieces_.front();
    pieces_.pop_front();
    const Picoseconds arrived = model_->piece_access(core_, c.address, c.bytes, c.level, c.write, c.copy_to_cmem, c.issue);
    if (c.transfer >= 0) model_->recorder()->piece_arrived(c.transfer, arrived);
    if (c.step < 0) {
        end = std::max(end, arrived);
        return;
    }
    const auto slot = static_cast<std::size_t>(c.step) % kWindow;
    ready_[slot] = std::max(ready_[slot], arrived);
    --pieces_left_[slot];
    advance_compute();
}

void CorePipeline::advance_compute() {
    // Steps compute in order, each once all its input pieces have arrived.
    while (computed_ < next_ && pieces_left_[computed_ % kWindow] == 0) {
        const std::size_t index = computed_;
        const double hz = model_->params().clock_hz;
        const TileStep step = (*steps_)[index];
        const Picoseconds previous_end = index == 0 ? start_ : compute_end_[(index - 1) % kWindow];
        const Picoseconds ready = ready_[index % kWindow];
        const Picoseconds compute_start = std::max(previous_end, ready);
        // The unit streams tile after tile: a step's fill overlaps the previous step's drain as
        // far as its data allows. It ends `warm` cycles after the previous step (data early
        // enough) or `cold` cycles after its data arrived (fill and drain exposed), whichever is
        // later, so a step whose data is a little late loses a little, not a whole refill.
        const Picoseconds cold_end = ready + memory::cycles_to_ps(static_cast<double>(step.cold_cycles), hz);
        const Picoseconds finish =
            index == 0 ? cold_end
                       : std::max(cold_end, previous_end + memory::cycles_to_ps(static_cast<double>(step.warm_cycles), hz));
        const auto cycles = static_cast<std::int64_t>(std::llround(static_cast<double>(finish - compute_start) * hz * 1e-12));
        if (cycles > step.warm_cycles) {
            fill_cycles += cycles - step.warm_cycles;
            ++cold_steps;
        }
        busy_cycles += cycles;
        vmem_bytes += step.vmem_bytes;
        dma_wait_cycles +=
            static_cast<std::int64_t>(std::llround(static_cast<double>(compute_start - previous_end) * hz * 1e-12));
        compute_end_[index % kWindow] = finish;
        ++computed_;
        end = std::max(end, finish);
        if (ActivityRecorder* recorder = model_->recorder()) recorder->compute(core_, step, compute_start, finish);
        if (step.out.bytes > 0) writebacks_.emplace_back(finish, step.out);
    }
}

ActivityRecorder::ActivityRecorder(OpActivity& out, const TpuChipParams& params, const Op& op, bool on_mxus,
                                   Picoseconds start)
    : out_(&out), params_(&params), op_name_(op.name), dtype_(op.dtype), on_mxus_(on_mxus), start_(start) {}

double ActivityRecorder::cycles(Picoseconds t) const {
    return static_cast<double>(t - start_) * params_->clock_hz * 1e-12;
}

const std::vector<double>& ActivityRecorder::mxu_shares(const TileStep& step) {
    const auto key = std::make_tuple(step.bt, step.mt, step.nt, step.kt);
    auto it = shares_.find(key);
    if (it != shares_.end()) return it->second;
    const double rate = params_->mxu.macs_per_pe_per_cycle.of(dtype_);
    std::vector<double> shares;
    double slowest = 0;
    for (const GemmPart& part : mxu_tile_parts(GemmShape{step.bt, step.mt, step.nt, step.kt}, *params_, dtype_)) {
        const auto c = static_cast<double>(mxu_gemm_timing(params_->mxu, mxu_timing_shape(part.shape(step.kt), rate), dtype_).cycles);
        shares.push_back(c);
        slowest = std::max(slowest, c);
    }
    for (double& share : shares) share = slowest > 0 ? share / slowest : 1.0;
    return shares_.emplace(key, std::move(shares)).first->second;
}

void ActivityRecorder::compute(int core, const TileStep& step, Picoseconds begin, Picoseconds end) {
    const std::string prefix = "core" + std::to_string(core) + ".";
    const double from = cycles(begin), to = cycles(end);
    if (!on_mxus_) {
        out_->spans.push_back({prefix + "vector", op_name_, from, to});
        return;
    }
    const std::vector<double>& shares = mxu_shares(step);
    for (std::size_t u = 0; u < shares.size(); ++u)
        out_->spans.push_back({prefix + "mxu" + std::to_string(u), op_name_, from, from + (to - from) * shares[u]});
}

std::int32_t ActivityRecorder::transfer_started(int core, bool write, Picoseconds start) {
    transfers_.push_back({core, write, start, start});
    return static_cast<std::int32_t>(transfers_.size() - 1);
}

void ActivityRecorder::piece_arrived(std::int32_t transfer, Picoseconds arrived) {
    Transfer& t = transfers_[static_cast<std::size_t>(transfer)];
    t.end = std::max(t.end, arrived);
}

void ActivityRecorder::bytes_moved(MemLevel level, std::int64_t bytes, Picoseconds done) {
    const double at = cycles(done);
    out_->transfers.push_back({level == MemLevel::cmem ? "cmem" : "hbm", at, at, static_cast<double>(bytes)});
}

void ActivityRecorder::finish() {
    for (const Transfer& t : transfers_)
        out_->spans.push_back({"core" + std::to_string(t.core) + ".dma", op_name_ + (t.write ? " write-back" : " load"),
                               cycles(t.start), cycles(t.end)});
    transfers_.clear();
}

void run_pipelines_in_time_order(std::vector<CorePipeline>& pipelines) {
    while (true) {
        CorePipeline* best = nullptr;
        Picoseconds best_time = 0;
        for (CorePipeline& p : pipelines) {  // ties: the lower core first
            if (p.done()) continue;
            const Picoseconds t = p.next_request();
            if (best == nullptr || t < best_time) {
                best = &p;
                best_time = t;
            }
        }
        if (best == nullptr) return;
        best->execute_next();
    }
}

HierarchyModel::HierarchyModel(const TpuChipParams& params)
    : params_(params), memory_(*params.memory), dma_free_(static_cast<std::size_t>(params.cores), 0) {
    if (params_.dma.chunk_bytes < 1) throw std::invalid_argument("tpu.dma chunk_bytes must be >= 1");
    if (params_.dma.bytes_per_cycle < 0) throw std::invalid_argument("tpu.dma.bytes_per_cycle must be >= 0");
    if (params_.memory->requesters != params_.cores)
        throw std::invalid_argument("tpu: the memory system needs one requester per core");
    address_space_ = std::uint64_t{1} << 34;  // addresses wrap at 16 GiB (the DRAM map wraps too)
}

std::uint64_t HierarchyModel::allocate(std::int64_t bytes) {
    const std::uint64_t size = (static_cast<std::uint64_t>(std::max<std::int64_t>(bytes, 1)) + kAlignment - 1) /
                               kAlignment * kAlignment;
    if (next_address_ + size > address_space_) next_address_ = 0;
    const std::uint64_t at = next_address_;
    next_address_ += size;
    return at;
}

Picoseconds HierarchyModel::cmem_access(std::int64_t bytes, Picoseconds issue) {
    // One port at cmem_bytes_per_cycle shared by every core's DMA (busy-until). CMEM is on-chip
    // SRAM: no latency beyond the DMA's own is modelled (docs/tpu.md).
    const Picoseconds start = std::max(issue, cmem_free_);
    cmem_free_ = start + memory::cycles_to_ps(static_cast<double>(bytes) / params_.cmem_bytes_per_cycle, params_.clock_hz);
    return cmem_free_;
}

Picoseconds HierarchyModel::dma_start(int core, std::int64_t bytes, Picoseconds request) {
    auto& free_at = dma_free_[static_cast<std::size_t>(core)];
    const Picoseconds start = std::max(request, free_at);
    const double bpc = params_.dma.bytes_per_cycle;
    free_at = bpc > 0 ? start + memory::cycles_to_ps(static_cast<double>(bytes) / bpc, params_.clock_hz) : start;
    return start;
}

Picoseconds HierarchyModel::dma_issue_time(Picoseconds start, std::int64_t offset) const {
    // A rate-limited DMA engine issues the byte at `offset` when the bytes before it have left.
    const double bpc = params_.dma.bytes_per_cycle;
    return bpc > 0 ? start + memory::cycles_to_ps(static_cast<double>(offset) / bpc, params_.clock_hz) : start;
}

Picoseconds HierarchyModel::piece_entry(int core, MemLevel level, Picoseconds issue) const {
    return level == MemLevel::cmem ? issue : memory_.entry_time(core, issue);
}

Picoseconds HierarchyModel::piece_access(int core, std::uint64_t address, std::int64_t bytes, MemLevel level,
                                         bool write, bool copy_to_cmem, Picoseconds issue) {
    if ((level == MemLevel::cmem || copy_to_cmem) && !params_.cmem_enabled())
        throw std::logic_error("tpu: a transfer uses CMEM on a chip without CMEM");
    const double bpc = params_.dma.bytes_per_cycle;
    const std::int64_t chunk = params_.dma.chunk_bytes;
    Picoseconds done = issue;
    // One memory request per DMA chunk, issued at the engine's rate.
    for (std::int64_t off = 0; off < bytes; off += chunk) {
        const auto n = static_cast<std::uint32_t>(std::min(chunk, bytes - off));
        const Picoseconds at = dma_issue_time(issue, off);
        Picoseconds arrived = 0;
        if (level == MemLevel::cmem) {
            arrived = cmem_access(n, at);
            if (recorder_) recorder_->bytes_moved(MemLevel::cmem, n, arrived);
        } else {
            arrived = memory_.access(core, address + static_cast<std::uint64_t>(off), n, write, at);
            if (recorder_) recorder_->bytes_moved(MemLevel::hbm, n, arrived);
            // The same bytes also go to CMEM (an output for the next op, a tile read again
            // later); the chunk is done when both have it.
            if (copy_to_cmem) {
                const Picoseconds copied = cmem_access(n, at);
                if (recorder_) recorder_->bytes_moved(MemLevel::cmem, n, copied);
                arrived = std::max(arrived, copied);
            }
        }
        if (bpc > 0) arrived = std::max(arrived, at + memory::cycles_to_ps(static_cast<double>(n) / bpc, params_.clock_hz));
        done = std::max(done, arrived);
    }
    return done + memory::cycles_to_ps(params_.dma.latency_cycles, params_.clock_hz);
}

std::int64_t HierarchyModel::piece_bytes() const {
    return std::max(params_.dma.chunk_bytes, memory::row_stripe_bytes(params_.memory->dram));
}

double HierarchyModel::judge(const OpPlan& candidate, std::uint64_t base) {
    // Runners-up of the tiling estimate are judged on an idle copy of the chip: the same memory
    // system with nothing in flight, driven by the plain loop (the judge's own events are not
    // part of the simulated run). With the tensors moved to address 0, the identical ops of a
    // model's layers share one judgement.
    OpPlan moved = candidate;
    for (CoreSteps& core : moved.cores) core = core.moved_down(base);
    std::uint64_t key = 14695981039346656037ULL;  // FNV-1a over everything the run depends on
    auto mix = [&key](std::uint64_t v) {
        for (int i = 0; i < 8; ++i) key = (key ^ ((v >> (8 * i)) & 0xFF)) * 1099511628211ULL;
    };
    auto move = [&](const DmaSegment& s) {
        mix(s.address);
        mix(static_cast<std::uint64_t>(s.bytes));
        mix(static_cast<std::uint64_t>(s.level) << 1 | static_cast<std::uint64_t>(s.copy_to_cmem));
    };
    for (const CoreSteps& core : moved.cores) {
        mix(core.size());
        for (const TileStep& step : core) {
            mix(static_cast<std::uint64_t>(step.in_count));
            for (int i = 0; i < step.in_count; ++i) move(step.in[static_cast<std::size_t>(i)]);
            move(step.out);
            mix(static_cast<std::uint64_t>(step.cold_cycles));
            mix(static_cast<std::uint64_t>(step.warm_cycles));
        }
    }
    if (const auto it = judged_.find(key); it != judged_.end()) return it->second;
    HierarchyModel idle(params_);
    std::vector<CorePipeline> pipelines;
    pipelines.reserve(moved.cores.size());
    for (int c = 0; c < params_.cores; ++c) pipelines.emplace_back(idle, c, moved.cores[static_cast<std::size_t>(c)], 0);
    run_pipelines_in_time_order(pipelines);
    Picoseconds finish = idle.memory_.flush_writes();  // as run(): the op ends with its writes in HBM
    for (const CorePipeline& p : pipelines) finish = std::max(finish, p.end);
    judged_.emplace(key, static_cast<double>(finish));
    return static_cast<double>(finish);
}

TpuOpResult HierarchyModel::run(const Op& op, bool validate, std::int64_t op_index, const Placement& place) {
    // With validate, the operands and the reference are made (on the worker thread, when it is
    // on) while this thread simulates the op's timing and then its datapath on the same operands.
    std::optional<GemmValidation> gemm_check;
    std::future<NumericsCheck> vector_check;
    if (validate) {
        const std::uint64_t seed = op_seed(params_.seed, op_index);
        if (is_gemm_like(op.kind)) gemm_check.emplace(op, seed, validation_worker_, params_.outliers);
        else vector_check = start_vector_check(op, seed, validation_worker_);
    }
    TensorAddresses where;
    where.a = allocate(op.input_bytes());
    where.b = allocate(std::max(op.weight_bytes(), op.input_bytes() / 2));
    where.c = allocate(op.output_bytes());
    const TilingJudge judge = [this, base = where.a](const OpPlan& candidate) { return this->judge(candidate, base); };
    const OpPlan plan = lower_op(op, params_, where, place, judge);
    const double hz = params_.clock_hz;
    const Picoseconds start = now_;
    const int cores = params_.cores;

    if (activity_) recorder_ = std::make_unique<ActivityRecorder>(*activity_, params_, op, plan.unit == "mxu", start);
    std::vector<CorePipeline> pipelines;
    pipelines.reserve(static_cast<std::size_t>(cores));
    for (int c = 0; c < cores; ++c) pipelines.emplace_back(*this, c, plan.cores[static_cast<std::size_t>(c)], start);
    if (driver_) driver_(pipelines);
    else run_pipelines_in_time_order(pipelines);
    if (recorder_) {
        recorder_->finish();
        recorder_.reset();
    }
    for (const CorePipeline& p : pipelines)
        if (!p.done()) throw std::logic_error("tpu: a core pipeline did not finish");
    const std::vector<CorePipeline>& state = pipelines;

    // The op completes when its output is in memory: writes the DRAM controllers still hold
    // (posted) are issued and waited for, so no op ends before its bytes could cross the channels.
    Picoseconds finish = std::max(start, memory_.flush_writes());
    for (const auto& s : state) finish = std::max(finish, s.end);
    now_ = finish;
    TpuOpResult r;
    r.model = "tpu.hierarchy";
    const double cycles_exact = static_cast<double>(finish - start) * hz * 1e-12;
    r.cycles = static_cast<std::uint64_t>(std::max(1.0, std::ceil(cycles_exact - 1e-6)));
    const double cycles = static_cast<double>(r.cycles);

    std::int64_t hbm_in = 0, hbm_out = 0, cmem_in = 0, cmem_out = 0, vmem = 0, busy = 0, dma_wait = 0, fill = 0,
                 cold = 0;
    for (int c = 0; c < cores; ++c) {
        const CorePipeline& s = state[static_cast<std::size_t>(c)];
        hbm_in += s.bytes_in;
        hbm_out += s.bytes_out;
        cmem_in += s.cmem_in;
        cmem_out += s.cmem_out;
        vmem += s.vmem_bytes;
        busy = std::max(busy, s.busy_cycles);
        dma_wait += s.dma_wait_cycles;
        fill += s.fill_cycles;
        cold += s.cold_steps;
        const std::string core = std::to_string(c);
        r.stats.push_back(stat_value(plan.unit == "mxu" ? stat::core_mxu_busy_cycles : stat::core_vpu_busy_cycles,
                                     {core}, double(s.busy_cycles)));
        r.stats.push_back(stat_value(stat::core_dma_bytes_in, {core}, double(s.bytes_in)));
        r.stats.push_back(stat_value(stat::core_dma_bytes_out, {core}, double(s.bytes_out)));
        r.stats.push_back(stat_value(stat::core_stall_dma_cycles, {core}, double(s.dma_wait_cycles)));
        r.stats.push_back(stat_value(stat::core_steps, {core}, double(plan.cores[static_cast<std::size_t>(c)].size())));
    }
    r.bytes["hbm"] = hbm_in + hbm_out;
    r.bytes["scratchpad"] = vmem;
    if (params_.cmem_enabled()) r.bytes["cmem"] = cmem_in + cmem_out;
    const double seconds = cycles / hz;
    r.stats.push_back(stat_value(stat::hbm_bytes_read, double(hbm_in)));
    r.stats.push_back(stat_value(stat::hbm_bytes_written, double(hbm_out)));
    r.stats.push_back(stat_value(stat::hbm_achieved_bytes_per_second, double(hbm_in + hbm_out) / seconds));
    r.stats.push_back(stat_value(stat::vmem_achieved_bytes_per_second, double(vmem) / seconds));
    if (params_.cmem_enabled()) {
        r.stats.push_back(stat_value(stat::cmem_bytes_read, double(cmem_in)));
        r.stats.push_back(stat_value(stat::cmem_bytes_written, double(cmem_out)));
        r.stats.push_back(stat_value(stat::cmem_achieved_bytes_per_second, double(cmem_in + cmem_out) / seconds));
        r.stats.push_back(stat_value(stat::cmem_hbm_bytes_saved, double(cmem_in)));
    }
    r.stats.push_back(stat_value(stat::stall_dma_cycles, double(dma_wait)));
    r.stats.push_back(stat_value(stat::stall_weight_load_cycles, plan.unit == "mxu" ? double(fill) : 0.0));
    r.stats.push_back(stat_value(stat::stall_vector_unit_cycles, 0.0));
    r.stats.push_back(stat_value(stat::cold_steps, double(cold)));
    r.stats.push_back(stat_value(stat::tile_batch, double(plan.tile.batch)));
    r.stats.push_back(stat_value(stat::tile_m, double(plan.tile.m)));
    r.stats.push_back(stat_value(stat::tile_n, double(plan.tile.n)));
    r.stats.push_back(stat_value(stat::tile_k, double(plan.tile.k)));
    r.stats.push_back(stat_value(stat::vmem_footprint_bytes, double(plan.vmem_footprint)));
    r.stats.push_back(stat_value(stat::wall_time_seconds, seconds));
    r.hbm_bytes_not_read = plan.hbm_read_saved;
    r.hbm_bytes_not_written = plan.hbm_write_saved;
    r.cmem_compulsory_bytes = plan.cmem_read + plan.cmem_written;
    if (place.input == InputFrom::vmem || place.output == OutputTo::vmem) {
        r.fused = true;
        r.fused_hbm_bytes_saved = place.input == InputFrom::vmem ? plan.hbm_read_saved : plan.hbm_write_saved;
        r.stats.push_back(stat_value(stat::fusion_hbm_bytes_saved, double(r.fused_hbm_bytes_saved)));
    }
    const double mxu_peak = static_cast<double>(params_.cores) * params_.mxus_per_core * params_.mxu.rows *
                            params_.mxu.cols * params_.mxu.macs_per_pe_per_cycle.of(op.dtype);
    const double vpu_peak = static_cast<double>(params_.cores) * params_.vector.element_ops_per_cycle();
    if (plan.unit == "mxu") {
        r.mxu_utilization = static_cast<double>(plan.macs) / (mxu_peak * cycles);
        r.vector_utilization = 0.0;
        r.utilization = r.mxu_utilization;
    } else {
        const double work = is_gemm_like(op.kind) ? static_cast<double>(plan.macs) : static_cast<double>(plan.element_ops);
        r.vector_utilization = work / (vpu_peak * cycles);
        r.mxu_utilization = 0.0;
        r.utilization = r.vector_utilization;
    }
    r.stats.push_back(stat_value(stat::mxu_utilization, *r.mxu_utilization));
    r.stats.push_back(stat_value(stat::vpu_utilization, *r.vector_utilization));

    if (gemm_check) r.numerics = validate_gemm(op, plan, *gemm_check);
    else if (vector_check.valid()) r.numerics = vector_check.get();
    return r;
}

NumericsCheck HierarchyModel::validate_gemm(const Op& op, const OpPlan& plan, GemmValidation& check) const {
    // The real data goes through the same tiles, in the same order: per core, per step, the tile
    // split over the MXUs as in the timing, each part run on the MXU model (params.mxu.mode), its
    // fp32 / int32 result added to the accumulator of the output tile, K blocks in ascending order.
    const GemmShape g = op.as_gemm();
    const GemmData& data = check.data();
    const bool integer = op.dtype == DType::int8;
    std::vector<float> acc_f(integer ? 0 : static_cast<std::size_t>(g.batch * g.m * g.n), 0.0f);
    std::vector<std::int64_t> acc_i(integer ? static_cast<std::size_t>(g.batch * g.m * g.n) : 0, 0);
    std::vector<float> a_part, b_part, vector_out;
    using RowMajorF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    for (const auto& steps : plan.cores) {
        for (const TileStep& s : steps) {
            const GemmShape tile{s.bt, s.mt, s.nt, s.kt};
            const std::vector<GemmPart> parts =
                plan.unit == "mxu" ? mxu_tile_parts(tile, params_, op.dtype)
                                   : std::vector<GemmPart>{GemmPart{0, s.bt, 0, s.mt, 0, s.nt}};
            for (const GemmPart& p : parts) {
                a_part.resize(static_cast<std::size_t>(p.batch * p.m * s.kt));
                b_part.resize(static_cast<std::size_t>(p.batch * s.kt * p.n));
                for (std::int64_t b = 0; b < p.batch; ++b) {
                    const std::int64_t gb = s.b0 + p.b0 + b;
                    for (std::int64_t i = 0; i < p.m; ++i) {
                        const float* src = data.a.data() + (gb * g.m + s.m0 + p.m0 + i) * g.k + s.k0;
                        std::copy(src, src + s.kt, a_part.data() + (b * p.m + i) * s.kt);
                    }
                    for (std::int64_t k = 0; k < s.kt; ++k) {
                        const float* src = data.b.data() + (gb * g.k + s.k0 + k) * g.n + s.n0 + p.n0;
                        std::copy(src, src + p.n, b_part.data() + (b * s.kt + k) * p.n);
                    }
                }
                // The part's output [p.batch][p.m][p.n]: the MXU's fp32 or int32 accumulators, or
                // the vector unit's fp32 multiply-adds.
                MxuGemmResult res;
                const float* out_f = nullptr;
                const std::int32_t* out_i = nullptr;
                if (plan.unit == "mxu") {
                    const MxuOperands ops{a_part.data(), b_part.data()};
                    res = run_mxu_gemm(params_.mxu, GemmShape{p.batch, p.m, p.n, s.kt}, op.dtype, &ops);
                    if (res.accumulator == DType::int32) out_i = res.c_int32.data();
                    else out_f = res.c_fp32.data();
                } else {
                    vector_out.resize(static_cast<std::size_t>(p.batch * p.m * p.n));
                    for (std::int64_t b = 0; b < p.batch; ++b) {
                        Eigen::Map<const RowMajorF> a(a_part.data() + b * p.m * s.kt, p.m, s.kt);
                        Eigen::Map<const RowMajorF> w(b_part.data() + b * s.kt * p.n, s.kt, p.n);
                        Eigen::Map<RowMajorF>(vector_out.data() + b * p.m * p.n, p.m, p.n).noalias() = a * w;
                    }
                    out_f = vector_out.data();
                }
                for (std::int64_t b = 0; b < p.batch; ++b)
                    for (std::int64_t i = 0; i < p.m; ++i) {
                        const auto dst = static_cast<std::size_t>(((s.b0 + p.b0 + b) * g.m + s.m0 + p.m0 + i) * g.n +
                                                                  s.n0 + p.n0);
                        const auto src = static_cast<std::size_t>((b * p.m + i) * p.n);
                        if (!integer) {
                            for (std::int64_t j = 0; j < p.n; ++j) acc_f[dst + j] += out_f[src + j];  // fp32 accumulator in VMEM
                        } else if (out_i != nullptr) {
                            for (std::int64_t j = 0; j < p.n; ++j) acc_i[dst + j] += out_i[src + j];
                        } else {  // int8 on the vector unit: its fp32 sums of the products
                            for (std::int64_t j = 0; j < p.n; ++j)
                                acc_i[dst + j] += static_cast<std::int64_t>(out_f[src + j]);
                        }
                    }
            }
        }
    }
    std::vector<double> c(static_cast<std::size_t>(g.batch * g.m * g.n));
    for (std::size_t i = 0; i < c.size(); ++i) c[i] = integer ? static_cast<double>(acc_i[i]) : acc_f[i];
    if (result_fault_) result_fault_(c);
    return check.check(c);
}

}  // namespace accelsim::tpu
