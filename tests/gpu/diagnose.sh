#!/usr/bin/env bash
# tests/gpu/diagnose.sh OUT TEST_FILE... : on the GPU machine, run each test
# of the given minitest files (tests/ruby/test_x.rb) alone on the CUDA
# executor, each in a process of its own under a time limit, so that a
# device error names the one test it came from (an illegal address is
# sticky: every later test of the process fails with it) and a hang names
# itself; then run every failing test again under compute-sanitizer
# (memcheck), which names the kernel and the address. Writes OUT/summary.txt
# and a log per test; prints the summary.
#
#   . .device/on-device.sh && tests/gpu/diagnose.sh "$OUT" tests/ruby/test_matmul.rb
#
# Environment: DIAGNOSE_TIMEOUT (seconds a test, default 120).
set -uo pipefail

out=${1:?usage: tests/gpu/diagnose.sh OUT TEST_FILE...}
shift
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
limit=${DIAGNOSE_TIMEOUT:-120}
mkdir -p "$out"
"$root/bin/run" -e 'require "cumo"' > "$out/build.log" 2>&1 || { cat "$out/build.log"; exit 1; }
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)

: > "$out/summary.txt"
failed=()
for file in "$@"; do
  base=$(basename "$file" .rb)
  for t in $(grep -o 'def test_[A-Za-z0-9_]*' "$file" | cut -c5-); do
    log="$out/$base.$t.log"
    start=$(date +%s%N)
    timeout -s KILL "$limit" "$root/bin/run" "$root/tests/ruby/gpu_runner.rb" "$file" -n "$t" \
      > "$log" 2>&1
    rc=$?
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    case $rc in
      0) what=ok ;;
      77) what="skipped (no GPU)" ;;
      137) what="killed after ${limit}s" ;;
      *) what="failed ($rc)" ;;
    esac
    echo "$base $t: $what, $ms ms" >> "$out/summary.txt"
    [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || failed+=("$file:$t")
  done
done
if [ -x "$sanitizer" ]; then
  for ft in "${failed[@]}"; do
    file=${ft%%:*} t=${ft##*:}
    timeout -s KILL "$((limit * 4))" "$sanitizer" --tool memcheck --print-limit 20 \
      "$root/bin/run" "$root/tests/ruby/gpu_runner.rb" "$file" -n "$t" \
      > "$out/$(basename "$file" .rb).$t.memcheck.log" 2>&1
    echo "memcheck of $t: $out/$(basename "$file" .rb).$t.memcheck.log" >> "$out/summary.txt"
  done
fi
cat "$out/summary.txt"
