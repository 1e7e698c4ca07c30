# bench/probes/quantize_math_variants.rb SRC_DIR OUT_DIR: quantize_symmetric's
# element arithmetic as it was before 2026-12-07 (evening), piece by piece,
# for bench/kernel_times --variants OUT_DIR to time beside the generated
# kernels.
#
#   kernel_times --dry-run --sources /tmp/src --cases quantize_32768x1024,quantize_4096x4096
#   ruby bench/probes/quantize_math_variants.rb /tmp/src /tmp/variants
#   kernel_times --cases quantize_32768x1024,quantize_4096x4096 --variants /tmp/variants
#
# Why: quantize_symmetric ran at 46-72% of a copy's bandwidth (H100,
# 2026-12-06: BFloat 32768 x 1024 80.9 us, about as long as SFloat's 82.5
# for half the bytes), so its instructions, not its bytes, were the
# bound. Each element took an exactly rounded division (a reciprocal
# estimate and its refinement, at the multi-function unit's quarter rate),
# round() (a conversion instruction, a quarter rate too) and a conversion
# to a 64-bit integer (an eighth). The generator now refines the scale's
# reciprocal once a row (cumo_ops::divisor, the division's bits), rounds
# in additions (round_half_away_small) and converts by the float's bits
# (quantized_to_int). The variants put the old pieces back:
#   - old_cast: the conversion through float_to_int (64 bits);
#   - old_div: the division for each element (the new rounding);
#   - old_round: round() (the new quotient);
#   - old_math: all three, the kernel as generated before;
#   - warp_row (BFloat rows of 1024, a block of 64 lanes as generated): a
#     warp a row, four groups of 8 a lane.
# An edit whose text is not found stops the script: the generator changed.
require_relative "variant_files"

src_dir, out_dir = ARGV
abort "usage: quantize_math_variants.rb SRC_DIR OUT_DIR" unless src_dir && out_dir

OLD_ELEMENT = <<~CUDA
  // quantize_symmetric's element as generated before: the division and
  // round() (or the new rounding), held to 127.
  __device__ __forceinline__ float cumo_divided_quantize(float x, float scale, bool old_round) {
    if (!(scale > 0.f) || !cumo_ops::m_isfinite(scale))
      return 0.f;
    float q = x / scale;
    if (old_round) {
      q = cumo_ops::m_round(q);
    } else {
      q = q > 128.f ? 128.f : (q < -128.f ? -128.f : q);
      q = cumo_ops::round_half_away_small(q);
    }
    return q > 127.f ? 127.f : (q < -127.f ? -127.f : q);
  }
  // The new quotient with round().
  __device__ __forceinline__ float cumo_rounded_quantize(float x, float scale,
                                                          const cumo_ops::divisor<float> &by) {
    if (!(scale > 0.f) || !cumo_ops::m_isfinite(scale))
      return 0.f;
    float q = cumo_ops::m_round(cumo_ops::quotient(x, by));
    return q > 127.f ? 127.f : (q < -127.f ? -127.f : q);
  }

CUDA

BY = /cumo_ops::quantize_symmetric_by\((\w+), (\w+), (\w+)\)/
CAST = /\(signed char\)cumo_ops::quantized_to_int\((\w+)\)/

VariantFiles.write_all(src_dir, out_dir, "quantize_*_0.cu", "quantize") do |text, _stem, path|
  edit = ->(t, from, to) { VariantFiles.edit(t, from, to, path) }
  # Every occurrence (the vector path's and the element path's).
  edit_all = lambda do |t, from, to|
    abort "#{path}: #{from.inspect} not found" unless t.match?(from)
    t.gsub(from, to)
  end
  prelude = ->(t) { edit.(t, "struct CumoParams {", OLD_ELEMENT + "struct CumoParams {") }
  old_cast = ->(t) { edit_all.(t, CAST, '(signed char)cumo_ops::float_to_int((float)(\1))') }
  old_div = ->(t, round) { edit_all.(t, BY, "cumo_divided_quantize(\\1, \\2, #{round})") }
  old_round = ->(t) { edit_all.(t, BY, 'cumo_rounded_quantize(\1, \2, \3)') }
  variants = {
    "old_cast" => old_cast.(text),
    "old_div" => prelude.(old_div.(text, false)),
    "old_round" => prelude.(old_round.(text)),
    "old_math" => prelude.(old_cast.(old_div.(text, true)))
  }
  # A BFloat row of 1024 takes a block of 64 lanes, two groups each (the
  # row program holds 16 elements a lane): as a warp of four groups a lane.
  if text.include?("constexpr int CACHED = 2;") && text.include?("__launch_bounds__(64)")
    variants["warp_row"] = "// kernel_times block: 32\n" +
                           edit.(text, "constexpr int CACHED = 2;", "constexpr int CACHED = 4;")
  end
  variants
end
