#include "models/gpu/hierarchy_port.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace accelsim::gpu {

namespace {
// std::llround for x >= 0, inline (the library call is on every sector's way in and out):
// truncation is the floor here, and x - floor(x) is exact (Sterbenz), so halves round up as
// llround rounds them, away from zero.
std::int64_t round_nonnegative(double x) {
    const auto whole = static_cast<std::int64_t>(x);
    return x - static_cast<double>(whole) >= 0.5 ? whole + 1 : whole;
}
}  // namespace

HierarchyMemoryPort::HierarchyMemoryPort(const memory::MemoryHierarchyParams& params, bool blocking)
    : hierarchy_(params), cycle_ps_(1e12 / params.clock_hz) {
    if (!(params.clock_hz > 0)) throw std::invalid_argument("hierarchy port: clock_hz must be > 0");
    if (params.l2 && !blocking) {
        // The L2 runs at the hierarchy's clock (MemoryHierarchy sets it), the SM's here.
        const double hit_cycles = params.l2->hit_latency_cycles;  // L2 clock = SM clock
        lookahead_ = static_cast<std::uint64_t>(std::max(1.0, std::floor(hit_cycles) - 1));
    }
}

memory::Picoseconds HierarchyMemoryPort::to_ps(std::uint64_t cycle) const {
    return static_cast<memory::Picoseconds>(round_nonnegative(static_cast<double>(cycle) * cycle_ps_));
}

std::uint64_t HierarchyMemoryPort::to_cycle(memory::Picoseconds done, std::uint64_t cycle) const {
    // Back to SM cycles, rounding up (the data is usable from the first SM edge after it lands);
    // the 1e-6 keeps an exact cycle boundary that picosecond rounding nudged up on that cycle.
    const auto back = static_cast<std::uint64_t>(std::ceil(static_cast<double>(done) / cycle_ps_ - 1e-6));
    return back > cycle ? back : cycle + 1;
}

std::uint64_t HierarchyMemoryPort::access(std::uint64_t cycle, std::uint32_t sector_address, bool write, int sm) {
    ++(write ? write_sectors_ : read_sectors_);
    if (write && !first_write_) first_write_ = sector_address;
    const memory::Picoseconds done = hierarchy_.access(sm, sector_address, kSectorBytes, write, to_ps(cycle));
    return to_cycle(done, cycle);
}

void HierarchyMemoryPort::submit(std::uint64_t cycle, std::uint32_t sector_address, bool write, int sm,
                                 std::uint64_t tag) {
    if (lookahead_ == 0) throw std::logic_error("hierarchy port: submit() on a blocking port");
    if ((tag & kTagSmBits) != 0 || sm < 0 || static_cast<std::uint64_t>(sm) >= (kTagSmBits >> kTagSmShift))
        throw std::logic_error("hierarchy port: tag bits 40..61 must be clear and sm below 2^22");
    ++(write ? write_sectors_ : read_sectors_);
    if (write && !first_write_) first_write_ = sector_address;
    // The SM rides in the tag's free bits and the cycle in the issue time, so an answer needs no
    // lookup in a side table (a host cache miss per sector when tens of thousands are in flight).
    const std::uint64_t engine_tag = tag | (static_cast<std::uint64_t>(sm) << kTagSmShift);
    submitted_.push_back(Submitted{to_ps(cycle), cycle, engine_tag, sector_address, write});
}

void HierarchyMemoryPort::collect(std::vector<simt::SectorAnswer>& answers) {
    std::vector<memory::QueuedCompletion>& done = hierarchy_.queued_completions();
    for (const memory::QueuedCompletion& c : done) {
        const auto sm = static_cast<int>((c.tag & kTagSmBits) >> kTagSmShift);
        const auto cycle = static_cast<std::uint64_t>(round_nonnegative(static_cast<double>(c.issued) / cycle_ps_));
        answers.push_back({sm, c.tag & ~kTagSmBits, to_cycle(c.done, cycle)});
    }
    done.clear();
}

void HierarchyMemoryPort::advance(std::uint64_t end, std::vector<simt::SectorAnswer>& answers) {
    // Everything before `end`, in time order: a sector leaving an SM goes before the hierarchy's
    // own events of the same picosecond (as run_queued's driver does).
    const memory::Picoseconds limit = end == ~std::uint64_t{0} ? ~memory::Picoseconds{0} : to_ps(end);
    due_.clear();
    std::size_t kept = 0;
    for (const Submitted& s : submitted_) {
        if (s.at < limit) due_.push_back(s);
        else submitted_[kept++] = s;
    }
    submitted_.resize(kept);
    sort_due();
    // Most steps complete nothing: look at the list here instead of calling collect() each time.
    const std::vector<memory::QueuedCompletion>& completions = hierarchy_.queued_completions();
    std::size_t next = 0;
    for (;;) {
        const memory::Picoseconds request = next < due_.size() ? due_[next].at : ~memory::Picoseconds{0};
        const memory::Picoseconds event = hierarchy_.queued_next_event();
        const memory::Picoseconds now = std::min(request, event);
        if (now >= limit || now == ~memory::Picoseconds{0}) break;
        if (request == now) {
            const Submitted& s = due_[next++];
            hierarchy_.queued_issue(s.sm(), s.sector, kSectorBytes, s.write, s.at, s.tag);
        } else {
            hierarchy_.queued_step();
            if (!completions.empty()) collect(answers);
        }
    }
}

