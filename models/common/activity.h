#pragma once
// What a chip's units did during one op, for timelines (`--perfetto`, sim/report/perfetto.h).
// A chip records it only when asked (ChipModel::record_activity): otherwise no OpActivity exists
// and the models pay one null test per event they would have recorded (a step, a transfer, a
// block), never per cycle or per memory request. Times are chip cycles from the op's start.
#include <string>
#include <vector>

namespace accelsim {

// One unit busy with one piece of work. A track names the unit ("core0.mxu1", "core0.dma",
// "kernels"); spans of one track may overlap (a DMA engine with several transfers in flight): the
// timeline writer spreads them over sub-tracks.
struct ActivitySpan {
    std::string track, name;
    double start = 0, end = 0;
};

// Bytes that crossed a memory level ("hbm", "l2", "cmem") between start and end, spread evenly,
// or done at one instant (start == end). The timeline's bandwidth counters sum them per interval.
struct ActivityTransfer {
    std::string level;
    double start = 0, end = 0;
    double bytes = 0;
};

// A counter's value from `time` on ("sm3.resident_warps").
struct ActivitySample {
    std::string counter;
    double time = 0, value = 0;
};

struct OpActivity {
    std::vector<ActivitySpan> spans;
    std::vector<ActivityTransfer> transfers;
    std::vector<ActivitySample> samples;
    // Appends `other` with its times moved `offset` cycles later (an op's second launch).
    void append(const OpActivity& other, double offset) {
        for (ActivitySpan s : other.spans) spans.push_back({s.track, s.name, s.start + offset, s.end + offset});
        for (const ActivityTransfer& t : other.transfers)
            transfers.push_back({t.level, t.start + offset, t.end + offset, t.bytes});
        for (const ActivitySample& s : other.samples) samples.push_back({s.counter, s.time + offset, s.value});
    }
};

}  // namespace accelsim
