# bench/probes/row_divisor_variants.rb SRC_DIR OUT_DIR: the written-out row
# programs (softmax, layer_norm and rms_norm spelled out of operators) with
# their division by the row's divisor put back as the compiler's division
# of each element, for bench/kernel_times --variants OUT_DIR to time beside
# the generated kernels.
#
#   C=written_layer_norm_32768x1024,written_rms_norm_32768x1024,written_softmax_32768x1024,...
#   kernel_times --dry-run --sources /tmp/src --cases $C
#   ruby bench/probes/row_divisor_variants.rb /tmp/src /tmp/variants
#   kernel_times --cases $C --variants /tmp/variants
#
# Why: since 2026-12-08 a row program divides a varying float by a value
# the same along the row (softmax's sum, the deviation, the root mean
# square) through cumo_ops::divisor<float>, refined once a row, and
# cumo_ops::quotient an element (the division's bits in about three
# instructions; the compiler's division takes about ten and its reciprocal
# is inline assembly it does not hoist). The explicit row ops took this
# path before and are 1.05-1.8x faster than the written-out forms
# (README, issue 5). The variant:
#   - old_div: `cumo_ops::div(x, d)` for every such quotient, the kernel as
#     generated before.
# An edit whose text is not found stops the script: the generator changed.
require_relative "variant_files"

src_dir, out_dir = ARGV
abort "usage: row_divisor_variants.rb SRC_DIR OUT_DIR" unless src_dir && out_dir

# The single-precision quotient, and a sixteen-bit class's (widened, divided
# in single precision, rounded back: what cumo_ops::div of that class does).
SINGLE = /cumo_ops::quotient\((\w+), (\w+)_q\)/
NARROW = /cumo_ops::(bfloat16|half)\(cumo_ops::quotient\(\(float\)(\w+), (\w+)_q\)\)/

VariantFiles.write_all(src_dir, out_dir, "written_*_0.cu", "written-out row") do |text, _stem, path|
  abort "#{path}: no quotient by a row's divisor" unless text.match?(SINGLE) || text.match?(NARROW)
  old = text.gsub(NARROW, 'cumo_ops::div(\2, \3)').gsub(SINGLE, 'cumo_ops::div(\1, \2)')
  # The divisors, now unused, go too (the compiler would drop them anyway).
  old = old.gsub(/^ *const cumo_ops::divisor<float> \w+_q\(.*\);\n/, "")
  { "old_div" => old }
end
