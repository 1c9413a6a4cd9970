#pragma once
// SystemC elaborates once per process. ctest already runs every test case in its own process
// (gtest_discover_tests); this macro also makes a test that elaborates safe when the whole test
// binary is run by hand, by running its body in a forked child (a gtest death-test fork).
#include <cstdlib>

#include <gtest/gtest.h>

#define ACCELSIM_IN_CHILD_PROCESS(body)                                           \
    EXPECT_EXIT(                                                                  \
        {                                                                         \
            body;                                                                 \
            std::exit(::testing::Test::HasFailure() ? 1 : 0);                     \
        },                                                                        \
        ::testing::ExitedWithCode(0), "")
