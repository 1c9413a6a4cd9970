#include "models/simt/simt_gpu.h"

#include <algorithm>
#include <memory>

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
    if (sampler_) next_ += static_cast<std::uint32_t>(sampler_->block_completed(sm.now(), next_));
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

KernelStats collect_stats(const std::vector<SmCore*>& sms, const WarpExecutor& executor, const SimtParams& params) {
    KernelStats s;
    const ExecutionCounters& c = executor.counters();
    s.issued = c.issued;
    s.mma_issued = c.mma_issued;
    s.active_lanes = c.active_lanes;
    s.simd_efficiency = c.simd_efficiency();
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
    s.ipc = s.cycles ? static_cast<double>(s.issued) / static_cast<double>(s.cycles) : 0.0;
    const double slots = static_cast<double>(sms.size()) * params.sm.sub_partitions * static_cast<double>(s.cycles);
    s.issue_slot_utilization = slots > 0 ? static_cast<double>(s.issue_cycles) / slots : 0.0;
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

namespace {

constexpr std::uint64_t kNone = ~std::uint64_t{0};

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

void deliver_cluster_events(ClusterNetwork* network, const std::vector<SmCore*>& sms) {
    if (!network) return;
    // Events generated while delivering go out in the same pass (none do today).
    std::vector<ClusterEvent> events;
    events.swap(network->events);
    for (const ClusterEvent& e : events) sms[static_cast<std::size_t>(e.sm)]->deliver_cluster_event(e);
}

// Non-blocking port: windows of its lookahead W. A window starts at the previous one's end, or
// later when nothing (no SM, no request in the port) can change state before: then the cycles in
// between are idle for everybody and skipping them changes nothing.
void run_windows(const std::vector<SmCore*>& sms, BlockDispatcher& dispatcher, GlobalMemoryPort& port,
                 const LaunchOptions& options, ClusterNetwork* network) {
    const std::uint64_t max_window = options.max_window_cycles;
    const std::uint64_t window = max_window > 0 ? std::min(max_window, port.lookahead_cycles()) : port.lookahead_cycles();
    std::vector<SectorAnswer> answers;
    std::vector<char> stopped;
    for (std::uint64_t end = 0;;) {
        bool any_busy = false;
        std::uint64_t start = port.next_activity_cycle();
        for (const SmCore* sm : sms) {
            if (!sm->busy()) continue;
            any_busy = true;
            const std::uint64_t next = sm->next_event_cycle();
            if (next < SmCore::kWaitsForMemory) start = std::min(start, std::max(sm->now(), next));
        }
        if (!any_busy) break;
        // kNone: every SM waits at a barrier with nothing in flight; running them reports it.
        start = start == kNone ? end : std::max(start, end);
        end = start + window;
        run_window(sms, dispatcher, end, stopped);
        port.advance(end, answers);
        deliver_answers(answers, sms);
        deliver_cluster_events(network, sms);
        if (options.on_window) options.on_window(end);
    }
    port.advance(kNone, answers);  // the last stores (and loads of warps that have exited)
    deliver_answers(answers, sms);
    deliver_cluster_events(network, sms);
    if (options.on_window) options.on_window(kNone);
}

// Clusters on a blocking port: lock-step windows of the cluster latency, the peers' events handed
// over at each window's end.
void run_cluster_windows(const std::vector<SmCore*>& sms, BlockDispatcher& dispatcher, ClusterNetwork& network,
                         std::uint64_t window) {
    for (std::uint64_t end = window;; end += window) {
        bool any_busy = false;
        for (SmCore* sm : sms) {
            if (!sm->busy()) continue;
            any_busy = true;
            while (sm->busy() && sm->now() < end)
                if (sm->run_until_block_completes(end)) {
                    dispatcher.refill(*sm);
                    for (SmCore* other : dispatcher.started_others())
                        if (other->index() < sm->index()) other->run_until_block_completes(end);
                }
        }
        deliver_cluster_events(&network, sms);
        if (!any_busy) break;
    }
}

}  // namespace

KernelStats launch(const Kernel& kernel, Dim dims, const std::vector<std::uint32_t>& args, GlobalMemory& memory,
                   const SimtParams& params, GlobalMemoryPort* port, const LaunchOptions& options) {
    if (params.sms < 1) throw SimtError("launch: sms must be at least 1");
    if (dims.grid == 0 || dims.block == 0) throw SimtError("launch: grid and block must be positive");
    std::unique_ptr<FixedLatencyMemory> own_memory;
    if (!port) {
        own_memory = std::make_unique<FixedLatencyMemory>(params.sm.global_latency);
        port = own_memory.get();
    }
    WarpExecutor executor(kernel, memory, dims, args, options.skip_fp_payload);
    std::vector<std::unique_ptr<SmCore>> owned;
    std::vector<SmCore*> sms;
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
    std::unique_ptr<ClusterNetwork> network;
    if (cluster > 1) {
        network = std::make_unique<ClusterNetwork>();
        network->sm_of_block.assign(dims.grid, -1);
        for (SmCore* sm : sms) sm->set_cluster_network(network.get());
    }
    BlockDispatcher dispatcher(dims.grid, cluster);
    if (options.wave_sampler && cluster == 1) {
        const auto wave = static_cast<std::uint64_t>(params.sms) *
                          static_cast<std::uint64_t>(std::max(1, sms.front()->occupancy().blocks_per_sm));
        options.wave_sampler->begin(dims.grid, wave, [&sms, &executor, &params] { return collect_stats(sms, executor, params); });
        dispatcher.set_sampler(options.wave_sampler);
    }
    dispatcher.initial_fill(sms);
    if (port->lookahead_cycles() > 0) {
        run_windows(sms, dispatcher, *port, options, network.get());
        return collect_stats(sms, executor, params);
    }
    if (network) {
        run_cluster_windows(sms, dispatcher, *network, static_cast<std::uint64_t>(std::max(1, params.sm.cluster_latency)));
        return collect_stats(sms, executor, params);
    }
    if (options.sm_quantum_cycles > 0) {
        // Lock-step windows: every SM runs up to the window's end before any SM goes further.
        // An SM whose next event lies beyond the window is left alone (it would only idle); when
        // every SM idles past the window, the windows jump to the first event. Both are exact:
        // no SM issues a request in the skipped cycles, so the memory sees the same calls.
        for (std::uint64_t window_end = options.sm_quantum_cycles;;) {
            bool any_busy = false;
            std::uint64_t next_event = kNone;
            for (SmCore* sm : sms) {
                if (!sm->busy()) continue;
                any_busy = true;
                const std::uint64_t next = sm->next_event_cycle();
                if (next != kNone && next >= window_end) {
                    next_event = std::min(next_event, next);
                    continue;
                }
                while (sm->busy() && sm->now() < window_end)
                    if (sm->run_until_block_completes(window_end)) dispatcher.refill(*sm);
                if (sm->busy()) next_event = std::min(next_event, std::max(sm->now(), sm->next_event_cycle()));
            }
            if (!any_busy) break;
            window_end = std::max(window_end, next_event == kNone ? window_end : next_event) + options.sm_quantum_cycles;
        }
        return collect_stats(sms, executor, params);
    }
    // Each SM runs on its own until one of its blocks completes; SMs do not interact except through
    // the dispatcher, so serving completions in (cycle, SM index) order is exact.
    std::vector<bool> stopped(sms.size(), false);
    for (std::size_t i = 0; i < sms.size(); ++i) stopped[i] = sms[i]->busy() && sms[i]->run_until_block_completes();
    for (;;) {
        std::size_t best = sms.size();
        for (std::size_t i = 0; i < sms.size(); ++i)
            if (stopped[i] && (best == sms.size() || sms[i]->now() < sms[best]->now())) best = i;
        if (best == sms.size()) break;
        dispatcher.refill(*sms[best]);
        stopped[best] = sms[best]->busy() && sms[best]->run_until_block_completes();
    }
    return collect_stats(sms, executor, params);
}

}  // namespace accelsim::simt
