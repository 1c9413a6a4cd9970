// The cycle-stepped array. Two register models:
//  StationaryCore (ws, and is as ws on the transposed problem): per PE an active and a shadow
//    stationary register, an operand register moving right and a partial-sum register moving down.
//  OutputStationaryCore (os): per PE an accumulator, an A register moving right and a B register
//    moving down, and a per-column result bus.
// Shift registers are kept as delay lines over plain arrays so one clock costs one vectorisable
// pass over the PEs and O(R + C) bookkeeping; docs/mxu.md describes the timing they produce.
#include "models/mxu/mxu_stepped.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/mxu/mxu_internal.h"
#include "models/mxu/mxu_operands.h"

namespace accelsim {

using mxu_detail::ArrayProblem;
using mxu_detail::pe_mac;
using mxu_detail::RawCounts;

class MxuSteppedArray::Core {
public:
    virtual ~Core() = default;
    virtual bool done() const = 0;
    virtual void step() = 0;
    virtual std::int64_t cycle() const = 0;
    virtual double left(int r, int c) const = 0;
    virtual double top(int r, int c) const = 0;
    virtual double psum(int r, int c) const = 0;
    virtual RawCounts counts() const = 0;
    // The output in the core's layout ([batch][t][n] for stationary cores, [batch][m][n] for os).
    virtual const void* output() const = 0;
};

namespace {

// Slack of the operand delay lines: a row's window slides left one element per clock and is
// copied back to the end every kWindowSlack clocks (amortised O(C/kWindowSlack) per clock).
constexpr std::int64_t kWindowSlack = 512;

[[noreturn]] void hazard(const std::string& what) {
    throw std::logic_error("accelsim/mxu: stepped model hazard: " + what);
}

// ------------------------------------------------------------------------------------------
// Weight-stationary register model (also input-stationary on the transposed problem).
// Fold f (tile order: batch, column tile, row tile) timeline, with s_f its first stream cycle:
//   - its stationary tile is loaded through a per-column weight bus starting at L_f; column j's
//     shadow registers latch at the end of cycle L_f + j + R - 1;
//   - PE(i,j) swaps shadow -> active in cycle s_f + i + j, when the fold's first operand arrives;
//   - stream row m enters array row i in cycle s_f + m + i and PE(i,j) in s_f + m + i + j;
//   - the partial sum of row m leaves column j at the bottom in cycle s_f + m + R - 1 + j.
// The controller starts load f+1 once stream f has started (overlap) or fold f has fully drained
// (no overlap), and starts stream f+1 once its column-0 shadow has latched.
template <class T>
class StationaryCore final : public MxuSteppedArray::Core {
public:
    StationaryCore(const MxuParams& p, const ArrayProblem& q, std::vector<T> stream,
                   std::vector<T> station, bool has_data)
        : R_(p.rows), C_(p.cols), overlap_(p.overlap_folds), q_(q), has_data_(has_data),
          stream_(std::move(stream)), station_(std::move(station)) {
        kt_count_ = ceil_div(q_.k_len, R_);
        nt_count_ = ceil_div(q_.n_len, C_);
        folds_ = q_.batch * kt_count_ * nt_count_;
        W_ = C_ + kWindowSlack;
        D_ = R_ + C_;
        const auto rc = static_cast<std::size_t>(R_ * C_);
        if (has_data_) {
            out_.assign(static_cast<std::size_t>(q_.batch * q_.t_len * q_.n_len), T(0));
            w_active_.assign(rc, T(0));
            w_shadow_.assign(rc, T(0));
            psum_.assign(rc, T(0));
            window_.assign(static_cast<std::size_t>(R_ * W_), T(0));
            zero_row_.assign(static_cast<std::size_t>(C_), T(0));
            ring_vals_.assign(static_cast<std::size_t>(D_ * R_), T(0));
        }
        pos_ = W_ - C_;
        ring_.assign(static_cast<std::size_t>(D_), Slot{});
        shadow_fold_.assign(static_cast<std::size_t>(C_), -1);
        bottom_fold_.assign(static_cast<std::size_t>(C_), -1);
        loads_.reserve(static_cast<std::size_t>(C_ / R_ + 4));
        swaps_.reserve(static_cast<std::size_t>(R_ + C_ + 4));
    }

