// Entry point. Our own main() replaces libsystemc's so the SystemC banner can be switched off
// before the kernel starts; sc_elab_and_sim then calls sc_main as usual.
#include <cstdlib>
#include <systemc>

#include "sim/cli/cli.h"
#include "sim/sanitizer_main_stack.h"

int sc_main(int argc, char* argv[]) { return accelsim::cli_main(argc, argv); }

int main(int argc, char* argv[]) {
    accelsim::restore_main_stack_for_leak_check_at_exit();
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    return sc_core::sc_elab_and_sim(argc, argv);
}
