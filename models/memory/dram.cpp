#include "models/memory/dram.h"
#include "models/memory/memory_stats.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

namespace accelsim::memory {

namespace {

struct TimingField {
    const char* name;
    int DramTiming::*field;
};
const TimingField kIntFields[] = {
    {"BL", &DramTiming::BL},         {"CL", &DramTiming::CL},         {"CWL", &DramTiming::CWL},
    {"tRCD", &DramTiming::tRCD},     {"tRP", &DramTiming::tRP},       {"tRAS", &DramTiming::tRAS},
    {"tRC", &DramTiming::tRC},       {"tRRD_S", &DramTiming::tRRD_S}, {"tRRD_L", &DramTiming::tRRD_L},
    {"tFAW", &DramTiming::tFAW},     {"tCCD_S", &DramTiming::tCCD_S}, {"tCCD_L", &DramTiming::tCCD_L},
    {"tWR", &DramTiming::tWR},       {"tWTR", &DramTiming::tWTR},     {"tRTP", &DramTiming::tRTP},
    {"tREFI", &DramTiming::tREFI},   {"tRFC", &DramTiming::tRFC},
};

std::string join_names(const std::vector<std::string>& names) { return accelsim::join_names(names, ", "); }

DramTiming make_timing(double tCK, int BL, int CL, int CWL, int tRCD, int tRP, int tRAS, int tRC, int tRRD_S,
                       int tRRD_L, int tFAW, int tCCD_S, int tCCD_L, int tWR, int tWTR, int tRTP, int tREFI,
                       int tRFC) {
    DramTiming t;
    t.tCK = tCK; t.BL = BL; t.CL = CL; t.CWL = CWL; t.tRCD = tRCD; t.tRP = tRP; t.tRAS = tRAS; t.tRC = tRC;
    t.tRRD_S = tRRD_S; t.tRRD_L = tRRD_L; t.tFAW = tFAW; t.tCCD_S = tCCD_S; t.tCCD_L = tCCD_L;
    t.tWR = tWR; t.tWTR = tWTR; t.tRTP = tRTP; t.tREFI = tREFI; t.tRFC = tRFC;
    return t;
}

}  // namespace

const std::vector<std::string>& dram_timing_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n{"tCK"};
        for (const auto& f : kIntFields) n.emplace_back(f.name);
        return n;
    }();
    return names;
}

bool set_dram_timing(DramTiming& timing, const std::string& name, double value) {
    if (name == "tCK") {
        timing.tCK = value;
        return true;
    }
    for (const auto& f : kIntFields)
        if (name == f.name) {
            timing.*(f.field) = static_cast<int>(std::lround(value));
            return true;
        }
    return false;
}

double get_dram_timing(const DramTiming& timing, const std::string& name) {
    if (name == "tCK") return timing.tCK;
    for (const auto& f : kIntFields)
        if (name == f.name) return timing.*(f.field);
    throw std::invalid_argument("unknown DRAM timing '" + name + "' (valid: " + join_names(dram_timing_names()) + ")");
}