    bool done() const override { return completed_ == folds_; }
    std::int64_t cycle() const override { return c_; }
    RawCounts counts() const override { return n_; }
    const void* output() const override { return out_.data(); }

    double left(int r, int c) const override {
        return has_data_ ? static_cast<double>(window_[static_cast<std::size_t>(r * W_ + pos_ + c)]) : 0.0;
    }
    double top(int r, int c) const override {
        return has_data_ ? static_cast<double>(w_active_[static_cast<std::size_t>(r * C_ + c)]) : 0.0;
    }
    double psum(int r, int c) const override {
        return has_data_ ? static_cast<double>(psum_[static_cast<std::size_t>(r * C_ + c)]) : 0.0;
    }

    void step() override {
        if (done()) return;
        control();
        issue();
        swap();
        if (c_ - last_valid_issue_ <= R_ + C_ - 1) {  // else operand/psum registers are all zero: no-op
            if (has_data_) compute();
            collect();
        }
        latch();
        ++c_;
        if (done()) n_.cycles = c_;
    }

private:
    struct Slot {  // what entered the array edge in one cycle
        bool valid = false;
        bool first_k = false;   // the fold is the first K tile of its outputs
        bool last_row = false;  // last stream row of its fold
        std::int64_t out_base = 0;
        std::int64_t used_cols = 0;
    };
    struct Tile {
        std::int64_t b, n0, k0, used_cols, used_rows, k_tile;
    };
    struct Load {
        std::int64_t fold, start;
    };
    struct Swap {
        std::int64_t fold, start;
    };

    Tile tile_of(std::int64_t f) const {
        Tile t{};
        t.b = f / (kt_count_ * nt_count_);
        const std::int64_t rem = f % (kt_count_ * nt_count_);
        const std::int64_t nt = rem / kt_count_;
        t.k_tile = rem % kt_count_;
        t.n0 = nt * C_;
        t.k0 = t.k_tile * R_;
        t.used_cols = std::min<std::int64_t>(C_, q_.n_len - t.n0);
        t.used_rows = std::min<std::int64_t>(R_, q_.k_len - t.k0);
        return t;
    }

    void control() {
        if (!streaming_ && next_stream_ < folds_ && next_stream_ < next_load_ &&
            shadow_fold_[0] == next_stream_) {
            streaming_ = true;
            cur_ = tile_of(next_stream_);
            cur_fold_ = next_stream_++;
            cur_row_ = 0;
            swaps_.push_back({cur_fold_, c_});
            n_.folds += 1;
            n_.used_pe_sum += cur_.used_rows * cur_.used_cols;
        }
        const bool previous_ok =
            next_load_ == 0 ||
            (overlap_ ? next_load_ - 1 < next_stream_ : completed_ >= next_load_);
        if (next_load_ < folds_ && c_ >= load_port_free_ && previous_ok) {
            loads_.push_back({next_load_++, c_});
            load_port_free_ = c_ + R_;
        }
    }

    void issue() {
        Slot& s = ring_[static_cast<std::size_t>(c_ % D_)];
        if (!streaming_) {
            s.valid = false;
            if (next_stream_ < folds_ && next_stream_ < next_load_) {
                ++n_.load_stall;
            } else {
                ++n_.fill_drain;
            }
            return;
        }
        ++n_.compute;
        s.valid = true;
        s.first_k = cur_.k_tile == 0;
        s.last_row = cur_row_ == q_.t_len - 1;
        s.out_base = (cur_.b * q_.t_len + cur_row_) * q_.n_len + cur_.n0;
        s.used_cols = cur_.used_cols;
        if (has_data_) {
            T* lanes = &ring_vals_[static_cast<std::size_t>((c_ % D_) * R_)];
            const T* src = &stream_[static_cast<std::size_t>((cur_.b * q_.t_len + cur_row_) * q_.k_len + cur_.k0)];
            std::int64_t i = 0;
            for (; i < cur_.used_rows; ++i) lanes[i] = src[i];
            for (; i < R_; ++i) lanes[i] = T(0);
        }
        n_.stream_reads += cur_.used_rows;
        last_valid_issue_ = c_;
        if (++cur_row_ == q_.t_len) streaming_ = false;
    }

