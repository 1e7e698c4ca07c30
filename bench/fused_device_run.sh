#!/usr/bin/env bash
# bench/fused_device_run.sh [OUT_DIR]: the fused row operations of the
# README (issue 5), ours and PyTorch's in one run on the GPU machine; then
# bench/fused_table.rb turns the JSON lines into the README's table.
#
#   . .device/on-device.sh && bench/fused_device_run.sh "$OUT"
#
# Writes OUT_DIR/fused.jsonl (every line) and OUT_DIR/fused_table.md.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-bench/out}
mkdir -p "$out"
log="$out/fused.jsonl"
: > "$log"
export PYTHONUNBUFFERED=1
run() { "$@" 2>&1 | grep '^{' | tee -a "$log"; }
# Device time a replay (CUMO_PROFILE=1), then the ops back to back without
# the profiler's per-replay host work.
CUMO_PROFILE=1 run bin/run bench/fused_ops.rb --timing single
run bin/run bench/fused_ops.rb --timing b2b
run python3 bench/peers/fused_ops.py
bin/run bench/fused_table.rb "$log" > "$out/fused_table.md"
cat "$out/fused_table.md"
