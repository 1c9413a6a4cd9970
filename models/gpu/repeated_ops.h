#pragma once
// Exact reuse of repeated ops (docs/gpu.md "Repeated ops"). A library op's simulation on the GPU
// chip is a deterministic function of three things: the op's shape (kind, dtype and sizes, not its
// name or trace line), the chip (fixed for a run), and what the L2 holds when the op starts (the
// lines the previous op left, in LRU order with their sector masks, and which buffer was that op's
// output). Layers of a model repeat: from its second or third layer on, each op of BERT-base meets
// the L2 contents the same op met one layer earlier. This cache keeps, per (shape, L2 contents),
// what the simulation produced (the report, the kernel's counters, the L2 it left) and hands it
// back for an identical start. A lookup compares the whole L2 contents, not only a hash: a hit is
// the run that would have happened, never a guess.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "models/common/chip_model.h"
#include "models/memory/l2_cache.h"
#include "models/simt/execution.h"
#include "models/simt/simt_gpu.h"

namespace accelsim::gpu {

using L2Lines = std::vector<memory::L2Cache::ResidentLine>;

// Everything an op's simulation depends on besides the chip: the op(s) and the L2 at its start.
struct OpStart {
    std::string shape;  // op_shape_key of each op the kernel runs (a fused group: all of them)
    std::shared_ptr<const L2Lines> l2;  // the lines the previous op left (never null; may be empty)
    std::optional<simt::GlobalMemory::Allocation> previous_output;  // where its output was
};

// What the simulation of an op produced, as the chip keeps it.
struct OpOutcome {
    OpReport report;                // as run: the op's name, file and line are the first run's
    simt::KernelStats kernel;       // the op's first launch (GpuChip::last_kernel_stats)
    std::shared_ptr<const L2Lines> l2;  // the lines it left
    std::optional<simt::GlobalMemory::Allocation> output;
    std::uint64_t warm_lines = 0, warm_input_lines = 0;
};

// Appends the fields of `op` its simulation depends on: kind, dtype and every size; not the name,
// the file or the line. A field added to Op, GemmShape, Conv2dShape or PoolShape must be added
// here (static_asserts in repeated_ops.cpp catch a shape struct that grew).
void append_op_shape_key(std::string& key, const Op& op);

class RepeatedOpCache {
public:
    // Stops keeping new outcomes once the L2 line lists it holds reach this many bytes (the
    // earlier entries stay: a model's repeating layers come early in its trace).
    explicit RepeatedOpCache(std::size_t budget_bytes = std::size_t{512} << 20) : budget_bytes_(budget_bytes) {}

    // The outcome of an earlier op with exactly this start, or nullptr.
    const OpOutcome* find(const OpStart& start);
    // Keeps `outcome` for `start` (unless the budget is spent). `outcome.l2` may share its list
    // with a later start: the next op starts from the lines this one left.
    void keep(const OpStart& start, OpOutcome outcome);

    std::size_t hits() const { return hits_; }

private:
    struct Entry {
        OpStart start;
        OpOutcome outcome;
    };
    static std::uint64_t digest(const OpStart& start);
    std::size_t lines_bytes(const std::shared_ptr<const L2Lines>& lines);

    std::unordered_map<std::uint64_t, std::vector<Entry>> entries_by_digest_;
    std::unordered_set<const L2Lines*> counted_;  // line lists whose bytes held_bytes_ includes
    std::size_t budget_bytes_, held_bytes_ = 0, hits_ = 0;
};

}  // namespace accelsim::gpu