    void swap() {
        for (const Swap& sw : swaps_) {
            const std::int64_t d = c_ - sw.start;  // anti-diagonal i + j the switch front is on
            const std::int64_t i_lo = std::max<std::int64_t>(0, d - (C_ - 1));
            const std::int64_t i_hi = std::min<std::int64_t>(R_ - 1, d);
            for (std::int64_t i = i_lo; i <= i_hi; ++i) {
                const std::int64_t j = d - i;
                if (shadow_fold_[static_cast<std::size_t>(j)] != sw.fold)
                    hazard("PE(" + std::to_string(i) + "," + std::to_string(j) + ") swaps to fold " +
                           std::to_string(sw.fold) + " but its shadow holds fold " +
                           std::to_string(shadow_fold_[static_cast<std::size_t>(j)]));
                if (has_data_) w_active_[static_cast<std::size_t>(i * C_ + j)] = w_shadow_[static_cast<std::size_t>(i * C_ + j)];
                if (i == R_ - 1) bottom_fold_[static_cast<std::size_t>(j)] = sw.fold;
            }
        }
        if (!swaps_.empty() && c_ - swaps_.front().start == R_ + C_ - 2) swaps_.erase(swaps_.begin());
    }

    void compute() {
        // Delay lines: row i's operand registers are window_[i*W + pos .. + C); the new operand
        // enters at column 0 and every register takes its left neighbour's value.
        if (pos_ == 0) {
            for (std::int64_t i = 0; i < R_; ++i) {
                T* w = &window_[static_cast<std::size_t>(i * W_)];
                std::memmove(w + W_ - C_ + 1, w, static_cast<std::size_t>(C_ - 1) * sizeof(T));
            }
            pos_ = W_ - C_;
        } else {
            --pos_;
        }
        const std::int64_t base = c_ % D_;
        for (std::int64_t i = 0; i < R_; ++i) {
            std::int64_t slot = base - i;
            if (slot < 0) slot += D_;
            const bool valid = c_ - i >= 0 && ring_[static_cast<std::size_t>(slot)].valid;
            window_[static_cast<std::size_t>(i * W_ + pos_)] = valid ? ring_vals_[static_cast<std::size_t>(slot * R_ + i)] : T(0);
        }
        // Partial sums move down: update rows bottom-up so row i still reads row i-1's old value.
        for (std::int64_t i = R_ - 1; i >= 0; --i) {
            T* __restrict__ p = &psum_[static_cast<std::size_t>(i * C_)];
            const T* __restrict__ pin = i > 0 ? &psum_[static_cast<std::size_t>((i - 1) * C_)] : zero_row_.data();
            const T* __restrict__ a = &window_[static_cast<std::size_t>(i * W_ + pos_)];
            const T* __restrict__ w = &w_active_[static_cast<std::size_t>(i * C_)];
            for (std::int64_t j = 0; j < C_; ++j) p[j] = pe_mac(pin[j], a[j], w[j]);
        }
    }

    void collect() {
        // The partial sum leaving column j in cycle c belongs to the row issued in c - (R-1) - j.
        const T* bottom = has_data_ ? &psum_[static_cast<std::size_t>((R_ - 1) * C_)] : nullptr;
        const std::int64_t t0 = c_ - (R_ - 1);
        std::int64_t slot = t0 >= 0 ? t0 % D_ : 0;  // ring index of t0 - j, stepped down without division
        for (std::int64_t j = 0; j < C_; ++j, slot = slot == 0 ? D_ - 1 : slot - 1) {
            if (t0 - j < 0) break;
            const Slot& s = ring_[static_cast<std::size_t>(slot)];
            if (!s.valid) continue;
            if (j < s.used_cols) {
                if (has_data_) {
                    T& o = out_[static_cast<std::size_t>(s.out_base + j)];
                    o = o + bottom[j];
                }
                ++n_.out_writes;
                if (!s.first_k) ++n_.out_reads;
            }
            if (j == C_ - 1 && s.last_row) ++completed_;
        }
    }

