#include "models/mxu/mxu_sc.h"

#include <stdexcept>

namespace accelsim {

void VcdWindow::validate(const MxuParams& params) const {
    if (first_cycle < 0 || last_cycle < first_cycle)
        throw std::invalid_argument("vcd window: need 0 <= first_cycle <= last_cycle, got " +
                                    std::to_string(first_cycle) + ".." + std::to_string(last_cycle));
    if (row0 < 0 || row1 < row0 || row1 >= params.rows)
        throw std::invalid_argument("vcd window: rows " + std::to_string(row0) + ".." + std::to_string(row1) +
                                    " outside the array's 0.." + std::to_string(params.rows - 1));
    if (col0 < 0 || col1 < col0 || col1 >= params.cols)
        throw std::invalid_argument("vcd window: cols " + std::to_string(col0) + ".." + std::to_string(col1) +
                                    " outside the array's 0.." + std::to_string(params.cols - 1));
}

MxuModule::MxuModule(sc_core::sc_module_name name, const MxuParams& params, const GemmShape& shape, DType dtype,
                     const MxuOperands* operands, sc_core::sc_time clock_period)
    : sc_core::sc_module(name), array_(params, shape, dtype, operands), period_(clock_period) {
    SC_THREAD(run);
}

void MxuModule::trace_pes(sc_core::sc_trace_file* tf, const VcdWindow& window) {
    window_ = window;
    tracing_ = true;
    const int rows = window.row1 - window.row0 + 1, cols = window.col1 - window.col0 + 1;
    // Sized once here: sc_trace keeps references into these vectors.
    left_.assign(static_cast<std::size_t>(rows * cols), 0.0);
    top_.assign(left_.size(), 0.0);
    psum_.assign(left_.size(), 0.0);
    const std::string prefix = std::string(name()) + ".";
    sc_core::sc_trace(tf, cycle_mirror_, prefix + "cycle");
    for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < cols; ++c) {
            const auto idx = static_cast<std::size_t>(r * cols + c);
            const std::string pe = prefix + "pe_r" + std::to_string(window.row0 + r) + "_c" +
                                   std::to_string(window.col0 + c) + "_";
            sc_core::sc_trace(tf, left_[idx], pe + "left");
            sc_core::sc_trace(tf, top_[idx], pe + "top");
            sc_core::sc_trace(tf, psum_[idx], pe + "psum");
        }
    }
}

void MxuModule::sample() {
    const std::int64_t c = array_.cycle() - 1;  // the cycle just stepped
    if (!tracing_ || c < window_.first_cycle || c > window_.last_cycle) return;
    cycle_mirror_ = static_cast<unsigned int>(c);
    const int cols = window_.col1 - window_.col0 + 1;
    for (int r = window_.row0; r <= window_.row1; ++r) {
        for (int col = window_.col0; col <= window_.col1; ++col) {
            const auto idx = static_cast<std::size_t>((r - window_.row0) * cols + (col - window_.col0));
            left_[idx] = array_.left_operand(r, col);
            top_[idx] = array_.top_operand(r, col);
            psum_[idx] = array_.partial_sum(r, col);
        }
    }
}

void MxuModule::run() {
    while (!array_.done()) {
        array_.step();  // the whole array advances one clock
        sample();
        sc_core::wait(period_);
    }
    result_ = array_.finish();
    finished_ = true;
}

MxuPatternOperands mxu_vcd_pattern_operands(const GemmShape& s) {
    MxuPatternOperands o;
    o.a.resize(static_cast<std::size_t>(s.batch * s.m * s.k));
    o.b.resize(static_cast<std::size_t>(s.batch * s.k * s.n));
    for (std::int64_t b = 0; b < s.batch; ++b)
        for (std::int64_t m = 0; m < s.m; ++m)
            for (std::int64_t k = 0; k < s.k; ++k)
                o.a[static_cast<std::size_t>((b * s.m + m) * s.k + k)] = static_cast<float>(1 + (m + 2 * k) % 5);
    for (std::int64_t b = 0; b < s.batch; ++b)
        for (std::int64_t k = 0; k < s.k; ++k)
            for (std::int64_t n = 0; n < s.n; ++n)
                o.b[static_cast<std::size_t>((b * s.k + k) * s.n + n)] = static_cast<float>(1 + (2 * k + n) % 3);
    return o;
}

void write_mxu_vcd(const MxuParams& params, const GemmShape& shape, DType dtype, const std::string& vcd_path,
                   const VcdWindow& window, const MxuOperands* operands) {
    window.validate(params);
    MxuPatternOperands pattern;
    MxuOperands pattern_view;
    if (operands == nullptr) {
        pattern = mxu_vcd_pattern_operands(shape);
        pattern_view = {pattern.a.data(), pattern.b.data()};
        operands = &pattern_view;
    }
    std::string base = vcd_path;
    if (base.size() >= 4 && base.compare(base.size() - 4, 4, ".vcd") == 0) base.resize(base.size() - 4);
    MxuModule mxu("mxu", params, shape, dtype, operands);
    sc_core::sc_trace_file* tf = sc_core::sc_create_vcd_trace_file(base.c_str());
    tf->set_time_unit(1, sc_core::SC_NS);
    mxu.trace_pes(tf, window);
    sc_core::sc_start(sc_core::sc_time(static_cast<double>(window.last_cycle + 1), sc_core::SC_NS));
    sc_core::sc_close_vcd_trace_file(tf);
}

}  // namespace accelsim
