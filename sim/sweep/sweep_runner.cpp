#include "sim/sweep/sweep_runner.h"

#include <unistd.h>

#include <chrono>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>

#include "sim/compare/isolated_run.h"
#include "sim/input_error.h"
#include "sim/sweep/sweep_files.h"
#include "sim/sweep/sweep_results.h"

namespace accelsim {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::size_t parse_shard_number(const std::string& text, const std::string& what) {
    std::size_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
        throw InputError("--shard: " + what + " '" + text + "' is not a non-negative integer");
    return v;
}

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

std::string seconds_text(double s) {
    char buf[32];
    if (s < 60)
        std::snprintf(buf, sizeof buf, "%.1f s", s);
    else
        std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
    return buf;
}

std::string describe(const SweepPlan& plan, const SweepPoint& p) {
    std::string d = "point " + std::to_string(p.index) + " (" + p.config_label + ", " + p.trace_label;
    for (std::size_t i = 0; i < plan.axis_names.size(); ++i) d += ", " + plan.axis_names[i] + "=" + p.axis_values[i];
    return d + ")";
}

// Progress on the log: one line rewritten in place on a terminal, a plain line at most every
// couple of seconds otherwise (logs of batch jobs stay short).
class Progress {
  public:
    Progress(std::ostream& log, bool enabled, std::size_t total, std::size_t reused)
        : log_(log), enabled_(enabled), total_(total), reused_(reused), tty_(enabled && ::isatty(STDERR_FILENO)) {}

    void finished(bool ok) {
        ++ran_;
        failed_ += ok ? 0 : 1;
        show(false);
    }
    void line_break() {
        if (tty_ && shown_) log_ << "\n";
        shown_ = false;
    }
    void done() { show(true); }

  private:
    void show(bool last) {
        if (!enabled_) return;
        const auto now = Clock::now();
        const double elapsed = std::chrono::duration<double>(now - start_).count();
        if (!tty_ && !last && now - last_line_ < std::chrono::seconds(2)) return;
        last_line_ = now;
        const std::size_t remaining = total_ - reused_ - ran_;
        std::string line = "sweep: " + std::to_string(reused_ + ran_) + "/" + std::to_string(total_) + " done (" +
                           std::to_string(reused_) + " reused, " + std::to_string(ran_) + " ran), " +
                           std::to_string(failed_) + " failed, " + seconds_text(elapsed) + " elapsed";
        if (ran_ > 0 && remaining > 0)
            line += ", ~" + seconds_text(elapsed / static_cast<double>(ran_) * static_cast<double>(remaining)) + " left";
        if (tty_) {
            log_ << "\r" << line << "\033[K" << (last ? "\n" : "") << std::flush;
            shown_ = !last;
        } else {
            log_ << line << "\n" << std::flush;
        }
    }

    std::ostream& log_;
    bool enabled_;
    std::size_t total_, reused_, ran_ = 0, failed_ = 0;
    bool tty_, shown_ = false;
    Clock::time_point start_ = Clock::now(), last_line_ = Clock::now();
};

void write_if_changed(const std::string& path, const std::string& content) {
    std::error_code ec;
    if (fs::exists(path, ec)) {
        try {
            if (read_whole_file(path) == content) return;
        } catch (const InputError&) {
        }
    }
    write_file_atomically(path, content);
}

}  // namespace

int available_cores() {
    const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<int>(n) : 1;
}

Shard parse_shard(const std::string& text) {
    Shard s;
    if (text == "auto") {
        const std::string id = env("SLURM_ARRAY_TASK_ID");
        if (id.empty())
            throw InputError("--shard auto: SLURM_ARRAY_TASK_ID is not set (not running as a Slurm array task)");
        const std::string min = env("SLURM_ARRAY_TASK_MIN"), count = env("SLURM_ARRAY_TASK_COUNT");
        const std::size_t task = parse_shard_number(id, "SLURM_ARRAY_TASK_ID");
        const std::size_t first = min.empty() ? 0 : parse_shard_number(min, "SLURM_ARRAY_TASK_MIN");
        if (count.empty()) throw InputError("--shard auto: SLURM_ARRAY_TASK_COUNT is not set");
        s.count = parse_shard_number(count, "SLURM_ARRAY_TASK_COUNT");
        if (task < first) throw InputError("--shard auto: SLURM_ARRAY_TASK_ID is below SLURM_ARRAY_TASK_MIN");
        s.index = task - first;
    } else {
        const auto slash = text.find('/');
        if (slash == std::string::npos) throw InputError("--shard '" + text + "': expected I/N (0 <= I < N) or auto");
        s.index = parse_shard_number(text.substr(0, slash), "shard");
        s.count = parse_shard_number(text.substr(slash + 1), "shard count");
    }
    if (s.count == 0 || s.index >= s.count)
        throw InputError("--shard " + text + ": shard " + std::to_string(s.index) + " of " + std::to_string(s.count) +
                         " does not exist (shards are numbered 0 to N-1)");
    return s;
}

