#!/usr/bin/env bash
# bench/matmul_device_run.sh [OUT_DIR]: the matrix products of the README
# (issue 7), ours and torch.matmul's in one run on the GPU machine; then
# bench/matmul_table.rb turns the JSON lines into the README's table.
#
#   . .device/on-device.sh && bench/matmul_device_run.sh "$OUT"
#
# Writes OUT_DIR/matmul.jsonl (every line) and OUT_DIR/matmul_table.md.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-bench/out}
mkdir -p "$out"
log="$out/matmul.jsonl"
: > "$log"
export PYTHONUNBUFFERED=1 CUMO_PROFILE=1
run() { "$@" 2>&1 | grep '^{' | tee -a "$log"; }
run bin/run bench/matmul.rb
run python3 bench/peers/matmul.py
bin/run bench/matmul_table.rb "$log" > "$out/matmul_table.md"
cat "$out/matmul_table.md"
