// libsystemc.so (linked through the model libraries) exports main() and needs sc_main(), declared
// extern "C" in <systemc>; a harness's main() is libFuzzer's, so sc_main only satisfies the linker
// and is never called.
extern "C" int sc_main(int, char*[]) { return 0; }
