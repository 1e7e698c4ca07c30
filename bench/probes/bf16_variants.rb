# bench/probes/bf16_variants.rb SRC_DIR OUT_DIR: the BFloat written-out row
# programs with their bfloat16 add, sub and mul (`cumo_ops::wadd(bfloat16,
# bfloat16)` ...) spelled out two ways, for bench/kernel_times --variants
# OUT_DIR to time beside the generated ones:
#   - "hwbf16": sm_90's own instruction (`add.rn.bf16` ...), what
#     ops/portable_ops.h has used on the device since it was measured here;
#   - "floatbf16": widened to float, the float op, rounded back (with its
#     NaN test), what it used before.
# So one build times both against each other, whichever the header has.
#
#   C=written_layer_norm_32768x1024,written_layer_norm_4096x768,written_layer_norm_4096x4096,written_rms_norm_32768x1024,written_softmax_32768x1024,written_softmax_4096x768
#   kernel_times --dry-run --sources /tmp/src --cases $C
#   ruby bench/probes/bf16_variants.rb /tmp/src /tmp/variants
#   kernel_times --cases $C --variants /tmp/variants
#
# Why: those programs are bound by their instructions (ncu, H100), and each
# such op on the float path is a widening, the op and a rounding with its
# NaN fix-up (about six instructions) where the hardware's is one. The two
# agree bit for bit: a float holds the exact bfloat16 sum, difference or
# product rounded once, 24 >= 2 * 8 + 2 bits make that double rounding
# innocuous, and both answer the canonical NaN 0x7fff (tests/
# device_arithmetic_test.cpp checks every pair of bit patterns on the GPU).
# ptxas (sm_90, 2026-12-06), instructions of the whole kernel, float path
# -> hardware: layer_norm 32768x1024 5296 -> 3888, 4096x4096 2472 -> 1824,
# rms_norm 3848 -> 3176, softmax 4088 -> 3888. Timed on a lent H100
# (2026-12-06 20:10 UTC), us, floatbf16 -> hwbf16: layer_norm 32768x1024
# 101.65 -> 73.21, rms_norm 68.64 -> 54.77, softmax 101.02 -> 91.61.
require_relative "variant_files"

src_dir, out_dir = ARGV
abort "usage: bf16_variants.rb SRC_DIR OUT_DIR" unless src_dir && out_dir

# The three ops in namespace `ns`, each's statements on a and b what `body`
# gives for its PTX mnemonic and C operator.
def ops(ns, what, body)
  fns = { "wadd" => ["add", "+"], "wsub" => ["sub", "-"], "wmul" => ["mul", "*"] }.map do |name, (mnemonic, op)|
    <<~CUDA
      __device__ __forceinline__ cumo_ops::bfloat16 #{name}(cumo_ops::bfloat16 a, cumo_ops::bfloat16 b) {
        #{body.call(mnemonic, op)}
      }
    CUDA
  end
  "\n// Variant: #{what} (bench/probes/bf16_variants.rb).\nnamespace #{ns} {\n#{fns.join}} // namespace #{ns}\n"
end

HW_OPS = ops("hwbf", "sm_90's bfloat16 add, sub and mul", lambda do |mnemonic, _op|
  "unsigned short r;\n  asm(\"#{mnemonic}.rn.bf16 %0, %1, %2;\" : \"=h\"(r) : \"h\"(a.bits), \"h\"(b.bits));\n" \
    "  return cumo_ops::bfloat16::of_bits(r);"
end)
FLOAT_OPS = ops("floatbf", "bfloat16 add, sub and mul through float", lambda do |_mnemonic, op|
  "return cumo_ops::bfloat16((float)a #{op} (float)b);"
end)

# A bfloat16 value computed by one of the three ops: its operands are
# bfloat16 too (the only overload that answers one).
OP = /(const cumo_ops::bfloat16 v\d+ = )cumo_ops::w(add|sub|mul)\(/
INCLUDE = "#include \"cumo_portable_ops.h\"\n"

VariantFiles.write_all(src_dir, out_dir, "written_*_BFloat_0.cu", "BFloat written-out") do |text, _stem, path|
  abort "#{path}: no bfloat16 add, sub or mul" unless text.match?(OP)
  { "hwbf16" => ["hwbf", HW_OPS], "floatbf16" => ["floatbf", FLOAT_OPS] }.to_h do |label, (ns, defs)|
    t = text.gsub(OP) { "#{Regexp.last_match(1)}#{ns}::w#{Regexp.last_match(2)}(" }
    [label, VariantFiles.edit(t, INCLUDE, INCLUDE + defs, path)]
  end
end