    void latch() {
        for (const Load& ld : loads_) {
            const std::int64_t j = c_ - ld.start - (R_ - 1);
            if (j < 0 || j >= C_) continue;
            if (bottom_fold_[static_cast<std::size_t>(j)] != ld.fold - 1)
                hazard("column " + std::to_string(j) + " latches fold " + std::to_string(ld.fold) +
                       " before its PEs left fold " + std::to_string(ld.fold - 1));
            const Tile t = tile_of(ld.fold);
            if (has_data_) {
                for (std::int64_t i = 0; i < R_; ++i) {
                    T v = T(0);
                    if (i < t.used_rows && j < t.used_cols)
                        v = station_[static_cast<std::size_t>((t.b * q_.k_len + t.k0 + i) * q_.n_len + t.n0 + j)];
                    w_shadow_[static_cast<std::size_t>(i * C_ + j)] = v;
                }
            }
            if (j < t.used_cols) n_.station_reads += t.used_rows;
            shadow_fold_[static_cast<std::size_t>(j)] = ld.fold;
        }
        if (!loads_.empty() && c_ - loads_.front().start - (R_ - 1) == C_ - 1) loads_.erase(loads_.begin());
    }

    const std::int64_t R_, C_;
    const bool overlap_;
    const ArrayProblem q_;
    const bool has_data_;
    std::vector<T> stream_, station_, out_;
    std::int64_t kt_count_ = 0, nt_count_ = 0, folds_ = 0, W_ = 0, D_ = 0;

    std::vector<T> w_active_, w_shadow_, psum_, window_, zero_row_, ring_vals_;
    std::int64_t pos_ = 0;
    std::vector<Slot> ring_;
    std::vector<std::int64_t> shadow_fold_, bottom_fold_;
    std::vector<Load> loads_;
    std::vector<Swap> swaps_;

    std::int64_t c_ = 0;
    std::int64_t next_load_ = 0, next_stream_ = 0, load_port_free_ = 0, completed_ = 0;
    bool streaming_ = false;
    std::int64_t cur_fold_ = -1, cur_row_ = 0;
    Tile cur_{};
    std::int64_t last_valid_issue_ = -(std::int64_t(1) << 40);
    RawCounts n_;
};

// ------------------------------------------------------------------------------------------
// Output-stationary register model. Fold f (order: batch, column tile, row tile) streams k = 0..K-1
// in cycles s_f .. s_f + K - 1: A[m0+i][k] enters row i in s_f + k + i, B[k][n0+j] enters column j
// in s_f + k + j, PE(i,j) does its k-th MAC in s_f + k + i + j. In the cycle of its last MAC a PE
// puts its sum on its column's result bus (one result per column per cycle) and clears.
// The controller starts fold f+1 once the input ports are free and, with overlap, once its
// results cannot collide with fold f's on the buses (s_{f+1} >= s_f + R); without overlap once
// fold f has fully drained.
template <class T>
class OutputStationaryCore final : public MxuSteppedArray::Core {
public:
    OutputStationaryCore(const MxuParams& p, const ArrayProblem& q, std::vector<T> a,
                         std::vector<T> b, bool has_data)
        : R_(p.rows), C_(p.cols), overlap_(p.overlap_folds), q_(q), has_data_(has_data),
          a_(std::move(a)), b_(std::move(b)) {
        // q.t_len = K, q.k_len = M, q.n_len = N
        mt_count_ = ceil_div(q_.k_len, R_);
        nt_count_ = ceil_div(q_.n_len, C_);
        folds_ = q_.batch * mt_count_ * nt_count_;
        W_ = C_ + kWindowSlack;
        D_ = R_ + C_;
        if (has_data_) {
            out_.assign(static_cast<std::size_t>(q_.batch * q_.k_len * q_.n_len), T(0));
            acc_.assign(static_cast<std::size_t>(R_ * C_), T(0));
            window_.assign(static_cast<std::size_t>(R_ * W_), T(0));
            top_ring_.assign(static_cast<std::size_t>(R_ * C_), T(0));
            ring_a_.assign(static_cast<std::size_t>(D_ * R_), T(0));
            ring_b_.assign(static_cast<std::size_t>(D_ * C_), T(0));
        }
        pos_ = W_ - C_;
        ring_valid_.assign(static_cast<std::size_t>(D_), 0);
        bus_cycle_.assign(static_cast<std::size_t>(C_), -1);
        emits_.reserve(static_cast<std::size_t>(R_ + C_ + 4));
    }

