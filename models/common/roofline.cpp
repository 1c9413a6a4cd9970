#include "models/common/roofline.h"

#include <stdexcept>

namespace accelsim {

void choose_bound(Roofline& r) {
    r.bound.clear();
    r.bound_cycles = 0;
    for (const char* key : {"compute", "hbm", "cmem", "l2", "latency", "host_link"}) {
        auto it = r.cycles.find(key);
        if (it != r.cycles.end() && (r.bound.empty() || it->second > r.bound_cycles)) {
            r.bound = key;
            r.bound_cycles = it->second;
        }
    }
}

Roofline roofline_of(const Op& op, const ComputeUnit& unit, const MemoryPeaks& memory) {
    Roofline r;
    r.compute_unit = unit.name;
    r.matrix_fallback = unit.matrix_fallback;
    const double work = is_gemm_like(op.kind)
                            ? static_cast<double>(op.macs())
                            : static_cast<double>(op.vector_elements()) * op.vector_ops_per_element();
    r.compute_cycles = unit.ops_per_cycle > 0 ? work / unit.ops_per_cycle : 0;
    r.cycles["compute"] = r.compute_cycles;

    const std::int64_t bytes = op.compulsory_bytes();
    for (const std::string& level : memory.compulsory_levels) {
        r.bytes[level] = bytes;
        const double per_cycle = memory.of(level);
        if (per_cycle > 0) r.cycles[level] = static_cast<double>(bytes) / per_cycle;
    }
    if (memory.latency_cycles > 0) r.cycles["latency"] = memory.latency_cycles;
    choose_bound(r);
    return r;
}

void apply_placement(Roofline& r, const MemoryPeaks& memory, std::int64_t hbm_bytes_off, std::int64_t cmem_bytes) {
    if (hbm_bytes_off == 0 && cmem_bytes == 0) return;
    auto hbm = r.bytes.find("hbm");
    if (hbm == r.bytes.end()) throw std::logic_error("apply_placement: the roofline has no hbm level");
    if (hbm_bytes_off < 0 || hbm_bytes_off > hbm->second || cmem_bytes < 0)
        throw std::logic_error("apply_placement: bytes off HBM out of range");
    hbm->second -= hbm_bytes_off;
    r.cycles["hbm"] = static_cast<double>(hbm->second) / memory.of("hbm");
    if (cmem_bytes > 0) {
        const double port = memory.of("cmem");
        if (port <= 0) throw std::logic_error("apply_placement: CMEM bytes on a chip without CMEM");
        r.bytes["cmem"] = cmem_bytes;
        r.cycles["cmem"] = static_cast<double>(cmem_bytes) / port;
    }
    choose_bound(r);
}

}  // namespace accelsim
