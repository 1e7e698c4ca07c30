# bench/probes/softmax_math_variants.rb SRC_DIR OUT_DIR: what a softmax
# row's arithmetic costs, for bench/kernel_times --variants OUT_DIR to time
# beside the generated kernels.
#
#   kernel_times --dry-run --sources /tmp/src --cases softmax_4096x4096,softmax_32768x1024
#   ruby bench/probes/softmax_math_variants.rb /tmp/src /tmp/variants
#   kernel_times --cases softmax_4096x4096,softmax_32768x1024 --variants /tmp/variants
#
# Why: BFloat softmax at 4096 x 4096 took 31.8 us on an H100 against a
# copy's 24.5 (77%), and ncu (2026-12-07 10:06 UTC, the kernel alone) put
# it at 59% of the SMs' issue rate and 49% of DRAM's: neither saturated,
# a warp waiting 13 cycles an instruction at 48% occupancy (55 registers,
# four blocks of 256 an SM: 528 blocks looping over the rows). Each
# element costs an accurate expf and an exactly rounded division (a
# reciprocal and two fixups, with range checks). The variants price them
# and the occupancy (their answers differ from the generated kernel's in
# the last bits: prices, not kernels to keep as they are):
#   - fast_exp: exp(x) as ex2.approx of x * log2(e) (two instructions;
#     up to tens of ulps off where |x| is large);
#   - recip: a multiplication by 1 / total for each element's division
#     (what the generator writes for a sixteen-bit result since f1bf42e's
#     successor, so only the SFloat kernels have it);
#   - fast_both: both;
#   - blocks5, blocks6 (a block a row): launch bounds for five or six
#     blocks of 256 an SM (ptxas fits the registers or spills) and as many
#     blocks (660, 792), each looping over fewer rows.
# An edit whose text is not found stops the script: the generator changed.
#
# Measured on a lent H100 80GB HBM3, 2026-12-07 10:10 UTC (f1bf42e's
# kernels, `bench/variants_device_run.sh OUT softmax_math`, two rounds
# that agreed within 0.15 us; us, round 1):
#
#   case, class              generated  fast_exp  recip   fast_both  blocks5  blocks6
#   4096 x 4096, BFloat      31.81      30.02     28.09   27.22      29.30    41.07
#   4096 x 4096, SFloat      48.55      47.57     47.46   47.09      54.04    56.32
#   32768 x 1024, BFloat     50.37      51.40     49.36   49.00      -        -
#   32768 x 1024, SFloat     92.40      92.41     91.83   91.92      -        -
#
# So the exact division is most of what a BFloat row of 4096 costs beyond
# a copy (24.5 us): the generator now multiplies a sixteen-bit result by
# the row's reciprocal (fusion/cuda_row_codegen.cpp, rowProgram), where
# the rounding to 8 or 11 bits hides the difference but in rare ties; a
# float result keeps the division (2% at most to gain there). ex2.approx
# is not taken (its error grows with |x|); five blocks an SM gain 8% in
# BFloat and lose 11% in SFloat, six spill.
require_relative "variant_files"

src_dir, out_dir = ARGV
abort "usage: softmax_math_variants.rb SRC_DIR OUT_DIR" unless src_dir && out_dir

FAST_EXP = <<~CUDA
  // exp(x) as ex2.approx of x * log2(e), flushing denormals.
  __device__ __forceinline__ float cumo_fast_exp(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.4426950408889634f));
    return y;
  }

CUDA

VariantFiles.write_all(src_dir, out_dir, "softmax_*_0.cu", "softmax") do |text, _stem, path|
  edit = ->(t, from, to) { VariantFiles.edit(t, from, to, path) }
  fast = lambda do |t|
    t = edit.(t, 'extern "C" __global__', FAST_EXP + 'extern "C" __global__')
    t.gsub("cumo_ops::m_exp(x - m)", "cumo_fast_exp(x - m)")
  end
  recip = lambda do |t|
    t = edit.(t, /^( *)const cumo_ops::divisor<float> total_q\(total\);\n/,
              "\\0\\1const float recip_total = 1.0f / total;\n")
    t.gsub(/cumo_ops::quotient\(([^;]*), total_q\);/, "(\\1) * recip_total;")
  end
  variants = { "fast_exp" => fast.(text) }
  # The generator multiplies a sixteen-bit row by its reciprocal already.
  if text.include?("total_q(total)")
    variants["recip"] = recip.(text)
    variants["fast_both"] = recip.(fast.(text))
  end
  if text.include?("__launch_bounds__(1024)")
    { "blocks5" => 5, "blocks6" => 6 }.each do |label, per_sm|
      variants[label] = "// kernel_times grid: #{132 * per_sm}\n" +
                        edit.(text, "__launch_bounds__(1024)", "__launch_bounds__(256, #{per_sm})")
    end
  end
  variants
end
