# bench/probes/row_variants.rb SRC_DIR OUT_DIR: hand edits of the generated
# row-op kernels at issue 5's large shapes, for bench/kernel_times
# --variants OUT_DIR to time beside the generated ones.
#
#   C=layer_norm_32768x1024,rms_norm_32768x1024,softmax_32768x1024,layer_norm_4096x4096,softmax_4096x4096,quantize_32768x1024,quantize_4096x4096
#   kernel_times --dry-run --sources /tmp/src --cases $C
#   ruby bench/probes/row_variants.rb /tmp/src /tmp/variants
#   kernel_times --cases $C --variants /tmp/variants
#
# Why: the BFloat rows of 32768 x 1024 reached 58-71% of a copy's
# bandwidth (H100, 2026-12-05). The first round of these variants found
# that a warp-a-row kernel held to 64 registers (four blocks an SM) gains
# 6-10% in BFloat, and that softmax's exponentials kept in the registers
# gain in that layout but lose badly in SFloat's block-a-row 4096 x 4096
# (87.0 against 51.2 us); the generator follows both. The variants now:
#   - blocks3 (a warp a row): __launch_bounds__(256), the registers ptxas
#     likes (79), three blocks an SM;
#   - exp_twice (softmax, a warp a row): the exponential computed again
#     for the result rather than kept in the registers;
#   - grid_half: half the blocks, each warp or block taking two rows in
#     turn;
#   - element_stores (quantize_symmetric, a row program): its Int8 rows
#     written an element at a time, without the vector path fb3bf7a added
#     beside it. That path took the kernel from 72 to 108 registers (ptxas,
#     sm_90) and SFloat 4096 x 4096 from 72.1 to 85.6 us (H100, 2026-12-05)
#     while the cast to Int8 still went through doubles; with the one-cvt
#     cast (10324a7) the kernel takes 56-60 registers and 42.0 us.
# An edit whose text is not found stops the script: the generator changed,
# and the edits must follow it.
require_relative "variant_files"

src_dir, out_dir = ARGV
abort "usage: row_variants.rb SRC_DIR OUT_DIR" unless src_dir && out_dir

GLOB = "{layer_norm,rms_norm,softmax,quantize}_*_0.cu"
VariantFiles.write_all(src_dir, out_dir, GLOB, "row-op") do |text, stem, path|
  edit = ->(t, from, to) { VariantFiles.edit(t, from, to, path) }
  variants = {}
  warp = text.include?("__launch_bounds__(256, 4)")
  variants["blocks3"] = edit.(text, "__launch_bounds__(256, 4)", "__launch_bounds__(256)") if warp
  if warp && stem.start_with?("softmax")
    t = edit.(text, "          v[k * G + e] = t;\n", "")
    t = edit.(t, "const float t = v[k * G + e];", "const float x = v[k * G + e];")
    variants["exp_twice"] = edit.(t, "cumo_ops::quotient(t, total_q)",
                                  "cumo_ops::quotient(cumo_ops::m_exp(x - m), total_q)")
  end
  if stem.start_with?("quantize")
    variants["element_stores"] = edit.(text, "if (n % G == 0 && (I)P.st1_off % G == 0) {",
                                       "if (false) {")
  end
  variants["grid_half"] = "// kernel_times grid: 2048\n#{text}" unless text.match?(/^\/\/ kernel_times grid:/)
  variants
end
