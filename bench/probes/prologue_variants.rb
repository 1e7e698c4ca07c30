# bench/probes/prologue_variants.rb SRC_DIR OUT_DIR: hand edits of the
# decode's products that compute a layer_norm prologue (qkv, fc), for
# bench/kernel_times --variants OUT_DIR to time beside the generated ones.
#
#   kernel_times --dry-run --sources /tmp/src --cases qkv,fc
#   ruby bench/probes/prologue_variants.rb /tmp/src /tmp/variants
#   kernel_times --cases qkv,fc --variants /tmp/variants
#
# Why: alone, a 1x768x2304 or 1x768x3072 product takes 4.2-6.0 us
# (bench/probes/gemv_layouts.cu) and bench/probes/prologue_layouts.cu's
# hand-written layer_norm by each whole block adds 0.8-1.1 us to it; ours
# with the generated prologue take 8.9-9.7 us in BFloat (kernel_times, H100
# and H200, 2026-12-05). In the generated prologue every block stages the
# row in shared memory, then one warp folds the row's statistics in the
# row kernel's order (so the fused result equals the unfused one bit for
# bit), then every thread normalizes its share, reading gamma and beta.
# Each variant keeps the fold order, so its results are the same bits.
# The first, `ilp_stats` (each lane loading a whole group of G elements
# from shared memory before folding them, where the loop tested the row's
# end before each element), gained 6-12% on a lent H100 (2026-12-06:
# qkv SFloat 10.16 -> 8.90 us, fc 11.17 -> 9.91; BFloat 9.09 -> 8.51 and
# 9.62 -> 9.04) and is now what the generator writes (emitRowPass's
# loadsAhead), byte for byte. What is left:
#   - early_affine: gamma's and beta's first elements of each thread
#     loaded before the wait for the kernels before, as the weight's
#     early loads are (they are leaves of the plan: no kernel writes them);
#     on that H100 it gained nothing (qkv SFloat 10.16 -> 10.31 us),
#     timed with plain edges between the launches, where a load before the
#     wait hides under nothing;
#   - early_bias: the epilogue's bias so (2026-12-06, not yet run), and
#     early_affine_bias both.
# An edit whose text is not found stops the script: the generator changed,
# and the edits must follow it.
require_relative "variant_files"

src_dir, out_dir = ARGV
abort "usage: prologue_variants.rb SRC_DIR OUT_DIR" unless src_dir && out_dir

# The normalization of the block's share of the row, one element a thread
# at a time; gamma and beta read from global memory there.
AFFINE_LOOP = /    for \(IX j = k0 \+ threadIdx\.x; j < k1; j \+= blockDim\.x\) \{\n((?:      .*\n)+?)    \}\n/
GAMMA = "P.in2[P.in2_off + j * P.in2_s[0]]"
BETA = "P.in3[P.in3_off + j * P.in3_s[0]]"
WAIT = "  cumo_k::wait_for_prior_grids();\n  // The prologue"

# A thread's first EA elements of gamma and beta, in registers before the
# wait (768 or 3072 over 256 threads: three or twelve a thread), and the
# normalization's first EA steps unrolled to read them.
def early_affine(text, path)
  early_loads = <<~CUDA.gsub(/^/, "  ")
    constexpr int EA = 4;
    float early_g[EA], early_b[EA];
    #pragma unroll
    for (int q = 0; q < EA; ++q) {
      const IX j = k0 + threadIdx.x + (IX)q * blockDim.x;
      early_g[q] = j < k1 ? (float)(#{GAMMA}) : 0.0f;
      early_b[q] = j < k1 ? (float)(#{BETA}) : 0.0f;
    }
  CUDA
  t = VariantFiles.edit(text, WAIT, early_loads + WAIT, path)
  body = t[AFFINE_LOOP, 1] or abort "#{path}: the prologue's normalization not found"
  [GAMMA, BETA].each { |read| abort "#{path}: #{read} not found" unless body.include?(read) }
  early = body.sub(GAMMA, "early_g[q]").sub(BETA, "early_b[q]").gsub(/^/, "  ")
  t.sub(AFFINE_LOOP) do
    "    #pragma unroll\n    for (int q = 0; q < EA; ++q) {\n" \
      "      const IX j = k0 + threadIdx.x + (IX)q * blockDim.x;\n      if (j < k1) {\n#{early}      }\n    }\n" \
      "    for (IX j = k0 + threadIdx.x + (IX)EA * blockDim.x; j < k1; j += blockDim.x) {\n#{body}    }\n"
  end
end

# The epilogue's bias (the first load of its epilogue: a weight, which no
# kernel writes) read before the wait for the kernels before, by the
# threads that store a column of a whole product (no split of k), for one
# row (the decode's batch of 1); the other paths read it where they did.
BIAS = /^(\s+)const (\S+) v1 = P\.ld0\[\(\(I\)P\.ld0_off \+ idx\)\];\n/
def early_bias(text, path)
  m = text.match(BIAS) or abort "#{path}: the epilogue's bias load not found"
  early = <<~CUDA.gsub(/^/, "  ")
    #{m[2]} early_bias = P.ld0[(I)P.ld0_off];
    if (threadIdx.x < width && tile * width + (IX)threadIdx.x < N)
      early_bias = P.ld0[(I)P.ld0_off + tile * width + (IX)threadIdx.x];
  CUDA
  t = VariantFiles.edit(text, WAIT, early + WAIT, path)
  t.sub(BIAS) { "#{m[1]}const #{m[2]} v1 = M == 1 ? early_bias : P.ld0[((I)P.ld0_off + idx)];\n" }
end

# Meant to be timed with kernel_times --early-start as well as without
# (KT_FLAGS=--early-start bench/variants_device_run.sh OUT prologue): a
# load before the wait can only hide under the kernel before when the
# launches are chained so.
VariantFiles.write_all(src_dir, out_dir, "{qkv,fc}_*_0.cu", "prologue") do |text, _stem, path|
  { "early_affine" => early_affine(text, path),
    "early_bias" => early_bias(text, path),
    "early_affine_bias" => early_bias(early_affine(text, path), path) }
end
