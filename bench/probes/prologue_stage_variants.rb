# bench/probes/prologue_stage_variants.rb SRC_DIR OUT_DIR: how a small
# product's layer_norm prologue stages its row in shared memory, for
# bench/kernel_times --variants OUT_DIR to time beside the generated kernels.
#
#   kernel_times --dry-run --sources /tmp/src --cases qkv,fc,lm_head,softmax_v
#   ruby bench/probes/prologue_stage_variants.rb /tmp/src /tmp/variants
#   kernel_times --early-start --cases qkv,fc,lm_head,softmax_v --variants /tmp/variants
#
# Why: with early starts qkv with its layer_norm took 6.22 us in BFloat on
# an H100 against 3.98 for the plain product of its shape, and fixing the
# row's statistics (prologue_cost_variants.rb) saved only 0.1-0.3 us of
# that (2026-12-07 09:24 UTC). What is left before the product starts is
# the row's staging after the wait: a loop of one element a thread a trip
# (three trips at 768, four for softmax times V's 1024 scores), whose trip
# count the compiler does not know, so each trip's load may wait for the
# one before. The variants:
#   - batched: four elements a thread a trip, every load issued before the
#     first store (the same elements, the same order in shared memory);
#   - vector: the row in 16-byte vectors (one load for 96 threads at 768
#     in BFloat, 192 in SFloat): what a contiguous, aligned row allows.
# Both keep the answers (kernel_times checks the error word; the
# generator's version is compared on the emulator when one is taken).
#
# Measured on a lent H100 80GB HBM3, 2026-12-07 09:28-09:29 UTC
# (a5339a9's kernel_times, `KT_FLAGS=--early-start
# bench/variants_device_run.sh OUT prologue_stage`; us, generated ->
# batched, vector; early starts, two rounds, then without):
#
#   kernel, class      early starts, round 1     round 2                 without
#   qkv, SFloat        6.86 -> 6.68, 6.58        6.81 -> 6.61, 6.55      8.74 -> 8.68, 8.61
#   qkv, BFloat        6.24 -> 6.04, 5.86        6.18 -> 6.05, 5.86      8.58 -> 8.46, 8.37
#   fc, SFloat         7.93 -> 7.66, 7.62        7.85 -> 7.57, 7.49      9.54 -> 9.43, 9.37
#   fc, BFloat         7.61 -> 7.24, 7.18        7.51 -> 7.22, 7.20      8.96 -> 8.79, 8.74
#   softmax_v, SFloat  6.01 -> 5.31, 5.29        5.90 -> 5.35, 5.18      7.69 -> 7.22, 7.21
#   softmax_v, BFloat  5.31 -> 4.87, 4.69        5.27 -> 4.83, 4.66      6.64 -> 6.26, 6.19
#   lm_head, SFloat    54.77 -> 54.38, 54.14     54.72 -> 54.29, 54.09   55.69 -> 55.24, 55.28
#   lm_head, BFloat    30.95 -> 30.59, 30.33     30.94 -> 30.54, 30.25   31.94 -> 31.51, 31.36
#
# So the staging was most of what qkv's row costs beyond its statistics:
# the vectors take 0.3-0.7 us off each of a layer's three kernels with a
# row prologue (about 17 us a BFloat token of 82 kernels), the batched
# loop two thirds of that. The generator now stages rows so (vectors where
# the row allows, the batched loop otherwise).
require_relative "variant_files"

src_dir, out_dir = ARGV
abort "usage: prologue_stage_variants.rb SRC_DIR OUT_DIR" unless src_dir && out_dir

STAGE = /^( *)for \(IX r = 0; r < M; \+\+r\)\n +for \(IX j = threadIdx\.x; j < K; j \+= blockDim\.x\)\n +xs\[r \* K \+ j\] = P\.in0\[([\w.]+) \+ r \* a_r \+ j \* a_c\];\n/

def batched(indent, base, type)
  <<~CUDA.gsub(/^/, indent)
    for (IX r = 0; r < M; ++r)
      for (IX j = threadIdx.x; j < K; j += 4 * (IX)blockDim.x) {
        #{type} v[4];
        #pragma unroll
        for (int q = 0; q < 4; ++q) {
          const IX at = j + (IX)q * blockDim.x;
          if (at < K) v[q] = P.in0[#{base} + r * a_r + at * a_c];
        }
        #pragma unroll
        for (int q = 0; q < 4; ++q) {
          const IX at = j + (IX)q * blockDim.x;
          if (at < K) xs[r * K + at] = v[q];
        }
      }
  CUDA
end

# Assumes what kernel_times's inputs are: contiguous rows, 16-byte aligned.
def vector(indent, base, type)
  per = type == "float" ? 4 : 8
  <<~CUDA.gsub(/^/, indent)
    for (IX r = 0; r < M; ++r)
      for (IX v = threadIdx.x; v * #{per} < K; v += blockDim.x)
        *reinterpret_cast<uint4 *>(xs + r * K + v * #{per}) =
            *reinterpret_cast<const uint4 *>(P.in0 + #{base} + r * a_r + v * #{per});
  CUDA
end

VariantFiles.write_all(src_dir, out_dir, "{qkv,fc,lm_head,softmax_v}_*_0.cu", "row-prologue product") do |text, _stem, path|
  type = text[/(\S+) \*const xs = reinterpret_cast/, 1] or abort "#{path}: no staged row"
  match = text.match(STAGE) or abort "#{path}: the staging loop not found"
  indent, base = match[1], match[2]
  {
    "batched" => VariantFiles.edit(text, STAGE, batched(indent, base, type), "#{path}: batched"),
    "vector" => VariantFiles.edit(text, STAGE, vector(indent, base, type), "#{path}: vector"),
  }
end
