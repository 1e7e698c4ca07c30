# bench/probes/prologue_cost_variants.rb SRC_DIR OUT_DIR: what a small
# product's layer_norm prologue costs, by parts, for bench/kernel_times
# --variants OUT_DIR to time beside the generated kernels.
#
#   kernel_times --dry-run --sources /tmp/src --cases qkv,fc,lm_head,plain_768x2304,plain_3072x768
#   ruby bench/probes/prologue_cost_variants.rb /tmp/src /tmp/variants
#   kernel_times --early-start --cases qkv,fc,lm_head,plain_768x2304,plain_3072x768 --variants /tmp/variants
#
# Why: with early starts, qkv with its layer_norm and bias took 6.68 us in
# BFloat on an H100 against 3.99 for a plain product of its shape (README,
# GPT-2 decode), and fc 7.75, 24 such kernels a token. The variant
#   - no_fold: the row's mean 0 and deviation 1, so the compiler drops both
#     folds of the statistics (warp 0's two passes over the staged row, its
#     shuffles, and the barrier the other warps wait at for them), while
#     the row's staging, its normalization and the epilogue stay;
# prices the statistics; the plain product of the same shape, timed in the
# same run, prices the staging, normalization and epilogue together. Its
# answers are wrong (kernel_times checks only the error word): a price,
# not a kernel to keep. An edit whose text is not found stops the script:
# the generator changed, and the edits must follow it.
require_relative "variant_files"

src_dir, out_dir = ARGV
abort "usage: prologue_cost_variants.rb SRC_DIR OUT_DIR" unless src_dir && out_dir

EDITS = {
  no_fold: [
    ["const float mean = total / (float)n;", "const float mean = 0.0f;"],
    ["const float sd = cumo_ops::m_sqrt(squares / (float)n + eps);", "const float sd = 1.0f;"],
  ],
}.freeze

VariantFiles.write_all(src_dir, out_dir, "{qkv,fc,lm_head}_*_0.cu", "normed-product") do |text, _stem, path|
  variant = EDITS[:no_fold].reduce(text) do |t, (from, to)|
    VariantFiles.edit(t, from, to, "#{path}: no_fold")
  end
  { "no_fold" => variant }
end
