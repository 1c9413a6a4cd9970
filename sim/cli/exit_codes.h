#pragma once
// The exit codes of every accelsim command (README "Command line").
namespace accelsim {
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;   // a simulation or numerics check failed
constexpr int kExitBadInput = 2;  // bad usage or bad input
}  // namespace accelsim
