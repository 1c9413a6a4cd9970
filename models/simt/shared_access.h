#pragma once
// Shared-memory wavefronts of one warp access, scalar or vector. Hardware serves a 32-bit access
// of the whole warp in one phase, a 64-bit one (.v2) in 2 phases of 16 lanes and a 128-bit one
// (.v4) in 4 phases of 8 lanes (each phase moves at most 128 bytes); a phase takes as many
// wavefronts as its worst bank conflict. Conflict-free .v4 = 4 wavefronts = 512 bytes.
#include <array>
#include <cstdint>

namespace accelsim::simt {

// Wavefronts of an access in which each lane of `mask` reads or writes `words` (1, 2 or 4)
// consecutive bank words starting at its address: the sum over phases of the phase's conflict
// degree (the most distinct words any bank must deliver; one word read by several lanes is a
// broadcast). 0 when no lane is active; phases without an active lane cost nothing.
int shared_access_wavefronts(const std::array<std::uint32_t, 32>& addresses, std::uint32_t mask, int words,
                             int banks = 32, int bank_bytes = 4);

}  // namespace accelsim::simt
