#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "sim/trace/model_import.h"

namespace accelsim {

// `accelsim import onnx|pytorch FILE [--dim NAME=N]... [--strict] [-o OUT]`: args are the words
// after "import". Writes the model as an accelsim trace (docs/import.md) to out or to OUT; read back,
// it simulates exactly as `--trace FILE` does. Returns 0, or 2 after one message on err.
int run_import_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// --dim values ("batch=8") and --strict as ImportOptions; throws InputError naming a bad --dim.
ImportOptions parse_import_options(const std::vector<std::string>& dims, bool strict);
// The options as command-line words ("--dim", "batch=8", ..., "--strict"), names in sorted order:
// what parse_import_options reads back, for scripts and content hashes.
std::vector<std::string> import_option_words(const ImportOptions& options);

}  // namespace accelsim
