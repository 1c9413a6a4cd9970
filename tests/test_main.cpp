// Our own main(): libsystemc exports main() too, and gtest_main linked after it runs zero tests.
#include <gtest/gtest.h>
#include <systemc>

int sc_main(int, char*[]) { return 0; }  // required symbol for libsystemc; never called here

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
