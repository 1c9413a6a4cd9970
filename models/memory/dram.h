#pragma once
// DRAM / HBM model: device organisation, JEDEC-style timing, address mapping, one controller per
// (pseudo-)channel with a request queue, FR-FCFS or FCFS scheduling, open or closed pages and
// all-bank refresh.
//
// Timing is computed with busy-until timestamps per bank, bank group, channel and data bus: a
// command's time is the maximum of the times its constraints allow, so nothing steps idle cycles
// and the result depends only on the order requests are handed to a controller. See
// docs/memory.md for the rules and the preset sources.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/common/enum_names.h"
#include "models/common/param_table.h"
#include "models/common/stats.h"
#include "models/memory/fast_divider.h"
#include "models/memory/ring_queue.h"
#include "models/memory/memory_time.h"

namespace accelsim::memory {

enum class DramAddressMap {
    channel_low,   // burst offset | channel | bank group | column | bank | row   (streams spread)
    row_bank_col,  // burst offset | column | bank group | bank | channel | row   (one channel at a time)
    bank_xor,      // channel_low with bank group and bank XORed with the low row bits
};
enum class DramScheduler { fr_fcfs, fcfs };
enum class PagePolicy { open, closed };

// Timing in memory-clock cycles (tCK itself in ns), named as in JEDEC datasheets.
struct DramTiming {
    double tCK = 1.0;   // ns per memory clock
    int BL = 4;         // burst length in data beats
    int CL = 14, CWL = 4;
    int tRCD = 14, tRP = 14, tRAS = 34, tRC = 48;
    int tRRD_S = 4, tRRD_L = 6, tFAW = 30;
    int tCCD_S = 1, tCCD_L = 2;
    int tWR = 16, tWTR = 8, tRTP = 6;
    int tREFI = 3900, tRFC = 260;  // tREFI = 0 disables refresh
};

// Names accepted by set_timing / DramConfig::timing, in a fixed order.
const std::vector<std::string>& dram_timing_names();
// Sets one timing field by name; false when the name is unknown. Integer fields take the value
// rounded to the nearest cycle (callers reject non-integers before if they care).
bool set_dram_timing(DramTiming& timing, const std::string& name, double value);
double get_dram_timing(const DramTiming& timing, const std::string& name);

// The organisation and policies of a DRAM system: what a chip's config states (the `hbm`
// section, with timing overrides: DramConfig) and what the model runs (with the full timing:
// DramParams).
struct DramOrganisation {
    std::string preset = "HBM2";   // the timing preset (DramParams: informational)
    int channels = 8;              // independent channels, each bus_width_bits wide
    int pseudo_channels = 1;       // per channel; each has 1/pseudo_channels of the bus and its own banks
    int bus_width_bits = 128;      // per channel
    double data_rate_gbps = 2.0;   // per pin
    int bank_groups = 4, banks_per_group = 4;
    std::int64_t row_bytes = 2048;       // per bank per pseudo-channel
    DramAddressMap address_map = DramAddressMap::channel_low;
    // channel_low, bank_xor: consecutive bytes one (pseudo-)channel takes before the next channel's
    // turn (a multiple of the burst that divides the row; 0: one burst). GPUs keep at least a
    // cache line in one channel (GPGPU-Sim's A100 config: 256 B, `dramid@8`), so that the
    // bursts of one line, and of a line written back, are row hits of each other.
    std::int64_t interleave_bytes = 0;
    DramScheduler scheduler = DramScheduler::fr_fcfs;
    PagePolicy page_policy = PagePolicy::open;
    int queue_depth = 32;                // per (pseudo-)channel controller: reads (and writes, when shared)
    // Writes wait in their own queue of this many bursts, drained in batches (Ramulator 2's
    // generic controller: a read and a write buffer of 32, write mode above 80 % of the write
    // buffer or with no read waiting, read mode again below 20 % with reads waiting); 0: reads
    // and writes share the one queue of queue_depth bursts.
    int write_queue_depth = 0;
    double write_high_watermark = 0.8, write_low_watermark = 0.2;  // fractions of write_queue_depth
    double controller_latency_ns = 0;    // fixed front-end latency added to every request

