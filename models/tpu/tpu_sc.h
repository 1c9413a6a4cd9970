#pragma once
// SystemC driver of the TPU chip: one SC_THREAD per TensorCore, each running its core's
// CorePipeline (its DMA engine's requests and the MXU / vector-unit compute they gate). A thread
// sleeps until its next request time (idle time is skipped, never stepped) and then performs the
// transfer against the shared memory system at that simulated time, so the kernel interleaves the
// cores' traffic in time order. Ties at one time go to the lower core: core c waits c delta cycles
// after waking, which makes the result identical to run_pipelines_in_time_order (tested).
// SystemC elaborates once per process: build at most one TpuCoresModule per process, before any
// sc_start.
#include <vector>

#include <systemc>

#include "models/tpu/tpu_hierarchy.h"

namespace accelsim::tpu {

class TpuCoresModule : public sc_core::sc_module {
public:
    TpuCoresModule(sc_core::sc_module_name name, int cores);
    // Runs one op's pipelines to completion (sc_start until the kernel has nothing left to do).
    void drive(std::vector<CorePipeline>& pipelines);
    // A PipelineDriver bound to this module, for HierarchyModel::set_driver / TpuChip.
    PipelineDriver driver() {
        return [this](std::vector<CorePipeline>& p) { drive(p); };
    }

private:
    void core_thread(int core);
    std::vector<sc_core::sc_event> start_;
    std::vector<CorePipeline>* pipelines_ = nullptr;
    int running_ = 0;
};

}  // namespace accelsim::tpu
