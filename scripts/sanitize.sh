#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer run (docs/reliability.md): builds everything with
# -fsanitize=address,undefined -fno-sanitize-recover=all into build-asan/ (g++, -O1 -g1: CMakeLists.txt),
# then runs the unit tier and the CLI on the shipped teaching traces under the sanitizers. Any
# sanitizer report aborts its process, so it fails this script.
#
# Why this set: the unit tier reaches every model, reader and the engine in-process in about
# 490 tests; the teaching traces drive the whole CLI (config, trace, both chip kinds, every report
# writer) on small inputs. The integration and slow tiers replay the same code on larger inputs at
# 2-3x the cost under ASan and are left to the normal build.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ensure_packages.sh
ensure_packages "${accelsim_build_packages[@]}"

build=build-asan
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DACCELSIM_SANITIZE=ON >/dev/null
# Only what runs below: the CLI and the unit-tier test binaries.
cmake --build "$build" -j "$(nproc)" --target accelsim tests_unit

# SystemC is Debian's shared library, built without ASan; what that means for the options:
# - Leak checking stays on: SystemC's kernel objects live in globals that stay reachable at exit,
#   so LeakSanitizer reports only memory our code lost.
# - container-overflow cannot give false positives across the uninstrumented library: libstdc++
#   annotates containers only under _GLIBCXX_SANITIZE_VECTOR, which we do not define.
# - SystemC threads run on their own stacks (QuickThreads); ASan's stack-use-after-return
#   detection is off (the GCC default) because it cannot follow those switches.
# - libsystemc announces its stack switches to ASan, but can leave the main thread recorded on a
#   freed SystemC stack; the mains give the leak check the real main stack back at exit
#   (sim/sanitizer_main_stack.h), so no suppression and no rerun is needed.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0:strict_string_checks=1:check_initialization_order=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1

echo "== unit tier under ASan+UBSan"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 900 -L '^unit$' |
    tee "$build/ctest-unit.log"
grep -Eq '^100% tests passed, 0 tests failed out of [1-9]' "$build/ctest-unit.log"

echo "== CLI on the teaching traces under ASan+UBSan"
out="$build/teaching-runs"
mkdir -p "$out"
status=0
# config trace [extra options]
runs=(
    "simt_1sm.json simt_teaching.trace"
    "simt_1sm.json tiny_mixed.trace --validate"
    "systolic_8x8.json tiny_gemm.trace --validate"
    "systolic_8x8.json tiny_conv.trace --validate"
    "systolic_8x8.json tiny_mixed.trace --validate"
    "tpu_v4.json tiny_mixed.trace --validate"
    "a100.json tiny_mixed.trace --validate"
)
for run in "${runs[@]}"; do
    read -r config trace extra <<<"$run"
    name="${config%.json}__${trace%.trace}"
    if "$build/accelsim" --quiet --config "configs/$config" --trace "traces/$trace" ${extra:-} \
        --json "$out/$name.json" --csv "$out/$name.csv" >"$out/$name.out" 2>"$out/$name.err" &&
        ! grep -q 'runtime error\|Sanitizer' "$out/$name.err"; then
        echo "ok    $config $trace ${extra:-}"
    else
        echo "FAIL  $config $trace ${extra:-} ($out/$name.err):" >&2
        tail -n 30 "$out/$name.err" >&2
        status=1
    fi
done
exit $status