    // channels x bus width x data rate
    double peak_bytes_per_second() const { return channels * (bus_width_bits / 8.0) * data_rate_gbps * 1e9; }
};

struct DramParams : DramOrganisation {
    std::int64_t rows_per_bank = 32768;  // addresses beyond the capacity wrap around
    DramTiming timing;

    int units() const { return channels * pseudo_channels; }  // independent controllers
    int unit_width_bits() const { return bus_width_bits / pseudo_channels; }
    std::int64_t burst_bytes() const { return static_cast<std::int64_t>(unit_width_bits()) * timing.BL / 8; }
    double burst_ns() const { return timing.BL / data_rate_gbps; }
    std::int64_t columns_per_row() const { return row_bytes / burst_bytes(); }  // in bursts
    std::int64_t interleave_bursts() const { return interleave_bytes > 0 ? interleave_bytes / burst_bytes() : 1; }
};

// A chip's DRAM as its config states it: a preset, the organisation (which always applies) and
// single timing overrides (tCK in ns, the rest in memory-clock cycles).
struct DramConfig : DramOrganisation {
    std::map<std::string, double> timing;
};

// The config's `hbm` section.
const ParamTable<DramConfig>& dram_param_table();

// The preset's timing under the config's organisation, then the overrides. A data rate other than
// the preset's moves the memory clock (docs/memory.md). Throws std::invalid_argument naming the
// key ("hbm.timing.tRCDX: unknown timing parameter ...").
DramParams dram_params_from(const DramConfig& config);

// Presets with cited public timings (docs/memory.md): "HBM2", "HBM2E", "HBM3", "DDR3", "DDR4",
// "GDDR5", "GDDR6", "GDDR6X", "LPDDR5" (case-insensitive). A preset's tCK is the command clock
// (CK on GDDR and LPDDR, whose data move on a faster WCK); its data rate fixes the bits per pin
// per tCK, which a config's other data rate keeps (dram_params_from).
// Throws std::invalid_argument naming the valid presets for an unknown name.
DramParams dram_preset(const std::string& name);
const std::vector<std::string>& dram_preset_names();

inline constexpr EnumNames<DramAddressMap, 3> kDramAddressMapNames{{{DramAddressMap::channel_low, "channel_low"},
                                                                   {DramAddressMap::row_bank_col, "row_bank_col"},
                                                                   {DramAddressMap::bank_xor, "bank_xor"}}};
inline constexpr EnumNames<DramScheduler, 2> kDramSchedulerNames{
    {{DramScheduler::fr_fcfs, "fr_fcfs"}, {DramScheduler::fcfs, "fcfs"}}};
inline constexpr EnumNames<PagePolicy, 2> kPagePolicyNames{{{PagePolicy::open, "open"}, {PagePolicy::closed, "closed"}}};

DramAddressMap dram_address_map_from_name(const std::string& name);  // throws std::invalid_argument
DramScheduler dram_scheduler_from_name(const std::string& name);
PagePolicy page_policy_from_name(const std::string& name);
const char* to_string(DramAddressMap m);
const char* to_string(DramScheduler s);
const char* to_string(PagePolicy p);

// Throws std::invalid_argument naming the offending field.
void validate(const DramParams& params);

// The address span in which a sequential stream opens one row in every bank of every
// (pseudo-)channel once under the params' address map: a stream read in pieces of this size (and
// alignment) opens each of its rows once, however the pieces of several streams interleave.
std::int64_t row_stripe_bytes(const DramParams& params);

struct DramCoordinates {
    int unit = 0;  // channel * pseudo_channels + pseudo channel
    int bank_group = 0, bank = 0;
    std::int64_t row = 0, column = 0;  // column in bursts
};

class DramAddressMapper {
public:
    explicit DramAddressMapper(const DramParams& params);
    // Coordinates of the burst holding byte `address`.
    DramCoordinates map(std::uint64_t address) const;
    // The inverse: the first byte of the burst at `c` (map(address_of(c)) == c for coordinates
    // inside the device). Lets a benchmark aim at one bank whatever the channel hashing.
    std::uint64_t address_of(const DramCoordinates& c) const;

private:
    DramAddressMap map_;
    FastDivider burst_bytes_, units_, groups_, banks_, columns_, rows_;  // radices, without divides
    FastDivider chunk_, chunks_;  // channel_low, bank_xor: columns in one channel's turn, turns per row
};

enum class RowOutcome : std::uint8_t { hit, miss, conflict };

struct DramUnitStats {
    std::uint64_t reads = 0, writes = 0;  // bursts
    std::uint64_t row_hits = 0, row_misses = 0, row_conflicts = 0;
    std::uint64_t activates = 0, precharges = 0, refreshes = 0;
    Picoseconds bus_busy_ps = 0;
};

// One (pseudo-)channel: bank state, timing constraints and the request queue.
class DramController {
public:
    // 48 bytes, the flags after the tag (queues, and the queued engine's arrival records of
    // 64 bytes, hold thousands).
    struct Burst {
        Burst() = default;
        Burst(const DramCoordinates& where_, bool write_, Picoseconds arrival_, std::uint32_t tag_)
            : where(where_), arrival(arrival_), tag(tag_), write(write_) {}
        DramCoordinates where;
        Picoseconds arrival = 0;  // when it entered the queue
        std::uint32_t tag = 0;    // caller's id, returned in the Issued record
        bool write = false;
        bool row_opened = false;  // its row was activated ahead while it was queued
        bool counted = false;     // its row outcome (hit/miss/conflict) is already counted
    };
    static_assert(sizeof(Burst) == 48, "a burst record is 48 bytes");
    struct Issued {
        std::uint32_t tag;
        RowOutcome outcome;
        Picoseconds first_command;  // PRE, ACT or RD/WR, whichever came first
        Picoseconds column_command;
        Picoseconds data_end;       // completion of the burst
        bool write;
    };