// Sources (docs/memory.md has the full table):
//  HBM2  umd-memsys/DRAMsim3 configs/HBM2_8Gb_x128.ini (tRC = tRAS + tRP; tWTR, tRTP = the _L values).
//  HBM2E JEDEC JESD235C 3.2 Gb/s (tCK 0.625 ns): the HBM2 values above converted to ns and rounded up to
//        whole cycles at 0.625 ns [derived]; tCCD_S = BL/2.
//  HBM3  CMU-SAFARI/ramulator2 HBM3 6.4 Gb/s preset (tCK 0.625, BL8, CL 20, tRCD 31, tRP 26, tRAS 45,
//        tRC 72, tRRD 4/5, tFAW 24, tREFI 6240); tRFC = 260 ns (ramulator2's HBM3 tRFC table, 4 Gb);
//        CWL, tCCD, tWR, tWTR, tRTP are the HBM2 ns values at 0.625 ns [derived].
//  DDR3  DRAMsim3 configs/DDR3_4Gb_x8_1600.ini, JEDEC JESD79-3F DDR3-1600K (11-11-11).
//  DDR4  DRAMsim3 configs/DDR4_8Gb_x8_2400.ini, JEDEC JESD79-4 DDR4-2400R (16-16-16).
//
// Graphics and mobile memories clock commands on CK and data on a faster WCK, so a preset's tCK
// is the command clock CK and its data rate fixes the data bits per pin per CK. The model times
// a burst as BL / data_rate (BL in bits per pin) and, at another data rate, moves tCK at the
// preset's ratio (dram_params_from): burst-bound cycles (BL, tCCD) stay, core timings keep their
// ns. Bits per pin per CK: GDDR5 4 (WCK = 2 x CK, data on both WCK edges), GDDR6 8 (WCK = 4 x CK,
// DDR), GDDR6X 16 (GDDR6's clocks, PAM4 carries 2 bits per symbol), LPDDR5 8 (WCK:CK 4:1, DDR).
//  GDDR5  DRAMsim3 configs/GDDR5_8Gb_x32.ini: tCK 0.667 ns (CK 1.5 GHz; DRAMsim3 times a GDDR5 burst
//         as BL/4 cycles, so 4 bits per CK = 6 Gb/s), BL8, CL 24, CWL 7, tRCD = tRCDRD 24, tRP 24,
//         tRAS 56, tRRD 10/10, tFAW 40, tCCD 2/3, tWR 24, tWTR 10, tRTP 2, tREFI 3800, tRFC 74;
//         tRC = tRAS + tRP = 80 [derived] (DRAMsim3 computes it so). x32 device, 4 x 4 banks,
//         128 columns x 32 B = 4 KiB rows, 16384 rows (DRAMsim3 counts a GDDR column as BL x width).
//  GDDR6  DRAMsim3 configs/GDDR6_8Gb_x16.ini: tCK 0.66 ns (read as 2/3 ns, CK 1.5 GHz = 12 Gb/s:
//         Micron MT61K256M32 brief, Figure 4, CK f -> data 8f), BL16, CL 24, CWL 16, tRCD = tRCDRD
//         24, tRP 24, tRAS 54, tRRD 9/9, tFAW 32, tCCD_L 4, tWR 16, tWTR 7, tRTP 3, tRFC 126;
//         tRC = tRAS + tRP = 78 [derived]; tCCD_S = 2 = BL16 at 8 bits per CK [derived] (DRAMsim3's
//         3 would hold a stream across bank groups to 2/3 of the pins' rate; Micron's brief gives
//         tCCDL = 3 or 4 tCK, seamless bursts need tCCDS = the 2-tCK burst); tREFI = 32 ms / 16k
//         refreshes = 1953.1 ns = 2929 tCK (Micron brief "16k/32ms"; rounded down, so refresh is never
//         rarer than specified) [derived] (DRAMsim3 has 7.8 us).
//         Micron brief: 2 channels of 16 bit per device, 16 banks in 4 bank groups, 2 KiB page per
//         channel, R[13:0] = 16384 rows, 32 B per access.
//  GDDR6X GDDR6's core in ns (16 banks in 4 groups, 2 KiB page, 32 B access; Micron: GDDR6X
//         "doubles the data rate without doubling the operating frequency") [derived]. Clocks
//         [assumption]: GDDR6's WCK = 4 x CK with PAM4 symbols on both WCK edges, so 16 bits per
//         CK and tCK = 16/21 ns at 21 Gb/s (RTX 3090 Ti / 4090); BL = 16 bits per pin (8 PAM4
//         symbols, 32 B on x16) = one tCK, so tCCD_S = 1; every other timing is the GDDR6 ns value
//         rounded up at 16/21 ns [derived] (tREFI rounded down).
//  LPDDR5 CMU-SAFARI/ramulator2 LPDDR5_6400 timing row (src/dram/impl/LPDDR5.cpp; its tCK_ps
//         column 1250 = CK 800 MHz, WCK:CK 4:1, 6.4 Gb/s): CL 20, CWL 11, tRCD 15, tRP = nRPpb
//         15 (the model precharges per bank), tRAS 34, tRRD 4, tFAW 16, tCCD_L = nCCD 4, tWR 28,
//         tWTR = nWTRL 10, tRTP 4; ramulator2's ns tables: tREFI 3906 ns = 3124 tCK (rounded
//         down), tRFC = tRFCab 280 ns (16 Gb) = 224 tCK. tRC = tRAS + tRPpb = 49 [derived]
//         (ramulator2's 30 is below tRAS); tCCD_S = 2 = BL16 at 8 bits per CK [derived]. x16
//         channel in bank-group mode (JEDEC JESD209-5, above 3200 Mb/s): 4 x 4 banks, 2 KiB page
//         (ramulator2 LPDDR5_16Gb_x16: 1024 columns x 16 bit), 65536 rows; BL16 = 32 B.
namespace {

// One preset: organisation of one channel (or stack) and its timing (sources above).
struct PresetRow {
    const char* name;
    int channels, pseudo_channels, bus_width_bits;
    double data_rate_gbps;
    int bank_groups, banks_per_group;
    std::int64_t row_bytes, rows_per_bank;
    DramTiming timing;
};

const std::vector<PresetRow>& preset_rows() {
    //   name       ch  pc  bits  Gb/s  groups banks row B  rows
    //              tCK, BL, CL, CWL, tRCD, tRP, tRAS, tRC, tRRD_S/L, tFAW, tCCD_S/L, tWR, tWTR, tRTP, tREFI, tRFC
    static const std::vector<PresetRow> rows{
        {"HBM2", 8, 1, 128, 2.0, 4, 4, 1024, 32768,
         make_timing(1.0, 4, 14, 4, 14, 14, 34, 48, 4, 6, 30, 1, 2, 16, 8, 6, 3900, 260)},
        {"HBM2E", 8, 2, 128, 3.2, 4, 4, 1024, 16384,
         make_timing(0.625, 4, 23, 7, 23, 23, 55, 77, 7, 10, 48, 2, 4, 26, 13, 10, 6240, 416)},
        {"HBM3", 16, 2, 64, 6.4, 4, 4, 1024, 32768,
         make_timing(0.625, 8, 20, 12, 31, 26, 45, 72, 4, 5, 24, 2, 4, 26, 13, 10, 6240, 416)},
        {"DDR3", 1, 1, 64, 1.6, 1, 8, 8192, 65536,
         make_timing(1.25, 8, 11, 8, 11, 11, 28, 39, 5, 5, 24, 4, 4, 12, 6, 6, 6240, 208)},
        {"DDR4", 1, 1, 64, 2.4, 4, 4, 8192, 65536,
         make_timing(5.0 / 6.0, 8, 16, 12, 16, 16, 39, 55, 4, 6, 26, 4, 6, 18, 9, 9, 9360, 420)},
        {"GDDR5", 1, 1, 32, 6.0, 4, 4, 4096, 16384,
         make_timing(2.0 / 3.0, 8, 24, 7, 24, 24, 56, 80, 10, 10, 40, 2, 3, 24, 10, 2, 3800, 74)},
        {"GDDR6", 1, 1, 16, 12.0, 4, 4, 2048, 16384,
         make_timing(2.0 / 3.0, 16, 24, 16, 24, 24, 54, 78, 9, 9, 32, 2, 4, 16, 7, 3, 2929, 126)},
        // GDDR6's ns at tCK 16/21 ns: CL 16 ns -> 21, tRCD/tRP 16 -> 21, tRAS 36 -> 48, tRC 52 -> 69,
        // tRRD 6 -> 8, tFAW 21.33 -> 28, tCCD_L 2.67 -> 4, CWL 10.67 -> 14, tWR 10.67 -> 14,
        // tWTR 4.67 -> 7, tRTP 2 -> 3, tRFC 84 -> 111; tREFI 1952.7 ns -> 2562 (rounded down).
        {"GDDR6X", 1, 1, 16, 21.0, 4, 4, 2048, 16384,
         make_timing(16.0 / 21.0, 16, 21, 14, 21, 21, 48, 69, 8, 8, 28, 1, 4, 14, 7, 3, 2562, 111)},
        {"LPDDR5", 1, 1, 16, 6.4, 4, 4, 2048, 65536,
         make_timing(1.25, 16, 20, 11, 15, 15, 34, 49, 4, 4, 16, 2, 4, 28, 10, 4, 3124, 224)},
    };
    return rows;
}

}  // namespace

