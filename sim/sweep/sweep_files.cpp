#include "sim/sweep/sweep_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "sim/input_error.h"

namespace accelsim {

namespace fs = std::filesystem;

std::string point_file(const std::string& dir, const std::string& hash) {
    return (fs::path(dir) / "points" / (hash + ".json")).string();
}
std::string totals_file(const std::string& dir, const std::string& hash) {
    return (fs::path(dir) / "totals" / (hash + ".json")).string();
}
std::string failure_file(const std::string& dir, const std::string& hash) {
    return (fs::path(dir) / "failed" / (hash + ".json")).string();
}
std::string plan_file(const std::string& dir) { return (fs::path(dir) / "plan.json").string(); }

void write_file_atomically(const std::string& path, const std::string& content) {
    // Host and pid keep concurrent writers (Slurm tasks on several nodes sharing DIR, an orphaned
    // child) apart.
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    const fs::path target(path);
    const std::string temp = (target.parent_path() / ("." + target.filename().string() + "." + host + "." +
                                                      std::to_string(::getpid()) + ".tmp"))
                                 .string();
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error(temp + ": cannot create: " + std::strerror(errno));
    std::size_t done = 0;
    while (done < content.size()) {
        const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const std::string reason = std::strerror(errno);
            ::close(fd);
            ::unlink(temp.c_str());
            throw std::runtime_error(temp + ": cannot write: " + reason);
        }
        done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0 || ::rename(temp.c_str(), path.c_str()) != 0) {
        const std::string reason = std::strerror(errno);
        ::unlink(temp.c_str());
        throw std::runtime_error(path + ": cannot write: " + reason);
    }
}

std::string read_whole_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path + ": cannot open");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace accelsim
