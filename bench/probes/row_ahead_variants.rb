# bench/probes/row_ahead_variants.rb SRC_DIR OUT_DIR: the row programs that
# read each next row ahead (fusion/cuda_rowwise_codegen.cpp,
# readsRowsAhead: quantize_symmetric and the written-out row ops of
# sixteen-bit rows held a block a row) without it, for bench/kernel_times
# --variants OUT_DIR to time beside the generated kernels:
#   - no_ahead: each row read when its turn comes, by the grid of before
#     (a block a row up to 32 an SM: 4224 on 132 SMs), the kernel as
#     generated before 2026-12-08;
#   - ahead_full_grid: read ahead, by the grid of before (each block takes
#     fewer rows in turn).
#
#   C=quantize_32768x1024,written_layer_norm_32768x1024,...
#   kernel_times --dry-run --sources /tmp/src --cases $C
#   ruby bench/probes/row_ahead_variants.rb /tmp/src /tmp/variants
#   kernel_times --cases $C --variants /tmp/variants
#
# The grid of before is min(rows, 32 * 132): an H100's and an H200's SMs.
# An edit whose text is not found stops the script: the generator changed.
require_relative "variant_files"

src_dir, out_dir = ARGV
abort "usage: row_ahead_variants.rb SRC_DIR OUT_DIR" unless src_dir && out_dir

FIRST = "  if (ahead && first < rows) fetch(first);\n"
NEXT = "      if (row + stride < rows) fetch(row + stride);\n"
TAKE = "    if (ahead) {\n"

VariantFiles.write_all(src_dir, out_dir, "*_0.cu", "read-ahead row") do |text, stem, path|
  next({}) unless text.include?(NEXT)
  rows = Integer(stem[/_(\d+)x\d+_/, 1])
  grid = "// kernel_times grid: #{[rows, 32 * 132].min}\n"
  edit = ->(t, from, to) { VariantFiles.edit(t, from, to, path) }
  # The row read into the registers of the next one, then taken from them
  # at once: what the vector fill of before did, by the same loads.
  no_ahead = edit.(edit.(edit.(text, FIRST, ""), NEXT, ""), TAKE, TAKE + "      fetch(row);\n")
  { "no_ahead" => grid + no_ahead, "ahead_full_grid" => grid + text }
end