DramParams dram_preset(const std::string& requested) {
    // Names match case-insensitively ("HBM2e" is HBM2E).
    std::string name = requested;
    for (auto& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    for (const PresetRow& row : preset_rows()) {
        if (name != row.name) continue;
        DramParams p;
        p.preset = name;
        p.channels = row.channels; p.pseudo_channels = row.pseudo_channels; p.bus_width_bits = row.bus_width_bits;
        p.data_rate_gbps = row.data_rate_gbps; p.bank_groups = row.bank_groups; p.banks_per_group = row.banks_per_group;
        p.row_bytes = row.row_bytes; p.rows_per_bank = row.rows_per_bank;
        p.timing = row.timing;
        return p;
    }
    throw std::invalid_argument("unknown DRAM preset '" + requested + "' (valid: " + join_names(dram_preset_names()) +
                                ")");
}

const std::vector<std::string>& dram_preset_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        for (const PresetRow& row : preset_rows()) n.emplace_back(row.name);
        return n;
    }();
    return names;
}

DramAddressMap dram_address_map_from_name(const std::string& name) {
    if (const auto m = parse_enum(kDramAddressMapNames, name)) return *m;
    throw std::invalid_argument("unknown address map '" + name + "' (valid: " + join_names(names_of(kDramAddressMapNames)) + ")");
}
DramScheduler dram_scheduler_from_name(const std::string& name) {
    if (const auto s = parse_enum(kDramSchedulerNames, name)) return *s;
    throw std::invalid_argument("unknown DRAM scheduler '" + name + "' (valid: " + join_names(names_of(kDramSchedulerNames)) + ")");
}
PagePolicy page_policy_from_name(const std::string& name) {
    if (const auto p = parse_enum(kPagePolicyNames, name)) return *p;
    throw std::invalid_argument("unknown page policy '" + name + "' (valid: " + join_names(names_of(kPagePolicyNames)) + ")");
}
const char* to_string(DramAddressMap m) { return name_of(kDramAddressMapNames, m).data(); }
const char* to_string(DramScheduler s) { return name_of(kDramSchedulerNames, s).data(); }
const char* to_string(PagePolicy p) { return name_of(kPagePolicyNames, p).data(); }

const ParamTable<DramConfig>& dram_param_table() {
    static const ParamTable<DramConfig> table = [] {
        ParamTable<DramConfig> t;
        t.choice("preset", &DramConfig::preset, dram_preset_names(),
                 "DRAM timing preset; `hbm.timing` overrides single parameters of it.")
            .integer("channels", &DramConfig::channels, 1, 1024, "Independent channels (all stacks together).")
            .integer("pseudo_channels", &DramConfig::pseudo_channels, 1, 16,
                     "Pseudo-channels per channel (they split the channel's bus).")
            .integer("bus_width_bits", &DramConfig::bus_width_bits, 1, 4096, "Data bus width of one channel in bits.")
            .number("data_rate_gbps", &DramConfig::data_rate_gbps, 1e-3, 100,
                    "Data rate per pin in Gb/s (at least 1 Mb/s: slower makes every time absurd).")
            .integer("bank_groups", &DramConfig::bank_groups, 1, 64, "Bank groups per (pseudo-)channel.")
            .integer("banks_per_group", &DramConfig::banks_per_group, 1, 64, "Banks per bank group.")
            .integer("row_bytes", &DramConfig::row_bytes, 32, 1 << 20, "Row (page) size in bytes.")
            .integer("interleave_bytes", &DramConfig::interleave_bytes, 0, 1 << 20,
                     "channel_low and bank_xor maps: bytes one channel takes before the next (a multiple of the "
                     "burst dividing the row); 0: one burst.")
            .choice("address_map", &DramConfig::address_map, kDramAddressMapNames,
                    "Address bits → channel/bank/row/column: channel bits lowest, row:bank:col, or bank bits XORed "
                    "with row bits.")
            .choice("scheduler", &DramConfig::scheduler, kDramSchedulerNames,
                    "Controller scheduling: first-ready FCFS (row hits first) or plain FCFS.")
            .choice("page_policy", &DramConfig::page_policy, kPagePolicyNames,
                    "Keep a row open after an access, or precharge at once.")
            .integer("queue_depth", &DramConfig::queue_depth, 1, 4096,
                     "Request queue entries per channel (reads; reads and writes when write_queue_depth is 0).")
            .integer("write_queue_depth", &DramConfig::write_queue_depth, 0, 4096,
                     "Write queue entries per channel, drained in batches between the watermarks; 0: writes share "
                     "the request queue.")
            .number("write_high_watermark", &DramConfig::write_high_watermark, 0, 1,
                    "Write-queue fill (fraction) above which the controller switches to draining writes.")
            .number("write_low_watermark", &DramConfig::write_low_watermark, 0, 1,
                    "Write-queue fill (fraction) below which it returns to reads (when reads wait).")
            .number("controller_latency_ns", &DramConfig::controller_latency_ns, 0, 1e6,
                    "Fixed controller + PHY latency added to every access, in ns.")
            .number_map(
                "timing",
                [](DramConfig& c, const NumberMap& overrides) {
                    c.timing.clear();
                    for (const auto& [name, value] : overrides) c.timing[name] = value;
                },
                dram_timing_names(),
                "Overrides of single preset timings: tCK in ns, the rest in memory-clock cycles.");
        return t;
    }();
    return table;
}

