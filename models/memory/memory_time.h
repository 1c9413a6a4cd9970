#pragma once
// Time base shared by the memory models: integer picoseconds. Integers keep every busy-until
// comparison exact, so results are identical whatever order the kernel runs processes in.
#include <cmath>
#include <cstdint>
#include <vector>

namespace accelsim::memory {

using Picoseconds = std::uint64_t;

inline Picoseconds ns_to_ps(double ns) { return static_cast<Picoseconds>(std::llround(ns * 1000.0)); }
inline double ps_to_ns(Picoseconds ps) { return static_cast<double>(ps) / 1000.0; }

// Cycles of a clock to picoseconds, rounded to the nearest picosecond (the rounding error of one
// period is below 0.05% for any clock up to 1 GHz, and it is the same for every access).
inline Picoseconds cycles_to_ps(double cycles, double clock_hz) {
    return static_cast<Picoseconds>(std::llround(cycles * 1e12 / clock_hz));
}

// Request latencies at 1 ns resolution up to `max_ns`, and the exact sum for the average. The bins
// are allocated once; recording is one increment.
class LatencyHistogram {
public:
    LatencyHistogram() : LatencyHistogram(std::size_t{1} << 17) {}  // up to 131 us
    explicit LatencyHistogram(std::size_t max_ns) : bins_(max_ns + 1, 0) {}
    void record(Picoseconds latency) {
        ++count_;
        sum_ps_ += latency;
        if (latency > max_ps_) max_ps_ = latency;
        std::size_t bin = static_cast<std::size_t>(latency / 1000);
        ++bins_[bin < bins_.size() ? bin : bins_.size() - 1];
    }
    std::uint64_t count() const { return count_; }
    double average_ns() const { return count_ ? static_cast<double>(sum_ps_) / 1000.0 / static_cast<double>(count_) : 0.0; }
    double max_ns() const { return ps_to_ns(max_ps_); }
    // Smallest whole-ns bound b such that at least fraction q of the latencies are < b + 1 ns
    // (i.e. the upper edge of the bin holding the q-quantile, so never below the true quantile).
    double quantile_ns(double q) const {
        if (count_ == 0) return 0.0;
        auto target = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
        if (target == 0) target = 1;
        std::uint64_t seen = 0;
        for (std::size_t i = 0; i < bins_.size(); ++i) {
            seen += bins_[i];
            if (seen >= target) return i + 1 < bins_.size() ? static_cast<double>(i + 1) : max_ns();
        }
        return max_ns();
    }
    void merge(const LatencyHistogram& other) {
        for (std::size_t i = 0; i < bins_.size() && i < other.bins_.size(); ++i) bins_[i] += other.bins_[i];
        count_ += other.count_;
        sum_ps_ += other.sum_ps_;
        if (other.max_ps_ > max_ps_) max_ps_ = other.max_ps_;
    }

private:
    std::vector<std::uint64_t> bins_;
    std::uint64_t count_ = 0;
    Picoseconds sum_ps_ = 0, max_ps_ = 0;
};

}  // namespace accelsim::memory