void HierarchyMemoryPort::sort_due() {
    // Into (time, SM, submission) order. due_ is in submission order, so a stable sort by (time,
    // SM) gives it. A window's requests span about W cycles: a counting sort by cycle, then each
    // cycle's few requests by SM, is cheaper than sorting them all; SMs run one after another
    // in a window, so a cycle's requests are nearly in SM order already (insertion sort).
    if (due_.empty()) return;
    std::uint64_t lo = due_.front().cycle, hi = lo;
    for (const Submitted& s : due_) {
        lo = std::min(lo, s.cycle);
        hi = std::max(hi, s.cycle);
    }
    if (hi - lo > 4 * due_.size() + 1024) {  // sparse (the final drain): a plain stable sort
        std::stable_sort(due_.begin(), due_.end(), [](const Submitted& a, const Submitted& b) {
            return a.at != b.at ? a.at < b.at : a.sm() < b.sm();
        });
        return;
    }
    bucket_start_.assign(static_cast<std::size_t>(hi - lo) + 2, 0);
    for (const Submitted& s : due_) ++bucket_start_[static_cast<std::size_t>(s.cycle - lo) + 1];
    for (std::size_t b = 1; b < bucket_start_.size(); ++b) bucket_start_[b] += bucket_start_[b - 1];
    sorted_.resize(due_.size());
    for (const Submitted& s : due_) sorted_[bucket_start_[static_cast<std::size_t>(s.cycle - lo)]++] = s;
    // bucket_start_[b] is now the end of bucket b; within a bucket the order is submission
    // order, so a stable sort of each by SM completes the (time, SM, submission) order (one
    // cycle is one picosecond time).
    std::size_t begin = 0;
    for (std::size_t b = 0; b + 1 < bucket_start_.size(); ++b) {
        const std::size_t end = bucket_start_[b];
        if (end - begin > 256) {  // many SMs in one cycle: insertion could go quadratic
            std::stable_sort(sorted_.begin() + static_cast<std::ptrdiff_t>(begin), sorted_.begin() + static_cast<std::ptrdiff_t>(end),
                             [](const Submitted& x, const Submitted& y) { return x.sm() < y.sm(); });
            begin = end;
            continue;
        }
        for (std::size_t i = begin + 1; i < end; ++i) {
            if (sorted_[i - 1].sm() <= sorted_[i].sm()) continue;
            const Submitted moving = sorted_[i];
            std::size_t j = i;
            for (; j > begin && sorted_[j - 1].sm() > moving.sm(); --j) sorted_[j] = sorted_[j - 1];
            sorted_[j] = moving;
        }
        begin = end;
    }
    due_.swap(sorted_);
}

std::uint64_t HierarchyMemoryPort::next_activity_cycle() {
    memory::Picoseconds next = hierarchy_.queued_next_event();
    for (const Submitted& s : submitted_) next = std::min(next, s.at);
    if (next == ~memory::Picoseconds{0}) return ~std::uint64_t{0};
    // Rounded down, and one cycle earlier against floating-point error: a window may start early
    // (it only idles), never late.
    const auto cycle = static_cast<std::uint64_t>(static_cast<double>(next) / cycle_ps_);
    return cycle > 0 ? cycle - 1 : 0;
}

HierarchyTraffic HierarchyMemoryPort::traffic() const {
    HierarchyTraffic t;
    t.l2_read_bytes = read_sectors_ * kSectorBytes;
    t.l2_write_bytes = write_sectors_ * kSectorBytes;
    const memory::MemoryHierarchyStats s = hierarchy_.stats();
    if (s.l2) {
        t.l2_hits = s.l2->hits;
        t.l2_accesses = s.l2->accesses;
    }
    t.hbm_read_bytes = s.dram.bytes_read;
    t.hbm_write_bytes = s.dram.bytes_written + displaced_writeback_bytes_;
    t.hbm_row_hits = s.dram.bursts.row_hits;
    t.hbm_row_misses = s.dram.bursts.row_misses;
    t.hbm_row_conflicts = s.dram.bursts.row_conflicts;
    t.average_latency_ns = s.latency.average_ns();
    t.max_latency_ns = s.latency.max_ns();
    return t;
}

std::vector<memory::L2Cache::ResidentLine> HierarchyMemoryPort::l2_lines() const {
    const memory::L2Cache* l2 = hierarchy_.l2();
    return l2 ? l2->resident_lines() : std::vector<memory::L2Cache::ResidentLine>{};
}

void HierarchyMemoryPort::warm_l2(const std::vector<memory::L2Cache::ResidentLine>& lines) {
    memory::L2Cache* l2 = hierarchy_.l2();
    if (!l2) return;
    const auto sector_bytes = static_cast<std::uint64_t>(l2->params().sector_bytes);
    for (const auto& line : lines)
        if (const auto out = l2->install(line))
            displaced_writeback_bytes_ += static_cast<std::uint64_t>(__builtin_popcount(out->dirty)) * sector_bytes;
}

void HierarchyMemoryPort::record_untimed_access(std::uint32_t sector_address, bool write) {
    if (memory::L2Cache* l2 = hierarchy_.l2()) l2->record_untimed_access(sector_address, kSectorBytes, write);
}

std::uint64_t HierarchyMemoryPort::cache_bytes() const {
    const memory::L2Cache* l2 = hierarchy_.l2();
    return l2 ? static_cast<std::uint64_t>(l2->params().size_bytes) : 0;
}

double HierarchyMemoryPort::hbm_bytes_per_cycle() const {
    return hierarchy_.peak_dram_bytes_per_second() * cycle_ps_ * 1e-12;
}

}  // namespace accelsim::gpu
