#include "sim/membench/membench.h"

#include <cctype>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "models/memory/memory_hierarchy.h"
#include "models/memory/traffic.h"
#include "sim/input_error.h"
#include "sim/config/model_params.h"
#include "sim/output/output_file.h"

namespace accelsim {

namespace {

const char* const kUsage =
    "usage: accelsim membench --config FILE --pattern stream|random|strided|mixed [--bytes N] "
    "[--size 32|64|128] [--stride BYTES] [--level l2|hbm] [--l2-dram queued|blocking] [--outstanding N] [--seed N] [--json FILE] "
    "[--set key=value ...]";

}  // namespace

const char* membench_usage() { return kUsage; }

namespace {

InputError usage_error(const std::string& what) { return InputError("membench: " + what + "\n" + kUsage); }

// Non-negative integer with an optional binary suffix K, M or G.
std::uint64_t parse_count_with_suffix(const std::string& option, const std::string& text) {
    std::size_t i = 0;
    std::uint64_t value = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
        const auto digit = static_cast<std::uint64_t>(text[i] - '0');
        if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10)
            throw usage_error(option + ": value '" + text + "' is too large");
        value = value * 10 + digit;
        ++i;
    }
    if (i == 0) throw usage_error(option + ": expected a non-negative integer, got '" + text + "'");
    int shift = 0;
    if (i + 1 == text.size()) {
        switch (text[i]) {
            case 'K': case 'k': shift = 10; break;
            case 'M': case 'm': shift = 20; break;
            case 'G': case 'g': shift = 30; break;
            default: throw usage_error(option + ": expected a non-negative integer, got '" + text + "'");
        }
    } else if (i != text.size()) {
        throw usage_error(option + ": expected a non-negative integer, got '" + text + "'");
    }
    if (shift && value > (std::numeric_limits<std::uint64_t>::max() >> shift))
        throw usage_error(option + ": value '" + text + "' is too large");
    return value << shift;
}

}  // namespace

MembenchOptions parse_membench_args(const std::vector<std::string>& args) {
    MembenchOptions o;
    bool have_pattern = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&]() -> const std::string& {
            if (i + 1 >= args.size()) throw usage_error(a + " needs a value");
            return args[++i];
        };
        if (a == "--config") o.config_path = value();
        else if (a == "--pattern") {
            o.pattern = value();
            have_pattern = true;
            try {
                memory::traffic_pattern_from_name(o.pattern);
            } catch (const std::invalid_argument& e) {
                throw usage_error(std::string("--pattern: ") + e.what());
            }
        } else if (a == "--bytes") {
            o.bytes = parse_count_with_suffix(a, value());
            // 16 GiB is about a minute of simulation; more is almost certainly a typo.
            if (o.bytes == 0 || o.bytes > (16ull << 30)) throw usage_error("--bytes must be in 1..16G");
        } else if (a == "--size") {
            const std::uint64_t s = parse_count_with_suffix(a, value());
            if (s != 32 && s != 64 && s != 128) throw usage_error("--size must be 32, 64 or 128, got " + args[i]);
            o.request_bytes = static_cast<std::uint32_t>(s);
        } else if (a == "--stride") {
            o.stride_bytes = parse_count_with_suffix(a, value());
            if (*o.stride_bytes == 0) throw usage_error("--stride must be > 0");
        } else if (a == "--level") {
            o.level = value();
            if (o.level != "l2" && o.level != "hbm") throw usage_error("--level must be l2 or hbm, got '" + o.level + "'");
        } else if (a == "--l2-dram") {
            o.l2_dram = value();
            if (o.l2_dram != "queued" && o.l2_dram != "blocking")
                throw usage_error("--l2-dram must be queued or blocking, got '" + o.l2_dram + "'");
        } else if (a == "--outstanding") {
            const std::uint64_t n = parse_count_with_suffix(a, value());
            if (n == 0 || n > 1u << 20) throw usage_error("--outstanding must be in 1..1048576");
            o.outstanding = static_cast<int>(n);
        } else if (a == "--seed") {
            o.seed = parse_count_with_suffix(a, value());
        } else if (a == "--json") {
            o.json_path = value();
        } else if (a == "--set") {
            const std::string& kv = value();
            if (kv.find('=') == std::string::npos || kv.front() == '=')
                throw usage_error("--set expects key=value, got '" + kv + "'");
            o.overrides.push_back(kv);
        } else {
            throw usage_error("unknown option '" + a + "'");
        }
    }
    if (o.config_path.empty()) throw usage_error("--config FILE is required");
    if (!have_pattern) throw usage_error("--pattern is required");
    if (o.bytes < o.request_bytes) throw usage_error("--bytes must be at least one request (--size)");
    return o;
}

