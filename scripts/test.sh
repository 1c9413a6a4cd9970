#!/usr/bin/env bash
# Builds (installing dependencies if missing) and runs the test suite, or the tiers named:
#   scripts/test.sh                     every tier (unit, integration, slow)
#   scripts/test.sh unit integration    the per-commit tiers
#   scripts/test.sh slow                the long end-to-end runs
# Tiers are ctest labels (tests/CMakeLists.txt says which tests carry which). Fails if any test
# fails, if a tier holds no test, or if any test binary holds zero tests (a binary linked the wrong
# way can silently run none).
set -euo pipefail
cd "$(dirname "$0")/.."

tiers=("$@")
[ ${#tiers[@]} -gt 0 ] || tiers=(unit integration slow)
for t in "${tiers[@]}"; do
    case "$t" in
        unit | integration | slow) ;;
        *) echo "usage: scripts/test.sh [unit|integration|slow]..." >&2; exit 2 ;;
    esac
done

scripts/build.sh

status=0
for bin in build/tests/test_*; do
    [ -x "$bin" ] || continue
    count=$("$bin" --gtest_list_tests | grep -c '^  ' || true)
    echo "$(basename "$bin"): $count tests"
    if [ "$count" -eq 0 ]; then
        echo "error: $bin holds no tests" >&2
        status=1
    fi
done
[ $status -eq 0 ] || exit $status

# Every registered test carries exactly one tier label.
unlabelled=$(ctest --test-dir build -N -LE '^(unit|integration|slow)$' | grep -c 'Test *#' || true)
if [ "$unlabelled" -ne 0 ]; then
    echo "error: $unlabelled tests carry no tier label (see tests/CMakeLists.txt):" >&2
    ctest --test-dir build -N -LE '^(unit|integration|slow)$' >&2
    exit 1
fi

label_regex="^($(IFS='|'; echo "${tiers[*]}"))\$"
log="build/ctest-$(IFS=-; echo "${tiers[*]}").log"
start=$(date +%s)
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 600 -L "$label_regex" | tee "$log"
echo "tiers ${tiers[*]}: ctest took $(( $(date +%s) - start )) s"
grep -Eq '^100% tests passed, 0 tests failed out of [1-9]' "$log"
