// Our own main(): libsystemc exports main() too, and gtest_main linked after it runs zero tests.
#include <cstdlib>

#include <gtest/gtest.h>
#include <systemc>

#include "sim/sanitizer_main_stack.h"

int sc_main(int, char*[]) { return 0; }  // required symbol for libsystemc; never called here

int main(int argc, char** argv) {
    accelsim::restore_main_stack_for_leak_check_at_exit();
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
