#pragma once
// Helpers for the trace tests: temporary trace files and the message of the InputError a read
// throws.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "models/common/op_table.h"

#include "sim/trace/trace_reader.h"

namespace accelsim::test {

// One folder per process (ctest runs tests in parallel processes), removed when the process ends.
struct TempRoot {
    std::filesystem::path path = std::filesystem::temp_directory_path() /
                                 ("accelsim_trace_test_" + std::to_string(::getpid()));
    ~TempRoot() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
};

// A fresh folder per test.
inline std::filesystem::path temp_folder() {
    static TempRoot root;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::filesystem::path dir =
        root.path / (std::string(info->test_suite_name()) + "." + info->name());
    std::filesystem::create_directories(dir);
    return dir;
}

inline std::string write_file(const std::string& name, const std::string& content) {
    const std::filesystem::path path = temp_folder() / name;
    std::ofstream(path, std::ios::binary) << content;
    return path.string();
}

// The InputError message of reading content as a file named name, or "no error".
inline std::string read_error(const std::string& name, const std::string& content,
                              DType default_dtype = DType::bf16) {
    const std::string path = write_file(name, content);
    try {
        read_trace(path, default_dtype);
    } catch (const InputError& e) {
        const std::string message = e.what();
        // Tests compare against "FILE:..." with FILE the bare name, independent of the temp folder.
        const std::string folder = std::filesystem::path(path).parent_path().string() + "/";
        return message.rfind(folder, 0) == 0 ? message.substr(folder.size()) : message;
    }
    return "no error";
}

// Each op as "kind shape" in trace syntax, e.g. "matmul m=16 n=64 k=64".
inline std::vector<std::string> op_lines(const std::vector<Op>& ops) {
    std::vector<std::string> out;
    for (const Op& op : ops) {
        std::ostringstream s;
        s << to_string(op.kind) << ' ';
        write_shape(s, op);
        out.push_back(s.str());
    }
    return out;
}

}  // namespace accelsim::test