    explicit DramController(const DramParams& params);

    // Serves one burst at once, after every burst served or decided before it (the blocking
    // path: FCFS in call order).
    Issued serve(const Burst& burst);

    // Queued operation: enqueue while has_space(write); the controller decides at
    // next_decision_time(). With a write queue, reads and writes have their own capacity, and a
    // driver keeps one waiting line per kind (waiting_line(write)) so that neither kind blocks
    // the other in front of the controller.
    bool has_space(bool write) const {
        if (write_queue_depth_ == 0) return static_cast<int>(queue_.size()) < queue_depth_;
        return write ? queued_writes_ < write_queue_depth_ : static_cast<int>(queue_.size()) - queued_writes_ < queue_depth_;
    }
    int waiting_line(bool write) const { return write_queue_depth_ > 0 && write ? 1 : 0; }
    static constexpr int kWaitingLines = 2;
    bool empty() const { return queue_.empty(); }
    bool write_mode() const { return write_mode_; }
    std::uint32_t oldest_tag() const { return queue_.front().tag; }  // the queue must not be empty
    void enqueue(const Burst& burst);
    Picoseconds next_decision_time() const;  // kNeverPs when the queue is empty
    // Picks one queued burst and issues it. FR-FCFS: the burst whose data could move first (row
    // hits win ties, then the oldest; a burst waiting 32 x tRC goes first); FCFS: the oldest.
    // With a write queue the pick is among the reads in read mode and among the writes in write
    // mode (watermarks above).
    Issued decide();

    const DramUnitStats& stats() const { return stats_; }
    // Registers this controller's counters as DRAM.chCHANNEL.reads, .row_hits, ... (DRAM: the device's path).
    void register_stats(StatsRegistry& registry, const std::string& dram, int channel) const;
    static constexpr Picoseconds kNeverPs = ~Picoseconds{0};

private:
    struct Bank {
        std::int64_t open_row = -1;
        Picoseconds act_ready = 0, col_ready = 0, pre_ready = 0;
    };
    struct Group {
        Picoseconds act_allowed = 0, col_allowed = 0;
    };
    Issued issue(const Burst& burst, Picoseconds ready);
    RowOutcome open_row(const Burst& burst, Picoseconds row_ready, bool count);  // PRE (if needed) + ACT
    void open_ahead(std::size_t queue_index, Picoseconds now);
    bool schedulable(const Burst& b) const { return write_queue_depth_ == 0 || b.write == write_mode_; }
    void update_write_mode(Picoseconds now);
    void refresh_until(Picoseconds now);
    void refresh_all_until(Picoseconds now);

