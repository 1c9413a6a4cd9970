#include "models/simt/simt_gpu.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "models/simt/trip_sampling.h"
#include "models/simt/wave_sampling.h"

namespace accelsim::simt {

void BlockDispatcher::initial_fill(std::vector<SmCore*>& sms) {
    sms_ = sms;
    if (cluster_ > 1) {
        for (bool placed = true; placed && !empty();) {
            placed = false;
            for (std::size_t g = 0; g < sms.size() / static_cast<std::size_t>(cluster_); ++g) placed |= place_cluster(g);
        }
        started_.clear();
        return;
    }
    for (bool placed = true; placed && !empty();) {
        placed = false;
        for (SmCore* sm : sms)
            if (!empty() && sm->can_accept_block()) {
                sm->add_block(take());
                placed = true;
            }
    }
}

void BlockDispatcher::refill(SmCore& sm) {
    started_.clear();
    if (cluster_ > 1) {
        const auto group = static_cast<std::size_t>(sm.index() / cluster_);
        while (place_cluster(group)) {
        }
        started_.erase(std::remove(started_.begin(), started_.end(), &sm), started_.end());
        return;
    }
    if (sampler_)
        next_ += static_cast<std::uint32_t>(
            sampler_->block_completed(sm.now() + (skipped_cycles_ ? *skipped_cycles_ : 0), next_));
    while (!empty() && sm.can_accept_block()) sm.add_block(take());
}

bool BlockDispatcher::place_cluster(std::size_t group) {
    const auto size = static_cast<std::size_t>(cluster_);
    if (empty() || (group + 1) * size > sms_.size()) return false;
    std::uint64_t start = 0;
    for (std::size_t r = 0; r < size; ++r) {
        const SmCore* sm = sms_[group * size + r];
        if (!sm->can_accept_block()) return false;
        start = std::max(start, sm->now());
    }
    for (std::size_t r = 0; r < size; ++r) {
        SmCore* sm = sms_[group * size + r];
        if (!sm->busy()) sm->set_now(start);
        sm->add_block(take());
        if (std::find(started_.begin(), started_.end(), sm) == started_.end()) started_.push_back(sm);
    }
    return true;
}

void set_ratios(KernelStats& s, int sms, int sub_partitions) {
    s.ipc = s.cycles ? static_cast<double>(s.issued) / static_cast<double>(s.cycles) : 0.0;
    s.simd_efficiency = s.issued ? static_cast<double>(s.active_lanes) / (32.0 * static_cast<double>(s.issued)) : 0.0;
    const double slots = static_cast<double>(sms) * sub_partitions * static_cast<double>(s.cycles);
    s.issue_slot_utilization = slots > 0 ? static_cast<double>(s.issue_cycles) / slots : 0.0;
}

KernelStats collect_stats(const std::vector<SmCore*>& sms, const WarpExecutor& executor, const SimtParams& params) {
    KernelStats s;
    const ExecutionCounters& c = executor.counters();
    s.issued = c.issued;
    s.mma_issued = c.mma_issued;
    s.active_lanes = c.active_lanes;
    s.lanes_histogram = c.lanes_histogram;
    std::uint64_t busy = 0, warp_cycles = 0;
    for (const SmCore* sm : sms) {
        const SmStats st = sm->stats();
        s.cycles = std::max({s.cycles, sm->now(), st.last_memory_cycle});
        busy += st.busy_cycles;
        warp_cycles += st.active_warp_cycles;
        s.issue_cycles += st.scheduler_cycles[static_cast<std::size_t>(Stall::issued)];
        s.idle_cycles += st.scheduler_cycles[static_cast<std::size_t>(Stall::idle)];
        s.scoreboard_cycles += st.scheduler_cycles[static_cast<std::size_t>(Stall::scoreboard)];
        s.pipeline_cycles += st.scheduler_cycles[static_cast<std::size_t>(Stall::pipeline)];
        s.barrier_cycles += st.scheduler_cycles[static_cast<std::size_t>(Stall::barrier)];
        s.global_requests += st.global_requests;
        s.global_sectors += st.global_sectors;
        s.shared_requests += st.shared_requests;
        s.shared_wavefronts += st.shared_wavefronts;
        s.blocks += st.blocks_completed;
        s.l1_hits += st.l1_hits;
        s.l1_misses += st.l1_misses;
        s.l1_merges += st.l1_merges;
    }
    if (!sms.empty()) {
        s.theoretical = sms.front()->occupancy();
        s.issue_order = sms.front()->issue_order();
    }
    for (const SmCore* sm : sms)
        if (!sm->resident_warps_log().empty()) {
            s.resident_warps.clear();
            for (const SmCore* each : sms) s.resident_warps.push_back(each->resident_warps_log());
            break;
        }
    set_ratios(s, static_cast<int>(sms.size()), params.sm.sub_partitions);
    // Resident 32-lane warps against the limit in 32-lane warps (a wave of 64 counts twice).
    const double max_warps = static_cast<double>(params.sm.limits.max_warps) *
                             std::max(1, params.sm.limits.wave_size / kWarpSize);
    s.achieved_occupancy = busy ? static_cast<double>(warp_cycles) / (max_warps * static_cast<double>(busy)) : 0.0;
    return s;
}

void deliver_answers(std::vector<SectorAnswer>& answers, const std::vector<SmCore*>& sms) {
    // Delivered in order; the records of the answers a few places ahead are fetched into the
    // host cache meanwhile (in two stages: the second reads what the first loaded).
    constexpr std::size_t kFar = 12, kNear = 6;
    const std::size_t n = answers.size();
    for (std::size_t i = 0; i < n; ++i) {
        if (i + kFar < n) sms[static_cast<std::size_t>(answers[i + kFar].sm)]->prefetch_delivery(answers[i + kFar], 0);
        if (i + kNear < n) sms[static_cast<std::size_t>(answers[i + kNear].sm)]->prefetch_delivery(answers[i + kNear], 1);
        sms[static_cast<std::size_t>(answers[i].sm)]->deliver(answers[i]);
    }
    answers.clear();
}

std::uint64_t next_window_start(const std::vector<SmCore*>& sms, GlobalMemoryPort& port, std::uint64_t previous_end,
                                bool& any_busy) {
    any_busy = false;
    std::uint64_t start = port.next_activity_cycle();
    for (const SmCore* sm : sms) {
        if (!sm->busy()) continue;
        any_busy = true;
        const std::uint64_t next = sm->next_event_cycle();
        if (next < SmCore::kWaitsForMemory) start = std::min(start, std::max(sm->now(), next));
    }
    // kNoCycle: every SM waits at a barrier with nothing in flight; running them reports it.
    return start == kNoCycle ? previous_end : std::max(start, previous_end);
}

void deliver_cluster_events(ClusterNetwork* network, const std::vector<SmCore*>& sms) {
    if (!network) return;
    // Events generated while delivering go out in the same pass (none do today).
    std::vector<ClusterEvent> events;
    events.swap(network->events);
    for (const ClusterEvent& e : events) sms[static_cast<std::size_t>(e.sm)]->deliver_cluster_event(e);
}

void lock_step_turn(SmCore& sm, BlockDispatcher& dispatcher, std::uint64_t window_end, bool& any_busy,
                    std::uint64_t& next_event) {
    if (!sm.busy()) return;
    any_busy = true;
    // An SM whose next event lies beyond the window is left alone (it would only idle): exact, it
    // issues no request in the skipped cycles, so the memory sees the same calls.
    const std::uint64_t next = sm.next_event_cycle();
    if (next != kNoCycle && next >= window_end) {
        next_event = std::min(next_event, next);
        return;
    }
    while (sm.busy() && sm.now() < window_end)
        if (sm.run_until_block_completes(window_end)) dispatcher.refill(sm);
    if (sm.busy()) next_event = std::min(next_event, std::max(sm.now(), sm.next_event_cycle()));
}

void cluster_window_turn(SmCore& sm, BlockDispatcher& dispatcher, std::uint64_t window_end, bool& any_busy,
                         const std::function<void(SmCore&)>& catch_up) {
    if (!sm.busy()) return;
    any_busy = true;
    while (sm.busy() && sm.now() < window_end)
        if (sm.run_until_block_completes(window_end)) {
            dispatcher.refill(sm);
            for (SmCore* other : dispatcher.started_others())
                if (other->index() < sm.index()) catch_up(*other);
        }
}

namespace {

const SimtParams& checked(const SimtParams& params, Dim dims) {
    if (params.sms < 1) throw SimtError("launch: sms must be at least 1");
    if (dims.grid == 0 || dims.block == 0) throw SimtError("launch: grid and block must be positive");
    return params;
}

// Runs every busy SM to `end`, handing out blocks in global (cycle, SM) order: the SM whose block
// completed earliest is refilled first, as the run-ahead loop of launch() does.
void run_window(const std::vector<SmCore*>& sms, BlockDispatcher& dispatcher, std::uint64_t end,
                std::vector<char>& stopped) {
    stopped.assign(sms.size(), 0);
    for (std::size_t i = 0; i < sms.size(); ++i) stopped[i] = sms[i]->busy() && sms[i]->run_until_block_completes(end);
    for (;;) {
        std::size_t best = sms.size();
        for (std::size_t i = 0; i < sms.size(); ++i)
            if (stopped[i] && (best == sms.size() || sms[i]->now() < sms[best]->now())) best = i;
        if (best == sms.size()) return;
        dispatcher.refill(*sms[best]);
        stopped[best] = sms[best]->busy() && sms[best]->run_until_block_completes(end);
        for (SmCore* other : dispatcher.started_others()) {
            const auto i = static_cast<std::size_t>(other->index());
            if (!stopped[i]) stopped[i] = other->busy() && other->run_until_block_completes(end);
        }
    }
}

// Non-blocking port: windows of its lookahead W. A window starts at the previous one's end, or
// later when nothing can change state before (next_window_start).
void run_windows(GridLaunch& g) {
    const std::vector<SmCore*>& sms = g.sms;
    const std::uint64_t window = g.window_cycles();
    std::vector<SectorAnswer> answers;
    std::vector<char> stopped;
    for (std::uint64_t end = 0;;) {
        bool any_busy = false;
        const std::uint64_t start = next_window_start(sms, *g.port, end, any_busy);
        if (!any_busy) break;
        end = start + window;
        run_window(sms, g.dispatcher, end, stopped);
        g.port->advance(end, answers);
        deliver_answers(answers, sms);
        deliver_cluster_events(g.network.get(), sms);
        g.sample_trips(end);
        if (g.options.on_window) g.options.on_window(end);
    }
    g.port->advance(kNoCycle, answers);  // the last stores (and loads of warps that have exited)
    deliver_answers(answers, sms);
    deliver_cluster_events(g.network.get(), sms);
    if (g.options.on_window) g.options.on_window(kNoCycle);
}

// Clusters on a blocking port: lock-step windows of the cluster latency, the peers' events handed
// over at each window's end.
void run_cluster_windows(GridLaunch& g) {
    const std::uint64_t window = g.window_cycles();
    for (std::uint64_t end = window;; end += window) {
        bool any_busy = false;
        const std::function<void(SmCore&)> to_end = [end](SmCore& other) { other.run_until_block_completes(end); };
        for (SmCore* sm : g.sms) cluster_window_turn(*sm, g.dispatcher, end, any_busy, to_end);
        deliver_cluster_events(g.network.get(), g.sms);
        if (!any_busy) break;
    }
}

// Lock-step windows: every SM runs up to the window's end before any SM goes further; when every
// SM idles past the window, the windows jump to the first event.
void run_lock_step(GridLaunch& g) {
    const std::uint64_t quantum = g.window_cycles();
    for (std::uint64_t window_end = quantum;;) {
        bool any_busy = false;
        std::uint64_t next_event = kNoCycle;
        for (SmCore* sm : g.sms) lock_step_turn(*sm, g.dispatcher, window_end, any_busy, next_event);
        if (!any_busy) break;
        window_end = std::max(window_end, next_event == kNoCycle ? window_end : next_event) + quantum;
    }
}

// Each SM runs on its own until one of its blocks completes; SMs do not interact except through
// the dispatcher, so serving completions in (cycle, SM index) order is exact.
void run_ahead(GridLaunch& g) {
    const std::vector<SmCore*>& sms = g.sms;
    std::vector<bool> stopped(sms.size(), false);
    for (std::size_t i = 0; i < sms.size(); ++i) stopped[i] = sms[i]->busy() && sms[i]->run_until_block_completes();
    for (;;) {
        std::size_t best = sms.size();
        for (std::size_t i = 0; i < sms.size(); ++i)
            if (stopped[i] && (best == sms.size() || sms[i]->now() < sms[best]->now())) best = i;
        if (best == sms.size()) break;
        g.dispatcher.refill(*sms[best]);
        stopped[best] = sms[best]->busy() && sms[best]->run_until_block_completes();
    }
}

}  // namespace

GridLaunch::GridLaunch(const Kernel& kernel, Dim dims, const std::vector<std::uint32_t>& args, GlobalMemory& memory,
                       const SimtParams& params_in, GlobalMemoryPort* port_in, const LaunchOptions& options_in)
    : params(checked(params_in, dims)),
      options(options_in),
      own_memory(port_in ? nullptr : std::make_unique<FixedLatencyMemory>(params_in.sm.global_latency)),
      port(port_in ? port_in : own_memory.get()),
      executor(kernel, memory, dims, args, options_in.skip_fp_payload),
      dispatcher(dims.grid, kernel.cluster) {
    executor.set_fp8_encoding(params.sm.fp8_encoding);
    for (int i = 0; i < params.sms; ++i) {
        owned.push_back(std::make_unique<SmCore>(params.sm, i, executor, *port));
        if (options.record_resident_warps) owned.back()->record_resident_warps();
        sms.push_back(owned.back().get());
    }
    const int cluster = kernel.cluster;
    if (dims.grid % static_cast<std::uint32_t>(cluster) != 0)
        throw SimtError(kernel.file + ": grid of " + std::to_string(dims.grid) + " blocks is not a multiple of the cluster size " +
                        std::to_string(cluster));
    if (params.sms < cluster)
        throw SimtError(kernel.file + ": a cluster of " + std::to_string(cluster) + " blocks needs as many SMs, the chip has " +
                        std::to_string(params.sms));
    if (cluster > 1) {
        network = std::make_unique<ClusterNetwork>();
        network->sm_of_block.assign(dims.grid, -1);
        for (SmCore* sm : sms) sm->set_cluster_network(network.get());
    }
    if (options.wave_sampler && cluster == 1) {
        const auto wave = static_cast<std::uint64_t>(params.sms) *
                          static_cast<std::uint64_t>(std::max(1, sms.front()->occupancy().blocks_per_sm));
        options.wave_sampler->begin(dims.grid, wave, [this] { return stats(); });
        dispatcher.set_sampler(options.wave_sampler);
    }
    if (options.trip_sampler && schedule() == Schedule::memory_windows &&
        loop_can_be_sampled(kernel, options.trip_sampler->loop)) {
        trip_sampler = options.trip_sampler;
        trip_executor = std::make_unique<WarpExecutor>(kernel, memory, dims, args, options.skip_fp_payload);
        trip_executor->set_fp8_encoding(params.sm.fp8_encoding);
        trip_executor->count_trips_at(trip_sampler->loop.back_edge_pc);
        executor.count_trips_at(trip_sampler->loop.back_edge_pc);
        trip_sampler->begin([this] { return stats(); });
        dispatcher.set_skipped_cycles(&skipped_cycles);
    }
    dispatcher.initial_fill(sms);
}

KernelStats GridLaunch::stats() const {
    KernelStats s = collect_stats(sms, executor, params);
    if (skipped_cycles == 0) return s;
    add_work_counters(s, skipped_work);
    s.cycles += skipped_cycles;
    set_ratios(s, static_cast<int>(sms.size()), params.sm.sub_partitions);
    return s;
}

void GridLaunch::sample_trips(std::uint64_t window_end) {
    if (!trip_sampler) return;
    const SampledLoop& loop = trip_sampler->loop;
    bool all_in_loop = true;
    std::uint64_t resident_set = 0, busy = 0;
    trip_sm_left.resize(sms.size());
    for (std::size_t i = 0; i < sms.size(); ++i) {
        const SmCore& sm = *sms[i];
        resident_set += sm.blocks_started() + sm.blocks_completed();
        trip_sm_left[i].clear();
        if (!sm.busy() || !all_in_loop) continue;
        ++busy;
        all_in_loop = sm.loop_progress(loop.head_pc, loop.back_edge_pc, loop.trips_per_block, trip_sm_left[i]);
    }
    all_in_loop = all_in_loop && busy > 0;
    if (!all_in_loop || !trip_series_on || resident_set != trip_series_set) {
        for (SmCore* sm : sms) sm->reset_trip_series();
        trip_sampler->restart();
        trip_series_on = all_in_loop;
        trip_series_set = resident_set;
        if (!all_in_loop) return;
        // The groups of the series: the resident blocks by (blocks on their SM, rank on it). Blocks
        // alike in both run their trips at one rate; an SM with three blocks runs slower than one
        // with two, and a scheduler favouring older warps runs an SM's oldest block ahead.
        trip_group_of.assign(sms.size(), {});
        std::vector<std::pair<int, int>> keys;
        trip_group_warps.clear();
        for (std::size_t i = 0; i < sms.size(); ++i) {
            const int blocks = static_cast<int>(trip_sm_left[i].size());
            for (int rank = 0; rank < blocks; ++rank) {
                const std::pair<int, int> key{blocks, rank};
                const auto g = std::find(keys.begin(), keys.end(), key);
                trip_group_of[i].push_back(static_cast<std::size_t>(g - keys.begin()));
                if (g == keys.end()) {
                    keys.push_back(key);
                    trip_group_warps.push_back(0);
                }
                trip_group_warps[trip_group_of[i].back()] += static_cast<std::uint64_t>(sms[i]->warps_per_block());
            }
        }
        trip_groups.assign(keys.size(), TripGroup{});
        trip_group_edges.assign(keys.size(), 0);
        return;
    }
    // Group g crosses whole trip j of the series when its warps have taken j x their number of
    // back-edges since it began: the cycle of that back-edge, their back-edges in time order.
    trip_group_cycles.resize(trip_groups.size());
    for (auto& cycles : trip_group_cycles) cycles.clear();
    for (TripGroup& group : trip_groups) {
        group.new_crossings.clear();
        group.fewest_left = loop.trips_per_block;
    }
    for (std::size_t i = 0; i < sms.size(); ++i) {
        if (trip_group_of[i].empty()) continue;
        for (auto& cycles : trip_rank_cycles) cycles.clear();
        sms[i]->take_trip_edges(trip_rank_cycles);
        for (std::size_t rank = 0; rank < trip_group_of[i].size(); ++rank) {
            const std::size_t g = trip_group_of[i][rank];
            trip_groups[g].fewest_left = std::min(trip_groups[g].fewest_left, trip_sm_left[i][rank]);
            if (rank < trip_rank_cycles.size())
                trip_group_cycles[g].insert(trip_group_cycles[g].end(), trip_rank_cycles[rank].begin(), trip_rank_cycles[rank].end());
        }
    }
    for (std::size_t g = 0; g < trip_groups.size(); ++g) {
        std::sort(trip_group_cycles[g].begin(), trip_group_cycles[g].end());
        for (const std::uint64_t at : trip_group_cycles[g])
            if (++trip_group_edges[g] % trip_group_warps[g] == 0) trip_groups[g].new_crossings.push_back(static_cast<double>(at));
    }
    const std::vector<std::uint32_t>& n = trip_sampler->window_end(window_end, trip_groups);
    const std::uint32_t most = n.empty() ? 0 : *std::max_element(n.begin(), n.end());
    if (most == 0) return;
    trip_series_on = false;  // the next window starts a new series
    // One trip at a time over every resident block, so that the caches receive the skipped trips'
    // sectors in about the order the blocks running side by side would have sent them: the last
    // trips' most recent, as after the full run of those trips.
    const auto record = [this](std::uint32_t sector, bool write) { port->record_untimed_access(sector, write); };
    const ExecutionCounters before = trip_executor->counters();
    for (std::uint32_t trip = 0; trip < most; ++trip)
        for (std::size_t i = 0; i < sms.size(); ++i)
            for (std::size_t rank = 0; rank < trip_group_of[i].size(); ++rank)
                if (n[trip_group_of[i][rank]] > trip)
                    sms[i]->advance_resident_block(static_cast<int>(rank), *trip_executor, 1, record, params.sm.max_issued);
    // The instruction counters are the skipped trips' own (the advance executed them); the timing
    // counters (stalls, sectors, the L1) their rate over the window times the skipped cycles.
    KernelStats extra = trip_sampler->last_skip_counters();
    const ExecutionCounters& after = trip_executor->counters();
    extra.issued = after.issued - before.issued;
    extra.mma_issued = after.mma_issued - before.mma_issued;
    extra.active_lanes = after.active_lanes - before.active_lanes;
    for (std::size_t w = 0; w < extra.lanes_histogram.size(); ++w)
        extra.lanes_histogram[w] = after.lanes_histogram[w] - before.lanes_histogram[w];
    add_work_counters(skipped_work, extra);
    skipped_cycles += trip_sampler->skips().back().skipped_cycles;
}

void GridLaunch::leave_skipped_footprint() {
    // Clustered launches are not sampled (the sampler was not begun for them).
    const WaveSampler* sampler = network ? nullptr : options.wave_sampler;
    const std::uint64_t cache_bytes = port->cache_bytes();
    if (!sampler || !sampler->skipped() || cache_bytes == 0) return;
    const auto skipped_first = static_cast<std::uint32_t>(sampler->skipped_from());
    // Not at the skip itself: the blocks in flight then would find their lines pushed out by a
    // wave that in the full run ran beside them, and the op's own cycles would move (an 8192 x
    // 8192 x 128 GEMM on a100: +1.9 % against +0.1 %, its bound 0.8 %).
    // Only the skipped blocks' last lines can still be held at the end: from the last skipped
    // block back, a wave at a time, until twice the caches' size in distinct sectors has been
    // seen (a GEMM wave on a100 touches more than that); only those blocks are replayed.
    const auto end = static_cast<std::uint32_t>(skipped_first + sampler->skipped_blocks());
    const std::uint64_t enough = 2 * cache_bytes / 32;
    const std::uint64_t sectors = executor.memory().size() / 32 + 1;
    std::vector<std::uint64_t> seen((sectors + 63) / 64, 0);
    std::uint64_t distinct = 0;
    const auto count_distinct = [&](std::uint32_t sector, bool) {
        const std::uint64_t s = sector / 32;
        std::uint64_t& word = seen[s / 64];
        const std::uint64_t bit = std::uint64_t{1} << (s % 64);
        distinct += (word & bit) ? 0 : 1;
        word |= bit;
    };
    const auto wave = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, sampler->wave_blocks()));
    std::uint32_t start = end;
    while (start > skipped_first && distinct < enough) {
        const std::uint32_t from = start - std::min(wave, start - skipped_first);
        run_blocks_untimed(executor, from, start - from, wave, count_distinct, params.sm.max_issued);
        start = from;
    }
    const auto record = [this](std::uint32_t sector, bool write) { port->record_untimed_access(sector, write); };
    // A wave's blocks side by side, so that their lines enter the sets interleaved as the resident
    // blocks' do; then the blocks that ran after the skip, so that theirs are the most recent again.
    run_blocks_untimed(executor, start, end - start, wave, record, params.sm.max_issued);
    run_blocks_untimed(executor, end, executor.dims().grid - end, wave, record, params.sm.max_issued);
}

