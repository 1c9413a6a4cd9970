#pragma once
// SystemC elaborates once per process. ctest already runs every test case in its own process
// (gtest_discover_tests); this macro also makes a test that elaborates safe when the whole test
// binary is run by hand, by running its body in a forked child (a gtest death-test fork).
// The child leaves with _Exit after flushing its output: exit-time handlers would run
// LeakSanitizer's scan in the forked child, whose tracer crashes intermittently on SystemC's
// coroutine stacks under the sanitizer build (signal 11, "ASan is ignoring requested
// __asan_handle_no_return"); the parent test process still runs the leak check.
#include <cstdio>
#include <cstdlib>

#include <gtest/gtest.h>

#define ACCELSIM_IN_CHILD_PROCESS(body)                                           \
    EXPECT_EXIT(                                                                  \
        {                                                                         \
            body;                                                                 \
            std::fflush(nullptr);                                                 \
            std::_Exit(::testing::Test::HasFailure() ? 1 : 0);                    \
        },                                                                        \
        ::testing::ExitedWithCode(0), "")