DramParams dram_params_from(const DramConfig& c) {
    auto fail = [](const std::string& key, const std::string& what) {
        return std::invalid_argument("hbm." + key + ": " + what);
    };
    DramParams p;
    try {
        p = dram_preset(c.preset);
    } catch (const std::invalid_argument& e) {
        throw fail("preset", e.what());
    }
    const double preset_rate = p.data_rate_gbps, preset_tck = p.timing.tCK;
    static_cast<DramOrganisation&>(p) = c;  // the organisation always applies
    // A different data rate moves the memory clock at the preset's ratio (2 beats per tCK for
    // DDR/HBM2, 4 for HBM3) unless timing.tCK says otherwise. Burst-bound timings (BL, tCCD_S/L)
    // keep their cycles; the DRAM core's timings keep their nanoseconds (rounded up to whole
    // cycles), as in JEDEC speed bins: a faster interface does not make the arrays faster.
    double tck = c.data_rate_gbps > 0 ? preset_tck * preset_rate / c.data_rate_gbps : preset_tck;
    if (auto it = c.timing.find("tCK"); it != c.timing.end()) tck = it->second;
    if (!(tck > 0)) throw fail("timing.tCK", "must be > 0");
    if (std::abs(tck - preset_tck) > 1e-12) {
        for (const char* name : {"CL", "CWL", "tRCD", "tRP", "tRAS", "tRC", "tRRD_S", "tRRD_L", "tFAW", "tWR", "tWTR",
                                 "tRTP", "tREFI", "tRFC"}) {
            const double ns = get_dram_timing(p.timing, name) * preset_tck;
            set_dram_timing(p.timing, name, std::ceil(ns / tck - 1e-9));
        }
        p.timing.tCK = tck;
    }
    for (const auto& [key, value] : c.timing) {  // std::map: applied in a fixed order
        if (key != "tCK" && value != std::floor(value))
            throw fail("timing." + key, "must be a whole number of memory-clock cycles, got " + std::to_string(value));
        if (!set_dram_timing(p.timing, key, value))
            throw fail("timing." + key, "unknown timing parameter (valid: " + join_names(dram_timing_names()) + ")");
    }
    try {
        validate(p);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("hbm: ") + e.what());
    }
    return p;
}

void validate(const DramParams& p) {
    auto require = [](bool ok, const std::string& what) {
        if (!ok) throw std::invalid_argument(what);
    };
    require(p.channels > 0, "channels must be > 0");
    require(p.pseudo_channels > 0, "pseudo_channels must be > 0");
    require(p.bus_width_bits > 0 && p.bus_width_bits % p.pseudo_channels == 0,
            "bus_width_bits must be a positive multiple of pseudo_channels");
    require(p.data_rate_gbps > 0, "data_rate_gbps must be > 0");
    require(p.bank_groups > 0 && p.banks_per_group > 0, "bank_groups and banks_per_group must be > 0");
    // Bounds that keep a typo from asking for gigabytes of model state.
    require(p.units() <= 65536, "channels x pseudo_channels must be at most 65536");
    require(p.bank_groups * p.banks_per_group <= 1024, "bank_groups x banks_per_group must be at most 1024");
    require(p.queue_depth <= 65536, "queue_depth must be at most 65536");
    require(p.queue_depth > 0, "queue_depth must be > 0");
    require(p.write_queue_depth >= 0 && p.write_queue_depth <= 65536, "write_queue_depth must be in [0, 65536]");
    require(p.write_low_watermark >= 0 && p.write_low_watermark < p.write_high_watermark &&
                p.write_high_watermark <= 1,
            "write watermarks must satisfy 0 <= write_low_watermark < write_high_watermark <= 1");
    require(p.controller_latency_ns >= 0, "controller_latency_ns must be >= 0");
    require(p.rows_per_bank > 0, "rows_per_bank must be > 0");
    require(p.timing.tCK > 0, "timing.tCK must be > 0");
    require(p.timing.BL > 0 && (p.unit_width_bits() * p.timing.BL) % 8 == 0,
            "timing.BL x pseudo-channel width must be a whole number of bytes");
    require(p.row_bytes > 0 && p.row_bytes % p.burst_bytes() == 0,
            "row_bytes must be a positive multiple of the burst size (" + std::to_string(p.burst_bytes()) + " B)");
    require(p.interleave_bytes == 0 ||
                (p.interleave_bytes % p.burst_bytes() == 0 && p.row_bytes % p.interleave_bytes == 0),
            "interleave_bytes must be 0 or a multiple of the burst size (" + std::to_string(p.burst_bytes()) +
                " B) that divides row_bytes");
    for (const auto& f : kIntFields)
        require(p.timing.*(f.field) >= 0, std::string("timing.") + f.name + " must be >= 0");
    require(p.timing.tREFI == 0 || p.timing.tREFI > p.timing.tRFC, "timing.tREFI must exceed timing.tRFC");
}

std::int64_t row_stripe_bytes(const DramParams& p) {
    // channel_low / bank_xor: unit, bank group and column below the bank, so one row of each
    // (unit, group) is covered before the next bank; row_bank_col: column, group, bank and unit
    // all below the row.
    const std::int64_t rows_of_units = static_cast<std::int64_t>(p.units()) * p.bank_groups * p.row_bytes;
    return p.address_map == DramAddressMap::row_bank_col ? rows_of_units * p.banks_per_group : rows_of_units;
}

DramAddressMapper::DramAddressMapper(const DramParams& p)
    : map_(p.address_map),
      burst_bytes_(static_cast<std::uint64_t>(p.burst_bytes())),
      units_(static_cast<std::uint64_t>(p.units())),
      groups_(static_cast<std::uint64_t>(p.bank_groups)),
      banks_(static_cast<std::uint64_t>(p.banks_per_group)),
      columns_(static_cast<std::uint64_t>(p.columns_per_row())),
      rows_(static_cast<std::uint64_t>(p.rows_per_bank)),
      chunk_(static_cast<std::uint64_t>(p.interleave_bursts())),
      chunks_(static_cast<std::uint64_t>(p.columns_per_row() / p.interleave_bursts())) {}

