#include "sim/config/config_docs.h"

#include <fstream>
#include <sstream>

#include "sim/config/config_schema.h"
#include "sim/input_error.h"
#include "sim/output/output_file.h"

namespace accelsim {

std::string with_generated_part(const std::string& file, const std::string& text, const std::string& begin,
                                const std::string& end, const std::string& table) {
    const auto from = text.find(begin);
    const auto to = from == std::string::npos ? std::string::npos : text.find(end, from);
    if (from == std::string::npos || to == std::string::npos)
        throw InputError(file + ": no generated table (the lines '" + begin.substr(0, begin.size() - 1) +
                         "' and '" + end + "' mark it)");
    return text.substr(0, from + begin.size()) + table + text.substr(to);
}

std::string with_config_key_table(const std::string& file, const std::string& text, const std::string& table) {
    return with_generated_part(file, text, kConfigKeysBegin, kConfigKeysEnd, table);
}

int run_generated_docs_command(const GeneratedDocs& docs, const std::vector<std::string>& args, std::ostream& out,
                               std::ostream& err) {
    const std::string usage = "usage: accelsim " + docs.command + " [--update FILE | --check FILE]";
    try {
        const std::string table = docs.generate();
        if (args.empty()) {
            out << table;
            return 0;
        }
        if (args.size() != 2 || (args[0] != "--update" && args[0] != "--check")) throw InputError(usage);
        const std::string& file = args[1];
        std::ifstream in(file, std::ios::binary);
        if (!in) throw InputError(file + ": cannot open");
        std::ostringstream text;
        text << in.rdbuf();
        in.close();
        const std::string updated = with_generated_part(file, text.str(), docs.begin, docs.end, table);
        if (args[0] == "--check") {
            if (updated == text.str()) return 0;
            err << file << ": the " << docs.what << " differs from what accelsim defines; run 'accelsim "
                << docs.command << " --update " << file << "'\n";
            return 1;
        }
        if (updated != text.str()) {
            OutputFile write("--update", file);  // whole or not at all
            write.stream() << updated;
            write.commit();
        }
        return 0;
    } catch (const InputError& e) {
        err << "accelsim: error: " << e.what() << "\n";
        return 2;
    }
}

int run_config_docs_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    return run_generated_docs_command({"config-docs", "key table", kConfigKeysBegin, kConfigKeysEnd, config_keys_markdown},
                                      args, out, err);
}

}  // namespace accelsim
