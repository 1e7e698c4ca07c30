# bench/probes/row_ahead_variants.rb SRC_DIR OUT_DIR: the row programs that
# read each next row ahead (fusion/cuda_kernel_shape.h,
# rowProgramReadsAhead: quantize_symmetric and the written-out row ops of
# sixteen-bit rows held a block a row; one wave of 768 threads an SM, launch
# bounds to match) laid out otherwise, for bench/kernel_times --variants
# OUT_DIR to time beside the generated kernels:
#   - no_ahead: each row read when its turn comes, by the grid and bounds
#     of before (a block a row up to 32 an SM: 4224 blocks on 132 SMs; no
#     minimum of blocks), the kernel as generated before 2026-12-08;
#   - ahead_full_grid: read ahead, by that grid and those bounds;
#   - ahead_1024: read ahead by one wave of 1024 threads an SM, bounds to
#     match (64 registers: written-out layer_norm and softmax spill 56 and
#     24 bytes a thread then), as the row ops' own kernels launch.
#
#   C=quantize_32768x1024,written_layer_norm_32768x1024,...
#   kernel_times --dry-run --sources /tmp/src --cases $C
#   ruby bench/probes/row_ahead_variants.rb /tmp/src /tmp/variants
#   kernel_times --cases $C --variants /tmp/variants
#
# The grids assume 132 SMs (an H100's and an H200's).
# An edit whose text is not found stops the script: the generator changed.
require_relative "variant_files"

src_dir, out_dir = ARGV
abort "usage: row_ahead_variants.rb SRC_DIR OUT_DIR" unless src_dir && out_dir

FIRST = "  if (ahead && first < rows) fetch(first);\n"
NEXT = "      if (row + stride < rows) fetch(row + stride);\n"
TAKE = "    if (ahead) {\n"
BOUNDS = /__launch_bounds__\((\d+), \d+\)/
SMS = 132

VariantFiles.write_all(src_dir, out_dir, "*_0.cu", "read-ahead row") do |text, stem, path|
  next({}) unless text.include?(NEXT)
  rows = Integer(stem[/_(\d+)x\d+_/, 1])
  lanes = Integer(text[BOUNDS, 1])
  grid = ->(blocks) { "// kernel_times grid: #{[rows, blocks].min}\n" }
  edit = ->(t, from, to) { VariantFiles.edit(t, from, to, path) }
  unbounded = edit.(text, BOUNDS, '__launch_bounds__(\1)')
  # The row read into the registers of the next one, then taken from them
  # at once: what the vector fill of before did, by the same loads.
  no_ahead = edit.(edit.(edit.(unbounded, FIRST, ""), NEXT, ""), TAKE, TAKE + "      fetch(row);\n")
  per_sm = [1024 / lanes, 1].max
  {
    "no_ahead" => grid.(32 * SMS) + no_ahead,
    "ahead_full_grid" => grid.(32 * SMS) + unbounded,
    "ahead_1024" => grid.(per_sm * SMS) + edit.(text, BOUNDS, "__launch_bounds__(\\1, #{per_sm})")
  }
end
