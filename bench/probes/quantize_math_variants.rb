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
# for half the bytes), so its instructions were taken for the bound. Each
# element took an exactly rounded division, round() and a conversion to a
# 64-bit integer. Since 2026-12-07 the generator refines the scale's
# reciprocal once a row (cumo_ops::divisor, the division's bits) and
# converts by the float's bits (quantized_to_int); rounding in additions
# was tried as well and was slower (H100, 2026-12-08: 85.6 us against 79.7
# with round()), and the other two pieces made no difference there
# (within 1%): the kernel is not bound by its instructions. The variants
# put the old pieces back:
#   - old_cast: the conversion through float_to_int (64 bits);
#   - old_div: the division for each element;
#   - old_math: both, the kernel as generated before 2026-12-07;
#   - warp_row (BFloat rows of 1024, a block of 64 lanes as generated): a
#     warp a row, four groups of 8 a lane.
# An edit whose text is not found stops the script: the generator changed.
require_relative "variant_files"

src_dir, out_dir = ARGV
abort "usage: quantize_math_variants.rb SRC_DIR OUT_DIR" unless src_dir && out_dir

OLD_ELEMENT = <<~CUDA
  // quantize_symmetric's element with the division for each element.
  __device__ __forceinline__ float cumo_divided_quantize(float x, float scale) {
    if (!(scale > 0.f) || !cumo_ops::m_isfinite(scale))
      return 0.f;
    const float q = cumo_ops::m_round(x / scale);
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
  old_div = ->(t) { prelude.(edit_all.(t, BY, 'cumo_divided_quantize(\1, \2)')) }
  variants = {
    "old_cast" => old_cast.(text),
    "old_div" => old_div.(text),
    "old_math" => old_cast.(old_div.(text))
  }
  # A BFloat row of 1024 takes a block of 64 lanes, two groups each (the
  # row program holds 16 elements a lane): as a warp of four groups a lane.
  if text.include?("constexpr int CACHED = 2;") && text.include?("__launch_bounds__(64)")
    variants["warp_row"] = "// kernel_times block: 32\n" +
                           edit.(text, "constexpr int CACHED = 2;", "constexpr int CACHED = 4;")
  end
  variants
end