    bool done() const override { return completed_ == folds_; }
    std::int64_t cycle() const override { return c_; }
    RawCounts counts() const override { return n_; }
    const void* output() const override { return out_.data(); }

    double left(int r, int c) const override {
        return has_data_ ? static_cast<double>(window_[static_cast<std::size_t>(r * W_ + pos_ + c)]) : 0.0;
    }
    double top(int r, int c) const override {
        if (!has_data_) return 0.0;
        std::int64_t row = (c_ - 1 - r) % R_;  // registers as of the last completed cycle
        if (row < 0) row += R_;
        return static_cast<double>(top_ring_[static_cast<std::size_t>(row * C_ + c)]);
    }
    double psum(int r, int c) const override {
        return has_data_ ? static_cast<double>(acc_[static_cast<std::size_t>(r * C_ + c)]) : 0.0;
    }

    void step() override {
        if (done()) return;
        control();
        issue();
        if (c_ - last_valid_issue_ <= R_ + C_ - 1 && has_data_) compute();
        emit();
        ++c_;
        if (done()) n_.cycles = c_;
    }

private:
    struct Tile {
        std::int64_t b, m0, n0, used_rows, used_cols;
    };
    struct Emit {
        std::int64_t last_issue;
        Tile tile;
    };

    Tile tile_of(std::int64_t f) const {
        Tile t{};
        t.b = f / (mt_count_ * nt_count_);
        const std::int64_t rem = f % (mt_count_ * nt_count_);
        t.n0 = (rem / mt_count_) * C_;
        t.m0 = (rem % mt_count_) * R_;
        t.used_rows = std::min<std::int64_t>(R_, q_.k_len - t.m0);
        t.used_cols = std::min<std::int64_t>(C_, q_.n_len - t.n0);
        return t;
    }

    void control() {
        if (streaming_ || next_ >= folds_) return;
        const bool ok = next_ == 0 || (overlap_ ? c_ >= prev_start_ + R_ : completed_ >= next_);
        if (!ok) return;
        streaming_ = true;
        cur_ = tile_of(next_++);
        prev_start_ = c_;
        cur_k_ = 0;
        n_.folds += 1;
        n_.used_pe_sum += cur_.used_rows * cur_.used_cols;
    }

    void issue() {
        const std::int64_t slot = c_ % D_;
        if (!streaming_) {
            ring_valid_[static_cast<std::size_t>(slot)] = 0;
            if (next_ < folds_ && overlap_) {
                ++n_.drain_stall;
            } else {
                ++n_.fill_drain;
            }
            return;
        }
        ++n_.compute;
        ring_valid_[static_cast<std::size_t>(slot)] = 1;
        if (has_data_) {
            T* la = &ring_a_[static_cast<std::size_t>(slot * R_)];
            T* lb = &ring_b_[static_cast<std::size_t>(slot * C_)];
            const std::int64_t K = q_.t_len, M = q_.k_len, N = q_.n_len;
            std::int64_t i = 0;
            for (; i < cur_.used_rows; ++i) la[i] = a_[static_cast<std::size_t>((cur_.b * M + cur_.m0 + i) * K + cur_k_)];
            for (; i < R_; ++i) la[i] = T(0);
            const T* brow = &b_[static_cast<std::size_t>((cur_.b * K + cur_k_) * N + cur_.n0)];
            std::int64_t j = 0;
            for (; j < cur_.used_cols; ++j) lb[j] = brow[j];
            for (; j < C_; ++j) lb[j] = T(0);
        }
        n_.stream_reads += cur_.used_rows;
        n_.station_reads += cur_.used_cols;
        last_valid_issue_ = c_;
        if (++cur_k_ == q_.t_len) {
            streaming_ = false;
            emits_.push_back({c_, cur_});
        }
    }

