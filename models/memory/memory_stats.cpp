#include "models/memory/memory_stats.h"

namespace accelsim::memory::stat {

using U = StatUnit;

const StatDef l2_accesses{"{l2}.accesses", U::requests, "requests (split at line boundaries)"};
const StatDef l2_hits{"{l2}.hits", U::requests, "all requested sectors present"};
const StatDef l2_misses{"{l2}.misses", U::requests, "line, sector or in-flight misses"};
const StatDef l2_sector_misses{"{l2}.sector_misses", U::requests, "line present, some sectors missing"};
const StatDef l2_mshr_merges{"{l2}.mshr_merges", U::requests, "misses merged into a fill in flight"};
const StatDef l2_evictions{"{l2}.evictions", U::lines, "valid lines replaced"};
const StatDef l2_writebacks{"{l2}.writebacks", U::lines, "dirty lines written back"};
const StatDef l2_bytes_read{"{l2}.bytes_read", U::bytes, "bytes read by requesters"};
const StatDef l2_bytes_written{"{l2}.bytes_written", U::bytes, "bytes written by requesters"};
const StatDef l2_fill_bytes{"{l2}.fill_bytes", U::bytes, "bytes fetched from the next level"};
const StatDef l2_writeback_bytes{"{l2}.writeback_bytes", U::bytes, "bytes written to the next level"};
const StatDef l2_busy_ps{"{l2}.busy_ps", U::picoseconds, "slice port occupancy, summed over slices"};
const StatDef dram_channel_reads{"{dram}.ch{channel}.reads", U::bursts, "read bursts"};
const StatDef dram_channel_writes{"{dram}.ch{channel}.writes", U::bursts, "write bursts"};
const StatDef dram_channel_row_hits{"{dram}.ch{channel}.row_hits", U::bursts, "bursts that found their row open"};
const StatDef dram_channel_row_misses{"{dram}.ch{channel}.row_misses", U::bursts, "bursts that opened a row in an idle bank"};
const StatDef dram_channel_row_conflicts{"{dram}.ch{channel}.row_conflicts", U::bursts, "bursts that closed another row first"};
const StatDef dram_channel_activates{"{dram}.ch{channel}.activates", U::commands, "ACT commands"};
const StatDef dram_channel_precharges{"{dram}.ch{channel}.precharges", U::commands, "PRE commands (explicit and automatic)"};
const StatDef dram_channel_refreshes{"{dram}.ch{channel}.refreshes", U::commands, "all-bank refreshes"};
const StatDef dram_channel_bus_busy_ps{"{dram}.ch{channel}.bus_busy_ps", U::picoseconds, "time the data bus carried data"};
const StatDef dram_reads{"{dram}.reads", U::requests, "read requests"};
const StatDef dram_writes{"{dram}.writes", U::requests, "write requests"};
const StatDef dram_bytes_read{"{dram}.bytes_read", U::bytes, "bytes read"};
const StatDef dram_bytes_written{"{dram}.bytes_written", U::bytes, "bytes written"};
const StatDef crossbar_transfers{"{crossbar}.transfers", U::transfers, "transfers through the crossbar"};
const StatDef crossbar_bytes{"{crossbar}.bytes", U::bytes, "bytes through the crossbar"};
const StatDef crossbar_input_wait_ps{"{crossbar}.input_wait_ps", U::picoseconds, "time lost waiting for busy input ports"};
const StatDef crossbar_output_wait_ps{"{crossbar}.output_wait_ps", U::picoseconds, "time spent buffered, waiting for busy output ports"};
const StatDef crossbar_backpressure_ps{"{crossbar}.backpressure_ps", U::picoseconds, "time held at input ports by full output buffers"};
const StatDef scratchpad_reads{"{scratchpad}.reads", U::accesses, "read accesses"};
const StatDef scratchpad_writes{"{scratchpad}.writes", U::accesses, "write accesses"};
const StatDef scratchpad_bytes_read{"{scratchpad}.bytes_read", U::bytes, "bytes read"};
const StatDef scratchpad_bytes_written{"{scratchpad}.bytes_written", U::bytes, "bytes written"};
const StatDef scratchpad_busy_ps{"{scratchpad}.busy_ps", U::picoseconds, "bank array occupancy, summed over ports"};

}  // namespace accelsim::memory::stat
