#!/usr/bin/env bash
# bench/variants_device_run.sh [OUT_DIR] [SET...]: every variant set of
# bench/probes/variant_sets.txt (or the sets named) timed on the GPU, each
# kernel beside its hand-edited variants, with bench/kernel_times: the
# sources come from a dry run on the same machine, so the variants edit
# exactly what this build generates. Then a table of each variant against
# its generated kernel.
#
#   . .device/on-device.sh && export CUMO_PREBUILT=1 CUMO_BUILD_DIR=tmp/prebuilt &&
#     bench/variants_device_run.sh "$OUT" [gemv prologue]
#
# KT_FLAGS adds flags to the timed runs (KT_FLAGS=--early-start: the
# launches chained as a plan's kernels are, early starts and all).
#
# Writes OUT_DIR/variants.jsonl (every line) and OUT_DIR/variants_table.md.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-bench/out}
shift || true
mkdir -p "$out"
log="$out/variants.jsonl"
: > "$log"
kt=${CUMO_BUILD_DIR:-build}/bench/kernel_times
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
grep -v '^#' bench/probes/variant_sets.txt | while read -r name cases; do
  [ -n "$name" ] || continue
  if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then
    continue
  fi
  mkdir -p "$work/$name/src"
  "$kt" --dry-run --sources "$work/$name/src" --cases "$cases" > "$work/$name/src/dry_run.jsonl" &&
    ruby "bench/probes/${name}_variants.rb" "$work/$name/src" "$work/$name/variants" &&
    "$kt" ${KT_FLAGS:-} --cases "$cases" --variants "$work/$name/variants" | grep '^{' | tee -a "$log"
done
ruby bench/probes/variants_table.rb "$log" > "$out/variants_table.md"
cat "$out/variants_table.md"
