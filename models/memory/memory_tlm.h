#pragma once
// Thin TLM-2.0 wrappers around MemoryHierarchy: a target with one tagged socket per requester
// (b_transport, annotated delay) and a traffic initiator that uses a tlm_quantumkeeper.
//
// The target computes each transaction from its annotated arrival time (sc_time_stamp() + delay)
// with busy-until state, never from the kernel time alone, so the results do not depend on the
// quantum. The initiator is one process for all the requester ports it drives and issues in
// non-decreasing time order, so the order of calls is the same for any quantum.
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

#include "models/memory/memory_hierarchy.h"
#include "models/memory/traffic.h"

namespace accelsim::memory {

class MemoryHierarchyTarget : public sc_core::sc_module {
public:
    using Socket = tlm_utils::simple_target_socket_tagged<MemoryHierarchyTarget>;

    MemoryHierarchyTarget(sc_core::sc_module_name name, MemoryHierarchy& model);
    Socket& socket(int requester) { return *sockets_[static_cast<std::size_t>(requester)]; }

private:
    void b_transport(int requester, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
    MemoryHierarchy& model_;
    std::vector<std::unique_ptr<Socket>> sockets_;
};

// Drives one TrafficGenerator per requester port; each port keeps at most
// driver.max_outstanding requests in flight and issues at most one per driver.issue_interval_ps.
class TrafficInitiator : public sc_core::sc_module {
public:
    using Socket = tlm_utils::simple_initiator_socket_tagged<TrafficInitiator>;

    TrafficInitiator(sc_core::sc_module_name name, const std::vector<TrafficParams>& ports, const DriverParams& driver);
    Socket& socket(int port) { return *sockets_[static_cast<std::size_t>(port)]; }
    const DriveResult& result() const { return result_; }  // valid after the simulation ends

private:
    void run();
    std::vector<TrafficParams> ports_;
    DriverParams driver_;
    std::vector<std::unique_ptr<Socket>> sockets_;
    tlm_utils::tlm_quantumkeeper quantum_;
    DriveResult result_;
};

}  // namespace accelsim::memory
