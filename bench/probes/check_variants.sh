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
compiled=$("$kt" --dry-run --cases "$cases" --variants "$dir/variants" --cubins "$dir/cubins" |
  grep -c '"compiled":true')
made=$(ls "$dir/variants" | wc -l)
echo "$compiled of $made variants compiled"
[ "$compiled" -eq "$made" ]
# --cubins wrote each kernel's cubin and each variant's, ELF files all
# (what bench/probes/sass_counts.rb reads).
kernels=$(grep -c '"dry_run":true' "$dir/src/dry_run.jsonl")
cubins=0
for f in "$dir"/cubins/*.cubin; do
  [ "$(head -c4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || { echo "$f: not an ELF file"; exit 1; }
  cubins=$((cubins + 1))
done
echo "$cubins cubins for $kernels kernels and $made variants"
[ "$cubins" -eq "$((kernels + made))" ]
