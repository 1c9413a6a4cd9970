// Entry point: libsystemc's main() calls sc_main (declared extern "C" by <systemc>); everything
// else lives in sim/cli so tests can call it in-process.
#include <systemc>

#include "sim/cli/cli.h"

int sc_main(int argc, char* argv[]) { return accelsim::cli_main(argc, argv); }
