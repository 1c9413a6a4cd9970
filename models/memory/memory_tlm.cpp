#include "models/memory/memory_tlm.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace accelsim::memory {

namespace {
Picoseconds to_ps(const sc_core::sc_time& t) { return static_cast<Picoseconds>(std::llround(t.to_seconds() * 1e12)); }
sc_core::sc_time from_ps(Picoseconds ps) { return sc_core::sc_time(static_cast<double>(ps), sc_core::SC_PS); }
}  // namespace

MemoryHierarchyTarget::MemoryHierarchyTarget(sc_core::sc_module_name name, MemoryHierarchy& model)
    : sc_module(name), model_(model) {
    for (int i = 0; i < model_.params().requesters; ++i) {
        sockets_.push_back(std::make_unique<Socket>(("requester" + std::to_string(i)).c_str()));
        sockets_.back()->register_b_transport(this, &MemoryHierarchyTarget::b_transport, i);
    }
}

void MemoryHierarchyTarget::b_transport(int requester, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
    const Picoseconds arrival = to_ps(sc_core::sc_time_stamp() + delay);
    const bool write = payload.get_command() == tlm::TLM_WRITE_COMMAND;
    const Picoseconds done = model_.access(requester, payload.get_address(), payload.get_data_length(), write, arrival);
    delay += from_ps(done - arrival);
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

TrafficInitiator::TrafficInitiator(sc_core::sc_module_name name, const std::vector<TrafficParams>& ports,
                                   const DriverParams& driver)
    : sc_module(name), ports_(ports), driver_(driver) {
    for (std::size_t i = 0; i < ports_.size(); ++i)
        sockets_.push_back(std::make_unique<Socket>(("port" + std::to_string(i)).c_str()));
    quantum_.reset();
    SC_HAS_PROCESS(TrafficInitiator);
    SC_THREAD(run);
}

void TrafficInitiator::run() {
    using MinHeap = std::priority_queue<Picoseconds, std::vector<Picoseconds>, std::greater<>>;
    struct Port {
        std::unique_ptr<TrafficGenerator> traffic;
        MinHeap in_flight;
        MemoryRequest next;
        bool has_next = false;
        Picoseconds next_issue = 0;
    };
    std::vector<Port> ports(ports_.size());
    for (std::size_t i = 0; i < ports.size(); ++i) {
        ports[i].traffic = std::make_unique<TrafficGenerator>(ports_[i]);
        ports[i].has_next = ports[i].traffic->next(ports[i].next);
    }
    std::vector<unsigned char> buffer(4096);
    tlm::tlm_generic_payload payload;
    bool first = true;
    for (;;) {
        // The port that can issue first (ties: lowest index); its window may push it later.
        int pick = -1;
        Picoseconds when = 0;
        for (std::size_t i = 0; i < ports.size(); ++i) {
            Port& p = ports[i];
            if (!p.has_next) continue;
            Picoseconds t = p.next_issue;
            if (static_cast<int>(p.in_flight.size()) >= driver_.max_outstanding) t = std::max(t, p.in_flight.top());
            if (pick < 0 || t < when) pick = static_cast<int>(i), when = t;
        }
        if (pick < 0) break;
        Port& p = ports[static_cast<std::size_t>(pick)];
        while (!p.in_flight.empty() && p.in_flight.top() <= when) p.in_flight.pop();

        // Run ahead to the issue time in local time; sync only when the quantum is used up.
        quantum_.set(from_ps(when) - sc_core::sc_time_stamp());
        if (quantum_.need_sync()) quantum_.sync();
        if (buffer.size() < p.next.bytes) buffer.resize(p.next.bytes);
        payload.set_command(p.next.write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
        payload.set_address(p.next.address);
        payload.set_data_ptr(buffer.data());
        payload.set_data_length(p.next.bytes);
        payload.set_streaming_width(p.next.bytes);
        payload.set_byte_enable_ptr(nullptr);
        payload.set_dmi_allowed(false);
        payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        sc_core::sc_time delay = quantum_.get_local_time();
        (*sockets_[static_cast<std::size_t>(pick)])->b_transport(payload, delay);
        if (payload.is_response_error()) SC_REPORT_ERROR("accelsim/memory", "memory transaction failed");
        const Picoseconds done = to_ps(sc_core::sc_time_stamp() + delay);

        if (first) result_.first_issue = when, first = false;
        p.in_flight.push(done);
        result_.latency.record(done - when);
        result_.last_completion = std::max(result_.last_completion, done);
        ++result_.requests;
        result_.bytes += p.next.bytes;
        p.next_issue = when + driver_.issue_interval_ps;
        p.has_next = p.traffic->next(p.next);
    }
    quantum_.sync();
}

}  // namespace accelsim::memory
