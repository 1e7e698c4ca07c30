#!/usr/bin/env bash
# bench/probes/check_variants.sh KERNEL_TIMES RUBY SCRIPT CASES: the cpu
# suite's check that a variants script (bench/probes/*_variants.rb) still
# finds its edits in the generated kernels of CASES
# (kernel_times --cases) and that every variant compiles (NVRTC, no GPU): a
# generator change that moves the edited lines fails here, so the variants
# are mended with it rather than found broken on a GPU.
set -euo pipefail
kt=$1
ruby=$2
script=$3
cases=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The printed lines (each kernel's launch) beside the sources, for the
# scripts that vary the launch (gemv_variants.rb).
mkdir -p "$dir/src"
"$kt" --dry-run --sources "$dir/src" --cases "$cases" > "$dir/src/dry_run.jsonl"
"$ruby" "$script" "$dir/src" "$dir/variants"
compiled=$("$kt" --dry-run --cases "$cases" --variants "$dir/variants" | grep -c '"compiled":true')
made=$(ls "$dir/variants" | wc -l)
echo "$compiled of $made variants compiled"
[ "$compiled" -eq "$made" ]