GridLaunch::Schedule GridLaunch::schedule() const {
    if (port->lookahead_cycles() > 0) return Schedule::memory_windows;
    if (network) return Schedule::cluster_windows;
    if (options.sm_quantum_cycles > 0) return Schedule::lock_step;
    return Schedule::run_ahead;
}

std::uint64_t GridLaunch::window_cycles() const {
    switch (schedule()) {
        case Schedule::memory_windows: {
            const std::uint64_t lookahead = port->lookahead_cycles(), max = options.max_window_cycles;
            return max > 0 ? std::min(max, lookahead) : lookahead;
        }
        case Schedule::cluster_windows: return static_cast<std::uint64_t>(std::max(1, params.sm.cluster_latency));
        case Schedule::lock_step: return options.sm_quantum_cycles;
        case Schedule::run_ahead: break;
    }
    return 0;
}

KernelStats launch(const Kernel& kernel, Dim dims, const std::vector<std::uint32_t>& args, GlobalMemory& memory,
                   const SimtParams& params, GlobalMemoryPort* port, const LaunchOptions& options) {
    GridLaunch g(kernel, dims, args, memory, params, port, options);
    switch (g.schedule()) {
        case GridLaunch::Schedule::memory_windows: run_windows(g); break;
        case GridLaunch::Schedule::cluster_windows: run_cluster_windows(g); break;
        case GridLaunch::Schedule::lock_step: run_lock_step(g); break;
        case GridLaunch::Schedule::run_ahead: run_ahead(g); break;
    }
    g.leave_skipped_footprint();
    return g.stats();
}

}  // namespace accelsim::simt
