#include "models/memory/memory_hierarchy.h"

#include <algorithm>
#include <stdexcept>

namespace accelsim::memory {

namespace {
CrossbarParams crossbar_params(const MemoryHierarchyParams& p) {
    CrossbarParams c = p.crossbar;
    c.requesters = p.requesters;
    c.targets = p.l2 ? p.l2->slices : 1;
    c.clock_hz = p.clock_hz;
    return c;
}
}  // namespace

MemoryHierarchy::MemoryHierarchy(const MemoryHierarchyParams& params)
    : params_(params), dram_(params.dram), crossbar_(crossbar_params(params)) {
    if (params_.requesters <= 0) throw std::invalid_argument("memory hierarchy: requesters must be > 0");
    if (params_.l2) {
        L2Params l2 = *params_.l2;
        l2.clock_hz = params_.clock_hz;
        params_.l2 = l2;
        l2_ = std::make_unique<L2Cache>(l2, dram_);  // direct calls: no std::function per miss
        line_div_ = FastDivider(static_cast<std::uint64_t>(l2.line_bytes));
    }
}

Picoseconds MemoryHierarchy::access(int requester, std::uint64_t address, std::uint32_t bytes, bool write,
                                    Picoseconds arrival) {
    if (bytes == 0) bytes = 1;
    Picoseconds done = arrival;
    if (l2_) {
        const std::uint64_t line = line_div_.divisor();
        std::uint64_t a = address;
        const std::uint64_t end = address + bytes;
        while (a < end) {
            const std::uint64_t piece_end = std::min(end, (line_div_.div(a) + 1) * line);
            const auto n = static_cast<std::uint32_t>(piece_end - a);
            const int slice = l2_->slice_of(a);
            l2_->prefetch(a, slice);  // the set's host cache lines load while the crossbar works
            const Picoseconds at_slice = crossbar_.traverse(requester, slice, n, arrival);
            done = std::max(done, l2_->access(a, n, write, at_slice, slice));
            a = piece_end;
        }
    } else {
        const Picoseconds at_memory = crossbar_.enter(requester, bytes, arrival);
        done = dram_.access(address, bytes, write, at_memory);
    }
    ++requests_;
    (write ? bytes_written_ : bytes_read_) += bytes;
    latency_.record(done - arrival);
    return done;
}

MemoryHierarchyStats MemoryHierarchy::stats() const {
    MemoryHierarchyStats s;
    s.requests = requests_;
    s.bytes_read = bytes_read_;
    s.bytes_written = bytes_written_;
    s.latency = latency_;
    s.crossbar = crossbar_.stats();
    if (l2_) s.l2 = l2_->stats();
    s.dram = dram_.stats();
    return s;
}

}  // namespace accelsim::memory