MembenchReport run_membench(const ChipConfig& chip, const MembenchOptions& o) {
    const memory::MemoryHierarchyParams hp = memory_hierarchy_params_from_config(chip);
    const memory::DramParams& dp = hp.dram;

    MembenchReport r;
    r.chip = chip.name;
    r.level = o.level.empty() ? (hp.l2 ? "l2" : "hbm") : o.level;
    if (r.level == "l2" && !hp.l2)
        throw InputError("membench --level l2: chip '" + chip.name + "' has no L2 (l2.size_bytes is 0)");
    r.pattern = o.pattern;
    r.request_bytes = o.request_bytes;

    memory::TrafficParams t;
    t.pattern = memory::traffic_pattern_from_name(o.pattern);
    t.total_bytes = o.bytes;
    t.request_bytes = o.request_bytes;
    t.seed = o.seed;
    if (t.pattern == memory::TrafficPattern::strided) {
        if (o.stride_bytes) {
            t.stride_bytes = *o.stride_bytes;
            r.stride_bytes = t.stride_bytes;
        } else {
            // Default: one bank, the next row each request, through the config's own address map.
            // A constant stride cannot do it when the channel of each interleave run is hashed
            // (GPUs: hbm.interleave_bytes), and a stride of one row across every bank then
            // lands on hash-chosen channels instead of one bank.
            const memory::DramAddressMapper mapper(dp);
            const auto rows = static_cast<std::uint64_t>(dp.rows_per_bank);
            t.address_of_request = [mapper, rows](std::uint64_t i) {
                memory::DramCoordinates c;
                c.row = static_cast<std::int64_t>(i % rows);
                return mapper.address_of(c);
            };
            r.one_bank_walk = true;
        }
    }
    memory::TrafficGenerator traffic(t);
    memory::DriverParams driver;
    // Default: enough requests in flight to cover the latency at peak bandwidth (Little's law) -
    // twice the controllers' queues at the HBM, four times behind the L2's extra latency.
    const int depth_factor = r.level == "hbm" ? 2 : 4;
    driver.max_outstanding = o.outstanding > 0 ? o.outstanding : depth_factor * dp.units() * dp.queue_depth;

    memory::DriveResult result;
    memory::DramStats dram_stats;
    if (r.level == "hbm") {
        memory::Dram dram(dp);
        result = memory::drive_dram_queued(dram, traffic, driver);
        dram_stats = dram.stats();
    } else {
        memory::MemoryHierarchy hierarchy(hp);
        r.l2_dram = o.l2_dram;
        if (o.l2_dram == "queued") {
            // The L2's misses and write-backs go through the controllers' queues (FR-FCFS).
            result = hierarchy.run_queued(traffic, driver);
        } else {
            // One blocking call per request: the DRAM serves reads in call order.
            std::uint64_t issued = 0;
            const auto requesters = static_cast<std::uint64_t>(hp.requesters);
            result = memory::drive_blocking(
                [&](const memory::MemoryRequest& q, memory::Picoseconds at) {
                    const int requester = static_cast<int>(issued++ % requesters);  // round robin
                    return hierarchy.access(requester, q.address, q.bytes, q.write, at);
                },
                traffic, driver);
            hierarchy.drain_writes(result.last_completion);  // count the writes still buffered
        }
        const memory::MemoryHierarchyStats s = hierarchy.stats();
        dram_stats = s.dram;
        const memory::L2Stats& l2 = *s.l2;
        r.l2_hit_rate = l2.hit_rate();
        r.l2_hits = l2.hits;
        r.l2_misses = l2.misses;
        r.l2_sector_misses = l2.sector_misses;
        r.l2_mshr_merges = l2.mshr_merges;
        r.l2_evictions = l2.evictions;
        r.l2_writebacks = l2.writebacks;
    }
    r.requests = result.requests;
    r.bytes = result.bytes;
    r.simulated_ns = memory::ps_to_ns(result.last_completion - result.first_issue);
    r.peak_gbps = dp.peak_bytes_per_second() / 1e9;
    r.achieved_gbps = result.achieved_bytes_per_second() / 1e9;
    r.percent_of_peak = 100.0 * r.achieved_gbps / r.peak_gbps;
    r.avg_latency_ns = result.latency.average_ns();
    r.p99_latency_ns = result.latency.quantile_ns(0.99);
    r.row_hits = dram_stats.bursts.row_hits;
    r.row_misses = dram_stats.bursts.row_misses;
    r.row_conflicts = dram_stats.bursts.row_conflicts;
    r.refreshes = dram_stats.bursts.refreshes;
    r.activates = dram_stats.bursts.activates;
    r.hbm_bytes = dram_stats.bytes_read + dram_stats.bytes_written;
    return r;
}

