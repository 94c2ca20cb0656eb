#!/usr/bin/env bash
# One short check of the hashing device route on a GPU (issue 32): the hashing tests, then
# bench_hashing.py --device cuda at the five sizes, best of 3, as one compact table.
#
#   bash bench/gpu_check.sh                      # tests, then every size
#   SIZES=1,5 REPEAT=2 bash bench/gpu_check.sh   # fewer sizes or repeats
#   SKIP_TESTS=1 bash bench/gpu_check.sh         # the benchmark alone
#   DEVICE=cpu QUICK=1 bash bench/gpu_check.sh   # the script itself, on a machine without a GPU
#
# Installs nothing. It uses the python that holds torch (PYTHON, else python3); without CUDA
# torch it says so and stops; without triton the device route runs its torch engine (said in
# the table's first line); without pytest the tests are left out; without babel (the Spanish
# catalogs) the one test file about translated words is left out. Each stage has its own
# time limit (TEST_LIMIT, default 100 s; BENCH_LIMIT, default 120 s), so a slow stage cannot
# eat the other's time; a stage stopped at its limit still prints what it did.
# Everything printed is also written to $OUT/gpu_check.log when OUT is set.
set -u
cd "$(dirname "$0")/.." || exit 2
PY=${PYTHON:-python3}
LOG=${OUT:-/tmp}/gpu_check.log
export PYTHONUNBUFFERED=1
: >"$LOG"

say() { echo "$@" | tee -a "$LOG"; }
has() { "$PY" -c "import $1" >/dev/null 2>&1; }

say "== gpu_check $(date -u +%FT%TZ) at $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
DEVICE=${DEVICE:-cuda}
info=$(DEVICE=$DEVICE "$PY" - 2>&1 <<'EOF'
import os, sys
import numpy, torch
try:
    import triton
    tri = triton.__version__
except Exception as exc:  # not installed, or broken
    tri = f"absent ({type(exc).__name__}): the torch engine runs"
print(f"python {sys.version.split()[0]}; torch {torch.__version__}; numpy {numpy.__version__}; "
      f"triton {tri}; {len(os.sched_getaffinity(0))} cores")
if os.environ["DEVICE"].startswith("cuda"):
    if not torch.cuda.is_available():
        print("no CUDA device visible to torch: nothing to check here")
        sys.exit(1)
    print("device", torch.cuda.get_device_name(0))
EOF
)
rc=$?
say "$info"
[ "$rc" -eq 0 ] || exit 2

status=0
if [ -n "${SKIP_TESTS:-}" ]; then
    say "== tests: skipped (SKIP_TESTS)"
elif ! has pytest; then
    say "== tests: skipped (pytest is not installed)"
else
    # the device tests first: if the stage reaches its limit, those have run; pytest is
    # interrupted (SIGINT), not killed, so it still prints what passed and failed
    args=(-q -p no:cacheprovider -rfEs tests/hashing/test_hashing_devices.py
        tests/hashing/test_hashing_device_route.py tests/hashing)
    if ! has babel; then
        args+=(--ignore=tests/hashing/test_hashing_words.py)
        say "== babel is not installed: tests/hashing/test_hashing_words.py left out"
    fi
    say "== $PY -m pytest ${args[*]}"
    start=$(date +%s)
    timeout -s INT -k 15 "${TEST_LIMIT:-100}" "$PY" -m pytest "${args[@]}" 2>&1 \
        | tail -n 40 | tee -a "$LOG"
    rc=${PIPESTATUS[0]}
    say "== tests: exit $rc after $(($(date +%s) - start)) s (2 or 124: stopped at TEST_LIMIT)"
    [ "$rc" -eq 0 ] || status=1
fi

bench=(bench/bench_hashing.py --device "$DEVICE" --repeat "${REPEAT:-3}")
[ -n "${SIZES:-}" ] && bench+=(--sizes "$SIZES")
[ -n "${QUICK:-}" ] && bench+=(--quick)
say "== $PY ${bench[*]}"
start=$(date +%s)
timeout -s INT -k 15 "${BENCH_LIMIT:-120}" "$PY" "${bench[@]}" 2>&1 | tee -a "$LOG"
rc=${PIPESTATUS[0]}
say "== bench: exit $rc after $(($(date +%s) - start)) s (124: stopped at BENCH_LIMIT)"
[ "$rc" -eq 0 ] || status=1
exit "$status"
