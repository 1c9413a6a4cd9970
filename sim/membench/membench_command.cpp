// The thin command wrapper: parse, load the config, hand over to run_membench_on_config.
#include "sim/membench/membench_command.h"

#include "sim/config/config_loader.h"
#include "sim/input_error.h"
#include "sim/membench/membench.h"

namespace accelsim {

int run_membench_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
        out << membench_usage() << "\n";
        return 0;
    }
    try {
        const MembenchOptions options = parse_membench_args(args);
        const ChipConfig chip = load_config(options.config_path, options.overrides);
        return run_membench_on_config(chip, options, out, err);
    } catch (const InputError& e) {
        err << "accelsim: error: " << e.what() << "\n";
        return 2;
    }
}

}  // namespace accelsim
