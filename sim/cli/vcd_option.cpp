#include "sim/cli/vcd_option.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <string_view>
#include <cstdio>
#include <iostream>
#include <stdexcept>

#include "models/mxu/mxu_sc.h"
#include "sim/input_error.h"

namespace accelsim {

namespace {

// The largest cycle a window may name: the SystemC run goes to LAST + 1 ns, held as a double, so
// LAST must stay exact in one (2^53) and LAST + 1 must not overflow.
constexpr std::int64_t kMaxWindowCycle = std::int64_t{1} << 53;

// "A:B" with 0 <= A <= B <= kMaxWindowCycle.
std::pair<std::int64_t, std::int64_t> parse_range(const std::string& text, const char* option) {
    const auto bad = [&](const std::string& why) {
        return InputError(std::string(option) + " '" + text + "': " + why);
    };
    const std::size_t colon = text.find(':');
    if (colon == std::string::npos) throw bad("expected FIRST:LAST with 0 <= FIRST <= LAST");
    std::int64_t v[2] = {0, 0};
    const std::string_view parts[2] = {std::string_view(text).substr(0, colon), std::string_view(text).substr(colon + 1)};
    for (int i = 0; i < 2; ++i) {
        const auto [end, ec] = std::from_chars(parts[i].data(), parts[i].data() + parts[i].size(), v[i]);
        if (ec == std::errc::result_out_of_range || (ec == std::errc() && v[i] > kMaxWindowCycle))
            throw bad(std::string(parts[i]) + " is beyond the largest allowed value " + std::to_string(kMaxWindowCycle));
        if (ec != std::errc() || end != parts[i].data() + parts[i].size() || parts[i].empty())
            throw bad("expected FIRST:LAST with 0 <= FIRST <= LAST");
    }
    if (v[0] < 0 || v[1] < v[0]) throw bad("expected FIRST:LAST with 0 <= FIRST <= LAST");
    return {v[0], v[1]};
}

}  // namespace

void write_vcd(const ChipConfig& config, const std::vector<Op>& ops, const VcdRequest& request) {
    if (config.kind != "systolic")
        throw InputError("--vcd: waveforms are recorded from an MXU; config '" + config.name +
                         "' is not a systolic chip");
    const Op* chosen = nullptr;
    for (const Op& op : ops) {
        if (request.op_name.empty() ? is_gemm_like(op.kind) : op.name == request.op_name) {
            chosen = &op;
            break;
        }
    }
    if (!chosen)
        throw InputError(request.op_name.empty() ? "--vcd: the trace has no matmul, bmm or conv2d op"
                                                 : "--vcd-op: no op named '" + request.op_name + "'");
    if (!is_gemm_like(chosen->kind))
        throw InputError("--vcd-op: op '" + chosen->name + "' is a " + std::string(to_string(chosen->kind)) +
                         "; only matmul, bmm and conv2d run on the MXU");

    const MxuParams params = config.mxu;
    VcdWindow window;
    if (!request.cycles.empty()) {
        const auto [first, last] = parse_range(request.cycles, "--vcd-cycles");
        window.first_cycle = first;
        window.last_cycle = last;
    }
    window.row1 = std::min(window.row1, params.rows - 1);
    window.col1 = std::min(window.col1, params.cols - 1);
    if (!request.pes.empty()) {
        const auto comma = request.pes.find(',');
        if (comma == std::string::npos)
            throw InputError("--vcd-pes '" + request.pes + "': expected R0:R1,C0:C1");
        const auto rows = parse_range(request.pes.substr(0, comma), "--vcd-pes");
        const auto cols = parse_range(request.pes.substr(comma + 1), "--vcd-pes");
        window.row0 = static_cast<int>(rows.first);
        window.row1 = static_cast<int>(rows.second);
        window.col0 = static_cast<int>(cols.first);
        window.col1 = static_cast<int>(cols.second);
    }
    try {
        window.validate(params);
    } catch (const std::invalid_argument& e) {
        throw InputError(std::string("--vcd: ") + e.what());
    }
    {  // the output must be writable: fail here, with exit 2, not inside the child
        std::FILE* f = std::fopen(request.path.c_str(), "ab");
        if (!f) throw InputError("--vcd " + request.path + ": cannot open for writing");
        std::fclose(f);
    }

    std::cout.flush();
    std::cerr.flush();
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("--vcd: fork failed");
    if (pid == 0) {
        int code = 0;
        try {
            write_mxu_vcd(params, chosen->as_gemm(), chosen->dtype, request.path, window);
        } catch (const std::exception& e) {
            std::cerr << "accelsim: --vcd failed: " << e.what() << "\n";
            code = 1;
        }
        std::cerr.flush();
        _exit(code);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw std::runtime_error("--vcd: writing the waveform failed");
}

}  // namespace accelsim
