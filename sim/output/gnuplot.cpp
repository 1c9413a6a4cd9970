#include "sim/output/gnuplot.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "sim/input_error.h"

namespace accelsim {

namespace fs = std::filesystem;

std::string gnuplot_quote(const std::string& text, bool markup) {
    std::string q = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') q += '\\';
        if (markup && (c == '_' || c == '^' || c == '{' || c == '}' || c == '@' || c == '&' || c == '~'))
            q += "\\\\";
        q += c;
    }
    return q + "\"";
}

std::string gnuplot_terminal(const std::string& option, const std::string& output) {
    const std::string ext = fs::path(output).extension().string();
    if (ext == ".svg") return "set terminal svg size 960,640 dynamic enhanced font \"sans,12\" background \"white\"";
    if (ext == ".png") return "set terminal pngcairo size 1280,854 enhanced font \"sans,11\" background \"white\"";
    throw InputError(option + " " + output + ": the file name must end in .svg or .png");
}

bool gnuplot_installed() {
    const char* path = std::getenv("PATH");
    if (!path) return false;
    std::istringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
        const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/gnuplot";
        if (::access(candidate.c_str(), X_OK) == 0) return true;
    }
    return false;
}

std::string run_gnuplot(const std::string& script) {
    // The script goes in on stdin; gnuplot's own messages go to our stderr.
    FILE* pipe = ::popen("gnuplot", "w");
    if (!pipe) return std::string("cannot start gnuplot: ") + std::strerror(errno);
    const bool written = std::fwrite(script.data(), 1, script.size(), pipe) == script.size();
    const int status = ::pclose(pipe);
    if (status == -1) return std::string("cannot run gnuplot: ") + std::strerror(errno);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return kGnuplotMissing;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !written)
        return "gnuplot failed (exit status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
    return "";
}

}  // namespace accelsim
