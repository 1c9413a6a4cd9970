#pragma once
// What the libFuzzer harnesses share: the readers under test take file paths (they name the file
// in every error), so each input is written to a file in a private scratch directory first.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace accelsim_fuzz {

// One directory per fuzzing process (libFuzzer's -jobs/-fork run several), under $TMPDIR.
inline const std::filesystem::path& scratch_dir() {
    static const std::filesystem::path dir = [] {
        const char* tmp = std::getenv("TMPDIR");
        std::filesystem::path d = std::filesystem::path(tmp && *tmp ? tmp : "/tmp") /
                                  ("accelsim_fuzz_" + std::to_string(getpid()));
        std::filesystem::create_directories(d);
        return d;
    }();
    return dir;
}

inline std::filesystem::path write_input(const std::string& name, std::string_view bytes) {
    const std::filesystem::path path = scratch_dir() / name;
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return path;
}

// Splits an input into the parts some harnesses need (a config and its base, say), at lines that
// hold only "%%". Missing parts are empty.
inline std::vector<std::string_view> split_parts(const std::uint8_t* data, std::size_t size, std::size_t parts) {
    std::string_view all(reinterpret_cast<const char*>(data), size);
    std::vector<std::string_view> out;
    while (out.size() + 1 < parts) {
        const std::size_t at = all.find("\n%%\n");
        if (at == std::string_view::npos) break;
        out.push_back(all.substr(0, at + 1));
        all.remove_prefix(at + 4);
    }
    out.push_back(all);
    out.resize(parts);
    return out;
}

}  // namespace accelsim_fuzz
