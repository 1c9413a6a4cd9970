// MemoryHierarchy::run_queued: the hierarchy with the DRAM's scheduler in the loop (see the
// declaration). One event loop over simulated time: driver issues, L2 lookups at slice arrival,
// bursts entering controller queues, controller decisions. Ties are broken in that order, then by
// sequence number, so the run is deterministic.
#include <algorithm>
#include <deque>
#include <queue>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "models/memory/memory_hierarchy.h"

namespace accelsim::memory {

namespace {
struct Lookup {
    Picoseconds at;
    std::uint64_t seq;
    std::uint64_t address;
    std::uint32_t bytes, slot;
    int slice;
    bool write;
    bool operator>(const Lookup& o) const { return std::tie(at, seq) > std::tie(o.at, o.seq); }
};
struct Arrival {  // a burst on its way to a controller queue
    Picoseconds at;
    std::uint64_t seq;
    DramController::Burst burst;
    bool operator>(const Arrival& o) const { return std::tie(at, seq) > std::tie(o.at, o.seq); }
};
}  // namespace

DriveResult MemoryHierarchy::run_queued(TrafficGenerator& traffic, const DriverParams& driver) {
    if (!l2_) throw std::logic_error("MemoryHierarchy::run_queued needs an L2");
    constexpr Picoseconds never = DramController::kNeverPs;
    struct Slot {
        Picoseconds issued = 0, done = 0;
        std::uint32_t bytes = 0;
        int pieces = 0;  // line pieces not yet looked up
        int waits = 0;   // fills still awaited
        bool write = false;
    };
    struct DramRequest {  // one fill piece or write-back, as Dram::access would have seen it
        std::uint64_t address = 0;
        Picoseconds issued = 0, done = 0;
        std::int64_t fill = -1;
        std::uint32_t bytes = 0;
        int bursts = 0;
        bool write = false;
    };
    const int window = std::max(1, driver.max_outstanding);
    std::vector<Slot> slots(static_cast<std::size_t>(window));
    std::vector<std::uint32_t> free_slots;
    for (int i = window - 1; i >= 0; --i) free_slots.push_back(static_cast<std::uint32_t>(i));
    using Finished = std::pair<Picoseconds, std::uint32_t>;
    std::priority_queue<Finished, std::vector<Finished>, std::greater<>> finished;

    std::priority_queue<Lookup, std::vector<Lookup>, std::greater<>> lookups;
    std::priority_queue<Arrival, std::vector<Arrival>, std::greater<>> arrivals;
    auto& ctrls = dram_.controllers();
    std::vector<std::deque<DramController::Burst>> waiting(ctrls.size());
    using Event = std::pair<Picoseconds, int>;
    std::priority_queue<Event, std::vector<Event>, std::greater<>> decisions;

    std::vector<DramRequest> dram_requests;
    std::vector<std::uint32_t> free_dram_requests;
    std::vector<std::vector<std::uint32_t>> fill_waiters;  // by fill id: slots waiting for it
    std::vector<std::vector<std::uint32_t>> fill_held;     // by fill id: its DRAM requests, while blocked
    std::vector<int> fill_requests_left;                   // by fill id
    std::vector<Picoseconds> fill_done;
    std::vector<L2Cache::NextLevelRequest> requests;
    std::vector<std::pair<std::int64_t, Picoseconds>> released;
    const Picoseconds controller_latency = ns_to_ps(dram_.params().controller_latency_ns);
    const FastDivider burst_div(static_cast<std::uint64_t>(dram_.params().burst_bytes()));
    const Picoseconds hit = l2_->hit_latency_ps();
    std::uint64_t seq = 0;
    DriveResult result;

    auto slot_finished = [&](std::uint32_t s) {
        Slot& sl = slots[s];
        finished.emplace(sl.done, s);
        result.latency.record(sl.done - sl.issued);
        result.last_completion = std::max(result.last_completion, sl.done);
        ++requests_;
        (sl.write ? bytes_written_ : bytes_read_) += sl.bytes;
        latency_.record(sl.done - sl.issued);
    };
    // Sends a DRAM request's bursts toward their controllers; they arrive after the front end.
    auto send = [&](std::uint32_t r, Picoseconds at) {
        DramRequest& q = dram_requests[r];
        q.issued = at;
        q.done = at + controller_latency;
        const std::uint64_t last = burst_div.div(q.address + std::max<std::uint32_t>(q.bytes, 1) - 1);
        for (std::uint64_t b = burst_div.div(q.address); b <= last; ++b) {
            DramController::Burst burst{dram_.mapper().map(b * burst_div.divisor()), q.write, at + controller_latency, r};
            ++q.bursts;
            arrivals.push(Arrival{burst.arrival, seq++, burst});
        }
    };
    auto new_dram_request = [&](const L2Cache::NextLevelRequest& n, bool write) {
        std::uint32_t r;
        if (free_dram_requests.empty()) {
            r = static_cast<std::uint32_t>(dram_requests.size());
            dram_requests.emplace_back();
        } else {
            r = free_dram_requests.back();
            free_dram_requests.pop_back();
        }
        dram_requests[r] = DramRequest{n.address, 0, 0, n.fill, n.bytes, 0, write};
        return r;
    };

    MemoryRequest req;
    bool have_request = traffic.next(req);
    Picoseconds t_driver = 0;
    bool first = true;
    std::uint64_t issued_requests = 0;

    for (;;) {
        Picoseconds driver_time = never;
        if (have_request) {
            while (!finished.empty() && finished.top().first <= t_driver) {
                free_slots.push_back(finished.top().second);
                finished.pop();
            }
            if (!free_slots.empty()) driver_time = t_driver;
            else if (!finished.empty()) driver_time = std::max(t_driver, finished.top().first);
        }
        while (!decisions.empty() &&
               decisions.top().first != ctrls[static_cast<std::size_t>(decisions.top().second)].next_decision_time())
            decisions.pop();
        const Picoseconds lookup_time = lookups.empty() ? never : lookups.top().at;
        const Picoseconds arrival_time = arrivals.empty() ? never : arrivals.top().at;
        const Picoseconds decide_time = decisions.empty() ? never : decisions.top().first;
        const Picoseconds now = std::min({driver_time, lookup_time, arrival_time, decide_time});
        if (now == never) {
            if (have_request) throw std::logic_error("MemoryHierarchy::run_queued: stalled with requests left");
            break;
        }

        if (driver_time == now) {  // issue one request: through the crossbar to its slices
            t_driver = now;
            if (free_slots.empty()) {
                free_slots.push_back(finished.top().second);
                finished.pop();
            }
            const std::uint32_t s = free_slots.back();
            free_slots.pop_back();
            if (first) result.first_issue = now, first = false;
            const std::uint32_t bytes = std::max<std::uint32_t>(req.bytes, 1);
            slots[s] = Slot{now, now, bytes, 0, 0, req.write};
            ++result.requests;
            result.bytes += req.bytes;
            const int requester = static_cast<int>(issued_requests++ % static_cast<std::uint64_t>(params_.requesters));
            const std::uint64_t line = line_div_.divisor();
            std::uint64_t a = req.address;
            const std::uint64_t end = req.address + bytes;
            while (a < end) {
                const std::uint64_t piece_end = std::min(end, (line_div_.div(a) + 1) * line);
                const auto n = static_cast<std::uint32_t>(piece_end - a);
                const int slice = l2_->slice_of(a);
                const Picoseconds at_slice = crossbar_.traverse(requester, slice, n, now);
                lookups.push(Lookup{at_slice, seq++, a, n, s, slice, req.write});
                ++slots[s].pieces;
                a = piece_end;
            }
            have_request = traffic.next(req);
            t_driver += driver.issue_interval_ps;
            continue;
        }

        if (lookup_time == now) {  // one L2 lookup at its slice
            const Lookup lk = lookups.top();
            lookups.pop();
            requests.clear();
            const L2Cache::DeferredOutcome o = l2_->access_deferred(lk.address, lk.bytes, lk.write, lk.at, lk.slice, requests);
            Slot& sl = slots[lk.slot];
            sl.done = std::max(sl.done, o.floor);
            --sl.pieces;
            if (o.new_fill >= 0) {  // fill ids are reused once resolved: reset its state
                const auto f = static_cast<std::size_t>(o.new_fill);
                if (f >= fill_waiters.size()) {
                    fill_waiters.resize(f + 1);
                    fill_held.resize(f + 1);
                    fill_requests_left.resize(f + 1, 0);
                    fill_done.resize(f + 1, never);
                }
                fill_waiters[f].clear();
                fill_held[f].clear();
                fill_requests_left[f] = 0;
                fill_done[f] = never;
            }
            for (const auto& n : requests) {
                const std::uint32_t r = new_dram_request(n, n.fill < 0);
                if (n.fill < 0) {
                    send(r, o.floor - hit);  // write-back: posted at the lookup's start
                } else {
                    ++fill_requests_left[static_cast<std::size_t>(n.fill)];
                    if (o.new_fill_blocked) fill_held[static_cast<std::size_t>(n.fill)].push_back(r);
                    else send(r, o.new_fill_issue);
                }
            }
            for (const std::int64_t w : o.waits) {
                // The L2 names only fills still in flight (a landed fill has updated its line).
                if (w < 0) continue;
                fill_waiters[static_cast<std::size_t>(w)].push_back(lk.slot);
                ++sl.waits;
            }
            if (sl.pieces == 0 && sl.waits == 0) slot_finished(lk.slot);
            continue;
        }

        if (arrival_time == now) {  // a burst reaches its controller's queue (or waits in front of it)
            const DramController::Burst burst = arrivals.top().burst;
            arrivals.pop();
            const auto u = static_cast<std::size_t>(burst.where.unit);
            if (ctrls[u].has_space() && waiting[u].empty()) {
                const bool was_empty = ctrls[u].empty();
                ctrls[u].enqueue(burst);
                if (was_empty) decisions.emplace(ctrls[u].next_decision_time(), burst.where.unit);
            } else {
                waiting[u].push_back(burst);
            }
            continue;
        }

        // A controller decision.
        const int unit = decisions.top().second;
        decisions.pop();
        auto& c = ctrls[static_cast<std::size_t>(unit)];
        const DramController::Issued done = c.decide();
        auto& line = waiting[static_cast<std::size_t>(unit)];
        if (!line.empty()) {
            DramController::Burst next = line.front();
            line.pop_front();
            next.arrival = std::max(next.arrival, now);
            c.enqueue(next);
        }
        if (!c.empty()) decisions.emplace(c.next_decision_time(), unit);
        DramRequest& q = dram_requests[done.tag];
        q.done = std::max(q.done, done.data_end);
        if (--q.bursts > 0) continue;
        dram_.record_request(q.write, q.bytes, q.done - q.issued);
        const std::int64_t fill = q.fill;
        const Picoseconds q_done = q.done;
        free_dram_requests.push_back(done.tag);
        if (fill < 0) continue;
        const auto f = static_cast<std::size_t>(fill);
        fill_done[f] = fill_done[f] == never ? q_done : std::max(fill_done[f], q_done);
        if (--fill_requests_left[f] > 0) continue;
        // The fill has landed: its waiters, its line and its MSHR (which may release held fills).
        for (const std::uint32_t s : fill_waiters[f]) {
            Slot& sl = slots[s];
            sl.done = std::max(sl.done, fill_done[f] + hit);
            if (--sl.waits == 0 && sl.pieces == 0) slot_finished(s);
        }
        fill_waiters[f].clear();
        released.clear();
        l2_->resolve_fill(fill, fill_done[f], released);
        for (const auto& [held, issue] : released) {
            for (const std::uint32_t r : fill_held[static_cast<std::size_t>(held)]) send(r, issue);
            fill_held[static_cast<std::size_t>(held)].clear();
        }
    }
    return result;
}

}  // namespace accelsim::memory