DramCoordinates DramAddressMapper::map(std::uint64_t address) const {
    // Mixed-radix decomposition of the burst index, lowest field first; any channel count works.
    std::uint64_t x = burst_bytes_.div(address);
    auto take = [&x](const FastDivider& radix) {
        const std::uint64_t quotient = radix.div(x);
        const std::uint64_t digit = x - quotient * radix.divisor();
        x = quotient;
        return digit;
    };
    DramCoordinates c;
    switch (map_) {
        case DramAddressMap::channel_low:
        case DramAddressMap::bank_xor:
            if (chunk_.divisor() > 1) {  // a run of columns, then the channel's turn ends
                const std::uint64_t low = take(chunk_);
                const std::uint64_t unit = take(units_);
                // Each run of `units` turns covers every channel once, rotated by a hash of the
                // run (as GPUs hash the partition bits): rows, tiles and buffers that start at
                // the same offset of a power-of-two span do not all start on the same channels.
                // x (the digits above the channel) is the run's index.
                c.unit = static_cast<int>(units_.mod(unit + units_.mod(mix_run_index(x))));
                c.bank_group = static_cast<int>(take(groups_));
                c.column = static_cast<std::int64_t>(take(chunks_) * chunk_.divisor() + low);
            } else {
                c.unit = static_cast<int>(take(units_));
                c.bank_group = static_cast<int>(take(groups_));
                c.column = static_cast<std::int64_t>(take(columns_));
            }
            c.bank = static_cast<int>(take(banks_));
            c.row = static_cast<std::int64_t>(take(rows_));
            if (map_ == DramAddressMap::bank_xor) {
                // Permutation interleaving (Zhang et al., MICRO 2000): rows that would collide in one
                // bank are spread over banks and bank groups.
                auto r = static_cast<std::uint64_t>(c.row);
                c.bank_group = static_cast<int>(groups_.mod(static_cast<std::uint64_t>(c.bank_group) ^ r));
                c.bank = static_cast<int>(banks_.mod(static_cast<std::uint64_t>(c.bank) ^ groups_.div(r)));
            }
            break;
        case DramAddressMap::row_bank_col:
            c.column = static_cast<std::int64_t>(take(columns_));
            c.bank_group = static_cast<int>(take(groups_));
            c.bank = static_cast<int>(take(banks_));
            c.unit = static_cast<int>(take(units_));
            c.row = static_cast<std::int64_t>(take(rows_));
            break;
    }
    return c;
}

std::uint64_t DramAddressMapper::address_of(const DramCoordinates& c) const {
    const auto unit = static_cast<std::uint64_t>(c.unit), row = static_cast<std::uint64_t>(c.row);
    const auto column = static_cast<std::uint64_t>(c.column);
    std::uint64_t group = static_cast<std::uint64_t>(c.bank_group), bank = static_cast<std::uint64_t>(c.bank);
    if (map_ == DramAddressMap::bank_xor) {
        // The digits that XOR with the row to give (group, bank): a search over a few values, so
        // that no radix needs to be a power of two.
        std::uint64_t g = 0, b = 0;
        while (g < groups_.divisor() && groups_.mod(g ^ row) != group) ++g;
        while (b < banks_.divisor() && banks_.mod(b ^ groups_.div(row)) != bank) ++b;
        if (g == groups_.divisor() || b == banks_.divisor())
            throw std::invalid_argument("DramAddressMapper::address_of: no address maps to this bank");
        group = g;
        bank = b;
    }
    std::uint64_t burst = 0;
    switch (map_) {
        case DramAddressMap::channel_low:
        case DramAddressMap::bank_xor:
            if (chunk_.divisor() > 1) {
                // Lowest digit first: low, unit, group, chunk, bank, row; the unit digit is the one
                // the run's hash rotates onto c.unit.
                const std::uint64_t run =
                    group + groups_.divisor() * (chunk_.div(column) + chunks_.divisor() * (bank + banks_.divisor() * row));
                const std::uint64_t rotation = units_.mod(mix_run_index(run));
                const std::uint64_t unit_digit = units_.mod(unit + units_.divisor() - rotation);
                burst = chunk_.mod(column) + chunk_.divisor() * (unit_digit + units_.divisor() * run);
            } else {
                burst = unit + units_.divisor() *
                                   (group + groups_.divisor() * (column + columns_.divisor() * (bank + banks_.divisor() * row)));
            }
            break;
        case DramAddressMap::row_bank_col:
            burst = column + columns_.divisor() *
                                 (group + groups_.divisor() * (bank + banks_.divisor() * (unit + units_.divisor() * row)));
            break;
    }
    return burst * burst_bytes_.divisor();
}

// ---------------------------------------------------------------------------------------------
DramController::DramController(const DramParams& p)
    : closed_page_(p.page_policy == PagePolicy::closed),
      fr_fcfs_(p.scheduler == DramScheduler::fr_fcfs),
      banks_per_group_(p.banks_per_group),
      queue_depth_(p.queue_depth),
      write_queue_depth_(p.write_queue_depth),
      write_enter_(p.write_high_watermark * p.write_queue_depth),
      write_leave_(p.write_low_watermark * p.write_queue_depth),
      banks_(static_cast<std::size_t>(p.bank_groups * p.banks_per_group)),
      groups_(static_cast<std::size_t>(p.bank_groups)) {
    const auto& t = p.timing;
    auto cyc = [&t](int n) { return ns_to_ps(n * t.tCK); };
    tCK_ = ns_to_ps(t.tCK);
    burst_ = ns_to_ps(p.burst_ns());
    CL_ = cyc(t.CL); CWL_ = cyc(t.CWL); tRCD_ = cyc(t.tRCD); tRP_ = cyc(t.tRP); tRAS_ = cyc(t.tRAS);
    tRC_ = cyc(t.tRC); tRRD_S_ = cyc(t.tRRD_S); tRRD_L_ = cyc(t.tRRD_L); tFAW_ = cyc(t.tFAW);
    tCCD_S_ = cyc(t.tCCD_S); tCCD_L_ = cyc(t.tCCD_L); tWR_ = cyc(t.tWR); tWTR_ = cyc(t.tWTR);
    tRTP_ = cyc(t.tRTP); tREFI_ = cyc(t.tREFI); tRFC_ = cyc(t.tRFC);
    turnaround_ = 2 * tCK_;
    starvation_ps_ = 32 * tRC_;  // a safety net; FR-FCFS rarely holds a burst this long  // read-to-write bus turnaround (as in ramulator2: CL + BL + 2 - CWL)
    next_refresh_ = tREFI_ ? tREFI_ : kNeverPs;
}

