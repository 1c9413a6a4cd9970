// Under AddressSanitizer only: gives LeakSanitizer back the main thread's own stack bounds before
// its exit-time leak check. Debian's libsystemc announces every coroutine switch to ASan
// (__sanitizer_start/finish_switch_fiber), but after a simulation the main thread can be left
// recorded with a SystemC thread's stack, which is freed by then: the leak check then scans freed
// memory and its tracer dies with "Tracer caught signal 11" (8 of 12 runs of one SystemC test on
// 2026-11-26), or misses the main stack's roots. An exit handler announces one switch back to the
// real main stack; registered after ASan's own, it runs before the leak check.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define ACCELSIM_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ACCELSIM_ADDRESS_SANITIZER 1
#endif
#endif

#ifdef ACCELSIM_ADDRESS_SANITIZER
#include <pthread.h>
#include <sanitizer/common_interface_defs.h>

#include <cstddef>
#include <cstdlib>
#endif

namespace accelsim {

#ifdef ACCELSIM_ADDRESS_SANITIZER
namespace sanitizer_detail {
inline void* main_stack_bottom = nullptr;
inline std::size_t main_stack_size = 0;
inline void switch_back_to_main_stack() {
    void* fake_stack = nullptr;
    __sanitizer_start_switch_fiber(&fake_stack, main_stack_bottom, main_stack_size);
    __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
}
}  // namespace sanitizer_detail

// Call first thing in main(), on the main thread.
inline void restore_main_stack_for_leak_check_at_exit() {
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0) return;
    pthread_attr_getstack(&attributes, &sanitizer_detail::main_stack_bottom, &sanitizer_detail::main_stack_size);
    pthread_attr_destroy(&attributes);
    std::atexit(sanitizer_detail::switch_back_to_main_stack);
}
#else
inline void restore_main_stack_for_leak_check_at_exit() {}
#endif

}  // namespace accelsim
