#pragma once
// The memory models' live counters, each defined once; a unit registers them under its own path
// (e.g. "chip.l2") with register_stats.
#include "models/common/stats.h"

namespace accelsim::memory::stat {

extern const StatDef l2_accesses, l2_hits, l2_misses, l2_sector_misses, l2_mshr_merges, l2_evictions, l2_writebacks, l2_bytes_read, l2_bytes_written, l2_fill_bytes, l2_writeback_bytes, l2_busy_ps, dram_channel_reads, dram_channel_writes, dram_channel_row_hits, dram_channel_row_misses, dram_channel_row_conflicts, dram_channel_activates, dram_channel_precharges, dram_channel_refreshes, dram_channel_bus_busy_ps, dram_reads, dram_writes, dram_bytes_read, dram_bytes_written, crossbar_transfers, crossbar_bytes, crossbar_input_wait_ps, crossbar_output_wait_ps, crossbar_backpressure_ps, scratchpad_reads, scratchpad_writes, scratchpad_bytes_read, scratchpad_bytes_written, scratchpad_busy_ps;

}  // namespace accelsim::memory::stat