    // timing in ps
    Picoseconds tCK_, burst_, CL_, CWL_, tRCD_, tRP_, tRAS_, tRC_, tRRD_S_, tRRD_L_, tFAW_, tCCD_S_, tCCD_L_,
        tWR_, tWTR_, tRTP_, tREFI_, tRFC_, turnaround_, starvation_ps_;
    bool closed_page_, fr_fcfs_;
    int banks_per_group_, queue_depth_, write_queue_depth_;
    double write_enter_, write_leave_;  // write-queue occupancies that switch the mode
    int queued_writes_ = 0;
    bool write_mode_ = false;

    std::vector<Bank> banks_;
    std::vector<Group> groups_;
    Picoseconds act_allowed_ = 0, col_allowed_ = 0, bus_free_ = 0;
    Picoseconds write_data_end_ = 0, read_data_end_ = 0;
    std::array<Picoseconds, 4> faw_window_{};  // the last four ACT times, oldest at faw_next_
    int faw_next_ = 0;
    Picoseconds last_row_command_ = 0;
    bool faw_seen_[4] = {false, false, false, false};
    Picoseconds next_refresh_;

    // Reads and writes in arrival order; FR-FCFS mostly takes the front. A ring, not a
    // std::deque: FR-FCFS scans it at every decision and enqueue, and a deque of 48-byte bursts
    // indexes through its block map (ten bursts a block) on each access.
    RingQueue<Burst> queue_;
    Picoseconds decide_at_ = 0;

    DramUnitStats stats_;
};

struct DramStats {
    std::uint64_t reads = 0, writes = 0;                 // requests
    std::uint64_t bytes_read = 0, bytes_written = 0;
    DramUnitStats bursts;                                // summed over all controllers
    LatencyHistogram latency;                            // per request, arrival to last data
};

// The whole device: the address map in front of one controller per (pseudo-)channel.
class Dram {
public:
    explicit Dram(const DramParams& params);  // validates; throws std::invalid_argument

    // Blocking access. Reads are served FCFS in call order on their controllers (a blocking call
    // must return its completion, so no later request can overtake it) and return when the last
    // data beat leaves the device. Writes are posted: they are acknowledged once they have an
    // entry in the controller's write buffer (queue_depth entries; an entry frees when the write
    // that held it issues), which drains as one batch when queue_depth bursts have gathered (so
    // the read/write turnaround is paid once per batch).
    Picoseconds access(std::uint64_t address, std::uint32_t bytes, bool write, Picoseconds arrival);
    // Drains every write buffer at time `now` (end of a run, or before reading the counters).
    void drain_writes(Picoseconds now);
    // Issues every buffered write as soon as its controller can (from the last write its buffer
    // accepted) and returns when the data of every write issued so far is in the device (0: no
    // write yet). A producer whose output must be in memory when it completes (a TPU op's DMA)
    // waits for this: posted writes would otherwise let it end before its bytes could cross the
    // channels.
    Picoseconds flush_writes();

    const DramParams& params() const { return params_; }
    const DramAddressMapper& mapper() const { return mapper_; }
    DramStats stats() const;  // aggregates the controllers' counters
    // prefix.reads, prefix.bytes_read, ... and prefix.ch<N>.<counter> per (pseudo-)channel.
    void register_stats(StatsRegistry& registry, const std::string& prefix) const;

    // Used by the queued driver (DramStreamDriver) and by tests.
    std::vector<DramController>& controllers() { return controllers_; }
    void record_request(bool write, std::uint32_t bytes, Picoseconds latency);

private:
    DramParams params_;
    DramAddressMapper mapper_;
    std::vector<DramController> controllers_;
    std::vector<std::vector<DramController::Burst>> write_buffers_;  // per controller
    std::vector<std::vector<Picoseconds>> write_slot_free_;           // per controller, per buffer entry
    void drain_unit(std::size_t unit, Picoseconds now);
    Picoseconds last_write_data_end_ = 0;  // of every write issued to the controllers so far
    FastDivider burst_div_;
    Picoseconds controller_latency_ps_;
    std::uint64_t reads_ = 0, writes_ = 0, bytes_read_ = 0, bytes_written_ = 0;
    LatencyHistogram latency_;
};

}  // namespace accelsim::memory
