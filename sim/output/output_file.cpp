#include "sim/output/output_file.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <system_error>

#include "sim/input_error.h"

namespace accelsim {

namespace fs = std::filesystem;

void create_output_directory(const std::string& option, const std::string& dir) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir)) throw InputError(option + " " + dir + ": cannot create the folder" + (ec ? " (" + ec.message() + ")" : ""));
}

OutputFile::OutputFile(std::string option, std::string path) : option_(std::move(option)), path_(std::move(path)) {
    std::error_code ec;
    const auto status = fs::status(path_, ec);
    const bool special = fs::exists(status) && !fs::is_regular_file(status);
    if (fs::is_directory(status)) throw InputError(option_ + " " + path_ + ": is a directory");
    if (!special) {
        const fs::path target(path_);
        temporary_ = (target.parent_path() / ("." + target.filename().string() + ".accelsim-" +
                                              std::to_string(::getpid()) + ".tmp"))
                         .string();
    }
    file_.open(special ? path_ : temporary_, std::ios::binary | std::ios::trunc);
    if (!file_) {
        if (!temporary_.empty()) temporary_.clear();  // nothing was created
        throw InputError(option_ + " " + path_ + ": cannot open for writing");
    }
}

OutputFile::~OutputFile() {
    if (committed_ || temporary_.empty()) return;
    file_.close();
    std::error_code ignored;
    fs::remove(temporary_, ignored);
}

void write_text_output(const std::string& option, const std::string& path, const std::string& text,
                       std::ostream& standard_output) {
    if (path.empty()) {
        standard_output << text;
        return;
    }
    OutputFile file(option, path);
    file.stream() << text;
    file.commit();
}

void OutputFile::commit() {
    file_.flush();
    const bool written = static_cast<bool>(file_);
    file_.close();
    if (!written || file_.fail()) throw InputError(option_ + " " + path_ + ": write failed (disk full?)");
    if (!temporary_.empty()) {
        std::error_code ec;
        fs::rename(temporary_, path_, ec);
        if (ec) throw InputError(option_ + " " + path_ + ": cannot replace the file: " + ec.message());
    }
    committed_ = true;
}

namespace {

// Two names of one file: the same canonical path, or (both existing) the same inode.
bool same_file(const std::string& a, const std::string& b) {
    std::error_code ec;
    if (fs::exists(a, ec) && fs::exists(b, ec)) {
        const bool equivalent = fs::equivalent(a, b, ec);
        if (!ec) return equivalent;
    }
    const fs::path ca = fs::weakly_canonical(a, ec);
    if (ec) return false;
    const fs::path cb = fs::weakly_canonical(b, ec);
    return !ec && ca == cb;
}

}  // namespace

void check_outputs_are_distinct(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        const NamedPath& out = outputs[i];
        if (out.path.empty()) continue;
        // A device such as /dev/null or /dev/stdout may take several outputs.
        std::error_code ec;
        const auto status = fs::status(out.path, ec);
        if (fs::exists(status) && !fs::is_regular_file(status)) continue;
        for (const NamedPath& in : inputs)
            if (!in.path.empty() && same_file(out.path, in.path))
                throw InputError(out.option + " " + out.path + ": is the " + in.option +
                                 " input file; refusing to overwrite it");
        for (std::size_t j = 0; j < i; ++j)
            if (!outputs[j].path.empty() && same_file(out.path, outputs[j].path))
                throw InputError(out.option + " " + out.path + ": is also the " + outputs[j].option +
                                 " output; give each output its own file");
    }
}

}  // namespace accelsim
