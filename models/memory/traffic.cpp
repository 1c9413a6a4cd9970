#include "models/memory/traffic.h"

#include <algorithm>
#include <array>
#include <deque>
#include <stdexcept>
#include <utility>

namespace accelsim::memory {

TrafficPattern traffic_pattern_from_name(const std::string& name) {
    if (name == "stream") return TrafficPattern::stream;
    if (name == "random") return TrafficPattern::random;
    if (name == "strided") return TrafficPattern::strided;
    if (name == "mixed") return TrafficPattern::mixed;
    throw std::invalid_argument("unknown pattern '" + name + "' (valid: stream, random, strided, mixed)");
}

const char* to_string(TrafficPattern p) {
    switch (p) {
        case TrafficPattern::stream: return "stream";
        case TrafficPattern::random: return "random";
        case TrafficPattern::strided: return "strided";
        case TrafficPattern::mixed: return "mixed";
    }
    return "?";
}

TrafficGenerator::TrafficGenerator(const TrafficParams& p) : p_(p), rng_(p.seed) {
    if (p_.request_bytes == 0) throw std::invalid_argument("request size must be > 0");
    if (p_.footprint_bytes < p_.request_bytes) throw std::invalid_argument("footprint must hold one request");
    if (p_.pattern == TrafficPattern::strided && p_.stride_bytes == 0 && !p_.address_of_request)
        throw std::invalid_argument("strided pattern needs a stride > 0");
    total_ = p_.total_bytes / p_.request_bytes;
}

bool TrafficGenerator::next(MemoryRequest& r) {
    if (issued_ >= total_) return false;
    const std::uint64_t i = issued_++;
    const std::uint64_t size = p_.request_bytes;
    r.bytes = p_.request_bytes;
    r.write = false;
    switch (p_.pattern) {
        case TrafficPattern::stream: r.address = p_.base_address + i * size; break;
        case TrafficPattern::random: {
            // Raw engine output modulo the slot count: std::uniform_int_distribution is not specified
            // exactly by the standard, and the sequence must be identical on every platform.
            const std::uint64_t slots = p_.footprint_bytes / size;
            r.address = p_.base_address + (rng_() % slots) * size;
            break;
        }
        case TrafficPattern::strided:
            r.address = p_.address_of_request ? p_.address_of_request(i)
                                              : p_.base_address + (i * p_.stride_bytes) % p_.footprint_bytes;
            break;
        case TrafficPattern::mixed: {
            // a[j], b[j] read, c[j] written; the three arrays are a third of the footprint apart.
            const std::uint64_t j = i / 3, which = i % 3;
            const std::uint64_t region = (p_.footprint_bytes / 3) / size * size;
            r.address = p_.base_address + which * region + (j * size) % region;
            r.write = which == 2;
            break;
        }
    }
    return true;
}

namespace {
using MinHeap = std::priority_queue<Picoseconds, std::vector<Picoseconds>, std::greater<>>;
}

DriveResult drive_blocking(const BlockingAccess& access, TrafficGenerator& traffic, const DriverParams& driver) {
    DriveResult result;
    // Completion times of the requests in flight, ascending, in a ring of max_outstanding slots
    // starting at `head`. They arrive nearly in order, so inserting from the back is usually a
    // few comparisons on contiguous memory (a heap costs log n host cache misses per request).
    const auto capacity = static_cast<std::size_t>(std::max(1, driver.max_outstanding));
    std::vector<Picoseconds> in_flight(capacity);
    std::size_t head = 0, count = 0;
    Picoseconds t = 0;
    bool first = true;
    MemoryRequest r;
    while (traffic.next(r)) {
        // Wait for a free slot: the earliest completion releases one.
        if (count == capacity) {
            t = std::max(t, in_flight[head]);
            head = head + 1 == capacity ? 0 : head + 1;
            --count;
        }
        if (first) result.first_issue = t, first = false;
        const Picoseconds done = access(r, t);
        std::size_t j = head + count >= capacity ? head + count - capacity : head + count;
        for (std::size_t k = 0; k < count; ++k) {
            const std::size_t prev = j ? j - 1 : capacity - 1;
            if (in_flight[prev] <= done) break;
            in_flight[j] = in_flight[prev];
            j = prev;
        }
        in_flight[j] = done;
        ++count;
        result.latency.record(done - t);
        result.last_completion = std::max(result.last_completion, done);
        ++result.requests;
        result.bytes += r.bytes;
        t += driver.issue_interval_ps;
    }
    return result;
}

DriveResult drive_dram_queued(Dram& dram, TrafficGenerator& traffic, const DriverParams& driver) {
    struct Slot {
        Picoseconds issued = 0, done = 0;
        std::uint32_t bytes = 0;
        int remaining = 0;  // bursts not yet decided
        bool write = false;
    };
    const int window = std::max(1, driver.max_outstanding);
    std::vector<Slot> slots(static_cast<std::size_t>(window));
    std::vector<std::uint32_t> free_slots;
    for (int i = window - 1; i >= 0; --i) free_slots.push_back(static_cast<std::uint32_t>(i));
    using Finished = std::pair<Picoseconds, std::uint32_t>;  // (completion, slot)
    std::priority_queue<Finished, std::vector<Finished>, std::greater<>> finished;

    auto& ctrls = dram.controllers();
    // Bursts wait in front of a full controller queue, one line per controller and kind (virtual
    // output queues), so a busy channel never blocks requests to the others, nor writes reads.
    std::vector<std::array<std::deque<DramController::Burst>, DramController::kWaitingLines>> waiting(ctrls.size());
    using Event = std::pair<Picoseconds, int>;  // (decision time, controller); stale entries skipped
    std::priority_queue<Event, std::vector<Event>, std::greater<>> decisions;
    const Picoseconds controller_latency = ns_to_ps(dram.params().controller_latency_ns);
    const auto burst_bytes = static_cast<std::uint64_t>(dram.params().burst_bytes());
    const Picoseconds never = DramController::kNeverPs;

    DriveResult result;
    MemoryRequest req;
    bool have_request = traffic.next(req);
    Picoseconds t_driver = 0;
    bool first = true;

    for (;;) {
        // The driver issues when a slot is free: the earliest finished request releases one.
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
        const Picoseconds decide_time = decisions.empty() ? never : decisions.top().first;
        if (driver_time == never && decide_time == never) {
            // Every busy slot waits on a burst that sits in some queue, so a decision always exists.
            if (have_request) throw std::logic_error("drive_dram_queued: driver stalled with no pending decision");
            break;
        }

        if (driver_time <= decide_time) {
            t_driver = driver_time;
            if (free_slots.empty()) {
                free_slots.push_back(finished.top().second);
                finished.pop();
            }
            const std::uint32_t s = free_slots.back();
            free_slots.pop_back();
            slots[s] = Slot{t_driver, t_driver, req.bytes, 0, req.write};
            if (first) result.first_issue = t_driver, first = false;
            ++result.requests;
            result.bytes += req.bytes;
            const std::uint64_t last = (req.address + std::max<std::uint32_t>(req.bytes, 1) - 1) / burst_bytes;
            for (std::uint64_t b = req.address / burst_bytes; b <= last; ++b) {
                DramController::Burst burst{dram.mapper().map(b * burst_bytes), req.write,
                                            t_driver + controller_latency, s};
                const auto u = static_cast<std::size_t>(burst.where.unit);
                ++slots[s].remaining;
                auto& line = waiting[u][static_cast<std::size_t>(ctrls[u].waiting_line(burst.write))];
                if (ctrls[u].has_space(burst.write) && line.empty()) {
                    // A non-empty queue's next decision does not move when a burst joins it.
                    const bool was_empty = ctrls[u].empty();
                    ctrls[u].enqueue(burst);
                    if (was_empty) decisions.emplace(ctrls[u].next_decision_time(), burst.where.unit);
                } else {
                    line.push_back(burst);
                }
            }
            have_request = traffic.next(req);
            t_driver += driver.issue_interval_ps;
            continue;
        }

        const int unit = decisions.top().second;
        decisions.pop();
        auto& c = ctrls[static_cast<std::size_t>(unit)];
        const DramController::Issued done = c.decide();
        auto& line = waiting[static_cast<std::size_t>(unit)][static_cast<std::size_t>(c.waiting_line(done.write))];
        if (!line.empty()) {  // the decision freed an entry of its kind's queue
            DramController::Burst next = line.front();
            line.pop_front();
            next.arrival = std::max(next.arrival, decide_time);
            c.enqueue(next);
        }
        if (!c.empty()) decisions.emplace(c.next_decision_time(), unit);
        Slot& sl = slots[done.tag];
        sl.done = std::max(sl.done, done.data_end);
        if (--sl.remaining == 0) {
            finished.emplace(sl.done, done.tag);
            result.latency.record(sl.done - sl.issued);
            result.last_completion = std::max(result.last_completion, sl.done);
            dram.record_request(sl.write, sl.bytes, sl.done - sl.issued);
        }
    }
    return result;
}

}  // namespace accelsim::memory
