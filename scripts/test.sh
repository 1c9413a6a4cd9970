#!/usr/bin/env bash
# Builds (installing dependencies if missing) and runs the whole test suite. Fails if any test
# fails, or if any test binary holds zero tests (a binary linked the wrong way can silently run none).
set -euo pipefail
cd "$(dirname "$0")/.."
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

ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 600 | tee build/ctest.log
grep -Eq '^100% tests passed, 0 tests failed out of [1-9]' build/ctest.log