void DramController::refresh_until(Picoseconds now) {
    if (next_refresh_ > now) return;
    refresh_all_until(now);
    // Rows opened ahead were closed: the queued bursts wait for their banks again.
    for (std::size_t i = 0; i < queue_.size(); ++i) queue_[i].row_opened = false;
    if (fr_fcfs_)
        for (std::size_t i = 0; i < queue_.size(); ++i)
            if (schedulable(queue_[i])) open_ahead(i, now);
}

void DramController::refresh_all_until(Picoseconds now) {
    while (next_refresh_ <= now) {
        // Long idle gaps: every refresh but the last would leave the same state behind.
        if (now - next_refresh_ > 2 * tREFI_) {
            Picoseconds skip = (now - next_refresh_) / tREFI_ - 1;
            bool all_closed = std::all_of(banks_.begin(), banks_.end(), [](const Bank& b) { return b.open_row < 0; });
            if (all_closed && skip > 0) {
                stats_.refreshes += skip;
                next_refresh_ += skip * tREFI_;
            }
        }
        // All-bank refresh: precharge every open bank, then the banks are blocked for tRFC.
        Picoseconds start = next_refresh_;
        for (auto& b : banks_) {
            if (b.open_row >= 0) {
                start = std::max(start, b.pre_ready + tRP_);
                ++stats_.precharges;
            } else {
                start = std::max(start, b.act_ready);
            }
        }
        for (auto& b : banks_) {
            b.open_row = -1;
            b.act_ready = start + tRFC_;
        }
        ++stats_.refreshes;
        next_refresh_ += tREFI_;
    }
}

RowOutcome DramController::open_row(const Burst& r, Picoseconds row_ready, bool count) {
    const auto& w = r.where;
    Bank& bank = banks_[static_cast<std::size_t>(w.bank_group * banks_per_group_ + w.bank)];
    Group& group = groups_[static_cast<std::size_t>(w.bank_group)];
    RowOutcome outcome = RowOutcome::miss;
    Picoseconds act_earliest = row_ready;
    Picoseconds first = 0;
    if (bank.open_row >= 0) {
        outcome = RowOutcome::conflict;
        if (count) ++stats_.row_conflicts;
        ++stats_.precharges;
        first = std::max(row_ready, bank.pre_ready);
        act_earliest = first + tRP_;
    } else if (count) {
        ++stats_.row_misses;
    }
    Picoseconds act = std::max({act_earliest, bank.act_ready, act_allowed_, group.act_allowed});
    const auto slot = static_cast<std::size_t>(faw_next_);
    if (faw_seen_[slot]) act = std::max(act, faw_window_[slot] + tFAW_);
    faw_window_[slot] = act;
    faw_seen_[slot] = true;
    faw_next_ = (faw_next_ + 1) & 3;
    act_allowed_ = act + tRRD_S_;
    group.act_allowed = act + tRRD_L_;
    bank.open_row = w.row;
    bank.col_ready = act + tRCD_;
    bank.pre_ready = act + tRAS_;
    bank.act_ready = act + tRC_;
    ++stats_.activates;
    last_row_command_ = outcome == RowOutcome::miss ? act : first;
    return outcome;
}

DramController::Issued DramController::issue(const Burst& r, Picoseconds ready) {
    // Row commands (PRE, ACT) may go out as soon as the burst is in the queue: the bank state
    // machines work ahead of the column scheduler, as in a command-level FR-FCFS controller. They
    // still respect every constraint recorded so far (ACTs stay in order: tRRD, tFAW). Column
    // commands go out in decision order from `ready` on.
    refresh_until(ready);
    const Picoseconds row_ready = std::min(ready, r.arrival);
    const auto& w = r.where;
    Bank& bank = banks_[static_cast<std::size_t>(w.bank_group * banks_per_group_ + w.bank)];
    Group& group = groups_[static_cast<std::size_t>(w.bank_group)];
    Issued out{r.tag, RowOutcome::hit, 0, 0, 0, r.write};
    Picoseconds first = 0;
    bool row_command = false;

    if (bank.open_row == w.row) {
        if (!r.counted) ++stats_.row_hits;
        out.outcome = r.row_opened ? RowOutcome::miss : RowOutcome::hit;
    } else {
        // A row opened ahead for this burst but closed since (by refresh) is reopened uncounted, so
        // that hits + misses + conflicts = bursts.
        out.outcome = open_row(r, row_ready, !r.counted);
        first = last_row_command_;
        row_command = true;
    }
    Picoseconds col = std::max({ready, bank.col_ready, col_allowed_, group.col_allowed});
    Picoseconds data_start;
    if (!r.write) {
        col = std::max(col, write_data_end_ + tWTR_);
        if (col + CL_ < bus_free_) col = bus_free_ - CL_;
        data_start = col + CL_;
        read_data_end_ = data_start + burst_;
        bank.pre_ready = std::max(bank.pre_ready, col + tRTP_);
        ++stats_.reads;
    } else {
        Picoseconds bus_ready = std::max(bus_free_, read_data_end_ ? read_data_end_ + turnaround_ : 0);
        if (col + CWL_ < bus_ready) col = bus_ready - CWL_;
        data_start = col + CWL_;
        write_data_end_ = data_start + burst_;
        bank.pre_ready = std::max(bank.pre_ready, write_data_end_ + tWR_);
        ++stats_.writes;
    }
    const Picoseconds data_end = data_start + burst_;
    bus_free_ = data_end;
    col_allowed_ = col + tCCD_S_;
    group.col_allowed = col + tCCD_L_;
    stats_.bus_busy_ps += burst_;
    if (closed_page_) {  // auto-precharge after the access
        bank.open_row = -1;
        bank.act_ready = std::max(bank.act_ready, bank.pre_ready + tRP_);
        ++stats_.precharges;
    }
    out.first_command = row_command ? first : col;
    out.column_command = col;
    out.data_end = data_end;
    return out;
}

