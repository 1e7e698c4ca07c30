#!/usr/bin/env bash
# bench/decode_device_run.sh [OUT_DIR]: GPT-2 124M greedy decoding (issue 8),
# ours and the PyTorch peers' in one run on the GPU machine, on the very same
# random weights; then bench/decode_table.rb turns the JSON lines into the
# README's table.
#
#   . .device/on-device.sh && bench/decode_device_run.sh "$OUT"
#
# 1. bench/decode_bench.rb: fp32 and bf16 at batch 1 and 8, 128 new tokens,
#    writing its random weights (F32 safetensors, 500 MB) outside OUT_DIR;
# 2. the same with CUMO_PROFILE=1 (device time per token; tagged "profiled"),
#    and at batch 1 with CUMO_EARLY_START=0 (tagged "no early starts");
# 3. bench/peers/decode_peers.py --weights on that file: torch eager, torch
#    with one CUDA graph per token, Hugging Face generate (if importable);
# 4. for a look inside: the lines that sync (CUMO_SHOW_WARNING) and the
#    kernel table of CUMO_PROFILE=kernels for bf16 at batch 1, 16 tokens;
# 5. bench/kernel_times: the step's generated kernels each timed alone.
# Writes OUT_DIR/decode.jsonl (every JSON line), OUT_DIR/decode_full.log, OUT_DIR/decode_table.md,
# OUT_DIR/decode_sync_lines.txt, OUT_DIR/decode_kernels.txt and OUT_DIR/kernel_times.jsonl.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-bench/out}
mkdir -p "$out"
log="$out/decode.jsonl"
: > "$log"
weights=$(mktemp -d)/gpt2_random.safetensors
export PYTHONUNBUFFERED=1
# Every line also goes to decode_full.log: a run that prints no JSON says why there.
: > "$out/decode_full.log"
run() { "$@" 2>&1 | tee -a "$out/decode_full.log" | grep '^{' | tee -a "$log"; }

run bin/run bench/decode_bench.rb --write-weights "$weights"
CUMO_PROFILE=1 run bin/run bench/decode_bench.rb --weights "$weights" --tag profiled
CUMO_EARLY_START=0 run bin/run bench/decode_bench.rb --weights "$weights" --batches 1 \
  --tag "no early starts"
run python3 bench/peers/decode_peers.py --weights "$weights"
CUMO_SHOW_WARNING=ON CUMO_SHOW_WARNING_ONCE=ON bin/run examples/gpt2_decode.rb --weights "$weights" \
  --dtype BFloat --tokens 16 > "$out/decode_sync_lines.txt" 2>&1
CUMO_PROFILE=kernels bin/run examples/gpt2_decode.rb --weights "$weights" --dtype BFloat \
  --tokens 16 > "$out/decode_kernels.txt" 2>&1
rm -rf "$(dirname "$weights")"
"${CUMO_BUILD_DIR:-build}/bench/kernel_times" > "$out/kernel_times.jsonl" 2>&1
bin/run bench/decode_table.rb "$log" > "$out/decode_table.md"
cat "$out/decode_table.md"