void print_membench_report(const MembenchReport& r, std::ostream& out) {
    const std::uint64_t row_total = r.row_hits + r.row_misses + r.row_conflicts;
    auto pct = [](double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; };
    std::ostringstream s;
    s << std::fixed << std::setprecision(1);
    s << "membench  chip " << r.chip << "  level " << r.level;
    if (!r.l2_dram.empty()) s << " (" << r.l2_dram << " DRAM)";
    s << "  pattern " << r.pattern << "  size "
      << r.request_bytes << " B";
    if (r.stride_bytes) s << "  stride " << r.stride_bytes << " B";
    if (r.one_bank_walk) s << "  walk: one bank, the next row each request";
    s << "\n";
    s << "  requests           " << r.requests << " (" << r.bytes << " bytes in " << r.simulated_ns << " ns)\n";
    s << "  peak bandwidth     " << r.peak_gbps << " GB/s (channels x bus width x data rate)\n";
    s << "  achieved           " << r.achieved_gbps << " GB/s (" << r.percent_of_peak << "% of peak)\n";
    s << "  latency            avg " << r.avg_latency_ns << " ns, p99 " << r.p99_latency_ns << " ns\n";
    s << "  row buffer         hits " << r.row_hits << " (" << pct(static_cast<double>(r.row_hits), static_cast<double>(row_total))
      << "%), misses " << r.row_misses << ", conflicts " << r.row_conflicts << ", refreshes " << r.refreshes << "\n";
    if (r.l2_hit_rate)
        s << "  L2                 hit rate " << 100.0 * *r.l2_hit_rate << "%, hits " << r.l2_hits << ", misses "
          << r.l2_misses << " (sector " << r.l2_sector_misses << ", MSHR merges " << r.l2_mshr_merges
          << "), evictions " << r.l2_evictions << ", writebacks " << r.l2_writebacks << "\n";
    s << "  HBM traffic        " << r.hbm_bytes << " bytes\n";
    out << s.str();
}

nlohmann::json membench_report_json(const MembenchReport& r) {
    nlohmann::json j;
    j["schema"] = "accelsim.membench/1";
    j["chip"] = r.chip;
    j["level"] = r.level;
    if (!r.l2_dram.empty()) j["l2_dram"] = r.l2_dram;
    j["pattern"] = r.pattern;
    j["request_bytes"] = r.request_bytes;
    if (r.stride_bytes) j["stride_bytes"] = r.stride_bytes;
    if (r.one_bank_walk) j["one_bank_walk"] = true;
    j["requests"] = r.requests;
    j["bytes"] = r.bytes;
    j["simulated_ns"] = r.simulated_ns;
    j["peak_gbps"] = r.peak_gbps;
    j["achieved_gbps"] = r.achieved_gbps;
    j["percent_of_peak"] = r.percent_of_peak;
    j["avg_latency_ns"] = r.avg_latency_ns;
    j["p99_latency_ns"] = r.p99_latency_ns;
    j["row_hits"] = r.row_hits;
    j["row_misses"] = r.row_misses;
    j["row_conflicts"] = r.row_conflicts;
    j["refreshes"] = r.refreshes;
    j["activates"] = r.activates;
    j["hbm_bytes"] = r.hbm_bytes;
    j["l2_hit_rate"] = r.l2_hit_rate ? nlohmann::json(*r.l2_hit_rate) : nlohmann::json(nullptr);
    if (r.l2_hit_rate) {
        j["l2"] = {{"hits", r.l2_hits},           {"misses", r.l2_misses},       {"sector_misses", r.l2_sector_misses},
                   {"mshr_merges", r.l2_mshr_merges}, {"evictions", r.l2_evictions}, {"writebacks", r.l2_writebacks}};
    }
    return j;
}

int run_membench_on_config(const ChipConfig& chip, const MembenchOptions& options, std::ostream& out,
                           std::ostream& err) {
    try {
        MembenchReport report;
        try {
            report = run_membench(chip, options);
        } catch (const std::invalid_argument& e) {  // a model rejected a parameter
            throw InputError((chip.file.empty() ? chip.name : chip.file) + ": " + e.what());
        }
        print_membench_report(report, out);
        if (!options.json_path.empty()) {
            OutputFile f("--json", options.json_path);
            f.stream() << membench_report_json(report).dump(2) << "\n";
            f.commit();
        }
        return 0;
    } catch (const InputError& e) {
        err << "accelsim: error: " << e.what() << "\n";
        return 2;
    }
}

}  // namespace accelsim
