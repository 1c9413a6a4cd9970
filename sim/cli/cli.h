#pragma once
namespace accelsim {
// Runs the accelsim command line; returns the process exit code (0 ok, 1 simulation or numerics
// failure, 2 bad usage or bad input).
int cli_main(int argc, char* argv[]);
}  // namespace accelsim
