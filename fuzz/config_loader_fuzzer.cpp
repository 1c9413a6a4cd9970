// libFuzzer harness: the strict config loader with "extends" and --set. An input has three parts
// separated by lines holding only "%%": the config (written as config.json), a base config
// (base.json, which the first may name in "extends") and --set overrides, one per line.
// Bad input must come back as InputError naming the file and key; anything else is a finding.
// Seeds: configs/*.json, each with the file it extends as its base (scripts/fuzz.sh makes them).
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "sim/config/config_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto parts = accelsim_fuzz::split_parts(data, size, 3);
    const auto config = accelsim_fuzz::write_input("config.json", parts[0]);
    accelsim_fuzz::write_input("base.json", parts[1]);
    std::vector<std::string> overrides;
    std::istringstream lines{std::string(parts[2])};
    for (std::string line; std::getline(lines, line);)
        if (!line.empty()) overrides.push_back(line);
    try {
        accelsim::load_config(config.string(), overrides);
    } catch (const accelsim::InputError&) {
    }
    return 0;
}
