#pragma once
// Strict config loading: JSON file -> "extends" chain merged -> --set overrides applied with the
// same typed checks -> every key validated against the schema -> defaults filled -> ChipConfig.
// Any problem throws InputError naming the file and the key path (and, for JSON syntax errors,
// the line), suggesting the nearest valid key for a misspelt one.
#include <string>
#include <vector>

#include "sim/config/chip_config.h"
#include "sim/input_error.h"

namespace accelsim {

// overrides: "key.path=value" strings as given to --set.
ChipConfig load_config(const std::string& path, const std::vector<std::string>& overrides = {});

}  // namespace accelsim
