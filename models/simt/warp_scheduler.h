#pragma once
// Warp scheduling policies, one per sub-partition, chosen by name:
//   lrr        loose round-robin: the warp after the one that issued last, wrapping around.
//   gto        greedy-then-oldest: the warp that issued last while it can; otherwise the oldest
//              (earliest dispatched) ready warp.
//   two_level  a small active set scheduled round-robin; a warp that issues a long-latency
//              operation (global load) or waits at a barrier moves to the pending queue and the
//              oldest pending warp takes its place (Narasiman et al., MICRO 2011).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace accelsim::simt {

class WarpScheduler {
public:
    virtual ~WarpScheduler() = default;
    virtual void add(int warp) = 0;     // dispatched; later adds are younger
    virtual void remove(int warp) = 0;  // finished
    // Eligible warps in priority order (valid until the next call), after preferred() if that is
    // not -1 (it may appear in order() again; the caller checks it only once per cycle).
    virtual const std::vector<int>& order() = 0;
    virtual int preferred() const { return -1; }
    // `long_latency`: the instruction was a global load. `barrier`: the warp now waits at bar.sync.
    virtual void issued(int warp, bool long_latency, bool barrier) = 0;
    virtual void released(int /*warp*/) {}  // left a barrier
};

// The policies make_warp_scheduler builds: "lrr", "gto", "two_level".
const std::vector<std::string>& warp_scheduler_names();
// name: one of warp_scheduler_names() (throws std::invalid_argument otherwise).
std::unique_ptr<WarpScheduler> make_warp_scheduler(const std::string& name, int active_set_size);

}  // namespace accelsim::simt
