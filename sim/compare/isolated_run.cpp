#include "sim/compare/isolated_run.h"

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <systemc>

#include "sim/config/config_loader.h"
#include "sim/engine/engine.h"
#include "sim/input_error.h"
#include "sim/report/report.h"

namespace accelsim {

namespace {

// The child's message to the parent: one status byte, then the report JSON or the error text.
constexpr char kOk = 'O', kInputError = 'I', kFailed = 'F';

bool write_all(int fd, const std::string& data) {
    std::size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

std::string read_all(int fd) {
    std::string data;
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        data.append(buf, static_cast<std::size_t>(n));
    }
    return data;
}

[[noreturn]] void child_main(int fd, const std::string& config_path, const std::vector<std::string>& overrides,
                             const std::string& trace_path, TraceFormat format) {
    ::dup2(STDERR_FILENO, STDOUT_FILENO);
    std::string message;
    int code = 0;
    try {
        const ChipConfig config = load_config(config_path, overrides);
        const std::vector<Op> ops = read_trace(trace_path, config.default_dtype, format);
        const RunReport report = run_trace(config, trace_path, ops, RunOptions{});
        message = kOk + to_json(report).dump();
    } catch (const InputError& e) {
        message = std::string(1, kInputError) + e.what();
        code = 2;
    } catch (const sc_core::sc_report& e) {
        message = std::string(1, kFailed) + "simulation error: " + e.what();
        code = 1;
    } catch (const std::exception& e) {
        message = std::string(1, kFailed) + "simulation failed: " + e.what();
        code = 1;
    } catch (...) {
        message = std::string(1, kFailed) + "simulation failed with an unknown exception";
        code = 1;
    }
    if (!write_all(fd, message)) code = 1;
    ::close(fd);
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    // _exit: the parent's atexit handlers and static destructors (SystemC kernel) are not ours to run.
    ::_exit(code);
}

}  // namespace

IsolatedRunResult run_design_isolated(const std::string& config_path, const std::vector<std::string>& overrides,
                                      const std::string& trace_path, TraceFormat format) {
    IsolatedRunResult result;
    int fds[2];
    if (::pipe(fds) != 0) {
        result.message = std::string("cannot create a pipe: ") + std::strerror(errno);
        return result;
    }
    // Buffered output would otherwise be written twice, once by each process.
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        result.message = std::string("cannot fork: ") + std::strerror(errno);
        ::close(fds[0]);
        ::close(fds[1]);
        return result;
    }
    if (pid == 0) {
        ::close(fds[0]);
        child_main(fds[1], config_path, overrides, trace_path, format);
    }
    ::close(fds[1]);
    // Read before waiting: a report larger than the pipe buffer would otherwise deadlock.
    const std::string message = read_all(fds[0]);
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        result.message = "simulation crashed (signal " + std::to_string(sig) + ", " + strsignal(sig) + ")";
        return result;
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (message.empty()) {
        result.message = "simulation process exited with code " + std::to_string(code) + " and no report";
        return result;
    }
    const std::string body = message.substr(1);
    if (message[0] == kInputError) {
        result.status = IsolatedRunResult::Status::input_error;
        result.message = body;
    } else if (message[0] == kOk && code == 0) {
        try {
            result.report = nlohmann::json::parse(body);
            result.status = IsolatedRunResult::Status::ok;
        } catch (const nlohmann::json::exception& e) {
            result.message = std::string("the simulation process sent an unreadable report: ") + e.what();
        }
    } else if (message[0] == kFailed) {
        result.message = body;
    } else {
        result.message = "simulation process exited with code " + std::to_string(code) + " and a garbled report";
    }
    return result;
}

}  // namespace accelsim
