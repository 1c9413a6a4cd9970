// Proves the SystemC kernel and TLM-2.0 integrate with our build: a clocked process runs, simulated
// time advances by the clock period, and a blocking transport carries data and annotated delay.
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <systemc>
#include <tlm>

#include "tests/systemc_in_child.h"

namespace {

SC_MODULE(EdgeCounter) {
    sc_core::sc_in<bool> clk;
    std::uint64_t edges = 0;
    SC_CTOR(EdgeCounter) {
        SC_METHOD(on_edge);
        sensitive << clk.pos();
        dont_initialize();
    }
    void on_edge() {
        ++edges;
    }
};

struct Memory : sc_core::sc_module {
    tlm_utils::simple_target_socket<Memory> socket{"socket"};
    unsigned char bytes[64] = {};
    explicit Memory(sc_core::sc_module_name n) : sc_module(n) {
        socket.register_b_transport(this, &Memory::b_transport);
    }
    void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
        const auto addr = p.get_address();
        if (p.is_write())
            std::memcpy(bytes + addr, p.get_data_ptr(), p.get_data_length());
        else
            std::memcpy(p.get_data_ptr(), bytes + addr, p.get_data_length());
        delay += sc_core::sc_time(7, sc_core::SC_NS);  // fixed access latency
        p.set_response_status(tlm::TLM_OK_RESPONSE);
    }
};

struct Initiator : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<Initiator> socket{"socket"};
    std::uint32_t read_back = 0;
    sc_core::sc_time finished;
    explicit Initiator(sc_core::sc_module_name n) : sc_module(n) { SC_THREAD(run); }
    SC_HAS_PROCESS(Initiator);
    void run() {
        tlm::tlm_generic_payload p;
        std::uint32_t value = 0xC0FFEE;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        p.set_command(tlm::TLM_WRITE_COMMAND);
        p.set_address(8);
        p.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
        p.set_data_length(4);
        socket->b_transport(p, delay);
        p.set_command(tlm::TLM_READ_COMMAND);
        p.set_data_ptr(reinterpret_cast<unsigned char*>(&read_back));
        socket->b_transport(p, delay);
        wait(delay);
        finished = sc_core::sc_time_stamp();
    }
};

}  // namespace

TEST(SystemCKernel, ClockedProcessSeesOneEdgePerPeriod) {
    ACCELSIM_IN_CHILD_PROCESS({
        sc_core::sc_clock clk("clk", 1, sc_core::SC_NS);  // first rising edge at t = 0
        EdgeCounter counter("counter");
        counter.clk(clk);
        sc_core::sc_start(100, sc_core::SC_NS);
        // Rising edges at 0, 1, ..., 99 ns fall inside [0, 100 ns): 100 edges.
        EXPECT_EQ(counter.edges, 100u);
        EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::sc_time(100, sc_core::SC_NS));
    });
}

TEST(SystemCKernel, TlmBlockingTransportCarriesDataAndDelay) {
    ACCELSIM_IN_CHILD_PROCESS({
        Initiator initiator("initiator");
        Memory memory("memory");
        initiator.socket.bind(memory.socket);
        sc_core::sc_start();
        EXPECT_EQ(initiator.read_back, 0xC0FFEEu);
        // Two transactions of 7 ns each, waited once at the end: 14 ns.
        EXPECT_EQ(initiator.finished, sc_core::sc_time(14, sc_core::SC_NS));
    });
}
