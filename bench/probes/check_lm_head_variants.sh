#!/usr/bin/env bash
# bench/probes/check_lm_head_variants.sh KERNEL_TIMES [RUBY]: the cpu
# suite's check that bench/probes/lm_head_variants.rb still finds its edits
# in the generated LM-head kernels and that every variant compiles (NVRTC,
# no GPU): a generator change that moves the edited lines fails here, so
# the variants are mended with it rather than found broken on a GPU.
set -euo pipefail
kt=$1
ruby=${2:-ruby}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$kt" --dry-run --sources "$dir/src" --cases lm_head,plain_lm_head,lm_head_b8,plain_lm_head_b8 > /dev/null
"$ruby" "$here/lm_head_variants.rb" "$dir/src" "$dir/variants"
compiled=$("$kt" --dry-run --cases lm_head,plain_lm_head,lm_head_b8,plain_lm_head_b8 --variants "$dir/variants" |
           grep -c '"compiled":true')
made=$(ls "$dir/variants" | wc -l)
echo "$compiled of $made variants compiled"
[ "$compiled" -eq "$made" ]
