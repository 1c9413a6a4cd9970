#include "sim/compare/isolated_run.h"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

[[noreturn]] void child_main(int fd, const std::function<nlohmann::json()>& work) {
    ::dup2(STDERR_FILENO, STDOUT_FILENO);
    std::string message;
    int code = 0;
    try {
        message = kOk + work().dump();
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

std::function<nlohmann::json()> design_run(const std::string& config_path, const std::vector<std::string>& overrides,
                                           const std::string& trace_path, TraceFormat format,
                                           const ImportOptions& import_options) {
    return [=] {
        const ChipConfig config = load_config(config_path, overrides);
        const LoadedTrace trace = load_trace(trace_path, config.default_dtype, format, import_options);
        RunOptions options;
        options.systemc = true;  // runs in its own forked child: one simulation per process
        RunReport report = run_trace(config, trace_path, trace.ops, options);
        if (trace.import) {  // as a single run's report carries it
            report.import_summary = trace.import->to_json();
            report.import_text = trace.import->text();
        }
        return to_json(report);
    };
}

namespace {

struct Child {
    pid_t pid = -1;
    int fd = -1;           // read end of the child's pipe
    std::string message;   // what the child sent so far
};

// Forks a child running `work`; on failure returns pid -1 with the reason in `message`.
Child start_child(const std::function<nlohmann::json()>& work) {
    Child c;
    int fds[2];
    if (::pipe(fds) != 0) {
        c.message = std::string("cannot create a pipe: ") + std::strerror(errno);
        return c;
    }
    // Buffered output would otherwise be written twice, once by each process.
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
        c.message = std::string("cannot fork: ") + std::strerror(errno);
        ::close(fds[0]);
        ::close(fds[1]);
        return c;
    }
    if (pid == 0) {
        // A child must not outlive its parent: a killed compare or sweep would otherwise leave
        // orphans simulating for minutes. The check after prctl covers a parent that died first.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(1);
        ::close(fds[0]);
        child_main(fds[1], work);
    }
    ::close(fds[1]);
    c.pid = pid;
    c.fd = fds[0];
    return c;
}

// Reaps a child whose pipe reached end of file and interprets what it sent.
IsolatedRunResult finish_child(Child& child) {
    IsolatedRunResult result;
    ::close(child.fd);
    child.fd = -1;
    int status = 0;
    while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
    }
    const std::string& message = child.message;
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        result.exit_code = 128 + sig;
        result.message = "simulation crashed (signal " + std::to_string(sig) + ", " + strsignal(sig) + ")";
        return result;
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.exit_code = code;
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

}  // namespace

IsolatedRunResult run_isolated(const std::function<nlohmann::json()>& work) {
    Child child = start_child(work);
    if (child.pid < 0) return IsolatedRunResult{IsolatedRunResult::Status::failed, {}, child.message, -1};
    // Read before waiting: a report larger than the pipe buffer would otherwise deadlock.
    child.message = read_all(child.fd);
    return finish_child(child);
}

std::vector<IsolatedRunResult> run_isolated_all(const std::vector<std::function<nlohmann::json()>>& works,
                                                int jobs, bool stop_after_failure,
                                                const IsolatedRunFinished& on_finished) {
    std::vector<IsolatedRunResult> results(works.size());
    std::vector<bool> done(works.size(), false);
    std::vector<Child> running;
    std::vector<std::size_t> running_index;
    std::size_t next = 0;
    bool failed = false;
    const std::size_t max_running = static_cast<std::size_t>(std::max(1, jobs));
    for (;;) {
        while (!(failed && stop_after_failure) && next < works.size() && running.size() < max_running) {
            Child child = start_child(works[next]);
            if (child.pid < 0) {
                results[next] = IsolatedRunResult{IsolatedRunResult::Status::failed, {}, child.message, -1};
                done[next] = true;
                failed = true;
                if (on_finished) on_finished(next, results[next]);
            } else {
                running.push_back(std::move(child));
                running_index.push_back(next);
            }
            ++next;
        }
        if (running.empty()) break;
        std::vector<pollfd> fds;
        for (const Child& c : running) fds.push_back(pollfd{c.fd, POLLIN, 0});
        if (::poll(fds.data(), fds.size(), -1) < 0) {
            if (errno == EINTR) continue;
            // poll itself failing leaves nothing to multiplex: finish the children one by one.
            for (Child& c : running) c.message += read_all(c.fd);
            for (std::size_t i = 0; i < running.size(); ++i) {
                results[running_index[i]] = finish_child(running[i]);
                done[running_index[i]] = true;
                if (on_finished) on_finished(running_index[i], results[running_index[i]]);
            }
            running.clear();
            running_index.clear();
            continue;
        }
        for (std::size_t i = running.size(); i-- > 0;) {
            if (fds[i].revents == 0) continue;
            char buf[65536];
            const ssize_t n = ::read(running[i].fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n > 0) {
                running[i].message.append(buf, static_cast<std::size_t>(n));
                continue;
            }
            IsolatedRunResult r = finish_child(running[i]);
            if (r.status != IsolatedRunResult::Status::ok) failed = true;
            results[running_index[i]] = std::move(r);
            done[running_index[i]] = true;
            if (on_finished) on_finished(running_index[i], results[running_index[i]]);
            running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
            running_index.erase(running_index.begin() + static_cast<std::ptrdiff_t>(i));
        }
    }
    for (std::size_t i = 0; i < works.size(); ++i)
        if (!done[i]) results[i].message = "not run: an earlier design failed";
    return results;
}

}  // namespace accelsim