SweepRunCounts run_sweep(const SweepPlan& plan, const SweepRunOptions& options, std::ostream& log) {
    const std::string& dir = options.dir;
    const std::string store = plan.store_for(dir);
    for (const auto& [parent, sub] : std::vector<std::pair<std::string, const char*>>{
             {store, "points"}, {store, "totals"}, {dir, "failed"}, {dir, "traces"}}) {
        std::error_code ec;
        fs::create_directories(fs::path(parent) / sub, ec);
        if (ec) throw InputError(parent + ": cannot create " + (fs::path(parent) / sub).string() + ": " + ec.message());
    }
    for (const auto& [sha, text] : plan.generated_traces) write_if_changed(generated_trace_path(dir, sha), text);
    write_if_changed(plan_file(dir), plan_to_json(plan).dump(1) + "\n");

    SweepRunCounts counts;
    counts.points = plan.points.size();
    const std::vector<std::string> hashes = plan.unique_hashes();
    counts.distinct = hashes.size();
    std::map<std::string, const SweepPoint*> first_point;
    for (const SweepPoint& p : plan.points) first_point.try_emplace(p.hash, &p);

    std::vector<const SweepPoint*> to_run;
    for (std::size_t j = 0; j < hashes.size(); ++j) {
        if (j % options.shard.count != options.shard.index) continue;
        ++counts.in_shard;
        std::error_code ec;
        if (fs::exists(point_file(store, hashes[j]), ec))
            ++counts.reused;
        else
            to_run.push_back(first_point.at(hashes[j]));
    }
    if (options.progress) {
        log << "sweep " << plan.name << ": " << counts.points << " points (" << counts.distinct << " distinct)";
        if (options.shard.count > 1) log << ", shard " << options.shard.index << "/" << options.shard.count << ": " << counts.in_shard;
        log << "; " << counts.reused << " reused from " << store << "/points, " << to_run.size() << " to run, up to "
            << options.jobs << " at once\n";
    }

    std::vector<std::function<json()>> works;
    for (const SweepPoint* p : to_run) {
        const std::string out = point_file(store, p->hash), totals = totals_file(store, p->hash);
        const auto run = design_run(p->config_path, p->overrides, point_trace_path(*p, dir), parse_trace_format(p->trace_format),
                                    p->import);
        // The child keeps its own result: it is on disk before the driver hears of it. The point
        // file comes last: its presence is what marks the point finished.
        works.push_back([run, out, totals] {
            const json report = run();
            write_file_atomically(totals, report_totals(report).dump() + "\n");
            write_file_atomically(out, report.dump() + "\n");
            return json::object();
        });
    }
    Progress progress(log, options.progress, counts.in_shard, counts.reused);
    const auto on_finished = [&](std::size_t i, const IsolatedRunResult& r) {
        const SweepPoint& p = *to_run[i];
        std::error_code ec;
        if (r.status == IsolatedRunResult::Status::ok) {
            fs::remove(failure_file(dir, p.hash), ec);
            ++counts.ran;
        } else {
            ++counts.failed;
            const json record = {{"point", p.index},
                                 {"exit_code", r.exit_code},
                                 {"status", r.status == IsolatedRunResult::Status::input_error ? "input_error" : "failed"},
                                 {"message", r.message}};
            write_file_atomically(failure_file(dir, p.hash), record.dump(2) + "\n");
            progress.line_break();
            log << "sweep: " << describe(plan, p) << " failed (exit " << r.exit_code << "): " << r.message << "\n";
        }
        progress.finished(r.status == IsolatedRunResult::Status::ok);
    };
    const std::vector<IsolatedRunResult> results =
        run_isolated_all(works, options.jobs, options.fail_fast, on_finished);
    for (std::size_t i = 0; i < results.size(); ++i)
        if (results[i].exit_code == -1 && results[i].message.rfind("not run", 0) == 0) ++counts.not_run;
    progress.done();
    return counts;
}

}  // namespace accelsim