DramController::Issued DramController::serve(const Burst& burst) {
    // Commands go out in call order, at most one decision per tCK.
    Picoseconds ready = std::max(burst.arrival, decide_at_);
    Issued done = issue(burst, ready);
    decide_at_ = std::max(ready + tCK_, std::min(done.first_command, done.column_command) + tCK_);
    return done;
}

void DramController::enqueue(const Burst& burst) {
    queue_.push_back(burst);
    if (burst.write) ++queued_writes_;
    // Bursts of the kind not being served get their rows only when their mode comes.
    if (fr_fcfs_ && schedulable(burst)) open_ahead(queue_.size() - 1, burst.arrival);
}

void DramController::update_write_mode(Picoseconds now) {
    // Ramulator 2's generic controller (src/dram_controller/impl/generic_dram_controller.cpp,
    // set_write_mode): writes are drained as a batch once the write queue is above the high
    // watermark or no read waits, and reads resume once it is below the low watermark (or empty).
    // Counted are the bursts that have arrived by `now`.
    int reads = 0, writes = 0;
    for (std::size_t i = 0; i < queue_.size(); ++i) {
        const Burst& b = queue_[i];
        if (b.arrival > now) break;
        ++(b.write ? writes : reads);
    }
    const bool was = write_mode_;
    if (!write_mode_) write_mode_ = writes > 0 && (writes > write_enter_ || reads == 0);
    else write_mode_ = writes > 0 && !(writes < write_leave_ && reads > 0);
    if (write_mode_ != was && fr_fcfs_)
        for (std::size_t i = 0; i < queue_.size(); ++i)
            if (queue_[i].write == write_mode_) open_ahead(i, now);
}

void DramController::open_ahead(std::size_t index, Picoseconds now) {
    // The bank's state machine works ahead of the column scheduler: the oldest queued burst to a
    // bank whose open row no queued burst needs gets its PRE/ACT now, not when it is picked.
    Burst& b = queue_[index];
    const auto& w = b.where;
    const Bank& bank = banks_[static_cast<std::size_t>(w.bank_group * banks_per_group_ + w.bank)];
    if (b.row_opened || bank.open_row == w.row) return;
    for (std::size_t i = 0; i < queue_.size(); ++i) {
        if (i == index || !schedulable(queue_[i])) continue;
        const auto& o = queue_[i].where;
        if (o.bank_group != w.bank_group || o.bank != w.bank) continue;
        if (o.row == bank.open_row) return;   // the open row is still needed
        if (i < index) return;                // an older burst waits for this bank
    }
    // A refresh falling due here closes every row and opens ahead again, this burst's row included:
    // opening it once more would count a conflict with itself (PRE after tRAS, ACT after tRP).
    refresh_until(now);
    if (b.row_opened || bank.open_row == w.row) return;
    open_row(b, now, !b.counted);
    b.row_opened = b.counted = true;
}

Picoseconds DramController::next_decision_time() const {
    if (queue_.empty()) return kNeverPs;
    return std::max(decide_at_, queue_.front().arrival);
}

DramController::Issued DramController::decide() {
    const Picoseconds now = next_decision_time();
    refresh_until(now);
    if (write_queue_depth_ > 0) update_write_mode(now);
    // The oldest burst of the kind being served (every burst with a shared queue); one has arrived.
    std::size_t pick = 0;
    while (!schedulable(queue_[pick])) ++pick;
    // Starvation cap: once the oldest burst has waited starvation_ps_, it goes first.
    if (fr_fcfs_ && now - std::min(now, queue_[pick].arrival) < starvation_ps_) {
        // First ready: the queued burst whose data could move soonest (a row hit, or a miss whose
        // bank can be opened in time, after any bus turnaround); row hits win ties, then the
        // oldest. Picking the earliest rather than any hit keeps bursts alternating over bank
        // groups (tCCD_S < tCCD_L) and groups reads and writes (turnarounds are paid once per batch).
        Picoseconds best = kNeverPs;
        bool best_hit = false;
        const Picoseconds floor_read = std::max({now + CL_, bus_free_, write_data_end_ + tWTR_ + CL_});
        const Picoseconds floor_write = std::max({now + CWL_, bus_free_, read_data_end_ ? read_data_end_ + turnaround_ : 0});
        for (std::size_t i = pick; i < queue_.size(); ++i) {
            const Burst& b = queue_[i];
            if (b.arrival > now) break;
            if (!schedulable(b)) continue;
            const auto& w = b.where;
            const Bank& bank = banks_[static_cast<std::size_t>(w.bank_group * banks_per_group_ + w.bank)];
            const Group& group = groups_[static_cast<std::size_t>(w.bank_group)];
            const bool hit = bank.open_row == w.row;  // includes rows opened ahead for it
            Picoseconds col = std::max({now, col_allowed_, group.col_allowed});
            if (hit) {
                col = std::max(col, bank.col_ready);
            } else {
                Picoseconds act = bank.open_row >= 0 ? std::max(b.arrival, bank.pre_ready) + tRP_ : b.arrival;
                act = std::max({act, bank.act_ready, act_allowed_, group.act_allowed});
                col = std::max(col, act + tRCD_);
            }
            const Picoseconds data = b.write ? std::max(col + CWL_, floor_write) : std::max(col + CL_, floor_read);
            if (data < best || (data == best && hit && !best_hit)) {
                best = data;
                best_hit = hit;
                pick = i;
                // Nothing can beat the bus's own limit; older bursts win ties, so stop here.
                if (hit && data == std::min(floor_read, floor_write)) break;
            }
        }
    }
    Burst chosen = queue_[pick];
    if (pick == 0) queue_.pop_front();
    else queue_.erase(pick);
    if (chosen.write) --queued_writes_;
    Issued done = issue(chosen, now);
    // The next decision may follow this one's first command: row commands of several requests
    // overlap (bank parallelism), while column commands stay in decision order.
    decide_at_ = std::max(now + tCK_, std::min(done.first_command, done.column_command) + tCK_);
    if (fr_fcfs_) {
        // The bank may now be free for the next burst waiting on it.
        for (std::size_t i = 0; i < queue_.size(); ++i) {
            const auto& o = queue_[i].where;
            if (!schedulable(queue_[i])) continue;
            if (o.bank_group == chosen.where.bank_group && o.bank == chosen.where.bank) {
                open_ahead(i, now);
                break;
            }
        }
    }
    return done;
}