    void compute() {
        if (pos_ == 0) {
            for (std::int64_t i = 0; i < R_; ++i) {
                T* w = &window_[static_cast<std::size_t>(i * W_)];
                std::memmove(w + W_ - C_ + 1, w, static_cast<std::size_t>(C_ - 1) * sizeof(T));
            }
            pos_ = W_ - C_;
        } else {
            --pos_;
        }
        const std::int64_t base = c_ % D_;
        for (std::int64_t i = 0; i < R_; ++i) {  // A enters row i skewed by i
            std::int64_t slot = base - i;
            if (slot < 0) slot += D_;
            const bool valid = c_ - i >= 0 && ring_valid_[static_cast<std::size_t>(slot)];
            window_[static_cast<std::size_t>(i * W_ + pos_)] = valid ? ring_a_[static_cast<std::size_t>(slot * R_ + i)] : T(0);
        }
        T* top_now = &top_ring_[static_cast<std::size_t>((c_ % R_) * C_)];
        for (std::int64_t j = 0; j < C_; ++j) {  // B enters column j skewed by j
            std::int64_t slot = base - j;
            if (slot < 0) slot += D_;
            const bool valid = c_ - j >= 0 && ring_valid_[static_cast<std::size_t>(slot)];
            top_now[j] = valid ? ring_b_[static_cast<std::size_t>(slot * C_ + j)] : T(0);
        }
        std::int64_t row = c_ % R_;  // B moves down one row per cycle: row i reads top_ring_[(c - i) mod R]
        for (std::int64_t i = 0; i < R_; ++i, row = row == 0 ? R_ - 1 : row - 1) {
            T* __restrict__ acc = &acc_[static_cast<std::size_t>(i * C_)];
            const T* __restrict__ a = &window_[static_cast<std::size_t>(i * W_ + pos_)];
            const T* __restrict__ b = &top_ring_[static_cast<std::size_t>(row * C_)];
            for (std::int64_t j = 0; j < C_; ++j) acc[j] = pe_mac(acc[j], a[j], b[j]);
        }
    }

    void emit() {
        for (const Emit& e : emits_) {
            const std::int64_t d = c_ - e.last_issue;  // PEs with i + j == d did their last MAC now
            if (d < 0) continue;
            const std::int64_t i_lo = std::max<std::int64_t>(0, d - (C_ - 1));
            const std::int64_t i_hi = std::min<std::int64_t>(R_ - 1, d);
            for (std::int64_t i = i_lo; i <= i_hi; ++i) {
                const std::int64_t j = d - i;
                if (i < e.tile.used_rows && j < e.tile.used_cols) {
                    if (bus_cycle_[static_cast<std::size_t>(j)] == c_)
                        hazard("two results on column " + std::to_string(j) + "'s bus in cycle " + std::to_string(c_));
                    bus_cycle_[static_cast<std::size_t>(j)] = c_;
                    if (has_data_)
                        out_[static_cast<std::size_t>((e.tile.b * q_.k_len + e.tile.m0 + i) * q_.n_len + e.tile.n0 + j)] =
                            acc_[static_cast<std::size_t>(i * C_ + j)];
                    ++n_.out_writes;
                }
                if (has_data_) acc_[static_cast<std::size_t>(i * C_ + j)] = T(0);
            }
            if (d == R_ + C_ - 2) ++completed_;
        }
        if (!emits_.empty() && c_ - emits_.front().last_issue == R_ + C_ - 2) emits_.erase(emits_.begin());
    }

    const std::int64_t R_, C_;
    const bool overlap_;
    const ArrayProblem q_;
    const bool has_data_;
    std::vector<T> a_, b_, out_;
    std::int64_t mt_count_ = 0, nt_count_ = 0, folds_ = 0, W_ = 0, D_ = 0;

    std::vector<T> acc_, window_, top_ring_, ring_a_, ring_b_;
    std::vector<char> ring_valid_;
    std::vector<std::int64_t> bus_cycle_;
    std::int64_t pos_ = 0;
    std::vector<Emit> emits_;

