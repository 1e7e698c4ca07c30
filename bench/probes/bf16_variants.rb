# bench/probes/bf16_variants.rb SRC_DIR OUT_DIR: the BFloat written-out row
# programs with sm_90's own bfloat16 add, sub and mul (`add.rn.bf16` ...)
# wherever the generated kernel widens two bfloat16 values, adds,
# subtracts or multiplies them in float and rounds back
# (`cumo_ops::wadd(bfloat16, bfloat16)` ...), for bench/kernel_times
# --variants OUT_DIR to time beside the generated ones (variant "hwbf16").
#
#   C=written_layer_norm_32768x1024,written_layer_norm_4096x768,written_layer_norm_4096x4096,written_rms_norm_32768x1024,written_softmax_32768x1024,written_softmax_4096x768
#   kernel_times --dry-run --sources /tmp/src --cases $C
#   ruby bench/probes/bf16_variants.rb /tmp/src /tmp/variants
#   kernel_times --cases $C --variants /tmp/variants
#
# Why: those programs are bound by their instructions (ncu, H100), and each
# such op is a widening, the op and a rounding with its NaN fix-up (about
# six instructions) where the hardware's is one. The two agree bit for
# bit if the hardware rounds correctly and answers the canonical NaN (as
# float arithmetic on the GPU does, whose NaN our rounding maps to 0x7fff):
# a float holds the exact bfloat16 sum, difference or product rounded
# once, and 24 >= 2 * 8 + 2 bits make that double rounding innocuous.
# bench/probes/bf16_arith.cu checks it for every pair of bit patterns on a
# GPU; not yet run. ptxas (sm_90, 2026-12-06), instructions of the whole
# kernel: layer_norm 32768x1024 5296 -> 3888, 4096x4096 2472 -> 1824,
# rms_norm 3848 -> 3176, softmax 4088 -> 3888. Not yet timed.
require_relative "variant_files"

src_dir, out_dir = ARGV
abort "usage: bf16_variants.rb SRC_DIR OUT_DIR" unless src_dir && out_dir

HW_OPS = <<~CUDA

  // Variant: sm_90's bfloat16 add, sub and mul (bench/probes/bf16_variants.rb).
  namespace hwbf {
  __device__ __forceinline__ cumo_ops::bfloat16 wadd(cumo_ops::bfloat16 a, cumo_ops::bfloat16 b) {
    unsigned short r;
    asm("add.rn.bf16 %0, %1, %2;" : "=h"(r) : "h"(a.bits), "h"(b.bits));
    return cumo_ops::bfloat16::of_bits(r);
  }
  __device__ __forceinline__ cumo_ops::bfloat16 wsub(cumo_ops::bfloat16 a, cumo_ops::bfloat16 b) {
    unsigned short r;
    asm("sub.rn.bf16 %0, %1, %2;" : "=h"(r) : "h"(a.bits), "h"(b.bits));
    return cumo_ops::bfloat16::of_bits(r);
  }
  __device__ __forceinline__ cumo_ops::bfloat16 wmul(cumo_ops::bfloat16 a, cumo_ops::bfloat16 b) {
    unsigned short r;
    asm("mul.rn.bf16 %0, %1, %2;" : "=h"(r) : "h"(a.bits), "h"(b.bits));
    return cumo_ops::bfloat16::of_bits(r);
  }
  } // namespace hwbf
CUDA

# A bfloat16 value computed by one of the three ops: its operands are
# bfloat16 too (the only overload that answers one).
OP = /(const cumo_ops::bfloat16 v\d+ = )cumo_ops::w(add|sub|mul)\(/

VariantFiles.write_all(src_dir, out_dir, "written_*_BFloat_0.cu", "BFloat written-out") do |text, _stem, path|
  abort "#{path}: no bfloat16 add, sub or mul" unless text.match?(OP)
  t = text.gsub(OP) { "#{Regexp.last_match(1)}hwbf::w#{Regexp.last_match(2)}(" }
  { "hwbf16" => VariantFiles.edit(t, "#include \"cumo_portable_ops.h\"\n",
                                  "#include \"cumo_portable_ops.h\"\n#{HW_OPS}", path) }
end
