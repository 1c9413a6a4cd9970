#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/, clang, -fsanitize=fuzzer,address,undefined) into
# build-fuzz/ and runs each for SECONDS (default 60) of wall time, as many at once as there are
# cores (each harness is one single-threaded process with its own core, so running them side by
# side gives each the same execs as running them in turn, in half the wall time on 2 cores
# for the six harnesses; FUZZ_JOBS=1 runs them one after the other):
#   scripts/fuzz.sh            60 s per harness (what .ci/run does)
#   scripts/fuzz.sh 30         30 s per harness
#   scripts/fuzz.sh 3600       the one-hour runs of docs/reliability.md
#   scripts/fuzz.sh 60 assembler trace_reader     only the harnesses named
# Seeds come from traces/, traces/scalesim/, configs/, models/simt/kernels/, the ONNX models the
# importer tests build (fuzz_onnx_seeds) and tests/trace/fixtures/*.json; what the fuzzer
# finds on top is kept in build-fuzz/corpus/HARNESS/ and reused by the next run. A crash, a
# sanitizer report, an uncaught exception other than the input error, a hang (>10 s per input)
# or more than 2 GB of memory fails the run and leaves its reproducer in fuzz-crashes/HARNESS/;
# replay one with: build-fuzz/fuzz/fuzz_HARNESS fuzz-crashes/HARNESS/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(trace_reader scalesim_reader config_loader assembler onnx_import pytorch_import)

source scripts/ensure_packages.sh
ensure_packages "${accelsim_build_packages[@]}" clang libclang-rt-14-dev llvm

build=build-fuzz
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DACCELSIM_FUZZ=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target fuzzers

# Seed corpora, rebuilt every run from the shipped files.
seeds="$build/seeds"
rm -rf "$seeds"
mkdir -p "$seeds"/{trace_reader,scalesim_reader,config_loader,assembler,onnx_import,pytorch_import}
cp traces/*.trace "$seeds/trace_reader/"
cp traces/scalesim/*.csv "$seeds/scalesim_reader/"
cp models/simt/kernels/*.sasm "$seeds/assembler/"
"$build/fuzz/fuzz_onnx_seeds" "$seeds/onnx_import"
cp tests/trace/fixtures/*.json "$seeds/pytorch_import/"
for fixture in tests/trace/fixtures/*.json; do    # the gzip path too (.json.gz profiles)
    gzip -9nc "$fixture" >"$seeds/pytorch_import/$(basename "$fixture").gz"
done
# A config seed is the config, "%%", the config it extends (renamed base.json), "%%", and --set
# lines (fuzz/config_loader_fuzzer.cpp); one seed per shipped config, two with overrides.
for config in configs/*.json; do
    base=$(sed -n 's/^ *"extends": *"\([^"]*\)".*/\1/p' "$config")
    seed="$seeds/config_loader/$(basename "$config" .json)"
    {
        sed 's/^\( *"extends": *\)"[^"]*"/\1"base.json"/' "$config"
        echo "%%"
        [ -z "$base" ] || cat "configs/$base"
        echo "%%"
    } >"$seed"
done
printf 'mxu.rows=64\nmxu.cols=64\nhbm.data_rate_gbps=4.8\n' >>"$seeds/config_loader/tpu_v4"
printf 'sm.max_warps=32\nclock_mhz=1000\n' >>"$seeds/config_loader/a100"

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
mkdir -p "$build/logs"
# One harness: its run, then a verdict file the summary below reads (the runs may interleave).
run_harness() {
    local h=$1 corpus="$build/corpus/$1" crashes="fuzz-crashes/$1" log="$build/logs/$1.log"
    mkdir -p "$corpus" "$crashes"
    if (cd "$build" && TMPDIR="$PWD" "fuzz/fuzz_$h" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
            -max_len=16384 -print_final_stats=1 -artifact_prefix="../$crashes/" "corpus/$h" "seeds/$h") \
            >"$log" 2>&1; then
        rmdir "$crashes" 2>/dev/null || true
        echo ok >"$build/logs/$h.verdict"
    else
        echo fail >"$build/logs/$h.verdict"
    fi
}

jobs_at_once=${FUZZ_JOBS:-$(nproc)}
rm -f "$build"/logs/*.verdict
for h in "${harnesses[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_at_once" ]; do wait -n || true; done
    run_harness "$h" &
done
wait

# The summary in the harnesses' order, whatever order they ended in.
status=0
for h in "${harnesses[@]}"; do
    crashes="fuzz-crashes/$h"
    log="$build/logs/$h.log"
    if [ "$(cat "$build/logs/$h.verdict" 2>/dev/null)" != ok ]; then
        echo "FAIL  $h: see $log; reproducer(s) in $crashes/:" >&2
        ls "$crashes" >&2 || true
        grep -m1 -A12 '==ERROR\|runtime error\|deadly signal\|Timeout\|out-of-memory' "$log" >&2 || tail -n 30 "$log" >&2
        status=1
    fi
    last=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    printf '%-16s %4ss  execs %-10s %s\n' "$h" "$seconds" "${execs:-?}" "$(sed -E 's/^#[0-9]+ +[A-Z]+ +//' <<<"$last")"
done
rmdir fuzz-crashes 2>/dev/null || true
exit $status