    std::int64_t c_ = 0, next_ = 0, prev_start_ = 0, completed_ = 0, cur_k_ = 0;
    bool streaming_ = false;
    Tile cur_{};
    std::int64_t last_valid_issue_ = -(std::int64_t(1) << 40);
    RawCounts n_;
};

template <class T>
std::unique_ptr<MxuSteppedArray::Core> make_core(const MxuParams& p, const GemmShape& shape,
                                                 DType dtype, const MxuOperands* ops) {
    const ArrayProblem q = mxu_detail::array_problem(p.dataflow, shape);
    const bool has_data = ops != nullptr;
    std::vector<T> a, b;
    if (has_data) {
        a = mxu_detail::convert_operand<T>(ops->a, shape.batch * shape.m * shape.k, dtype, "A");
        b = mxu_detail::convert_operand<T>(ops->b, shape.batch * shape.k * shape.n, dtype, "B");
    }
    switch (p.dataflow) {
        case MxuDataflow::ws:
            return std::make_unique<StationaryCore<T>>(p, q, std::move(a), std::move(b), has_data);
        case MxuDataflow::is: {
            std::vector<T> stream, station;  // stream = B^T [batch][n][k], station = A^T [batch][k][m]
            if (has_data) {
                stream = mxu_detail::transpose_batched(b, shape.batch, shape.k, shape.n);
                station = mxu_detail::transpose_batched(a, shape.batch, shape.m, shape.k);
            }
            return std::make_unique<StationaryCore<T>>(p, q, std::move(stream), std::move(station), has_data);
        }
        case MxuDataflow::os:
            return std::make_unique<OutputStationaryCore<T>>(p, q, std::move(a), std::move(b), has_data);
    }
    throw std::invalid_argument("mxu.dataflow: unknown dataflow");
}

}  // namespace

MxuSteppedArray::MxuSteppedArray(const MxuParams& params, const GemmShape& shape, DType dtype,
                                 const MxuOperands* operands)
    : params_(params), shape_(shape), dtype_(dtype), has_data_(operands != nullptr) {
    mxu_detail::check_run_arguments(params, shape, dtype, operands);
    if (dtype == DType::int8)
        core_ = make_core<std::int32_t>(params, shape, dtype, operands);
    else
        core_ = make_core<float>(params, shape, dtype, operands);
}

MxuSteppedArray::~MxuSteppedArray() = default;

bool MxuSteppedArray::done() const { return core_->done(); }
void MxuSteppedArray::step() { core_->step(); }
std::int64_t MxuSteppedArray::cycle() const { return core_->cycle(); }
double MxuSteppedArray::left_operand(int row, int col) const { return core_->left(row, col); }
double MxuSteppedArray::top_operand(int row, int col) const { return core_->top(row, col); }
double MxuSteppedArray::partial_sum(int row, int col) const { return core_->psum(row, col); }

MxuGemmResult MxuSteppedArray::finish() {
    while (!core_->done()) core_->step();
    MxuGemmResult result;
    result.accumulator = accumulator_of(dtype_);
    result.stats = mxu_detail::make_stats(params_, shape_, dtype_, core_->counts());
    if (!has_data_) return result;
    const std::int64_t b = shape_.batch, m = shape_.m, n = shape_.n;
    const bool transposed = params_.dataflow == MxuDataflow::is;  // core holds C^T [batch][n][m]
    auto export_output = [&](auto* dst_vec, auto type_tag) {
        using T = decltype(type_tag);
        const T* src = static_cast<const T*>(core_->output());
        dst_vec->resize(static_cast<std::size_t>(b * m * n));
        if (transposed) {
            *dst_vec = mxu_detail::transpose_batched(std::vector<T>(src, src + b * m * n), b, n, m);
        } else {
            std::copy(src, src + b * m * n, dst_vec->begin());
        }
    };
    if (result.accumulator == DType::int32)
        export_output(&result.c_int32, std::int32_t{});
    else
        export_output(&result.c_fp32, float{});
    return result;
}

}  // namespace accelsim
