#include "sim/trace/import_command.h"

#include <charconv>
#include <sstream>

#include <boost/program_options.hpp>

#include "sim/input_error.h"
#include "sim/output/output_file.h"
#include "sim/trace/trace_reader.h"
#include "sim/trace/trace_text_util.h"
#include "sim/tracegen/trace_writer.h"

namespace accelsim {

namespace po = boost::program_options;

ImportOptions parse_import_options(const std::vector<std::string>& dims, bool strict) {
    ImportOptions options;
    options.strict = strict;
    for (const std::string& d : dims) {
        const std::size_t eq = d.find('=');
        const std::string name = d.substr(0, eq);
        const std::string value = eq == std::string::npos ? "" : d.substr(eq + 1);
        std::int64_t v = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
        if (name.empty() || eq == std::string::npos || ec != std::errc() || end != value.data() + value.size() || v <= 0)
            throw InputError("--dim " + d + ": expected NAME=N with N a positive integer (e.g. --dim batch=8)");
        if (!options.dims.emplace(name, v).second) throw InputError("--dim " + name + " given twice");
    }
    return options;
}

std::vector<std::string> import_option_words(const ImportOptions& options) {
    std::vector<std::string> words;
    for (const auto& [name, value] : options.dims) {
        words.emplace_back("--dim");
        words.push_back(name + "=" + std::to_string(value));
    }
    if (options.strict) words.emplace_back("--strict");
    return words;
}

int run_import_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    const char* usage =
        "usage: accelsim import onnx|pytorch FILE [--dim NAME=N]... [--strict] [-o OUT.trace]\n"
        "Writes the model as an accelsim trace (docs/import.md). Ops of fp32 tensors carry no dtype= and take\n"
        "the config's default dtype when simulated; fp16, bf16 and int8 ones keep theirs.\n";
    std::string format, path, output;
    std::vector<std::string> dims;
    po::options_description options("accelsim import options");
    options.add_options()("dim", po::value(&dims)->composing(), "bind a symbolic dimension: NAME=N (repeatable)")(
        "strict", "an operator with no accelsim mapping is an error")(
        "output,o", po::value(&output), "write the trace to FILE (default: standard output)")("help,h", "show this help");
    po::options_description hidden;
    hidden.add_options()("format", po::value(&format))("file", po::value(&path));
    po::options_description all;
    all.add(options).add(hidden);
    po::positional_options_description positional;
    positional.add("format", 1).add("file", 1);
    try {
        po::variables_map vm;
        po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
        po::notify(vm);
        if (vm.count("help")) {
            out << usage << "\n" << options;
            return 0;
        }
        if (format.empty() || path.empty()) throw po::error("give the format and the file (onnx|pytorch FILE)");
        TraceFormat f;
        if (format == "onnx") f = TraceFormat::onnx;
        else if (format == "pytorch") f = TraceFormat::pytorch;
        else
            throw po::error("unknown format '" + format + "'" + trace_detail::did_you_mean(format, {"onnx", "pytorch"}) +
                            " (formats: onnx, pytorch)");
        check_outputs_are_distinct({{"-o", output}}, {{"FILE", path}});
        // fp32 ops are imported as fp32 and written without dtype=, so they take the simulating
        // config's default, exactly as a direct --trace import gives them.
        const LoadedTrace trace = load_trace(path, DType::fp32, f, parse_import_options(dims, vm.count("strict") > 0));
        std::ostringstream command;
        command << "accelsim import " << format << " " << path;
        for (const std::string& d : dims) command << " --dim " << d;
        if (vm.count("strict")) command << " --strict";
        std::ostringstream comment;
        comment << "imported by: " << command.str() << "\n"
                << trace.import->text()
                << "Ops without dtype= take the config's default dtype (their tensors are fp32 in the source).";
        std::ostringstream text;
        write_trace(text, trace.ops, comment.str(), DType::fp32);
        write_text_output("-o", output, text.str(), out);
        return 0;
    } catch (const po::error& e) {
        err << "accelsim import: " << e.what() << "\n" << usage;
    } catch (const InputError& e) {
        err << "accelsim import: error: " << e.what() << "\n";
    }
    return 2;
}

}  // namespace accelsim
