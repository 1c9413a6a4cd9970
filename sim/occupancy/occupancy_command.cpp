#include "sim/occupancy/occupancy_command.h"

#include <algorithm>
#include <fstream>

#include "sim/config/config_loader.h"
#include "sim/input_error.h"
#include "sim/output/output_file.h"
#include "sim/occupancy/occupancy_report.h"

namespace accelsim {

namespace {

const char* kOccupancyUsage =
    "usage: accelsim occupancy --config FILE --threads T --regs R [--smem BYTES] [--json FILE] [--set key=value]\n";

std::int64_t parse_count(const std::string& option, const std::string& text) {
    std::size_t used = 0;
    long long v = 0;
    try {
        v = std::stoll(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || text.empty() || v < 0)
        throw InputError(option + " " + text + ": expected a non-negative integer");
    return v;
}

}  // namespace

int run_occupancy_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    try {
        std::string config_path, json_path;
        std::vector<std::string> sets;
        std::int64_t threads = -1, regs = -1, smem = 0;
        std::size_t i = (!args.empty() && args[0] == "occupancy") ? 1 : 0;
        for (; i < args.size(); ++i) {
            const std::string& a = args[i];
            if (a == "--help" || a == "-h") {
                out << kOccupancyUsage;
                return 0;
            }
            if (i + 1 >= args.size()) throw InputError("occupancy: option " + a + " needs a value (or is unknown)");
            const std::string& v = args[++i];
            if (a == "--config") config_path = v;
            else if (a == "--threads") threads = parse_count(a, v);
            else if (a == "--regs") regs = parse_count(a, v);
            else if (a == "--smem") smem = parse_count(a, v);
            else if (a == "--json") json_path = v;
            else if (a == "--set") sets.push_back(v);
            else throw InputError("occupancy: unknown option " + a);
        }
        if (config_path.empty() || threads < 0 || regs < 0)
            throw InputError("occupancy: --config, --threads and --regs are required");
        const ChipConfig config = load_config(config_path, sets);
        const simt::Occupancy o = simt::compute_occupancy(
            occupancy_limits_from(config.sm),
            simt::BlockResources{static_cast<int>(std::min<std::int64_t>(threads, 1 << 30)),
                                 static_cast<int>(std::min<std::int64_t>(regs, 1 << 30)), smem});
        print_occupancy(o, out);
        if (!json_path.empty()) {
            OutputFile f("--json", json_path);
            nlohmann::json j = occupancy_to_json(o);
            j["config"] = config.file;
            j["compute_capability"] = config.sm.compute_capability;
            f.stream() << j.dump(2) << "\n";
            f.commit();
        }
        return 0;
    } catch (const InputError& e) {
        err << "accelsim: error: " << e.what() << "\n";
        return 2;
    }
}

}  // namespace accelsim