// ---------------------------------------------------------------------------------------------
Dram::Dram(const DramParams& params)
    : params_((validate(params), params)),
      mapper_(params_),
      burst_div_(static_cast<std::uint64_t>(params_.burst_bytes())),
      controller_latency_ps_(ns_to_ps(params_.controller_latency_ns)) {
    controllers_.reserve(static_cast<std::size_t>(params_.units()));
    for (int i = 0; i < params_.units(); ++i) controllers_.emplace_back(params_);
    write_buffers_.resize(controllers_.size());
    for (auto& b : write_buffers_) b.reserve(static_cast<std::size_t>(params_.queue_depth));
    write_slot_free_.assign(controllers_.size(), std::vector<Picoseconds>(static_cast<std::size_t>(params_.queue_depth), 0));
}

void Dram::drain_unit(std::size_t unit, Picoseconds now) {
    std::vector<Picoseconds>& slot_free = write_slot_free_[unit];
    for (std::size_t j = 0; j < write_buffers_[unit].size(); ++j) {
        DramController::Burst burst = write_buffers_[unit][j];
        burst.arrival = now;
        // The write leaves its buffer entry when its column command issues.
        const auto served = controllers_[unit].serve(burst);
        slot_free[j] = served.column_command;
        last_write_data_end_ = std::max(last_write_data_end_, served.data_end);
    }
    write_buffers_[unit].clear();
}

Picoseconds Dram::flush_writes() {
    for (std::size_t u = 0; u < write_buffers_.size(); ++u) {
        if (write_buffers_[u].empty()) continue;
        Picoseconds newest = 0;  // the buffer's last accepted write: the batch could start then
        for (const auto& burst : write_buffers_[u]) newest = std::max(newest, burst.arrival);
        drain_unit(u, newest);
    }
    return last_write_data_end_;
}

void Dram::drain_writes(Picoseconds now) {
    for (std::size_t u = 0; u < write_buffers_.size(); ++u) drain_unit(u, now);
}

Picoseconds Dram::access(std::uint64_t address, std::uint32_t bytes, bool write, Picoseconds arrival) {
    if (bytes == 0) bytes = 1;
    const std::uint64_t burst = burst_div_.divisor();
    const Picoseconds at_controller = arrival + controller_latency_ps_;
    Picoseconds done = at_controller;
    const std::uint64_t last = burst_div_.div(address + bytes - 1);
    for (std::uint64_t b = burst_div_.div(address); b <= last; ++b) {
        DramController::Burst req{mapper_.map(b * burst), write, at_controller, 0};
        const auto unit = static_cast<std::size_t>(req.where.unit);
        if (write) {
            // Accepted when its buffer entry is free: the write that held it in the previous batch
            // has issued. A write stream therefore runs at the rate the DRAM retires writes, with
            // queue_depth of them absorbed.
            const Picoseconds accepted =
                std::max(at_controller, write_slot_free_[unit][write_buffers_[unit].size()]);
            req.arrival = accepted;
            write_buffers_[unit].push_back(req);
            done = std::max(done, accepted);
            if (static_cast<int>(write_buffers_[unit].size()) >= params_.queue_depth) drain_unit(unit, accepted);
        } else {
            done = std::max(done, controllers_[unit].serve(req).data_end);
        }
    }
    record_request(write, bytes, done - arrival);
    return done;
}

void Dram::record_request(bool write, std::uint32_t bytes, Picoseconds latency) {
    if (write) {
        ++writes_;
        bytes_written_ += bytes;
    } else {
        ++reads_;
        bytes_read_ += bytes;
    }
    latency_.record(latency);
}

void DramController::register_stats(StatsRegistry& r, const std::string& dram, int channel_index) const {
    const std::string channel = std::to_string(channel_index);
    r.add(stat::dram_channel_reads, {dram, channel}, &stats_.reads);
    r.add(stat::dram_channel_writes, {dram, channel}, &stats_.writes);
    r.add(stat::dram_channel_row_hits, {dram, channel}, &stats_.row_hits);
    r.add(stat::dram_channel_row_misses, {dram, channel}, &stats_.row_misses);
    r.add(stat::dram_channel_row_conflicts, {dram, channel}, &stats_.row_conflicts);
    r.add(stat::dram_channel_activates, {dram, channel}, &stats_.activates);
    r.add(stat::dram_channel_precharges, {dram, channel}, &stats_.precharges);
    r.add(stat::dram_channel_refreshes, {dram, channel}, &stats_.refreshes);
    r.add(stat::dram_channel_bus_busy_ps, {dram, channel}, &stats_.bus_busy_ps);
}

void Dram::register_stats(StatsRegistry& r, const std::string& prefix) const {
    r.add(stat::dram_reads, {prefix}, &reads_);
    r.add(stat::dram_writes, {prefix}, &writes_);
    r.add(stat::dram_bytes_read, {prefix}, &bytes_read_);
    r.add(stat::dram_bytes_written, {prefix}, &bytes_written_);
    for (std::size_t i = 0; i < controllers_.size(); ++i)
        controllers_[i].register_stats(r, prefix, static_cast<int>(i));
}

DramStats Dram::stats() const {
    DramStats s;
    s.reads = reads_;
    s.writes = writes_;
    s.bytes_read = bytes_read_;
    s.bytes_written = bytes_written_;
    for (const auto& c : controllers_) {
        const auto& u = c.stats();
        s.bursts.reads += u.reads;
        s.bursts.writes += u.writes;
        s.bursts.row_hits += u.row_hits;
        s.bursts.row_misses += u.row_misses;
        s.bursts.row_conflicts += u.row_conflicts;
        s.bursts.activates += u.activates;
        s.bursts.precharges += u.precharges;
        s.bursts.refreshes += u.refreshes;
        s.bursts.bus_busy_ps += u.bus_busy_ps;
    }
    s.latency = latency_;
    return s;
}

}  // namespace accelsim::memory
